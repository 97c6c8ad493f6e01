//! One scheduler owns the model and serves everyone: studio playback, exports, HTTP clients,
//! and background work (voice-matching probes, cast checks).
//!
//! A request is a stream of segments (sentence groups, one Kokoro pass each). A single named
//! thread loads the model and is the only one that ever runs it ([`Scheduler::start`] takes a
//! loader that runs on that thread, and the model type is not `Send`); before each segment it asks [`policy::pick`] which stream is most
//! urgent — a stream that has sent nothing yet, or whose listener is about to run out of audio —
//! so a new request's first (short) segment overtakes the later segments of streams that are
//! comfortably ahead, but never makes a playing stream run dry: the model thread keeps a running
//! estimate of what a segment costs, and the policy admits a new stream only when every started
//! one can still be served in time after it. Everything CPU-side that is not the model (text normalisation and
//! phonemes in [`crate::segments`], output encoding in the consumer) runs on the caller's
//! threads, concurrently with the model. Background streams run only when nothing interactive
//! is runnable, before exports.
//!
//! Each stream's audio goes through a bounded channel to a [`StreamHandle`]. Audio that the
//! consumer has not taken counts against the stream's high watermark: above it the stream is
//! not scheduled until the consumer drains it below the low watermark, so a slow reader never
//! grows memory and never holds the model. Dropping the handle (a client disconnecting, the
//! user pressing stop or editing the line) cancels the stream before the next scheduling step.
//!
//! Granularity: a scheduling step is a *piece* of work, never a whole segment. The first step
//! of a segment runs its encoder; each later one a piece of a generator pass (a stage's input,
//! a residual block, or the output: about a fifth of a window, see
//! Kokoro's `generator::pass`). An interactive stream's segments are decoded in short
//! windows (the family's [`Windowing`]; for Kokoro a quarter second first, then 0.5, 1 and 1.6 s),
//! and the piece that finishes a window sends its audio. So a new request waits for at most one
//! piece of someone else's work before its encoder runs, and its listener hears the first words
//! after the encoder plus one short window. Kokoro's decoder normalises every layer over what it
//! is given (instance-norm `AdaIN`), so windowed audio differs slightly from one pass (same
//! words and voice by the judge; see the issue notes); offline streams (exports) and
//! [`Scheduler::submit_whole`] decode whole segments, exactly, in pieces all the same.
//!
//! Batching: when the step picked is an encoder, the encoders of equally urgent streams (other
//! newcomers, or other streams about to run dry; exports with exports) may join it in one
//! padded pass ([`policy::encoder_mates`], [`SegmentModel::begin_batch`]), up to the model's
//! [`SegmentModel::batch_limit`]: 8 on CUDA, 1 on the CPU, where a batch costs about what its
//! members cost one by one (`banter bench batch`: 0.9–1.1×) and would only make the first
//! member wait for the others. Generator pieces are not batched: on the CPU one window's
//! convolutions already fill the cores.

mod cost;
pub mod metrics;
mod model;
pub mod policy;
mod pool;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use crate::speech::{Segment, SpeechRequest, SynthError, SAMPLE_RATE};
use cost::CostModel;

pub use metrics::Metrics;
pub(crate) use model::{BeginItem, SegmentJob, SegmentModel, Windowing};
pub use policy::{Mode, Policy};

/// Tuning knobs; the defaults suit a desktop.
#[derive(Debug, Clone, Copy)]
pub struct SchedulerConfig {
    pub policy: Policy,
    /// Safety margin: a new stream is admitted only if every started stream still gets its
    /// next chunk this long before its listener runs dry (the cost estimate is an average; 0.3 s
    /// let bursts of arrivals make playing streams stutter in the load benchmark).
    pub margin: Duration,
    /// Unread audio (seconds) above which a stream stops being scheduled...
    pub high_watermark: f64,
    /// ...until it drains below this.
    pub low_watermark: f64,
    /// Streams waiting for their first audio beyond which new ones are refused.
    pub max_queue: usize,
    /// Decode interactive streams in windows (the model's [`Windowing`]): first audio after the
    /// encoder and a quarter second of generator, at the price of audio that differs slightly
    /// from one pass. Offline streams (exports) always decode whole segments, exactly. Either
    /// way a step is one piece of a pass, so a long segment never holds the model.
    pub windowed: bool,
    /// At most this many segments' encoders in one pass (streams equally urgent, see
    /// [`policy::encoder_mates`]); the model's own [`SegmentModel::batch_limit`] caps it
    /// further (1 on the CPU, where a batch saves little and delays its first member).
    pub max_batch: usize,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        Self {
            policy: Policy::Pressing,
            margin: Duration::from_millis(500),
            high_watermark: 20.0,
            low_watermark: 8.0,
            max_queue: 64,
            windowed: true,
            max_batch: 8,
        }
    }
}

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

/// What a stream's consumer receives; the channel closing means the stream is complete.
#[derive(Debug)]
pub enum StreamEvent {
    /// 24 kHz mono audio: a chunk of segment `segment`; `segment_end` on its last chunk.
    Audio {
        samples: Vec<f32>,
        segment: usize,
        segment_end: bool,
        /// On a segment's first chunk: the frames (600 samples, 25 ms each) the model gave
        /// every token of the segment, the two pads included, so the consumer can tell when
        /// each word is spoken ([`crate::words`]). `None` on later chunks.
        durations: Option<Arc<[u32]>>,
    },
    /// The stream stopped with this error (after any audio already sent); the error keeps
    /// its kind, so an input error (a segment too long for the model) stays one.
    Failed(SynthError),
}

/// Audio and the frames the model gave every token of each segment that made it (pads
/// included), which say when each word is spoken ([`crate::words`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TimedAudio {
    /// 24 kHz mono.
    pub samples: Vec<f32>,
    /// One entry per segment, in order.
    pub durations: Vec<Arc<[u32]>>,
}

/// State shared by a stream's consumer and the model thread.
#[derive(Debug, Default)]
struct Link {
    unread_us: AtomicU64,
    cancelled: AtomicBool,
}

struct Entry {
    id: u64,
    mode: Mode,
    arrived: Instant,
    ready_since: Instant,
    segments: Vec<Segment>,
    request: SpeechRequest,
    /// The segment being decoded (index `next`), once begun.
    job: Option<Box<dyn SegmentJob>>,
    next: usize,
    first_audio: Option<Instant>,
    produced: f64,
    throttled: bool,
    /// Decoded in windows (interactive, and the scheduler is configured so).
    windowed: bool,
    /// More segments may still come ([`Scheduler::open`]): the stream ends when its feed
    /// closes, not when its segments run out.
    open: bool,
    /// The segment from which windows start small again: 0, or the first segment pushed after
    /// the listener ran out of audio waiting for text.
    resumed_at: usize,
    link: Arc<Link>,
    tx: mpsc::Sender<StreamEvent>,
}

struct State {
    streams: Vec<Entry>,
    next_id: u64,
    shutdown: bool,
    cost: CostModel,
    /// How the model streams (set by the model thread once the model is loaded).
    windowing: Windowing,
    /// Whole-model tasks (benchmarks) waiting to run between two steps.
    tasks: std::collections::VecDeque<Task>,
}

/// A closure the model thread runs with the model, between two steps (see
/// [`Scheduler::run_on_model`]).
type Task = Box<dyn FnOnce(&dyn SegmentModel) + Send>;

/// What the model thread does next.
enum Next {
    Step(Vec<Claim>, Vec<Work>),
    Task(Task),
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    metrics: Arc<Metrics>,
    config: SchedulerConfig,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Stops the model thread when the last [`Scheduler`] clone is dropped.
struct Owner(Arc<Shared>);

impl Drop for Owner {
    fn drop(&mut self) {
        self.0.lock().shutdown = true;
        self.0.wake.notify_all();
    }
}

/// The queue in front of the model thread (cheap to clone); [`crate::Engine`] holds it.
#[derive(Clone)]
pub(crate) struct Scheduler {
    shared: Arc<Shared>,
    _owner: Arc<Owner>,
}

impl Scheduler {
    /// Starts the model thread, which runs `load` to make the model and then serves streams
    /// with it until the last handle is dropped. Returns once the model is loaded, with the
    /// model's device; a load error is returned as it is.
    pub(crate) fn start<L>(
        load: L,
        config: SchedulerConfig,
    ) -> Result<(Self, candle_core::Device), SynthError>
    where
        L: FnOnce() -> Result<Box<dyn SegmentModel>, SynthError> + Send + 'static,
    {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                streams: Vec::new(),
                next_id: 0,
                shutdown: false,
                cost: CostModel::default(),
                windowing: Windowing::default(),
                tasks: std::collections::VecDeque::new(),
            }),
            wake: Condvar::new(),
            metrics: Arc::new(Metrics::default()),
            config,
        });
        let worker = Arc::clone(&shared);
        let (ready_tx, ready_rx) = std::sync::mpsc::sync_channel(1);
        std::thread::Builder::new()
            .name("banter-model".into())
            .spawn(move || {
                let pool = pool::model_pool();
                let serve = move || match load() {
                    Ok(model) => {
                        worker.lock().windowing = model.windowing();
                        let _ = ready_tx.send(Ok(model.device()));
                        run(&worker, model.as_ref());
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                    }
                };
                match pool {
                    Some(pool) => pool.install(serve),
                    None => serve(),
                }
            })
            .map_err(SynthError::Start)?;
        let device = ready_rx.recv().map_err(|_| {
            SynthError::Start(std::io::Error::other(
                "the model thread stopped while loading",
            ))
        })??;
        Ok((
            Self {
                _owner: Arc::new(Owner(Arc::clone(&shared))),
                shared,
            },
            device,
        ))
    }

    #[must_use]
    pub fn metrics(&self) -> Arc<Metrics> {
        Arc::clone(&self.shared.metrics)
    }

    /// Runs `f` with the model on the model thread, between two steps, and waits for its
    /// result. Every stream waits while it runs: for measurements of the model itself (the
    /// batch benchmark), never for serving.
    pub(crate) fn run_on_model<T, F>(&self, f: F) -> Result<T, SchedulerError>
    where
        T: Send + 'static,
        F: FnOnce(&dyn SegmentModel) -> T + Send + 'static,
    {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        {
            let mut st = self.shared.lock();
            if st.shutdown {
                return Err(SchedulerError::Shutdown);
            }
            st.tasks.push_back(Box::new(move |model| {
                let _ = tx.send(f(model));
            }));
        }
        self.shared.wake.notify_all();
        rx.recv().map_err(|_| SchedulerError::Shutdown)
    }

    #[must_use]
    pub fn config(&self) -> SchedulerConfig {
        self.shared.config
    }

    /// Queues already-made segments. Interactive streams are decoded in windows when the
    /// configuration says so ([`SchedulerConfig::windowed`]).
    pub fn submit(
        &self,
        segments: Vec<Segment>,
        request: SpeechRequest,
        mode: Mode,
    ) -> Result<StreamHandle, SchedulerError> {
        let windowed = self.shared.config.windowed && mode == Mode::Interactive;
        self.enqueue(segments, request, mode, windowed)
    }

    /// Queues segments to be decoded whole, exactly as one pass computes them, for consumers
    /// that wait for a sentence's end anyway (the studio's playback trims whole sentences) and
    /// gain nothing from windows.
    pub fn submit_whole(
        &self,
        segments: Vec<Segment>,
        request: SpeechRequest,
        mode: Mode,
    ) -> Result<StreamHandle, SchedulerError> {
        self.enqueue(segments, request, mode, false)
    }

    /// Opens a stream whose segments arrive over time (text still being written): push them
    /// with the returned [`StreamFeed`] as they are made, close it when the text is complete.
    /// The stream stays in the queue while it waits for text, runnable only when it has some;
    /// its audio is windowed like any interactive stream's, and when its listener ran out of
    /// audio before new text came, the next segment starts with a short window again and is
    /// scheduled as a newcomer (first audio of the resumed speech counts like a new stream's).
    pub fn open(
        &self,
        request: SpeechRequest,
        mode: Mode,
    ) -> Result<(StreamFeed, StreamHandle), SchedulerError> {
        let windowed = self.shared.config.windowed && mode == Mode::Interactive;
        let (id, handle) = self.insert(Vec::new(), request, mode, windowed, true)?;
        Ok((
            StreamFeed {
                id,
                shared: Arc::clone(&self.shared),
            },
            handle,
        ))
    }

    fn enqueue(
        &self,
        segments: Vec<Segment>,
        request: SpeechRequest,
        mode: Mode,
        windowed: bool,
    ) -> Result<StreamHandle, SchedulerError> {
        self.insert(segments, request, mode, windowed, false)
            .map(|(_, handle)| handle)
    }

    fn insert(
        &self,
        segments: Vec<Segment>,
        request: SpeechRequest,
        mode: Mode,
        windowed: bool,
        open: bool,
    ) -> Result<(u64, StreamHandle), SchedulerError> {
        let link = Arc::new(Link::default());
        let (tx, rx) = mpsc::channel(1024);
        if segments.is_empty() && !open {
            // Nothing to say: the channel closes at once (its sender is dropped here).
            Metrics::add(&self.shared.metrics.submitted, 1);
            Metrics::add(&self.shared.metrics.completed, 1);
            let handle = StreamHandle {
                rx,
                link,
                shared: Arc::clone(&self.shared),
            };
            return Ok((u64::MAX, handle));
        }
        let mut st = self.shared.lock();
        if st.shutdown {
            return Err(SchedulerError::Shutdown);
        }
        // Streams waiting for their first audio; an open stream still waiting for its text is
        // not waiting for the model.
        let waiting = st
            .streams
            .iter()
            .filter(|e| {
                e.first_audio.is_none() && e.mode == Mode::Interactive && !e.segments.is_empty()
            })
            .count();
        if mode == Mode::Interactive && waiting >= self.shared.config.max_queue {
            Metrics::add(&self.shared.metrics.rejected, 1);
            return Err(SchedulerError::QueueFull { waiting });
        }
        let id = st.next_id;
        st.next_id += 1;
        let now = Instant::now();
        st.streams.push(Entry {
            id,
            mode,
            arrived: now,
            ready_since: now,
            segments,
            request,
            job: None,
            next: 0,
            first_audio: None,
            produced: 0.0,
            throttled: false,
            windowed,
            open,
            resumed_at: 0,
            link: Arc::clone(&link),
            tx,
        });
        drop(st);
        Metrics::add(&self.shared.metrics.submitted, 1);
        self.shared.wake.notify_all();
        Ok((
            id,
            StreamHandle {
                rx,
                link,
                shared: Arc::clone(&self.shared),
            },
        ))
    }
}

/// The producer's end of a stream made by [`Scheduler::open`]: segments go in as their text
/// arrives. Dropping it (or [`Self::close`]) says the text is complete; the stream then ends
/// once everything pushed has been spoken.
pub struct StreamFeed {
    id: u64,
    shared: Arc<Shared>,
}

impl StreamFeed {
    /// Appends segments to the stream. [`SchedulerError::Ended`] when the stream is gone (its
    /// listener dropped the handle, or it failed).
    pub fn push(&self, segments: Vec<Segment>) -> Result<(), SchedulerError> {
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

    /// Segments pushed and not yet begun (the text waiting for the model).
    #[must_use]
    pub fn pending(&self) -> usize {
        let st = self.shared.lock();
        st.streams
            .iter()
            .find(|e| e.id == self.id)
            .map_or(0, |e| e.segments.len() - e.next)
    }

    /// The text is complete: the stream ends after what was pushed.
    pub fn close(self) {
        // `Drop` does it.
    }
}

impl Drop for StreamFeed {
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

/// The consumer's end of a stream. Dropping it cancels the stream.
pub struct StreamHandle {
    rx: mpsc::Receiver<StreamEvent>,
    link: Arc<Link>,
    shared: Arc<Shared>,
}

impl StreamHandle {
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
            let us = samples_us(samples.len());
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
    }

    /// Stops the stream; its remaining segments are dropped before the next scheduling step.
    pub fn cancel(&self) {
        self.link.cancelled.store(true, Ordering::Relaxed);
        self.shared.wake.notify_all();
    }
}

impl Drop for StreamHandle {
    fn drop(&mut self) {
        self.cancel();
    }
}

fn samples_us(n: usize) -> u64 {
    (n as u64 * 1_000_000) / u64::from(SAMPLE_RATE)
}

/// What a scheduling step works on: the next piece of a segment under way, or a new segment
/// (with its first window, when windowed).
enum Work {
    Continue(Box<dyn SegmentJob>),
    Begin(Segment, Option<usize>),
}

/// What one scheduling step produced.
struct Step {
    job: Box<dyn SegmentJob>,
    /// A chunk's audio, when the step finished one.
    samples: Option<Vec<f32>>,
    /// The segment this step began (encoded), if that was the work.
    began: Option<Segment>,
    /// Decoder frames of generator the step ran (when it continued a segment).
    frames: f64,
}

/// Runs one step of a stream: encodes its next segment, or runs the next piece of the segment
/// under way.
fn step(model: &dyn SegmentModel, work: Work, request: &SpeechRequest) -> Result<Step, SynthError> {
    match work {
        Work::Begin(segment, first_window) => Ok(Step {
            job: model.begin(&segment, request, first_window)?,
            samples: None,
            began: Some(segment),
            frames: 0.0,
        }),
        Work::Continue(mut job) => {
            let frames = job.next_step_frames();
            let samples = job.advance()?;
            Ok(Step {
                job,
                samples,
                began: None,
                frames,
            })
        }
    }
}

/// One stream's part of a scheduling step.
struct Claim {
    id: u64,
    request: SpeechRequest,
    /// The segment the work belongs to.
    index: usize,
}

/// The model thread.
fn run(shared: &Shared, model: &dyn SegmentModel) {
    let metrics = &shared.metrics;
    let limit = shared.config.max_batch.min(model.batch_limit()).max(1);
    // A GPU step has no parallel sections to poll for.
    let on_cpu = model.device().is_cpu();
    loop {
        let (claims, works) = match next_claims(shared, limit) {
            None => return,
            Some(Next::Task(task)) => {
                task(model);
                continue;
            }
            Some(Next::Step(claims, works)) => (claims, works),
        };
        let started = Instant::now();
        let hot = if on_cpu { pool::Hot::start() } else { None };
        let results = run_works(model, works, &claims);
        drop(hot);
        let busy = started.elapsed();
        let mut st = shared.lock();
        if results.iter().any(Result::is_ok) {
            metrics.step_latency.observe(busy.as_secs_f64());
            metrics.batch_size.observe(results.len() as f64);
            Metrics::add(&metrics.busy_us, busy.as_micros() as u64);
        }
        // A batch's time is shared among its members by their encoder work.
        let units: Vec<f64> = results
            .iter()
            .zip(&claims)
            .map(|(r, c)| match r {
                Ok(Step {
                    began: Some(seg), ..
                }) => CostModel::units(seg, c.request.speed),
                _ => 0.0,
            })
            .collect();
        let total_units: f64 = units.iter().sum();
        let secs = busy.as_secs_f64();
        for ((result, claim), units) in results.into_iter().zip(&claims).zip(units) {
            if let Ok(done) = &result {
                match &done.began {
                    Some(seg) => {
                        let share = if total_units > 0.0 {
                            units / total_units
                        } else {
                            1.0
                        };
                        let frames = done.job.frames();
                        st.cost
                            .observe_begin(seg, claim.request.speed, secs * share, frames);
                    }
                    None => st.cost.observe_generator(done.frames, secs),
                }
            }
            settle(&mut st, metrics, claim, result);
        }
        update_gauges(&st, metrics);
    }
}

/// Waits until the policy picks something, then takes its work — and, when it is an encoder
/// and `limit` allows, the encoders of equally urgent streams to batch with it. `None` on
/// shutdown.
fn next_claims(shared: &Shared, limit: usize) -> Option<Next> {
    let cfg = shared.config;
    let mut st = shared.lock();
    let (choice, mates) = loop {
        if st.shutdown {
            return None;
        }
        if let Some(task) = st.tasks.pop_front() {
            return Some(Next::Task(task));
        }
        prune_and_throttle(&mut st, shared);
        let now = Instant::now();
        let cost = st.cost;
        let windowing = st.windowing;
        let views: Vec<policy::StreamView> = st
            .streams
            .iter()
            .map(|e| view(e, cost, windowing))
            .collect();
        if let Some(i) = policy::pick(&views, now, cfg.margin, cfg.policy) {
            let mates = if limit > 1 && cfg.policy == Policy::Pressing {
                policy::encoder_mates(&views, i, now, cfg.margin, limit - 1)
            } else {
                Vec::new()
            };
            break (i, mates);
        }
        st = shared
            .wake
            .wait_timeout(st, Duration::from_millis(200))
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .0;
    };
    let windowing = st.windowing;
    let mut claims = Vec::with_capacity(1 + mates.len());
    let mut works = Vec::with_capacity(1 + mates.len());
    for i in std::iter::once(choice).chain(mates) {
        let e = &mut st.streams[i];
        shared
            .metrics
            .queue_wait
            .observe(e.ready_since.elapsed().as_secs_f64());
        works.push(if let Some(job) = e.job.take() {
            Work::Continue(job)
        } else {
            let first = first_window(e, windowing);
            Work::Begin(e.segments[e.next].clone(), first)
        });
        claims.push(Claim {
            id: e.id,
            request: e.request.clone(),
            index: e.next,
        });
    }
    Some(Next::Step(claims, works))
}

/// Runs a step: one stream's work, or several streams' encoders in one batched pass.
fn run_works(
    model: &dyn SegmentModel,
    works: Vec<Work>,
    claims: &[Claim],
) -> Vec<Result<Step, SynthError>> {
    let all_begin = works.iter().all(|w| matches!(w, Work::Begin(..)));
    if works.len() == 1 || !all_begin {
        return works
            .into_iter()
            .zip(claims)
            .map(|(work, c)| step(model, work, &c.request))
            .collect();
    }
    let segments: Vec<(Segment, Option<usize>)> = works
        .into_iter()
        .filter_map(|w| match w {
            Work::Begin(segment, first) => Some((segment, first)),
            Work::Continue(_) => None,
        })
        .collect();
    let items: Vec<BeginItem<'_>> = segments
        .iter()
        .zip(claims)
        .map(|((segment, first), c)| (segment, &c.request, *first))
        .collect();
    let jobs = model.begin_batch(&items);
    jobs.into_iter()
        .zip(segments)
        .map(|(job, (segment, _))| {
            Ok(Step {
                job: job?,
                samples: None,
                began: Some(segment),
                frames: 0.0,
            })
        })
        .collect()
}

/// Hands one stream's step result to it: keeps the job, sends audio, counts, or fails it.
fn settle(st: &mut State, metrics: &Metrics, claim: &Claim, result: Result<Step, SynthError>) {
    let Some(pos) = st.streams.iter().position(|e| e.id == claim.id) else {
        return; // cancelled while rendering: pruned (and counted) already
    };
    let index = claim.index;
    match result {
        Ok(Step {
            mut job, samples, ..
        }) => {
            let segment_end = job.is_done();
            let e = &mut st.streams[pos];
            if samples.is_none() && !segment_end {
                // Encoded, or part of a window: no audio yet.
                e.job = Some(job);
                e.ready_since = Instant::now();
                return;
            }
            let samples = samples.unwrap_or_default();
            let durations = job.take_durations();
            if segment_end {
                e.next = index + 1;
                Metrics::add(&metrics.segments, 1);
            } else {
                e.job = Some(job);
            }
            let last = segment_end && e.next == e.segments.len() && !e.open;
            let us = samples_us(samples.len());
            Metrics::add(&metrics.audio_us, us);
            let now = Instant::now();
            match e.first_audio {
                None => {
                    e.first_audio = Some(now);
                    metrics.ttfa.observe((now - e.arrived).as_secs_f64());
                }
                Some(first) => {
                    if first + Duration::from_secs_f64(e.produced) < now {
                        Metrics::add(&metrics.underruns, 1);
                    }
                }
            }
            e.produced += samples.len() as f64 / f64::from(SAMPLE_RATE);
            e.ready_since = now;
            e.link.unread_us.fetch_add(us, Ordering::Relaxed);
            Metrics::add(&metrics.buffered_us, us);
            let sent = e.tx.try_send(StreamEvent::Audio {
                samples,
                segment: index,
                segment_end,
                durations,
            });
            if sent.is_err() {
                e.link.cancelled.store(true, Ordering::Relaxed);
            } else if last {
                // Counted before the entry (and its sender) goes, as for the end of a feed.
                Metrics::add(&metrics.completed, 1);
                st.streams.remove(pos);
            }
        }
        Err(err) => {
            Metrics::add(&metrics.failed, 1);
            let e = st.streams.remove(pos);
            let _ = e.tx.try_send(StreamEvent::Failed(err));
        }
    }
}

/// Drops cancelled or abandoned streams and applies the watermarks.
fn prune_and_throttle(st: &mut State, shared: &Shared) {
    let before = st.streams.len();
    st.streams
        .retain(|e| !e.link.cancelled.load(Ordering::Relaxed) && !e.tx.is_closed());
    let dropped = before - st.streams.len();
    if dropped > 0 {
        Metrics::add(&shared.metrics.cancelled, dropped as u64);
    }
    for e in &mut st.streams {
        let unread = e.link.unread_us.load(Ordering::Relaxed) as f64 / 1e6;
        if e.throttled && unread < shared.config.low_watermark {
            e.throttled = false;
        } else if !e.throttled && unread > shared.config.high_watermark {
            e.throttled = true;
        }
    }
    update_gauges(st, &shared.metrics);
}

fn update_gauges(st: &State, metrics: &Metrics) {
    // Waiting for first audio with something to say (an open stream idle for text is not).
    let queued = st
        .streams
        .iter()
        .filter(|e| e.first_audio.is_none() && (e.job.is_some() || e.next < e.segments.len()))
        .count();
    metrics.queued.store(queued as u64, Ordering::Relaxed);
    metrics
        .active
        .store((st.streams.len() - queued) as u64, Ordering::Relaxed);
}

/// The first window for the segment `e` begins next (`None`: decode it whole). It depends on
/// the segment's place alone, never on timing, so a request gives the same audio however
/// busy the server is ([`Windowing::first_window`]).
fn first_window(e: &Entry, windowing: Windowing) -> Option<usize> {
    e.windowed
        .then(|| windowing.first_window(e.next - e.resumed_at))
}

fn view(e: &Entry, cost: CostModel, windowing: Windowing) -> policy::StreamView {
    policy::StreamView {
        next_cost: match &e.job {
            Some(job) => cost.generator(job.frames_to_audio()),
            None => e.segments.get(e.next).map_or(0.0, |seg| {
                // A window is decoded with its context: that is what the first audio costs.
                let decoded = first_window(e, windowing).map(|f| f + windowing.context);
                cost.to_first_audio(seg, e.request.speed, decoded)
            }),
        },
        step_cost: match &e.job {
            Some(job) => cost.generator(job.next_step_frames()),
            None => e
                .segments
                .get(e.next)
                .map_or(0.0, |seg| cost.encoding(seg, e.request.speed)),
        },
        mode: e.mode,
        arrived: e.arrived,
        first_audio: e.first_audio,
        produced: e.produced,
        unread: e.link.unread_us.load(Ordering::Relaxed) as f64 / 1e6,
        throttled: e.throttled,
        runnable: e.job.is_some() || e.next < e.segments.len(),
        encoding: e.job.is_none() && e.next < e.segments.len(),
    }
}

#[cfg(test)]
mod tests;
