//! Everything that must not run on the UI thread: loading and fetching the model, playback
//! rendering, exports, the library, voice matching and checking dropped Piper voices. Each runs on a named thread and reports
//! through a channel; every report asks egui for a repaint so the window shows it at once.

pub mod export;
pub mod library;
pub mod load;
pub mod matcher;
pub mod piper;
pub mod play;
pub mod preview;
pub mod resolve;
pub mod sentences;
pub mod voicematch;

use std::sync::mpsc;

/// How many events a worker may have in flight before it waits for the UI to take them (the UI
/// drains every channel each frame; waiting is the back-pressure a bounded channel gives).
pub(crate) const EVENTS: usize = 256;

/// Wakes the UI when a worker has news.
#[derive(Clone)]
pub struct Waker(pub eframe::egui::Context);

impl Waker {
    pub fn wake(&self) {
        self.0.request_repaint();
    }
}

/// Sends `event` (waiting if the UI is behind) and wakes the UI; a closed channel (the UI is
/// gone) is not an error.
pub(crate) fn send<T>(tx: &mpsc::SyncSender<T>, waker: &Waker, event: T) {
    let _ = tx.send(event);
    waker.wake();
}

/// The OS refused a worker thread.
#[derive(Debug, thiserror::Error)]
#[error("cannot start the {name} thread: {source}")]
pub struct SpawnError {
    pub name: String,
    #[source]
    pub source: std::io::Error,
}

/// Spawns a named worker thread; if the OS refuses a thread, the error is the job's result.
pub(crate) fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> Result<(), SpawnError> {
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(f)
        .map(|_| ())
        .map_err(|source| SpawnError {
            name: name.to_owned(),
            source,
        })
}

/// Why a playback or preview job failed, as the engine typed it. It reads as
/// [`Failure::is_input`] decides: the author's input (a voice the engine does not know, a line
/// too long for the model) is said plainly, with what to fix; a fault of ours says so, so nobody
/// edits a script to work around a bug.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// The scheduler or the model failed the job.
    Engine(#[from] Box<engine::SchedulerError>),
    /// The script could not be planned for rendering.
    Plan(#[from] Box<engine::render::RenderError>),
    /// A library voice in the cast could not be resolved.
    Voice(#[from] Box<engine::voicematch::VoiceMatchError>),
    /// The worker thread could not start.
    Spawn(#[from] SpawnError),
}

impl Failure {
    /// The author's input was at fault (what the engine says of its own errors; a library voice
    /// that does not resolve is the cast's).
    #[must_use]
    pub fn is_input(&self) -> bool {
        match self {
            Self::Engine(e) => e.is_input_error(),
            Self::Plan(e) => e.is_input_error(),
            Self::Voice(_) => true,
            Self::Spawn(_) => false,
        }
    }
}

/// The error itself when it is the author's to fix (or the OS refused a thread), else the
/// error marked as ours.
impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let error: &dyn std::fmt::Display = match self {
            Self::Engine(e) => e,
            Self::Plan(e) => e,
            Self::Voice(e) => e,
            Self::Spawn(e) => e,
        };
        if self.is_input() || matches!(self, Self::Spawn(_)) {
            error.fmt(f)
        } else {
            write!(f, "internal error: {error} (please report it)")
        }
    }
}

/// The engine's errors are large; a failure boxes them so every `Result` stays small.
macro_rules! boxed_from {
    ($error:ty => $($source:ty),+) => {$(
        impl From<$source> for $error {
            fn from(e: $source) -> Self {
                Box::new(e).into()
            }
        }
    )+};
}
pub(crate) use boxed_from;

boxed_from!(Failure => engine::SchedulerError, engine::render::RenderError, engine::voicematch::VoiceMatchError);

impl From<engine::SynthError> for Failure {
    fn from(e: engine::SynthError) -> Self {
        engine::SchedulerError::Synth(e).into()
    }
}

#[cfg(test)]
mod tests {
    use engine::{EncodeError, ModelError, SchedulerError, SynthError};

    use super::Failure;

    #[test]
    fn input_errors_from_the_model_read_as_input_errors() {
        let too_long = SynthError::Model(ModelError::Encode(EncodeError::TooLong {
            len: 600,
            max: 510,
        }));
        let f = Failure::from(SchedulerError::Synth(too_long));
        assert!(f.is_input());
        assert!(!f.to_string().contains("internal error"), "{f}");
        let f = Failure::from(SchedulerError::Shutdown);
        assert!(!f.is_input());
        assert!(f.to_string().starts_with("internal error"), "{f}");
    }
}
