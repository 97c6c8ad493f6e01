//! Keeping a device playing: one named thread per open output owns the stream, feeds its ring
//! ([`PlayBuffer::feed`]), and rebuilds the stream when the device goes away.
//!
//! Why a thread of its own: the feeder must run while the window is hidden or busy (the UI
//! thread does not paint then), and reopening waits between attempts, which neither the audio
//! callback nor the UI thread may do. The stream's error callback only hands the error to this
//! thread (a bounded channel, `try_send`). A lost device ([`is_fatal`]) is reopened on the
//! default device a few times with a delay ([`Retry`]); the studio hears of it through
//! [`DeviceNews`], which its status bar shows. [`Opener`] is the seam: cpal in the studio, a
//! mock device in the tests.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::Thread;
use std::time::Duration;

use super::{AudioOutError, DeviceNews, PlayBuffer, Player};

/// How often the ring is topped up while playing (it holds about a second).
const FEED_EVERY: Duration = Duration::from_millis(10);
/// How often while paused (the ring is full then, and a seek only needs refilling before Play).
const IDLE_EVERY: Duration = Duration::from_millis(50);
/// Stream errors waiting for the thread (more are dropped: the first one decides).
const FAULTS: usize = 8;

/// Opens streams for the supervisor's thread.
pub(crate) trait Opener: Send + 'static {
    type Stream;
    /// Opens a stream that plays `player` (the chosen device the first time, the default device
    /// after a loss) and sends the errors it reports to `faults`; returns it and the device's
    /// name.
    fn open(
        &mut self,
        player: Player,
        faults: SyncSender<cpal::Error>,
    ) -> Result<(Self::Stream, String), AudioOutError>;
}

/// How hard to try reopening a lost device.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Retry {
    pub(crate) attempts: u32,
    pub(crate) delay: Duration,
}

impl Retry {
    pub(crate) const DEFAULT: Self = Self {
        attempts: 5,
        delay: Duration::from_millis(400),
    };
}

/// A stream error that means the stream is gone (rather than a glitch it plays on through).
pub(crate) fn is_fatal(e: &cpal::Error) -> bool {
    use cpal::ErrorKind as K;
    !matches!(e.kind(), K::Xrun | K::DeviceChanged | K::RealtimeDenied)
}

/// The first error that ends the stream; glitches before it are only logged.
fn first_fatal(faults: &Receiver<cpal::Error>) -> Option<cpal::Error> {
    for fault in faults.try_iter() {
        if is_fatal(&fault) {
            return Some(fault);
        }
        tracing::debug!("audio output: {fault}");
    }
    None
}

/// The studio's handle on the thread; dropping it stops the thread.
pub(crate) struct Supervisor {
    device: Arc<Mutex<String>>,
    news: Receiver<DeviceNews>,
    stop: Arc<AtomicBool>,
    thread: Thread,
}

impl Supervisor {
    /// Starts the thread and waits for the first stream (as long as opening a device takes).
    pub(crate) fn start<O: Opener>(
        opener: O,
        buffer: Arc<PlayBuffer>,
        retry: Retry,
    ) -> Result<Self, AudioOutError> {
        let (first_tx, first_rx) = sync_channel(1);
        let (news_tx, news) = sync_channel(4);
        let device = Arc::new(Mutex::new(String::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (device, stop) = (Arc::clone(&device), Arc::clone(&stop));
            std::thread::Builder::new()
                .name("banter-audio-out".into())
                .spawn(move || {
                    let link = Link {
                        buffer,
                        retry,
                        device,
                        news: news_tx,
                        stop,
                    };
                    link.run(opener, &first_tx);
                })
                .map_err(|e| AudioOutError::Open {
                    device: "audio output".into(),
                    reason: format!("no thread for it: {e}"),
                })?
                .thread()
                .clone()
        };
        match first_rx.recv() {
            Ok(Ok(())) => Ok(Self {
                device,
                news,
                stop,
                thread,
            }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(AudioOutError::Open {
                device: "audio output".into(),
                reason: "its thread stopped".into(),
            }),
        }
    }

    /// The device playing now (it changes when a lost one is replaced).
    pub(crate) fn device(&self) -> String {
        self.device
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// What happened to the device since the last call.
    pub(crate) fn news(&self) -> Option<DeviceNews> {
        self.news.try_recv().ok()
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        self.thread.unpark();
    }
}

/// What the thread works with.
struct Link {
    buffer: Arc<PlayBuffer>,
    retry: Retry,
    device: Arc<Mutex<String>>,
    news: SyncSender<DeviceNews>,
    stop: Arc<AtomicBool>,
}

impl Link {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    fn set_device(&self, name: String) -> String {
        std::mem::replace(
            &mut *self.device.lock().unwrap_or_else(PoisonError::into_inner),
            name,
        )
    }

    fn run<O: Opener>(&self, mut opener: O, first: &SyncSender<Result<(), AudioOutError>>) {
        let (tx, mut faults) = sync_channel(FAULTS);
        let mut stream = match opener.open(self.buffer.connect(), tx) {
            Ok((stream, name)) => {
                self.set_device(name);
                let _ = first.send(Ok(()));
                Some(stream)
            }
            Err(e) => {
                let _ = first.send(Err(e));
                return;
            }
        };
        while !self.stopped() {
            self.buffer.feed();
            if let Some(fault) = first_fatal(&faults) {
                tracing::warn!("audio output lost: {fault}");
                // The old stream goes first: some hosts will not open a device twice.
                drop(stream.take());
                match self.reopen(&mut opener) {
                    Ok((s, name, rx)) => {
                        stream = Some(s);
                        faults = rx;
                        let from = self.set_device(name.clone());
                        let _ = self.news.try_send(DeviceNews::Moved { from, to: name });
                    }
                    Err(e) => {
                        let _ = self.news.try_send(DeviceNews::Lost(e));
                        return;
                    }
                }
            }
            std::thread::park_timeout(if self.buffer.is_playing() {
                FEED_EVERY
            } else {
                IDLE_EVERY
            });
        }
    }

    /// Opens the default device, trying `retry.attempts` times.
    #[allow(clippy::type_complexity)] // the stream, its name, its errors
    fn reopen<O: Opener>(
        &self,
        opener: &mut O,
    ) -> Result<(O::Stream, String, Receiver<cpal::Error>), AudioOutError> {
        let mut reason = String::from("the studio is closing");
        for attempt in 0..self.retry.attempts {
            if attempt > 0 {
                std::thread::park_timeout(self.retry.delay);
            }
            if self.stopped() {
                break;
            }
            let (tx, rx) = sync_channel(FAULTS);
            match opener.open(self.buffer.connect(), tx) {
                Ok((stream, name)) => return Ok((stream, name, rx)),
                Err(e) => {
                    tracing::warn!("reopening audio output, attempt {}: {e}", attempt + 1);
                    reason = e.to_string();
                }
            }
        }
        Err(AudioOutError::Lost {
            device: self
                .device
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
            reason,
        })
    }
}
