//! The consumer's end of a stream: events as they are ready, cancellation on drop.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use tokio::sync::mpsc;

use super::error::SchedulerError;
use super::events::{StreamEvent, TimedAudio};
use super::run::samples_us;
use super::state::{Link, Shared};

/// The consumer's end of a stream. Dropping it cancels the stream.
pub struct StreamHandle {
    rx: mpsc::Receiver<StreamEvent>,
    tie: Arc<dyn StreamTie>,
}

/// What a handle tells the producer of its stream: audio taken (flow control) and
/// cancellation. The local model thread's queue and the remote dispatcher
/// ([`crate::remote`]) each tie their streams' handles to themselves through it.
pub(crate) trait StreamTie: Send + Sync {
    /// The consumer took `samples` samples.
    fn taken(&self, samples: usize);
    /// Nobody wants the rest.
    fn cancel(&self);
}

/// A stream of the local scheduler: its link and the queue it wakes.
pub(super) struct LocalTie {
    pub(super) link: Arc<Link>,
    pub(super) shared: Arc<Shared>,
}

impl StreamTie for LocalTie {
    fn taken(&self, samples: usize) {
        let us = samples_us(samples);
        let _ = self
            .link
            .unread_us
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
                Some(v.saturating_sub(us))
            });
        let _ = self.shared.metrics.buffered_us.fetch_update(
            Ordering::Relaxed,
            Ordering::Relaxed,
            |v| Some(v.saturating_sub(us)),
        );
        self.shared.wake.notify_all();
    }

    fn cancel(&self) {
        self.link.cancelled.store(true, Ordering::Relaxed);
        self.shared.wake.notify_all();
    }
}

impl StreamHandle {
    pub(crate) fn new(rx: mpsc::Receiver<StreamEvent>, tie: Arc<dyn StreamTie>) -> Self {
        Self { rx, tie }
    }

    /// The next event, or `None` when the stream is complete.
    pub async fn next(&mut self) -> Option<StreamEvent> {
        let event = self.rx.recv().await;
        self.taken(event.as_ref());
        event
    }

    /// The same, blocking (not from inside an async runtime).
    pub fn blocking_next(&mut self) -> Option<StreamEvent> {
        let event = self.rx.blocking_recv();
        self.taken(event.as_ref());
        event
    }

    /// Every chunk, concatenated, waiting for the end (not from inside an async runtime); the
    /// stream's own error if it failed.
    pub fn collect(self) -> Result<Vec<f32>, SchedulerError> {
        self.collect_timed().map(|audio| audio.samples)
    }

    /// [`Self::collect`], with the frames per token of every segment, in order (word timing).
    pub fn collect_timed(self) -> Result<TimedAudio, SchedulerError> {
        self.collect_timed_unless(|| false)
    }

    /// [`Self::collect_timed`], stopping early with what has come once `stop` says so (asked
    /// as each event arrives; dropping the handle then cancels the rest).
    pub fn collect_timed_unless(
        mut self,
        stop: impl Fn() -> bool,
    ) -> Result<TimedAudio, SchedulerError> {
        let mut out = TimedAudio::default();
        while let Some(event) = self.blocking_next() {
            if stop() {
                break;
            }
            match event {
                StreamEvent::Audio {
                    samples, durations, ..
                } => {
                    out.samples.extend_from_slice(&samples);
                    out.durations.extend(durations);
                }
                StreamEvent::Failed(e) => return Err(e.into()),
            }
        }
        Ok(out)
    }

    fn taken(&self, event: Option<&StreamEvent>) {
        if let Some(StreamEvent::Audio { samples, .. }) = event {
            self.tie.taken(samples.len());
        }
    }

    /// Stops the stream; its remaining segments are dropped before the next scheduling step.
    pub fn cancel(&self) {
        self.tie.cancel();
    }
}

impl Drop for StreamHandle {
    fn drop(&mut self) {
        self.cancel();
    }
}
