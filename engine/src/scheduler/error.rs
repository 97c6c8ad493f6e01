//! Why the scheduler refused or lost a request (kept apart from the model's own errors, which
//! it carries unchanged so an input error stays an input error).

use crate::speech::SynthError;

#[derive(Debug, thiserror::Error)]
pub enum SchedulerError {
    #[error("{waiting} requests are already waiting; try again shortly")]
    QueueFull { waiting: usize },
    #[error("the scheduler has shut down")]
    Shutdown,
    /// More text for a stream that is no longer there: its listener left, or it failed.
    #[error("the stream has ended")]
    Ended,
    #[error(transparent)]
    Synth(#[from] SynthError),
}

impl SchedulerError {
    /// True when the caller's input was at fault (bad text, voice, speed), not the engine.
    #[must_use]
    pub fn is_input_error(&self) -> bool {
        matches!(self, Self::Synth(e) if e.is_input_error())
    }
}
