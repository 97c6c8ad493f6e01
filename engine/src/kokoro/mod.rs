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
pub mod generator;
pub mod lstm;
pub mod model;
pub mod predictor;
pub mod source;
pub mod stft;
pub mod stream;
pub mod text_encoder;
pub mod weights;
