//! Everything that must not run on the UI thread: loading and fetching the model, playback
//! rendering, exports, the library and voice matching. Each runs on a named thread and reports
//! through a channel; every report asks egui for a repaint so the window shows it at once.

pub mod export;
pub mod library;
pub mod load;
pub mod matcher;
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

/// Spawns a named worker thread; if the OS refuses a thread, the error is the job's result.
pub(crate) fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> Result<(), String> {
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(f)
        .map(|_| ())
        .map_err(|e| format!("cannot start the {name} thread: {e}"))
}

/// Why a worker's job failed, as the status bar says it: the author's input (a voice the
/// engine does not know, a line too long for the model) is said plainly, with what to fix; a
/// fault of ours says so, so nobody edits a script to work around a bug.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub message: String,
    /// The author's input was at fault.
    pub input: bool,
}

impl Failure {
    /// A problem with what the author wrote or chose.
    pub fn input(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            input: true,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.input {
            f.write_str(&self.message)
        } else {
            write!(f, "internal error: {} (please report it)", self.message)
        }
    }
}

impl From<engine::SchedulerError> for Failure {
    fn from(e: engine::SchedulerError) -> Self {
        Self {
            input: e.is_input_error(),
            message: e.to_string(),
        }
    }
}

impl From<engine::SynthError> for Failure {
    fn from(e: engine::SynthError) -> Self {
        engine::SchedulerError::Synth(e).into()
    }
}

/// Resolving voices and planning the script report the author's mistakes as text.
impl From<String> for Failure {
    fn from(message: String) -> Self {
        Self::input(message)
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
        assert!(f.input);
        assert!(!f.to_string().contains("internal error"), "{f}");
        let f = Failure::from(SchedulerError::Shutdown);
        assert!(!f.input);
        assert!(f.to_string().starts_with("internal error"), "{f}");
    }
}
