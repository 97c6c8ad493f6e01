//! VITS, the model behind Piper voices, implemented natively in candle.
//!
//! Reference: the VITS code Piper trains and exports (`piper` `vits/models.py`, `modules.py`,
//! `attentions.py`, `transforms.py`), checked stage by stage against onnxruntime running the
//! voice's own `.onnx` (`tools/goldens/piper_stages.py`). Modules mirror the reference's, and
//! every weight is named by the torch module path it has in the checkpoint.
//!
//! Why a crate of its own: like `kokoro`, the model knows nothing of text, scripts, scheduling
//! or audio files. It takes phoneme ids and gives samples at the voice's own rate; the engine
//! drives it through the one model interface beside Kokoro. Nothing is downloaded: a user
//! brings a Piper voice (`NAME.onnx` with `NAME.onnx.json`) and this crate reads both.
//!
//! The public surface, in the order a caller meets it:
//! - [`config::PiperConfig`]: the `.onnx.json` (rate, espeak voice, phoneme ids, speakers,
//!   inference defaults, licence facts).
//! - [`checkpoint::Checkpoint`]: the weights and convolution settings read from the `.onnx`.
//! - [`model::Vits`]: the model; [`model::Vits::infer`] runs one sentence and returns every
//!   stage ([`model::Stages`]), so tests can compare each with the reference.

#![warn(unreachable_pub)]

pub mod attentions;
pub mod checkpoint;
pub mod config;
pub mod duration;
mod error;
pub mod flow;
pub mod generator;
pub mod layers;
pub mod model;
mod packed;
pub mod spline;
pub mod text_encoder;
#[cfg(test)]
mod tiny;

pub use error::VitsError;
/// The CPU kernels the generator can run on ([`model::Vits::use_cpu_kernel`]).
pub use kernels::cpu_kernels::CpuKernel;
