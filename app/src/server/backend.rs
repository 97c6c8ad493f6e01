//! What the HTTP layer needs from a speech engine, as a small trait; the implementation over the
//! engine's scheduler is in `scheduled`.
//!
//! The routes only see [`SpeechBackend::start`], which queues a job and returns a bounded receiver of
//! [`AudioEvent`]s. Bounded, so a slow client slows its own job (backpressure) instead of piling
//! audio up in memory; and dropping the receiver is how the HTTP side says "the client left":
//! the backend must stop that job at its next chunk.
//!
//! The contract of the receiver: zero or more `Chunk`s, then exactly one `Done` or `Failed`. A
//! channel that closes without either means the backend gave the job up (the HTTP side then
//! aborts the response instead of passing truncated audio off as complete).

use engine::words::TimedWord;
use engine::SynthError;

pub use super::dialogue::{DialogueEvent, DialogueJob};
use engine::voice::{StockVoice, VoiceSpec};
use tokio::sync::mpsc;

/// One request for speech, already validated by the HTTP layer (voice names resolved, speed in
/// the engine's range).
#[derive(Debug, Clone)]
pub struct SpeechJob {
    pub text: String,
    /// A stock voice or a blend (`af_bella:0.7+af_sky:0.3`).
    pub voice: String,
    pub speed: f32,
    /// Time the words as they are spoken (the SSE stream and the timed endpoint want them;
    /// plain audio does not pay for mapping words onto phonemes).
    pub words: bool,
}

/// What a job's receiver yields: see the module docs for the contract.
#[derive(Debug)]
pub enum AudioEvent {
    /// 24 kHz mono samples, in order. When the job asked for words, a segment's first chunk
    /// also carries the words that start in that segment (seconds from the stream's first
    /// sample; some may start in the segment's later chunks); otherwise `words` is empty.
    Chunk {
        samples: Vec<f32>,
        words: Vec<TimedWord>,
    },
    /// Everything has been said.
    Done,
    /// The job failed; nothing more follows.
    Failed(BackendError),
}

/// Why a job could not start or did not finish.
#[derive(Debug, Clone, thiserror::Error)]
pub enum BackendError {
    /// The caller's input was wrong (unknown voice, nothing speakable...): a 400.
    #[error("{message}")]
    Input {
        field: &'static str,
        message: String,
    },
    /// The queue is full: a 429.
    #[error("{queued} jobs are already queued")]
    Busy { queued: usize },
    /// The engine is gone (its thread stopped): a 503.
    #[error("the speech engine has stopped")]
    Stopped,
    /// The model failed: a 500; the message is for the log.
    #[error("{0}")]
    Internal(String),
}

/// A stream of speech whose text is still arriving (the WebSocket endpoints): a voice and a
/// speed now, the text piece by piece through [`FollowInput`].
#[derive(Debug, Clone)]
pub struct FollowJob {
    /// A stock voice, a blend, or a library voice's name.
    pub voice: String,
    pub speed: f32,
}

/// The text side of a [`FollowJob`]. Dropping it says the text is complete: the stream ends
/// after what was pushed.
pub trait FollowInput: Send {
    /// Phonemizes `piece` (blocking: call it off the async threads) and queues it after the
    /// pieces before. A piece with nothing to say is skipped.
    fn push(&mut self, piece: &str) -> Result<(), BackendError>;
    /// Segments queued and not yet begun by the model (text waiting for the model).
    fn pending(&self) -> usize;
}

/// What a follow stream's receiver yields: `Chunk`s, then exactly one `Done` or `Failed`.
#[derive(Debug)]
pub enum FollowEvent {
    /// 24 kHz mono samples, in order. A segment's first chunk carries the characters of the
    /// text it speaks, each with its start and end in samples from the stream's first sample
    /// (the characters tile the segment: see [`engine::follow::char_times`]).
    Chunk {
        samples: Vec<f32>,
        chars: Vec<engine::follow::CharTime>,
        segment_end: bool,
    },
    Done,
    Failed(BackendError),
}

/// A speech engine the HTTP layer can drive.
pub trait SpeechBackend: Send + Sync + 'static {
    /// Opens a stream for text still being written; see [`FollowJob`]. Refuses an unknown
    /// voice or a full queue at once.
    fn open_follow(
        &self,
        job: FollowJob,
    ) -> Result<(Box<dyn FollowInput>, mpsc::Receiver<FollowEvent>), BackendError> {
        let _ = job;
        Err(BackendError::Internal(
            "this backend cannot follow streaming text".into(),
        ))
    }
    /// Queues `job`; returns its audio as a bounded stream (see [`AudioEvent`]).
    fn start(&self, job: SpeechJob) -> Result<mpsc::Receiver<AudioEvent>, BackendError>;
    /// Starts speaking a planned episode (`POST /v1/dialogue`); see [`super::dialogue`].
    fn start_dialogue(
        &self,
        job: DialogueJob,
    ) -> Result<mpsc::Receiver<DialogueEvent>, BackendError>;
    /// The stock voices, sorted by name.
    fn voices(&self) -> Vec<StockVoice>;
    /// The engine's own figures in Prometheus text, appended to `GET /metrics`.
    fn metrics_text(&self) -> String {
        String::new()
    }
}

/// The request for `voice` when it names a library voice (blend, matched, tuned or Piper),
/// with its saved table or Piper model registered with `engine`. Stock voices and blends of them (`stock`) never open
/// the library: most requests name one, and this is their way to first audio.
pub(crate) fn library_request(
    engine: &engine::Engine,
    stock: &[StockVoice],
    voice: &str,
    speed: f32,
) -> Option<engine::SpeechRequest> {
    let names_stock = VoiceSpec::parse(voice).is_ok_and(|spec| {
        spec.terms
            .iter()
            .all(|t| stock.iter().any(|v| v.name == t.voice))
    });
    if names_stock {
        return None;
    }
    let library = engine::library::Library::open_default().ok()?;
    let saved = engine::voicematch::resolve::library_voice(&library, voice)
        .ok()
        .flatten()?;
    saved.register(engine);
    Some(engine::SpeechRequest {
        voice: saved.spec,
        speed,
        language: None,
    })
}

pub(crate) fn check_voices(spec: &VoiceSpec, voices: &[StockVoice]) -> Result<(), BackendError> {
    for term in &spec.terms {
        if !voices.iter().any(|v| v.name == term.voice) {
            return Err(BackendError::Input {
                field: "voice",
                message: format!(
                    "unknown voice `{}`; GET /v1/voices lists them (or use alloy, ash, ballad, \
                     cedar, coral, echo, fable, marin, onyx, nova, sage, shimmer, verse)",
                    term.voice
                ),
            });
        }
    }
    Ok(())
}

pub(crate) fn input_error(e: &SynthError) -> BackendError {
    let field = match e {
        SynthError::Voice(_) => "voice",
        SynthError::Speed { .. } => "speed",
        _ => "input",
    };
    BackendError::Input {
        field,
        message: e.to_string(),
    }
}

pub(crate) fn synth_error(e: &SynthError) -> BackendError {
    if e.is_input_error() {
        input_error(e)
    } else {
        BackendError::Internal(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use engine::{EncodeError, ModelError};

    use super::*;

    /// An input error found by the model (a segment too long for one pass) is the client's
    /// fault (400), not the server's (500).
    #[test]
    fn model_input_errors_are_400s() {
        let too_long = SynthError::Model(ModelError::Encode(EncodeError::TooLong {
            len: 600,
            max: 510,
        }));
        assert!(matches!(synth_error(&too_long), BackendError::Input { .. }));
        let fault = SynthError::Start(std::io::Error::other("no threads"));
        assert!(matches!(synth_error(&fault), BackendError::Internal(_)));
    }
}
