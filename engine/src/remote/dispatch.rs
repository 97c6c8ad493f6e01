//! The dispatcher: which server speaks which segment, and the listener's audio in order.
//!
//! Every server has a few worker threads (its *slots*: how many segments it is given at once,
//! so its own scheduler can interleave and batch them). Workers take segments from one queue,
//! most urgent class first (interactive, then offline, then background; first come first within
//! a class), so one render's segments are spread over every server that is up, and a listener's
//! next sentence overtakes an export's. Each stream keeps a small reorder buffer: a segment's
//! chunks go to the listener as soon as every earlier segment is complete, later ones wait.
//! Memory stays bounded: at most `slots` segments per server are in flight, and a worker waits
//! while its stream's channel is full.
//!
//! A server that fails mid-segment is marked down and the user is told which one and why
//! (`tracing` warning); the segment goes back to the front of the queue for the other
//! servers, skipping the samples the listener already has (a segment renders to the same
//! samples wherever it runs). A down server's workers ask it every [`PROBE_EVERY`] whether it
//! is ready again. When no server is up, waiting streams fail with every server's reason.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::mpsc;

use super::server::{RemoteChunk, RemoteError, RemoteJob, SegmentServer};
use crate::scheduler::{Mode, SchedulerError, StreamEvent, StreamTie};
use crate::speech::SynthError;

/// How often a down server is asked whether it is ready again.
pub const PROBE_EVERY: Duration = Duration::from_secs(2);

/// Chunks a stream may hold unread before its workers wait for the listener.
const CHANNEL_CHUNKS: usize = 64;

/// The dispatcher over a fixed set of servers.
pub struct Dispatcher {
    pool: Arc<Pool>,
    slots: usize,
}

struct Pool {
    servers: Vec<ServerSlot>,
    queue: Mutex<Queue>,
    wake: Condvar,
}

struct ServerSlot {
    server: Arc<dyn SegmentServer>,
    up: AtomicBool,
    /// Why it went down last, for the error when every server is down.
    reason: Mutex<String>,
    /// Segments this server completed (tests and the user's summary).
    spoken: AtomicUsize,
}

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    shutdown: bool,
}

struct Job {
    stream: Arc<Stream>,
    index: usize,
    segment: Arc<RemoteJob>,
    mode: Mode,
    /// A server that refused this segment, with its message: the refusal stands only when a
    /// second server refuses too (a server in a bad state refuses what others speak).
    refused: Option<(usize, String)>,
}

fn rank(mode: Mode) -> u8 {
    match mode {
        Mode::Interactive => 0,
        Mode::Offline => 1,
        Mode::Background => 2,
    }
}

/// One stream's state, shared by its handle, its feed and the workers speaking its segments.
pub(super) struct Stream {
    cancelled: AtomicBool,
    order: Mutex<Reorder>,
    pool: Arc<Pool>,
}

struct Reorder {
    /// `None` once the stream ended (complete, failed or cancelled).
    tx: Option<mpsc::Sender<StreamEvent>>,
    /// The segment the listener is hearing now.
    next: usize,
    /// Segments queued so far; more may come while the feed is open.
    total: usize,
    open: bool,
    parts: BTreeMap<usize, Part>,
}

/// A segment's audio so far: what the listener has, and what waits for earlier segments.
#[derive(Default)]
struct Part {
    /// Samples already handed to the listener (a retry skips them).
    sent: usize,
    durations_sent: bool,
    waiting: Vec<RemoteChunk>,
    done: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Dispatcher {
    /// Starts `slots` workers per server. Servers that are not ready now are marked down (and
    /// probed like any failed one); it is an error when none is ready.
    pub fn start(servers: Vec<Arc<dyn SegmentServer>>, slots: usize) -> Result<Self, SynthError> {
        let slots = slots.max(1);
        let servers: Vec<ServerSlot> = servers
            .into_iter()
            .map(|server| {
                let up = server.ready();
                if !up {
                    tracing::warn!(
                        server = server.name(),
                        "not ready; rendering on the others until it is"
                    );
                }
                ServerSlot {
                    up: AtomicBool::new(up),
                    reason: Mutex::new(if up {
                        String::new()
                    } else {
                        "not ready".into()
                    }),
                    spoken: AtomicUsize::new(0),
                    server,
                }
            })
            .collect();
        if !servers.iter().any(|s| s.up.load(Ordering::Relaxed)) {
            let names: Vec<&str> = servers.iter().map(|s| s.server.name()).collect();
            return Err(SynthError::Remote {
                server: names.join(", "),
                message: "no server is ready (is tritonserver running with model `banter` loaded?)"
                    .into(),
            });
        }
        let pool = Arc::new(Pool {
            servers,
            queue: Mutex::new(Queue::default()),
            wake: Condvar::new(),
        });
        for (i, s) in pool.servers.iter().enumerate() {
            for slot in 0..slots {
                let pool = Arc::clone(&pool);
                std::thread::Builder::new()
                    .name(format!("remote-{}-{slot}", s.server.name()))
                    .spawn(move || worker(&pool, i))
                    .map_err(SynthError::Start)?;
            }
        }
        Ok(Self { pool, slots })
    }

    /// Segments the servers take at once: every server's slots.
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.pool.servers.len() * self.slots
    }

    /// The servers' names with how many segments each has spoken.
    #[must_use]
    pub fn spoken(&self) -> Vec<(String, usize)> {
        self.pool
            .servers
            .iter()
            .map(|s| (s.server.name().to_owned(), s.spoken.load(Ordering::Relaxed)))
            .collect()
    }

    /// The servers' names, each with whether it is taking segments now.
    #[must_use]
    pub fn servers_up(&self) -> Vec<(String, bool)> {
        self.pool
            .servers
            .iter()
            .map(|s| (s.server.name().to_owned(), s.up.load(Ordering::Relaxed)))
            .collect()
    }

    /// Opens a stream: its handle's receiver and tie, and the stream to queue jobs on.
    pub(super) fn open(&self) -> (mpsc::Receiver<StreamEvent>, Arc<Stream>) {
        let (tx, rx) = mpsc::channel(CHANNEL_CHUNKS);
        let stream = Arc::new(Stream {
            cancelled: AtomicBool::new(false),
            order: Mutex::new(Reorder {
                tx: Some(tx),
                next: 0,
                total: 0,
                open: true,
                parts: BTreeMap::new(),
            }),
            pool: Arc::clone(&self.pool),
        });
        (rx, stream)
    }
}

impl Drop for Dispatcher {
    fn drop(&mut self) {
        lock(&self.pool.queue).shutdown = true;
        self.pool.wake.notify_all();
    }
}

impl Stream {
    /// Queues more segments of this stream.
    pub(super) fn push(
        self: &Arc<Self>,
        jobs: Vec<RemoteJob>,
        mode: Mode,
    ) -> Result<(), SchedulerError> {
        let first = {
            let mut order = lock(&self.order);
            if order.tx.is_none() || self.cancelled.load(Ordering::Relaxed) {
                return Err(SchedulerError::Ended);
            }
            let first = order.total;
            order.total += jobs.len();
            first
        };
        if let Some(down) = self.pool.all_down() {
            return Err(SchedulerError::Synth(down));
        }
        let mut queue = lock(&self.pool.queue);
        if queue.shutdown {
            return Err(SchedulerError::Shutdown);
        }
        // After the last job of the same or a more urgent class: urgent classes first, first
        // come first within a class.
        let at = queue
            .jobs
            .iter()
            .rposition(|j| rank(j.mode) <= rank(mode))
            .map_or(0, |p| p + 1);
        for (k, job) in jobs.into_iter().enumerate() {
            queue.jobs.insert(
                at + k,
                Job {
                    stream: Arc::clone(self),
                    index: first + k,
                    segment: Arc::new(job),
                    mode,
                    refused: None,
                },
            );
        }
        drop(queue);
        self.pool.wake.notify_all();
        Ok(())
    }

    /// Segments queued and not yet given to a server.
    pub(super) fn pending(self: &Arc<Self>) -> usize {
        lock(&self.pool.queue)
            .jobs
            .iter()
            .filter(|j| Arc::ptr_eq(&j.stream, self))
            .count()
    }

    /// No more segments will come: the stream ends once those queued are spoken.
    pub(super) fn close(&self) {
        let mut order = lock(&self.order);
        order.open = false;
        finish_if_complete(&mut order);
    }

    fn ended(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed) || lock(&self.order).tx.is_none()
    }

    /// Takes a chunk of segment `index` from a server; false when nobody wants more.
    fn deliver(&self, index: usize, mut chunk: RemoteChunk, skip: &mut usize) -> bool {
        if self.cancelled.load(Ordering::Relaxed) {
            return false;
        }
        // A retried segment: drop what the listener already has from the first server.
        let drop_now = (*skip).min(chunk.samples.len());
        chunk.samples.drain(..drop_now);
        *skip -= drop_now;
        let mut order = lock(&self.order);
        if order.tx.is_none() {
            return false;
        }
        let next = order.next;
        let part = order.parts.entry(index).or_default();
        if part.durations_sent {
            chunk.durations = None;
        }
        part.waiting.push(chunk);
        if index == next {
            flush(&mut order)
        } else {
            true
        }
    }

    /// The segment failed for good: the listener gets the error after what it has.
    fn fail(&self, error: SynthError) {
        let mut order = lock(&self.order);
        if let Some(tx) = order.tx.take() {
            let _ = send(&tx, StreamEvent::Failed(error));
        }
        order.parts.clear();
    }

    /// Forgets what a failed server sent of segment `index` but the listener has not heard;
    /// returns how many samples the listener has (the retry skips them).
    fn rewind(&self, index: usize) -> usize {
        let mut order = lock(&self.order);
        let part = order.parts.entry(index).or_default();
        part.waiting.clear();
        part.done = false;
        part.sent
    }
}

/// Hands the listener every chunk it may hear now, in order; false when the listener left.
fn flush(order: &mut Reorder) -> bool {
    loop {
        let next = order.next;
        let Some(tx) = order.tx.clone() else {
            return false;
        };
        let Some(part) = order.parts.get_mut(&next) else {
            return true;
        };
        for chunk in part.waiting.drain(..) {
            let durations = if part.durations_sent {
                None
            } else {
                chunk.durations.map(Arc::from)
            };
            part.durations_sent |= durations.is_some();
            part.sent += chunk.samples.len();
            let event = StreamEvent::Audio {
                samples: chunk.samples,
                segment: next,
                segment_end: chunk.end,
                durations,
            };
            if !send(&tx, event) {
                order.tx = None;
                return false;
            }
            part.done |= chunk.end;
        }
        if !part.done {
            return true;
        }
        order.parts.remove(&next);
        order.next += 1;
        if finish_if_complete(order) {
            return true;
        }
    }
}

/// Sends `event`, waiting while the listener's channel is full; false when the listener left.
/// Not tokio's `blocking_send`: a server may call its sink from inside its own runtime's
/// `block_on` (the gRPC client does), where blocking that way is refused.
fn send(tx: &mpsc::Sender<StreamEvent>, mut event: StreamEvent) -> bool {
    loop {
        match tx.try_send(event) {
            Ok(()) => return true,
            Err(mpsc::error::TrySendError::Closed(_)) => return false,
            Err(mpsc::error::TrySendError::Full(back)) => {
                event = back;
                std::thread::sleep(Duration::from_millis(2));
            }
        }
    }
}

/// Closes the channel when every segment is heard and no more can come; true if it did.
fn finish_if_complete(order: &mut Reorder) -> bool {
    if !order.open && order.next >= order.total {
        order.tx = None;
        true
    } else {
        false
    }
}

/// A worker of server `i`: speaks queued segments while its server is up, probes it while
/// it is down.
fn worker(pool: &Arc<Pool>, i: usize) {
    let slot = &pool.servers[i];
    loop {
        if !slot.up.load(Ordering::Relaxed) {
            if lock(&pool.queue).shutdown {
                return;
            }
            std::thread::sleep(PROBE_EVERY);
            if slot.server.ready() && !slot.up.swap(true, Ordering::Relaxed) {
                tracing::warn!(server = slot.server.name(), "ready again; rendering on it");
                pool.wake.notify_all();
            }
            continue;
        }
        let job = match next_job(pool, i) {
            Next::Job(job) => job,
            Next::Down => continue,
            Next::Shutdown => return,
        };
        if job.stream.ended() {
            continue;
        }
        let mut skip = job.stream.rewind(job.index);
        let result = slot.server.speak(&job.segment, &mut |chunk| {
            if chunk.end {
                // Counted before the listener can see the end of its stream.
                slot.spoken.fetch_add(1, Ordering::Relaxed);
            }
            job.stream.deliver(job.index, chunk, &mut skip)
        });
        match result {
            Ok(()) => {
                if let Some((other, message)) = job.refused {
                    mark_down(
                        pool,
                        other,
                        &format!("refused what {} spoke: {message}", slot.server.name()),
                    );
                }
            }
            Err(RemoteError::Refused(message)) => {
                let ask_another = job.refused.is_none()
                    && (pool.up_count() > 1 || !slot.up.load(Ordering::Relaxed));
                if ask_another {
                    let mut job = job;
                    job.refused = Some((i, message));
                    requeue_elsewhere(pool, job);
                } else {
                    job.stream.fail(SynthError::Remote {
                        server: slot.server.name().to_owned(),
                        message,
                    });
                }
            }
            Err(RemoteError::Unavailable(reason)) => server_failed(pool, i, job, &reason),
        }
    }
}

enum Next {
    Job(Job),
    /// This worker's server went down while it waited: back to probing.
    Down,
    Shutdown,
}

/// Waits for a job this worker may take.
fn next_job(pool: &Pool, i: usize) -> Next {
    let slot = &pool.servers[i];
    let mut queue = lock(&pool.queue);
    loop {
        if queue.shutdown {
            return Next::Shutdown;
        }
        if !slot.up.load(Ordering::Relaxed) {
            return Next::Down;
        }
        // Not a segment this server refused: that one waits for a second opinion.
        let mine = queue
            .jobs
            .iter()
            .position(|j| j.refused.as_ref().is_none_or(|(by, _)| *by != i));
        if let Some(job) = mine.and_then(|p| queue.jobs.remove(p)) {
            return Next::Job(job);
        }
        queue = pool
            .wake
            .wait(queue)
            .unwrap_or_else(PoisonError::into_inner);
    }
}

/// Server `i` went away mid-segment: mark it down, tell the user, and give the segment to
/// the others (or fail every waiting stream when no server is left).
fn server_failed(pool: &Pool, i: usize, job: Job, reason: &str) {
    mark_down(pool, i, reason);
    requeue_elsewhere(pool, job);
}

/// Marks server `i` down with `reason`, telling the user the first time.
fn mark_down(pool: &Pool, i: usize, reason: &str) {
    let slot = &pool.servers[i];
    reason.clone_into(&mut lock(&slot.reason));
    if slot.up.swap(false, Ordering::Relaxed) {
        tracing::warn!(
            server = slot.server.name(),
            "failed: {reason}; its segments go to the other servers"
        );
    }
}

/// Puts `job` first in the queue for the servers that are up; fails every waiting stream
/// when none is.
fn requeue_elsewhere(pool: &Pool, job: Job) {
    let mut queue = lock(&pool.queue);
    queue.jobs.push_front(job);
    if pool.servers.iter().any(|s| s.up.load(Ordering::Relaxed)) {
        drop(queue);
        pool.wake.notify_all();
        return;
    }
    let jobs: Vec<Job> = queue.jobs.drain(..).collect();
    drop(queue);
    for job in jobs {
        if let (false, Some(error)) = (job.stream.ended(), pool.all_down()) {
            job.stream.fail(error);
        }
    }
}

impl Pool {
    fn up_count(&self) -> usize {
        self.servers
            .iter()
            .filter(|s| s.up.load(Ordering::Relaxed))
            .count()
    }

    /// The error for a request when no server is up, naming each with its reason.
    fn all_down(&self) -> Option<SynthError> {
        if self.servers.iter().any(|s| s.up.load(Ordering::Relaxed)) {
            return None;
        }
        let reasons: Vec<String> = self
            .servers
            .iter()
            .map(|s| format!("{} ({})", s.server.name(), lock(&s.reason)))
            .collect();
        Some(SynthError::Remote {
            server: reasons.join(", "),
            message: "every server is unreachable".into(),
        })
    }
}

impl StreamTie for Stream {
    fn taken(&self, _samples: usize) {}

    fn cancel(&self) {
        // Only the flag: a worker may hold the order lock while it waits for room in the
        // channel, which the handle frees by dropping its receiver right after this.
        self.cancelled.store(true, Ordering::Relaxed);
    }
}
