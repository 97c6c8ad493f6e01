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
