//! The producer's end of an open stream: segments pushed as their text arrives.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::error::SchedulerError;
use super::metrics::Metrics;
use super::run::update_gauges;
use super::state::Shared;
use crate::speech::Segment;

/// The producer's end of a stream made by [`Scheduler::open`](super::Scheduler::open): segments go in as their text
/// arrives. Dropping it (or [`Self::close`]) says the text is complete; the stream then ends
/// once everything pushed has been spoken.
pub struct StreamFeed {
    sink: Box<dyn FeedSink>,
}

/// Where a feed's segments go: the local queue, or the remote dispatcher ([`crate::remote`]).
/// Dropping the sink says the text is complete.
pub(crate) trait FeedSink: Send + Sync {
    fn push(&self, segments: Vec<Segment>) -> Result<(), SchedulerError>;
    fn pending(&self) -> usize;
}

impl StreamFeed {
    pub(crate) fn new(sink: Box<dyn FeedSink>) -> Self {
        Self { sink }
    }

    /// Appends segments to the stream. [`SchedulerError::Ended`] when the stream is gone (its
    /// listener dropped the handle, or it failed).
    pub fn push(&self, segments: Vec<Segment>) -> Result<(), SchedulerError> {
        self.sink.push(segments)
    }

    /// Segments pushed and not yet begun (the text waiting for the model).
    #[must_use]
    pub fn pending(&self) -> usize {
        self.sink.pending()
    }

    /// The text is complete: the stream ends after what was pushed.
    pub fn close(self) {
        // Dropping the sink does it.
    }
}

/// A feed into the local scheduler's queue.
pub(super) struct LocalFeed {
    pub(super) id: u64,
    pub(super) shared: Arc<Shared>,
}

impl FeedSink for LocalFeed {
    fn push(&self, segments: Vec<Segment>) -> Result<(), SchedulerError> {
        let mut st = self.shared.lock();
        if st.shutdown {
            return Err(SchedulerError::Shutdown);
        }
        let Some(e) = st.streams.iter_mut().find(|e| e.id == self.id) else {
            return Err(SchedulerError::Ended);
        };
        if e.link.cancelled.load(Ordering::Relaxed) || e.tx.is_closed() {
            return Err(SchedulerError::Ended);
        }
        if segments.is_empty() {
            return Ok(());
        }
        let now = Instant::now();
        let idle = e.job.is_none() && e.next == e.segments.len();
        match e.first_audio {
            // Nothing said yet: the wait for first audio starts with the first text.
            None if idle => e.arrived = now,
            // The listener has heard everything and waited for this text: speak it as a
            // newcomer (short first window, scheduled as pressing, not counted as an underrun).
            Some(first) if idle && first + Duration::from_secs_f64(e.produced) <= now => {
                e.first_audio = None;
                e.produced = 0.0;
                e.arrived = now;
                e.resumed_at = e.segments.len();
            }
            _ => {}
        }
        if idle {
            e.ready_since = now;
        }
        e.segments.extend(segments);
        drop(st);
        self.shared.wake.notify_all();
        Ok(())
    }

    fn pending(&self) -> usize {
        let st = self.shared.lock();
        st.streams
            .iter()
            .find(|e| e.id == self.id)
            .map_or(0, |e| e.segments.len() - e.next)
    }
}

impl Drop for LocalFeed {
    fn drop(&mut self) {
        let mut st = self.shared.lock();
        let Some(pos) = st.streams.iter().position(|e| e.id == self.id) else {
            return;
        };
        let e = &mut st.streams[pos];
        e.open = false;
        // Idle (nothing under way or waiting): it is complete now. A stream being stepped has
        // its job taken out but `next` still on its segment, so it is never idle here.
        if e.job.is_none() && e.next == e.segments.len() {
            // Counted before the entry (and its sender) goes: whoever sees the end sees it counted.
            Metrics::add(&self.shared.metrics.completed, 1);
            st.streams.remove(pos);
            update_gauges(&st, &self.shared.metrics);
        }
        drop(st);
        self.shared.wake.notify_all();
    }
}
