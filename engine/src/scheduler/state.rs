//! The state the model thread and every stream's two ends share: the queue of streams behind one
//! mutex and condition variable, and per stream the few atomics its consumer updates without
//! taking that lock (audio not yet read, cancelled).

use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

use tokio::sync::mpsc;

use super::config::SchedulerConfig;
use super::cost::CostModel;
use super::events::StreamEvent;
use super::metrics::Metrics;
use super::model::{SegmentJob, SegmentModel, Windowing};
use super::policy::Mode;
use super::run::{Claim, Work};
use crate::speech::{Segment, SpeechRequest};

/// State shared by a stream's consumer and the model thread.
#[derive(Debug, Default)]
pub(super) struct Link {
    pub(super) unread_us: AtomicU64,
    pub(super) cancelled: AtomicBool,
}

pub(super) struct Entry {
    pub(super) id: u64,
    pub(super) mode: Mode,
    pub(super) arrived: Instant,
    pub(super) ready_since: Instant,
    pub(super) segments: Vec<Segment>,
    pub(super) request: SpeechRequest,
    /// The segment being decoded (index `next`), once begun.
    pub(super) job: Option<Box<dyn SegmentJob>>,
    pub(super) next: usize,
    pub(super) first_audio: Option<Instant>,
    pub(super) produced: f64,
    pub(super) throttled: bool,
    /// Decoded in windows (interactive, and the scheduler is configured so).
    pub(super) windowed: bool,
    /// More segments may still come ([`Scheduler::open`](super::Scheduler::open)): the stream ends when its feed
    /// closes, not when its segments run out.
    pub(super) open: bool,
    /// The segment from which windows start small again: 0, or the first segment pushed after
    /// the listener ran out of audio waiting for text.
    pub(super) resumed_at: usize,
    pub(super) link: Arc<Link>,
    pub(super) tx: mpsc::Sender<StreamEvent>,
}

pub(super) struct State {
    pub(super) streams: Vec<Entry>,
    pub(super) next_id: u64,
    pub(super) shutdown: bool,
    pub(super) cost: CostModel,
    /// How the model streams (set by the model thread once the model is loaded).
    pub(super) windowing: Windowing,
    /// Whole-model tasks (benchmarks) waiting to run between two steps.
    pub(super) tasks: std::collections::VecDeque<Task>,
}

/// A closure the model thread runs with the model, between two steps (see
/// [`Scheduler::run_on_model`](super::Scheduler::run_on_model)).
pub(super) type Task = Box<dyn FnOnce(&dyn SegmentModel) + Send>;

/// What the model thread does next.
pub(super) enum Next {
    Step(Vec<Claim>, Vec<Work>),
    Task(Task),
}

pub(super) struct Shared {
    pub(super) state: Mutex<State>,
    pub(super) wake: Condvar,
    pub(super) metrics: Arc<Metrics>,
    pub(super) config: SchedulerConfig,
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Stops the model thread when the last [`Scheduler`](super::Scheduler) clone is dropped.
pub(super) struct Owner(pub(super) Arc<Shared>);

impl Drop for Owner {
    fn drop(&mut self) {
        self.0.lock().shutdown = true;
        self.0.wake.notify_all();
    }
}
