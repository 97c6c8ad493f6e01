//! The words every layer of the engine shares about speech, at the bottom of it: what to say
//! ([`SpeechRequest`]), one model pass of it ([`Segment`]), how precisely the products run
//! ([`Precision`]), the output rate and speed limits, and what can go wrong ([`SynthError`]).
//!
//! They used to live in the files that use them most (`synth`, `segments`), which made a circle
//! (segments ↔ synth ↔ words) and arrows from the model back up to the model thread's adapter.
//! Here they import only what they are made of (voices, phonemes, the device, the model's
//! errors), and everything above imports them from here or from the crate root
//! (`engine::SAMPLE_RATE`, `engine::SpeechRequest`).

use crate::device::DeviceError;
use crate::phonemes::{Language, PhonemeError};
use crate::voice::{VoiceError, VoiceSpec};
use kokoro::ModelError;

/// The model's output rate: 24 kHz mono.
pub use kokoro::config::SAMPLE_RATE;

/// Slowest and fastest speaking rate accepted (the model's own limits).
pub use kokoro::config::SPEED_RANGE;

/// How precisely the model's big products run (the model's own setting, named here for
/// everyone above it).
pub use kokoro::precision::Precision;

/// One Kokoro pass: a sentence or a few, as phonemes and ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub phonemes: String,
    pub ids: Vec<u32>,
}

/// Everything that can go wrong between text and audio.
#[derive(Debug, thiserror::Error)]
pub enum SynthError {
    #[error("the text is empty; give some words to speak")]
    EmptyText,
    #[error("nothing to say: `{excerpt}` has no speakable symbols")]
    NothingToSay { excerpt: String },
    #[error("speed {value} is outside {}–{}; pick a value in that range", SPEED_RANGE.start(), SPEED_RANGE.end())]
    Speed { value: f32 },
    #[error(transparent)]
    Voice(#[from] VoiceError),
    #[error(transparent)]
    Phonemes(#[from] PhonemeError),
    #[error(transparent)]
    Device(#[from] DeviceError),
    #[error("model files are missing or incomplete in {dir}; run `banter models fetch`")]
    ModelMissing { dir: String },
    #[error("loading the model from {path}: {source}")]
    Load {
        path: String,
        source: candle_core::Error,
    },
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error("the model produced audio that is not a number: its weights in {path} are damaged; run `banter models fetch --force`")]
    DamagedModel { path: String },
    #[error("model inference failed: {0}")]
    Inference(#[from] candle_core::Error),
    #[error("starting the model thread: {0}")]
    Start(#[source] std::io::Error),
    /// A remote engine's server refused a segment, or no server could be reached.
    #[error("{server}: {message}")]
    Remote { server: String, message: String },
}

impl SynthError {
    /// True when the caller's input was at fault (exit status 2), false for internal faults.
    #[must_use]
    pub fn is_input_error(&self) -> bool {
        matches!(
            self,
            Self::EmptyText
                | Self::NothingToSay { .. }
                | Self::Speed { .. }
                | Self::Voice(_)
                | Self::Device(_)
        ) || matches!(self, Self::Model(e) if e.is_input_error())
    }
}

/// What to say and how.
#[derive(Debug, Clone)]
pub struct SpeechRequest {
    pub voice: VoiceSpec,
    pub speed: f32,
    /// Overrides the language implied by the voice name (e.g. an American voice reading French).
    pub language: Option<Language>,
}

impl SpeechRequest {
    pub fn new(voice: &str, speed: f32) -> Result<Self, SynthError> {
        Ok(Self {
            voice: VoiceSpec::parse(voice)?,
            speed,
            language: None,
        })
    }
}

/// Refuses a speed outside [`SPEED_RANGE`] (or not a number).
pub(crate) fn check_speed(speed: f32) -> Result<(), SynthError> {
    if speed.is_finite() && SPEED_RANGE.contains(&speed) {
        Ok(())
    } else {
        Err(SynthError::Speed { value: speed })
    }
}
