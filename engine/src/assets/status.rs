//! What the model store holds right now, found cheaply: file sizes and `manifest.json`
//! only, never hashing the large files (that happens once, when they are fetched).
//!
//! "Ready" means the engine can load from the store: every file present with its expected
//! size, and `manifest.json`, if present, current (same assets, same converter version)
//! and agreeing with the sizes on disk. A store without `manifest.json` whose files are all
//! there counts as ready (a hand-made or copied store); a fetch always writes one.

use std::fmt;
use std::path::{Path, PathBuf};

use super::fsio::file_size;
use super::manifest::Catalog;
use super::record::{StoreRecord, MANIFEST_FILE};
use super::{ONNX_FILE, SAFETENSORS_FILE, VOCAB_FILE, VOICES_DIR};

/// State of one file of the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileState {
    Present { size: u64 },
    Missing,
    WrongSize { expected: u64, actual: u64 },
}

/// One file the store must hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStatus {
    /// Path relative to the store root, `/`-separated (the key in `manifest.json`).
    pub relative: String,
    pub path: PathBuf,
    pub state: FileState,
}

/// State of `manifest.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ManifestState {
    /// Present, current, and listing every file.
    Current,
    Missing,
    /// Written for other assets or an older converter; the store needs a fetch.
    Stale {
        reason: String,
    },
    Unreadable {
        reason: String,
    },
}

/// Everything [`super::ModelStore::status`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreStatus {
    pub root: PathBuf,
    pub files: Vec<FileStatus>,
    pub manifest: ManifestState,
}

impl StoreStatus {
    /// Every file present with the right size, and no stale or broken manifest.
    #[must_use]
    pub fn is_ready(&self) -> bool {
        self.files_present()
            && matches!(
                self.manifest,
                ManifestState::Current | ManifestState::Missing
            )
    }

    /// Every file present with the right size (the manifest aside).
    #[must_use]
    pub fn files_present(&self) -> bool {
        self.problems().next().is_none()
    }

    /// Files that are missing or have the wrong size.
    pub fn problems(&self) -> impl Iterator<Item = &FileStatus> {
        self.files
            .iter()
            .filter(|f| !matches!(f.state, FileState::Present { .. }))
    }
}

impl fmt::Display for StoreStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let present = self.files.len() - self.problems().count();
        writeln!(f, "model store: {}", self.root.display())?;
        writeln!(f, "files: {present} of {} present", self.files.len())?;
        for p in self.problems() {
            match p.state {
                FileState::Missing => writeln!(f, "  missing: {}", p.relative)?,
                FileState::WrongSize { expected, actual } => writeln!(
                    f,
                    "  wrong size: {} ({actual} bytes, expected {expected})",
                    p.relative
                )?,
                FileState::Present { .. } => {}
            }
        }
        match &self.manifest {
            ManifestState::Current => writeln!(f, "manifest: current")?,
            ManifestState::Missing => writeln!(f, "manifest: missing")?,
            ManifestState::Stale { reason } => writeln!(f, "manifest: stale ({reason})")?,
            ManifestState::Unreadable { reason } => writeln!(f, "manifest: unreadable ({reason})")?,
        }
        write!(
            f,
            "{}",
            if self.is_ready() {
                "ready"
            } else {
                "not ready: run `banter models fetch`"
            }
        )
    }
}

/// The files of a store for `catalog`, with the size each must have when it is known
/// in advance (the converted safetensors' size is only known from `manifest.json`).
pub fn expected_files(catalog: &Catalog) -> Vec<(String, Option<u64>)> {
    let mut out = vec![
        (ONNX_FILE.to_owned(), Some(catalog.model.size)),
        (SAFETENSORS_FILE.to_owned(), None),
        (VOCAB_FILE.to_owned(), Some(catalog.vocab.size)),
    ];
    out.extend(catalog.voices.names.iter().map(|n| {
        (
            format!("{VOICES_DIR}/{n}.bin"),
            Some(catalog.voices.table_size),
        )
    }));
    out
}

/// Inspects the store at `root`.
pub fn inspect(root: &Path, catalog: &Catalog) -> StoreStatus {
    let record = StoreRecord::read(&root.join(MANIFEST_FILE));
    let mut manifest = match &record {
        Ok(None) => ManifestState::Missing,
        Err(reason) => ManifestState::Unreadable {
            reason: reason.clone(),
        },
        Ok(Some(r)) => match r.staleness(catalog) {
            Some(reason) => ManifestState::Stale { reason },
            None => ManifestState::Current,
        },
    };
    let current = match (&manifest, record) {
        (ManifestState::Current, Ok(Some(r))) => Some(r),
        _ => None,
    };
    let mut files = Vec::new();
    for (relative, known_size) in expected_files(catalog) {
        let path = root.join(&relative);
        let recorded = current
            .as_ref()
            .and_then(|r| r.files.get(&relative))
            .map(|f| f.size);
        if current.is_some() && recorded.is_none() {
            manifest = ManifestState::Stale {
                reason: format!("{relative} is not listed"),
            };
        }
        let expected = known_size.or(recorded);
        let state = match (file_size(&path), expected) {
            (None, _) => FileState::Missing,
            (Some(0), None) => FileState::WrongSize {
                expected: 1,
                actual: 0,
            },
            (Some(actual), Some(expected)) if actual != expected => {
                FileState::WrongSize { expected, actual }
            }
            (Some(size), _) => FileState::Present { size },
        };
        files.push(FileStatus {
            relative,
            path,
            state,
        });
    }
    StoreStatus {
        root: root.to_owned(),
        files,
        manifest,
    }
}
