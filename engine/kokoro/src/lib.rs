//! Kokoro-82M v1.0 (hexgrad), implemented natively in candle.
//!
//! Reference: `PyPI` `kokoro` 0.9.4 (`model.py`, `modules.py`, `istftnet.py`) and the ONNX export
//! documented in `shared/docs/kokoro-port.md`. Modules mirror the reference's: the ALBERT phoneme
//! encoder, the prosody predictor, the text encoder, and the iSTFTNet decoder with its harmonic
//! source. Tensor names under `VarBuilder::pp` are spelled like the checkpoint's.
//!
//! Why a crate of its own: the model knows nothing of text, scripts, scheduling or audio files.
//! It takes phoneme ids and a style vector and gives samples, so the engine above it can drive
//! it through one model interface beside other families, and the compiler (not a grep) keeps
//! the front ends from reaching into it: only the engine depends on this crate.
//!
//! The public surface, in the order a caller meets it:
//! - [`config`]: the model's hyper-parameters and its fixed facts ([`config::SAMPLE_RATE`]).
//! - [`onnx`]: converts the int8 ONNX export into f32 safetensors, once after the download.
//! - [`weights`]: loads those weights; [`model::Kokoro`] packs them for the chosen
//!   [`precision::Precision`] and CPU kernel ([`cpu_kernels::CpuKernel`]).
//! - [`model::KokoroEncoder`]: phonemes and style to the decoder's inputs, one segment or a
//!   padded batch.
//! - [`stream::SegmentDecoder`]: a decoder session over one segment, window by window
//!   ([`stream::ChunkPlan`]); [`decoder::Decoder`] decodes a whole segment at once.
//! - [`parity`]: every stage on a device against the f32 CPU port.
//!
//! Everything else (the stages and their kernels) is public so the port's golden tests in
//! `tests/` can check each stage against the reference's outputs.

#![warn(unreachable_pub)]

pub mod adain;
pub mod albert;
pub mod config;
#[cfg(feature = "cuda")]
pub mod cuda_kernels;
pub mod decoder;
pub mod dense;
pub mod device_memory;
pub mod elementwise;
pub mod generator;
pub mod lstm;
pub mod model;
pub mod onnx;
pub mod parity;
pub mod precision;
pub mod predictor;
pub mod rows;
pub mod source;
pub mod stft;
pub mod stream;
pub mod text_encoder;
pub mod weights;

#[cfg(test)]
mod test_weights;

// The CPU kernel layer lives in the `kernels` crate, shared with VITS; these keep its old paths.
pub use kernels::{cpu_kernels, fill, permute};

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
