//! One scheduler owns the model and serves everyone: studio playback, exports and HTTP clients.
//!
//! A request is a stream of segments (sentence groups, one Kokoro pass each). A single named
//! thread runs the model; before each segment it asks [`policy::pick`] which stream is most
//! urgent — a stream that has sent nothing yet, or whose listener is about to run out of audio —
//! so a new request's first (short) segment overtakes the later segments of streams that are
//! comfortably ahead, but never makes a playing stream run dry: the model thread keeps a running
//! estimate of what a segment costs, and the policy admits a new stream only when every started
//! one can still be served in time after it. Everything CPU-side that is not the model (text normalisation and
//! phonemes in [`Scheduler::submit_text`], output encoding in the consumer) runs on the
//! caller's threads, concurrently with the model.
//!
//! Each stream's audio goes through a bounded channel to a [`StreamHandle`]. Audio that the
//! consumer has not taken counts against the stream's high watermark: above it the stream is
//! not scheduled until the consumer drains it below the low watermark, so a slow reader never
//! grows memory and never holds the model. Dropping the handle (a client disconnecting, the
//! user pressing stop or editing the line) cancels the stream before the next scheduling step.
//!
//! Granularity: Kokoro's decoder normalises every layer over a segment's whole length
//! (instance-norm `AdaIN`), so a segment cannot be decoded in independent chunks without
//! changing its audio (measured in the `streaming` e2e tests: 2–4 dB SNR). The unit of
//! scheduling, and of preemption, is therefore the segment; first segments are kept short for
//! time to first audio. Passes are not batched across streams: on the CPU the convolutions and
//! matrix products of one segment already fill the cores (see the issue notes for figures).

pub mod metrics;
pub mod policy;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use crate::synth::{Segment, SpeechRequest, SynthError, Synthesizer, SAMPLE_RATE};

pub use metrics::Metrics;
pub use policy::{Mode, Policy};

/// What the scheduler needs from a model: segments for a text, audio for a segment.
pub trait SegmentModel: Send + Sync + 'static {
    fn segments(&self, text: &str, request: &SpeechRequest) -> Result<Vec<Segment>, SynthError>;
    /// 24 kHz audio of one segment.
    fn render(&self, segment: &Segment, request: &SpeechRequest) -> Result<Vec<f32>, SynthError>;
}

impl SegmentModel for Synthesizer {
    fn segments(&self, text: &str, request: &SpeechRequest) -> Result<Vec<Segment>, SynthError> {
        self.voice(&request.voice)?;
        Synthesizer::segments(self, text, request)
    }

    fn render(&self, segment: &Segment, request: &SpeechRequest) -> Result<Vec<f32>, SynthError> {
        self.render_segments(vec![segment.clone()], request)
    }
}

/// Tuning knobs; the defaults suit a desktop.
#[derive(Debug, Clone, Copy)]
pub struct SchedulerConfig {
    pub policy: Policy,
    /// Safety margin: a new stream is admitted only if every started stream still gets its
    /// next segment this long before its listener runs dry (the cost estimate is an average).
    pub margin: Duration,
    /// Unread audio (seconds) above which a stream stops being scheduled...
    pub high_watermark: f64,
    /// ...until it drains below this.
    pub low_watermark: f64,
    /// Streams waiting for their first audio beyond which new ones are refused.
    pub max_queue: usize,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        Self {
            policy: Policy::Pressing,
            margin: Duration::from_millis(300),
            high_watermark: 20.0,
            low_watermark: 8.0,
            max_queue: 64,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SchedulerError {
    #[error("{waiting} requests are already waiting; try again shortly")]
    QueueFull { waiting: usize },
    #[error("the scheduler has shut down")]
    Shutdown,
    #[error(transparent)]
    Synth(#[from] SynthError),
}

/// What a stream's consumer receives; the channel closing means the stream is complete.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// 24 kHz mono audio of one segment.
    Audio { samples: Vec<f32>, segment: usize },
    /// The stream stopped with this error (after any audio already sent).
    Failed(String),
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
    next: usize,
    first_audio: Option<Instant>,
    produced: f64,
    throttled: bool,
    link: Arc<Link>,
    tx: mpsc::Sender<StreamEvent>,
}

struct State {
    streams: Vec<Entry>,
    next_id: u64,
    shutdown: bool,
    cost: CostModel,
}

/// Estimated compute time of a segment: a running average of seconds per unit of work, where a
/// unit is a phoneme id at speed 1 (the decoder's work grows with the audio's length, so with
/// ids ÷ speed), plus a fixed share per pass for the encoder and the tensors' set-up.
#[derive(Debug, Clone, Copy)]
struct CostModel {
    secs_per_unit: f64,
}

impl CostModel {
    /// Units a pass costs before its first phoneme.
    const OVERHEAD_UNITS: f64 = 12.0;
    /// Weight of the newest measurement.
    const ALPHA: f64 = 0.3;

    fn units(segment: &Segment, speed: f32) -> f64 {
        segment.ids.len() as f64 / f64::from(speed.max(0.1)) + Self::OVERHEAD_UNITS
    }

    fn estimate(self, segment: &Segment, speed: f32) -> f64 {
        self.secs_per_unit * Self::units(segment, speed)
    }

    fn observe(&mut self, segment: &Segment, speed: f32, secs: f64) {
        let rate = secs / Self::units(segment, speed);
        if rate.is_finite() {
            self.secs_per_unit += Self::ALPHA * (rate - self.secs_per_unit);
        }
    }
}

impl Default for CostModel {
    /// A 2-core CPU's figure (about 0.4 s of compute per second of speech); the first
    /// measurements replace it.
    fn default() -> Self {
        Self {
            secs_per_unit: 0.006,
        }
    }
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    metrics: Arc<Metrics>,
    config: SchedulerConfig,
    model: Arc<dyn SegmentModel>,
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

/// The handle everyone shares (cheap to clone).
#[derive(Clone)]
pub struct Scheduler {
    shared: Arc<Shared>,
    _owner: Arc<Owner>,
}

impl Scheduler {
    /// Starts the model thread.
    pub fn start(model: Arc<dyn SegmentModel>, config: SchedulerConfig) -> std::io::Result<Self> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                streams: Vec::new(),
                next_id: 0,
                shutdown: false,
                cost: CostModel::default(),
            }),
            wake: Condvar::new(),
            metrics: Arc::new(Metrics::default()),
            config,
            model,
        });
        let worker = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("banter-model".into())
            .spawn(move || run(&worker))?;
        Ok(Self {
            _owner: Arc::new(Owner(Arc::clone(&shared))),
            shared,
        })
    }

    #[must_use]
    pub fn metrics(&self) -> Arc<Metrics> {
        Arc::clone(&self.shared.metrics)
    }

    #[must_use]
    pub fn config(&self) -> SchedulerConfig {
        self.shared.config
    }

    /// Phonemizes `text` on the calling thread, then queues it.
    pub fn submit_text(
        &self,
        text: &str,
        request: SpeechRequest,
        mode: Mode,
    ) -> Result<StreamHandle, SchedulerError> {
        let segments = self.shared.model.segments(text, &request)?;
        self.submit(segments, request, mode)
    }

    /// Queues already-made segments.
    pub fn submit(
        &self,
        segments: Vec<Segment>,
        request: SpeechRequest,
        mode: Mode,
    ) -> Result<StreamHandle, SchedulerError> {
        let link = Arc::new(Link::default());
        let (tx, rx) = mpsc::channel(1024);
        if segments.is_empty() {
            // Nothing to say: the channel closes at once (its sender is dropped here).
            Metrics::add(&self.shared.metrics.submitted, 1);
            Metrics::add(&self.shared.metrics.completed, 1);
            return Ok(StreamHandle {
                rx,
                link,
                shared: Arc::clone(&self.shared),
            });
        }
        let mut st = self.shared.lock();
        if st.shutdown {
            return Err(SchedulerError::Shutdown);
        }
        let waiting = st
            .streams
            .iter()
            .filter(|e| e.first_audio.is_none() && e.mode == Mode::Interactive)
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
            next: 0,
            first_audio: None,
            produced: 0.0,
            throttled: false,
            link: Arc::clone(&link),
            tx,
        });
        drop(st);
        Metrics::add(&self.shared.metrics.submitted, 1);
        self.shared.wake.notify_all();
        Ok(StreamHandle {
            rx,
            link,
            shared: Arc::clone(&self.shared),
        })
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

/// The model thread.
fn run(shared: &Shared) {
    let metrics = &shared.metrics;
    let cfg = shared.config;
    loop {
        let (id, segment, request, index, last) = {
            let mut st = shared.lock();
            let choice = loop {
                if st.shutdown {
                    return;
                }
                prune_and_throttle(&mut st, shared);
                let now = Instant::now();
                let cost = st.cost;
                let views: Vec<policy::StreamView> =
                    st.streams.iter().map(|e| view(e, cost)).collect();
                if let Some(i) = policy::pick(&views, now, cfg.margin, cfg.policy) {
                    break i;
                }
                st = shared
                    .wake
                    .wait_timeout(st, Duration::from_millis(200))
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .0;
            };
            let e = &mut st.streams[choice];
            metrics
                .queue_wait
                .observe(e.ready_since.elapsed().as_secs_f64());
            let index = e.next;
            e.next += 1;
            (
                e.id,
                e.segments[index].clone(),
                e.request.clone(),
                index,
                e.next == e.segments.len(),
            )
        };
        let started = Instant::now();
        let result = shared.model.render(&segment, &request);
        let busy = started.elapsed();
        let mut st = shared.lock();
        if result.is_ok() {
            st.cost.observe(&segment, request.speed, busy.as_secs_f64());
        }
        let Some(pos) = st.streams.iter().position(|e| e.id == id) else {
            continue; // cancelled while rendering: pruned (and counted) already
        };
        match result {
            Ok(samples) => {
                metrics.segment_latency.observe(busy.as_secs_f64());
                metrics.batch_size.observe(1.0);
                Metrics::add(&metrics.segments, 1);
                Metrics::add(&metrics.busy_us, busy.as_micros() as u64);
                let us = samples_us(samples.len());
                Metrics::add(&metrics.audio_us, us);
                let now = Instant::now();
                let e = &mut st.streams[pos];
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
                });
                if sent.is_err() {
                    e.link.cancelled.store(true, Ordering::Relaxed);
                } else if last {
                    st.streams.remove(pos);
                    Metrics::add(&metrics.completed, 1);
                }
            }
            Err(err) => {
                let e = st.streams.remove(pos);
                let _ = e.tx.try_send(StreamEvent::Failed(err.to_string()));
                Metrics::add(&metrics.failed, 1);
            }
        }
        update_gauges(&st, metrics);
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
    let queued = st
        .streams
        .iter()
        .filter(|e| e.first_audio.is_none())
        .count();
    metrics.queued.store(queued as u64, Ordering::Relaxed);
    metrics
        .active
        .store((st.streams.len() - queued) as u64, Ordering::Relaxed);
}

fn view(e: &Entry, cost: CostModel) -> policy::StreamView {
    policy::StreamView {
        next_cost: e
            .segments
            .get(e.next)
            .map_or(0.0, |seg| cost.estimate(seg, e.request.speed)),
        mode: e.mode,
        arrived: e.arrived,
        first_audio: e.first_audio,
        produced: e.produced,
        unread: e.link.unread_us.load(Ordering::Relaxed) as f64 / 1e6,
        throttled: e.throttled,
        runnable: e.next < e.segments.len(),
    }
}

#[cfg(test)]
mod tests;
