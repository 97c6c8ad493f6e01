//! Playback: the studio's rendered audio ([`PlayBuffer`]) and the [`AudioOut`] backends that
//! play it.
//!
//! The studio appends chunks to the [`PlayBuffer`] as the scheduler delivers them and moves the
//! transport (play, pause, seek, clear); the device's callback pulls through a [`Player`] at its
//! own pace. Between them is a lock-free ring, so the callback never locks, allocates or waits,
//! and a seek is never lost (see `buffer`). The playhead the timeline shows is the position the
//! callback publishes, so the timeline and the sound card agree.
//!
//! Backends: [`CpalOut`] (an output device through cpal, in f32, i16 or u16, resampled from
//! 24 kHz; its own thread feeds it and reopens the default device when it goes away), and
//! [`MockOut`] for tests, which records exactly what it was given: the test pulls samples as a
//! callback would.

mod buffer;
mod convert;
mod cpal_out;
mod mock;
mod player;
mod store;
mod supervise;
#[cfg(test)]
mod tests;

use std::sync::Arc;

pub use buffer::PlayBuffer;
pub use cpal_out::CpalOut;
pub use mock::MockOut;
pub use player::Player;

/// Why audio cannot be played.
#[derive(Debug, Clone, thiserror::Error)]
pub enum AudioOutError {
    #[error("no audio output device was found ({host})")]
    NoDevice { host: String },
    #[error("the audio device {device} cannot be opened: {reason}")]
    Open { device: String, reason: String },
    #[error("the audio device {device} went away and no other could be opened: {reason}")]
    Lost { device: String, reason: String },
}

/// What happened to a device while it played (the studio asks every frame).
#[derive(Debug, Clone)]
pub enum DeviceNews {
    /// The device went away; playback moved to the default device.
    Moved { from: String, to: String },
    /// The device went away and no other could be opened.
    Lost(AudioOutError),
}

/// Something that plays a [`PlayBuffer`].
pub trait AudioOut {
    /// The device, in words (for the status bar).
    fn describe(&self) -> String;
    /// Starts pulling from `buffer` (playback itself is gated by [`PlayBuffer::set_playing`]).
    fn attach(&mut self, buffer: Arc<PlayBuffer>) -> Result<(), AudioOutError>;
    /// What happened to the device since the last call; backends that cannot lose their device
    /// have nothing to say.
    fn news(&mut self) -> Option<DeviceNews> {
        None
    }
}

/// No device: the studio still renders and exports, and says why it cannot play.
#[derive(Debug)]
pub struct NoAudio(pub AudioOutError);

impl AudioOut for NoAudio {
    fn describe(&self) -> String {
        format!("no playback: {}", self.0)
    }

    fn attach(&mut self, _buffer: Arc<PlayBuffer>) -> Result<(), AudioOutError> {
        Err(self.0.clone())
    }
}
