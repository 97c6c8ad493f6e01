//! Banter's embedded speech engine.
//!
//! Text goes in, audio comes out: phonemes through espeak-ng, then Kokoro-82M implemented
//! natively in candle (CPU by default, CUDA behind the `cuda` feature). The engine knows
//! nothing of windows, HTTP or sound cards; the `app` crate wires it to those.
//!
//! Layers, from the bottom:
//! - [`assets`]: fetches, verifies and converts the model files into the user's data directory.
//! - [`onnx`]: reads the int8 ONNX export and turns it into f32 weights named like `PyTorch`.
//! - [`phonemes`]: text to Kokoro phoneme ids, with kokoro-onnx's espeak-ng settings.
//! - [`kokoro`]: the neural model, stage by stage.
//! - [`voice`]: stock voice tables and blends.
//! - [`text`]: English text in words for reading aloud (numbers, dates, abbreviations...),
//!   split into sentences.
//! - [`Engine`]: the public entry point: load once, then every piece of audio is a stream of
//!   the one scheduler, in its priority class.
//! - [`segments`]: text to the segments Kokoro speaks, without the model.
//! - [`speech`]: the words every layer shares (request, segment, precision, rate, errors).
//! - `synth` (private): the model as the model thread holds it.
//! - [`script`]: podcast scripts in many formats, parsed into episodes (cast, lines, chapters);
//!   the `script` crate, below this one.
//! - [`speaker`]: GE2E speaker embeddings (resemblyzer's encoder) to match and check voices.
//! - [`scheduler`]: one model thread serving every stream, most urgent first.
//! - [`render`]: episodes to finished audio (loudness, captions, chapters, stems).
//! - [`audio`]: output containers and the DSP around them (resampling, loudness, limiting).
//! - [`library`]: the user's `SQLite` library: saved voices, speaker embeddings, projects and the
//!   render cache.
//! - [`panic_guard`]: the one way to catch a panic (a decoder's on malformed input) as an error.

pub mod assets;
pub mod audio;
pub mod device;
pub mod follow;
/// The neural model, stage by stage. Public only with the `testing` feature, for the port's
/// golden tests, which reach into its stages; everything else speaks through [`Engine`], which
/// runs the model on its one model thread.
#[cfg(feature = "testing")]
pub mod kokoro;
#[cfg(not(feature = "testing"))]
// Stage-level entry points only the `testing` build's goldens call; `unused_self` fires only on
// private methods, so it too belongs to the testing build (where they are public).
#[allow(dead_code, unused_imports, clippy::unused_self)]
mod kokoro;
pub mod library;
pub mod onnx;
pub mod panic_guard;
pub mod phonemes;
pub mod render;
pub mod scheduler;
pub mod segments;
pub mod speaker;
pub mod speech;
/// The model as the model thread holds it: crate-private, so only the scheduler runs Kokoro.
mod synth;
pub mod text;
pub mod voice;
pub mod voicematch;
pub mod words;

mod handle;

pub use handle::{BatchTiming, Engine};
pub use kokoro::decoder::DecoderError;
pub use kokoro::model::EncodeError;
/// `banter bench parity`: the model on a device against the f32 CPU port, stage by stage.
pub use kokoro::parity;
pub use kokoro::ModelError;
pub use scheduler::{Mode, SchedulerError, StreamEvent, StreamFeed, StreamHandle, TimedAudio};
/// The script parsers (the `script` crate, which depends on nothing of the engine's).
pub use script;
pub use speech::{Precision, Segment, SpeechRequest, SynthError, SAMPLE_RATE, SPEED_RANGE};
