//! Banter's embedded speech engine.
//!
//! Text goes in, audio comes out: phonemes through espeak-ng, then Kokoro-82M implemented
//! natively in candle (CPU by default, CUDA behind the `cuda` feature). The engine knows
//! nothing of windows, HTTP or sound cards; the `app` crate wires it to those.
//!
//! Layers, from the bottom:
//! Below it, two crates of their own: `kokoro` (the neural model, its CPU kernels and the
//! converter from the int8 ONNX export), which only the model thread holds, and `script` (the
//! parsers). Inside, from the bottom:
//! - [`assets`]: fetches, verifies and converts the model files into the user's data directory.
//! - [`phonemes`]: text to Kokoro phoneme ids, with kokoro-onnx's espeak-ng settings.
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
//! - [`remote`]: the same streams rendered on servers (Triton) instead of the model thread.
//! - [`render`]: episodes to finished audio (loudness, captions, chapters, stems).
//! - [`audio`]: output containers and the DSP around them (resampling, loudness, limiting).
//! - [`library`]: the user's `SQLite` library: saved voices, speaker embeddings, projects and the
//!   render cache.
//! - [`scratch`]: temporaries named for the process that owns them, and sweeping those of
//!   killed processes.
//! - [`panic_guard`]: the one way to catch a panic (a decoder's on malformed input) as an error.

pub mod assets;
pub mod audio;
pub mod device;
mod families;
pub mod follow;
pub mod library;
pub mod panic_guard;
pub mod phonemes;
mod piper_synth;
pub mod remote;
pub mod render;
pub mod scheduler;
pub mod scratch;
pub mod segments;
pub mod speaker;
pub mod speech;
/// The model as the model thread holds it: crate-private, so only the scheduler runs Kokoro.
mod synth;
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
/// The English text normaliser (the `text` crate: pure string work, fuzzed on its own).
pub use text;
