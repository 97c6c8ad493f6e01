//! Kokoro-82M v1.0 (hexgrad), implemented natively in candle.
//!
//! Reference: `PyPI` `kokoro` 0.9.4 (`model.py`, `modules.py`, `istftnet.py`) and the ONNX export
//! documented in `shared/docs/kokoro-port.md`. Modules mirror the reference's: the ALBERT phoneme
//! encoder, the prosody predictor, the text encoder, and the iSTFTNet decoder with its harmonic
//! source. Tensor names under `VarBuilder::pp` are spelled like the checkpoint's.

pub mod adain;
pub mod albert;
pub mod bf16;
pub mod config;
pub mod decoder;
pub mod dense;
pub mod elementwise;
pub mod fill;
pub mod generator;
pub mod lstm;
pub mod model;
pub mod parity;
pub mod permute;
pub mod precision;
pub mod predictor;
pub mod source;
pub mod stft;
pub mod stream;
pub mod text_encoder;
pub mod weights;

/// Why the model failed, with the failing stage's own error kept (not flattened into a
/// message), so that an input error deep inside — too many phonemes, a speed out of range —
/// still reaches the user as an input error.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error(transparent)]
    Encode(#[from] model::EncodeError),
    #[error(transparent)]
    Decode(#[from] decoder::DecoderError),
    #[error("model inference failed: {0}")]
    Tensor(#[from] candle_core::Error),
}

impl ModelError {
    /// True when the input was at fault (too long, empty, out of the vocabulary, a speed out of
    /// range), not the model.
    #[must_use]
    pub fn is_input_error(&self) -> bool {
        matches!(self, Self::Encode(e) if e.is_input_error())
    }
}
