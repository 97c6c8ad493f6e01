//! Piper voices as the engine knows them: a user's `.onnx` (checked by sha256 every time it is
//! loaded) with its validated `.onnx.json`, and, for a multi-speaker model, the speaker.
//!
//! Why a key and not the user's name: a [`VoiceSpec`](super::VoiceSpec) is also the render
//! cache's key and travels through the scheduler, so a Piper voice is named there by what it
//! is, `piper/<first 16 hex digits of the model's sha256>[/<speaker id>]`, not by what the
//! user called it (a renamed voice keeps its cached audio; two names for one file share it).
//! The library maps names to keys and registers each voice with the engine before it is used.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};
use vits::config::PiperConfig;

use super::VoiceError;

/// The prefix of a Piper voice's key in a [`VoiceSpec`](super::VoiceSpec).
pub const PIPER_PREFIX: &str = "piper/";

/// A Piper voice ready to register with the engine.
#[derive(Clone)]
pub struct PiperVoice {
    /// The name the user gave it (for messages).
    pub name: String,
    /// The model file as added.
    pub onnx: PathBuf,
    /// Lower-case hex sha256 of the model file.
    pub sha256: String,
    pub config: Arc<PiperConfig>,
    /// The speaker of a multi-speaker model.
    pub speaker: Option<i64>,
}

impl fmt::Debug for PiperVoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PiperVoice")
            .field("name", &self.name)
            .field("onnx", &self.onnx)
            .field("sha256", &self.sha256)
            .field("speaker", &self.speaker)
            .finish_non_exhaustive()
    }
}

impl PiperVoice {
    /// The key this voice renders under (see the module docs).
    #[must_use]
    pub fn key(&self) -> String {
        piper_key(&self.sha256, self.speaker)
    }

    /// The `.onnx.json` beside `onnx` (`NAME.onnx.json`).
    #[must_use]
    pub fn config_path(onnx: &Path) -> PathBuf {
        let mut name = onnx.as_os_str().to_owned();
        name.push(".json");
        PathBuf::from(name)
    }
}

/// The key of the voice of the model whose sha256 is `sha256`, speaker `speaker` (see the
/// module docs).
#[must_use]
pub fn piper_key(sha256: &str, speaker: Option<i64>) -> String {
    let short = &sha256[..sha256.len().min(16)];
    match speaker {
        Some(id) => format!("{PIPER_PREFIX}{short}/{id}"),
        None => format!("{PIPER_PREFIX}{short}"),
    }
}

/// True when `name` (one blend term) is a Piper key.
#[must_use]
pub fn is_piper_key(name: &str) -> bool {
    name.strip_prefix(PIPER_PREFIX).is_some_and(|rest| {
        let mut parts = rest.split('/');
        let hash_ok = parts
            .next()
            .is_some_and(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit()));
        let speaker_ok = parts
            .next()
            .is_none_or(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()));
        hash_ok && speaker_ok && parts.next().is_none()
    })
}

/// The sha256 of the file at `path`, read in pieces (a model is tens of megabytes).
pub fn file_sha256(path: &Path) -> Result<String, VoiceError> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_recognised_and_nothing_else_is() {
        assert!(is_piper_key("piper/0123abcd"));
        assert!(is_piper_key("piper/0123abcd/3"));
        for bad in [
            "piper/",
            "piper/xyz",
            "piper/01/",
            "piper/01/a",
            "piper/01/2/3",
            "af_heart",
        ] {
            assert!(!is_piper_key(bad), "{bad}");
        }
    }

    #[test]
    fn the_config_sits_beside_the_model() {
        assert_eq!(
            PiperVoice::config_path(Path::new("/v/en_US-joe-medium.onnx")),
            Path::new("/v/en_US-joe-medium.onnx.json")
        );
    }
}

/// What `banter voices add` learns of a Piper model before it is saved.
#[derive(Debug, Clone)]
pub struct PiperModelInfo {
    /// The model file, absolute.
    pub onnx: PathBuf,
    pub sha256: String,
    pub size: u64,
    pub config: Arc<PiperConfig>,
    /// The `.onnx.json` text as read (saved with the voice).
    pub config_json: String,
    /// `(name, id)` of every speaker of a multi-speaker model; empty for one speaker.
    pub speakers: Vec<(String, i64)>,
}

/// Checks that `onnx` is a Piper VITS model with a matching `.onnx.json` beside it, and reads
/// what the library keeps of it. Every refusal names the file and the reason: the pair is
/// incomplete, the JSON is not a Piper config, the graph is not a Piper VITS export, or the two
/// disagree (phoneme ids beyond the model's table, a different speaker count).
pub fn inspect_piper_model(onnx: &Path) -> Result<PiperModelInfo, VoiceError> {
    let refuse = |reason: String| VoiceError::PiperFile {
        name: onnx
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        path: onnx.to_path_buf(),
        reason,
    };
    let onnx = std::fs::canonicalize(onnx)
        .map_err(|e| refuse(format!("cannot open the model file: {e}")))?;
    if onnx.extension().and_then(|e| e.to_str()) != Some("onnx") {
        return Err(refuse(
            "a Piper voice is a NAME.onnx file (with NAME.onnx.json beside it)".to_owned(),
        ));
    }
    let json_path = PiperVoice::config_path(&onnx);
    let config_json = std::fs::read_to_string(&json_path).map_err(|e| {
        refuse(format!(
            "its config {} is missing or unreadable ({e}); a Piper voice is the .onnx and the .onnx.json that came with it",
            json_path.display()
        ))
    })?;
    let config = PiperConfig::parse(&config_json).map_err(|e| {
        refuse(format!(
            "{}: not a Piper voice config: {e}",
            json_path.display()
        ))
    })?;
    let checkpoint =
        vits::checkpoint::Checkpoint::read(&onnx).map_err(|e| refuse(e.to_string()))?;
    let model = vits::model::Vits::load(&checkpoint, &candle_core::Device::Cpu)
        .map_err(|e| refuse(format!("not a Piper VITS model this Banter can run: {e}")))?;
    if config.num_symbols > model.symbols() {
        return Err(refuse(format!(
            "the .onnx.json names {} phoneme symbols but the model knows {}: the JSON belongs to another model",
            config.num_symbols,
            model.symbols()
        )));
    }
    if config.num_speakers != model.speakers() {
        return Err(refuse(format!(
            "the .onnx.json names {} speakers but the model has {}: the JSON belongs to another model",
            config.num_speakers,
            model.speakers()
        )));
    }
    let size = std::fs::metadata(&onnx)?.len();
    let sha256 = file_sha256(&onnx)?;
    Ok(PiperModelInfo {
        speakers: config.speaker_list(),
        onnx,
        sha256,
        size,
        config: Arc::new(config),
        config_json,
    })
}
