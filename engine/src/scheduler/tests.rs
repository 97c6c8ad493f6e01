//! Scheduler behaviour with a stand-in model family (a fixed cost per segment), so the tests
//! need no weights and run in milliseconds. It is the second implementation of the one model
//! interface (`scheduler::model`), beside Kokoro's, and names no Kokoro type: its windows and
//! errors are its own, which is what keeps the seam honest.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::*;
use std::sync::Mutex;

use crate::speech::{Segment, SpeechRequest, SynthError, SAMPLE_RATE};

/// Renders 0.5 s of a constant per chunk, in `chunks` chunks per segment when windowed (one
/// otherwise), each chunk in `pieces` steps that sleep `cost`; logs which stream ran: `log` per
/// finished segment, `chunk_log` per chunk (`a0#1` is the second chunk of segment `a0`),
/// `step_log` per step (`a0:begin`, then `a0#1.2` for the third piece of that chunk).
struct FakeModel {
    cost: Duration,
    chunks: usize,
    pieces: usize,
    rendered: AtomicUsize,
    log: Mutex<Vec<String>>,
    chunk_log: Mutex<Vec<String>>,
    step_log: Mutex<Vec<String>>,
    /// The first window each `begin` was given.
    first_windows: Mutex<Vec<Option<usize>>>,
    /// Encoders per batched pass the model offers (`batch_limit`).
    batch: usize,
    /// Windows per batched pass the model offers (`window_batch_limit`).
    windows: usize,
}

impl FakeModel {
    fn new(cost_ms: u64) -> Arc<Self> {
        Self::windowed(cost_ms, 1)
    }

    fn windowed(cost_ms: u64, chunks: usize) -> Arc<Self> {
        Arc::new(Self {
            cost: Duration::from_millis(cost_ms),
            chunks,
            pieces: 1,
            rendered: AtomicUsize::new(0),
            log: Mutex::new(Vec::new()),
            chunk_log: Mutex::new(Vec::new()),
            step_log: Mutex::new(Vec::new()),
            first_windows: Mutex::new(Vec::new()),
            batch: 1,
            windows: 1,
        })
    }

    /// Batches encoders and windows, `windows` of each (as on a GPU).
    fn batching_windows(cost_ms: u64, chunks: usize, pieces: usize, windows: usize) -> Arc<Self> {
        let mut model = Arc::into_inner(Self::in_pieces(cost_ms, chunks, pieces)).expect("fresh");
        model.batch = windows;
        model.windows = windows;
        Arc::new(model)
    }

    fn batching(cost_ms: u64, chunks: usize, batch: usize) -> Arc<Self> {
        let mut model = Arc::into_inner(Self::windowed(cost_ms, chunks)).expect("fresh");
        model.batch = batch;
        Arc::new(model)
    }

    fn in_pieces(cost_ms: u64, chunks: usize, pieces: usize) -> Arc<Self> {
        let mut model = Arc::into_inner(Self::windowed(cost_ms, chunks)).expect("fresh");
        model.pieces = pieces;
        Arc::new(model)
    }

    fn steps(&self) -> Vec<String> {
        self.step_log.lock().expect("log").clone()
    }
}

struct FakeJob {
    model: Arc<FakeModel>,
    name: String,
    chunks: usize,
    next: usize,
    piece: usize,
}

impl SegmentJob for FakeJob {
    fn advance(&mut self) -> Result<Option<Vec<f32>>, SynthError> {
        if self.next == self.chunks {
            return Ok(None);
        }
        std::thread::sleep(self.model.cost);
        let m = &self.model;
        m.step_log
            .lock()
            .expect("log")
            .push(format!("{}#{}.{}", self.name, self.next, self.piece));
        self.piece += 1;
        if self.piece < m.pieces {
            return Ok(None);
        }
        self.piece = 0;
        m.chunk_log
            .lock()
            .expect("log")
            .push(format!("{}#{}", self.name, self.next));
        self.next += 1;
        if self.next == self.chunks {
            m.rendered.fetch_add(1, Ordering::SeqCst);
            m.log.lock().expect("log").push(self.name.clone());
        }
        Ok(Some(vec![0.1; SAMPLE_RATE as usize / 2]))
    }

    fn is_done(&self) -> bool {
        self.next == self.chunks
    }

    fn next_step_frames(&self) -> f64 {
        if self.is_done() {
            0.0
        } else {
            10.0
        }
    }

    fn frames(&self) -> usize {
        40 * self.chunks
    }

    fn frames_to_audio(&self) -> f64 {
        if self.is_done() {
            0.0
        } else {
            10.0 * (self.model.pieces - self.piece) as f64
        }
    }

    /// A first window pads to 7, later ones to 33 (the fake's own numbers).
    fn window_bucket(&self) -> Option<usize> {
        (self.piece == 0 && !self.is_done()).then_some(if self.next == 0 { 7 } else { 33 })
    }

    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }
}

/// The model thread owns the model as a `Box<dyn SegmentModel>`; jobs and the tests need their
/// own handle to the fake.
struct Shared(Arc<FakeModel>);

/// The tests' texts are segment names separated by `|`.
trait SubmitText {
    fn submit_text(
        &self,
        text: &str,
        request: SpeechRequest,
        mode: Mode,
    ) -> Result<StreamHandle, SchedulerError>;
}

impl SubmitText for Scheduler {
    fn submit_text(
        &self,
        text: &str,
        request: SpeechRequest,
        mode: Mode,
    ) -> Result<StreamHandle, SchedulerError> {
        let segments = text
            .split('|')
            .map(|p| Segment {
                phonemes: p.to_owned(),
                ids: vec![1],
            })
            .collect();
        self.submit(segments, request, mode)
    }
}

/// The fake family's windows: numbers of its own, unlike Kokoro's, so a test that sees them
/// knows the scheduler asked the family rather than assuming Kokoro.
const FAKE_WINDOWING: Windowing = Windowing {
    first: 7,
    later_first: 33,
    context: 2,
};

impl SegmentModel for Shared {
    fn batch_limit(&self) -> usize {
        self.0.batch
    }

    fn windowing(&self) -> Windowing {
        FAKE_WINDOWING
    }

    fn window_batch_limit(&self) -> usize {
        self.0.windows
    }

    /// Logs the batch (`a0#1+b0#0:windows`), then runs each window as the default does.
    fn advance_windows(
        &self,
        jobs: &mut [Box<dyn SegmentJob>],
    ) -> Vec<Result<Option<Vec<f32>>, SynthError>> {
        let names: Vec<String> = jobs
            .iter_mut()
            .map(|job| {
                job.as_any_mut()
                    .and_then(|any| any.downcast_mut::<FakeJob>())
                    .map_or_else(|| "?".to_owned(), |j| format!("{}#{}", j.name, j.next))
            })
            .collect();
        self.0
            .step_log
            .lock()
            .expect("log")
            .push(format!("{}:windows", names.join("+")));
        advance_each(jobs)
    }

    fn begin_batch(&self, items: &[BeginItem<'_>]) -> Vec<Result<Box<dyn SegmentJob>, SynthError>> {
        let names: Vec<&str> = items.iter().map(|(s, _, _)| s.phonemes.as_str()).collect();
        self.0
            .step_log
            .lock()
            .expect("log")
            .push(format!("{}:batch", names.join("+")));
        items
            .iter()
            .map(|(segment, request, first)| self.begin(segment, request, *first))
            .collect()
    }

    fn begin(
        &self,
        segment: &Segment,
        _: &SpeechRequest,
        first_window: Option<usize>,
    ) -> Result<Box<dyn SegmentJob>, SynthError> {
        if segment.phonemes.starts_with("bad") {
            return Err(SynthError::Inference(candle_core::Error::Msg(format!(
                "{} cannot be encoded",
                segment.phonemes
            ))));
        }
        if segment.phonemes.starts_with("toolong") {
            return Err(SynthError::NothingToSay {
                excerpt: segment.phonemes.clone(),
            });
        }
        if segment.phonemes.starts_with("slow") {
            std::thread::sleep(Duration::from_millis(150));
        }
        self.0
            .step_log
            .lock()
            .expect("log")
            .push(format!("{}:begin", segment.phonemes));
        self.0.first_windows.lock().expect("log").push(first_window);
        Ok(Box::new(FakeJob {
            model: Arc::clone(&self.0),
            name: segment.phonemes.clone(),
            chunks: if first_window.is_some() {
                self.0.chunks
            } else {
                1
            },
            next: 0,
            piece: 0,
        }))
    }
}

fn start(model: &Arc<FakeModel>, cfg: SchedulerConfig) -> Scheduler {
    let model = Arc::clone(model);
    let load = move || -> Result<Box<dyn SegmentModel>, SynthError> { Ok(Box::new(Shared(model))) };
    Scheduler::start(load, cfg).expect("start").0
}

fn request() -> SpeechRequest {
    SpeechRequest::new("af_heart", 1.0).expect("request")
}

fn text(name: &str, n: usize) -> String {
    (0..n)
        .map(|i| format!("{name}{i}"))
        .collect::<Vec<_>>()
        .join("|")
}

#[test]
fn a_new_stream_overtakes_one_that_is_ahead() {
    let model = FakeModel::new(20);
    let sched = start(&model, SchedulerConfig::default());
    let mut long = sched
        .submit_text(&text("a", 30), request(), Mode::Interactive)
        .expect("submit");
    // Let the long stream get well ahead of its (imaginary, real-time) listener.
    for _ in 0..8 {
        assert!(matches!(
            long.blocking_next(),
            Some(StreamEvent::Audio { .. })
        ));
    }
    let mut short = sched
        .submit_text(&text("b", 2), request(), Mode::Interactive)
        .expect("submit");
    assert!(matches!(
        short.blocking_next(),
        Some(StreamEvent::Audio { .. })
    ));
    assert!(matches!(
        short.blocking_next(),
        Some(StreamEvent::Audio { .. })
    ));
    assert!(short.blocking_next().is_none(), "stream ends");
    let log = model.log.lock().expect("log").clone();
    let b1 = log.iter().position(|s| s == "b1").expect("b1 rendered");
    // Both of b's segments ran before a got far: a was 4 s ahead, b was pressing.
    assert!(
        log[..b1].iter().filter(|s| s.starts_with('a')).count() <= 10,
        "{log:?}"
    );
    drop(long);
}

#[test]
fn fifo_policy_serves_one_stream_to_the_end() {
    let model = FakeModel::new(5);
    let cfg = SchedulerConfig {
        policy: Policy::Fifo,
        ..SchedulerConfig::default()
    };
    let sched = start(&model, cfg);
    let mut a = sched
        .submit_text(&text("a", 6), request(), Mode::Interactive)
        .expect("a");
    let mut b = sched
        .submit_text(&text("b", 2), request(), Mode::Interactive)
        .expect("b");
    while a.blocking_next().is_some() {}
    while b.blocking_next().is_some() {}
    let log = model.log.lock().expect("log").clone();
    assert_eq!(log, ["a0", "a1", "a2", "a3", "a4", "a5", "b0", "b1"]);
}

#[test]
fn watermarks_bound_unread_audio() {
    let model = FakeModel::new(1);
    let cfg = SchedulerConfig {
        high_watermark: 3.0,
        low_watermark: 1.0,
        ..SchedulerConfig::default()
    };
    let sched = start(&model, cfg);
    let mut slow = sched
        .submit_text(&text("s", 200), request(), Mode::Interactive)
        .expect("submit");
    // Nobody reads: production stops just past the high watermark (0.5 s per segment).
    let made = settle(&model);
    assert!(
        (6..=8).contains(&made),
        "rendered {made} segments while unread"
    );
    let buffered = sched.metrics().buffered_us.load(Ordering::Relaxed) as f64 / 1e6;
    assert!(buffered <= 3.5, "{buffered} s buffered");
    // Reading drains it and production resumes.
    for _ in 0..6 {
        slow.blocking_next();
    }
    assert!(settle(&model) > made);
}

/// Waits until the model has rendered nothing new for 150 ms (at most 10 s); returns the count.
fn settle(model: &FakeModel) -> usize {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut last = model.rendered.load(Ordering::SeqCst);
    loop {
        std::thread::sleep(Duration::from_millis(150));
        let now = model.rendered.load(Ordering::SeqCst);
        if now == last || std::time::Instant::now() > deadline {
            return now;
        }
        last = now;
    }
}

#[test]
fn dropping_a_handle_cancels_its_work() {
    let model = FakeModel::new(10);
    let sched = start(&model, SchedulerConfig::default());
    let mut h = sched
        .submit_text(&text("c", 100), request(), Mode::Interactive)
        .expect("submit");
    h.blocking_next();
    drop(h);
    std::thread::sleep(Duration::from_millis(100));
    let metrics = sched.metrics();
    assert_eq!(metrics.cancelled.load(Ordering::Relaxed), 1);
    let made = model.rendered.load(Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        model.rendered.load(Ordering::SeqCst),
        made,
        "work went on after cancel"
    );
    assert!(made < 10);
}

#[test]
fn offline_work_yields_to_interactive() {
    let model = FakeModel::new(10);
    let sched = start(&model, SchedulerConfig::default());
    let mut export = sched
        .submit_text(&text("x", 40), request(), Mode::Offline)
        .expect("x");
    export.blocking_next();
    let before = model.rendered.load(Ordering::SeqCst);
    let mut live = sched
        .submit_text(&text("l", 1), request(), Mode::Interactive)
        .expect("l");
    assert!(matches!(
        live.blocking_next(),
        Some(StreamEvent::Audio { .. })
    ));
    // One export segment may have been in flight; the live one came right after it.
    let log = model.log.lock().expect("log").clone();
    let l0 = log.iter().position(|s| s == "l0").expect("l0 rendered");
    assert!(
        l0 <= before + 1,
        "live waited for {} export segments",
        l0 - before
    );
    drop(export);
}

#[test]
fn full_queue_is_refused_and_empty_streams_end() {
    let model = FakeModel::new(50);
    let cfg = SchedulerConfig {
        max_queue: 2,
        ..SchedulerConfig::default()
    };
    let sched = start(&model, cfg);
    let _a = sched
        .submit_text("a", request(), Mode::Interactive)
        .expect("a");
    let _b = sched
        .submit_text("b", request(), Mode::Interactive)
        .expect("b");
    let _c = sched.submit_text("c", request(), Mode::Interactive);
    let d = sched.submit_text("d", request(), Mode::Interactive);
    assert!(
        matches!(d, Err(SchedulerError::QueueFull { .. })),
        "a fourth waiting stream must be refused"
    );
    let mut empty = sched
        .submit(Vec::new(), request(), Mode::Interactive)
        .expect("empty");
    assert!(empty.blocking_next().is_none());
}

#[test]
fn a_new_stream_starts_between_the_windows_of_a_long_segment() {
    // One segment of 8 windows, 60 ms each, 0.5 s of audio each: the long stream is soon far
    // ahead of its listener, and a new stream must not wait for the whole segment.
    let model = FakeModel::windowed(60, 8);
    let sched = start(&model, SchedulerConfig::default());
    let mut long = sched
        .submit_text("a0", request(), Mode::Interactive)
        .expect("long");
    assert!(matches!(
        long.blocking_next(),
        Some(StreamEvent::Audio {
            segment_end: false,
            ..
        })
    ));
    let mut short = sched
        .submit_text("b0", request(), Mode::Interactive)
        .expect("short");
    assert!(matches!(
        short.blocking_next(),
        Some(StreamEvent::Audio { segment: 0, .. })
    ));
    let log = model.chunk_log.lock().expect("log").clone();
    let b = log
        .iter()
        .position(|c| c == "b0#0")
        .expect("b's first window");
    assert!(
        !log[..b].contains(&"a0#7".to_owned()),
        "the new stream waited for the whole long segment: {log:?}"
    );
    // The long stream still gets all eight windows, in order, the last marked as its end.
    let mut ends = Vec::new();
    while let Some(StreamEvent::Audio { segment_end, .. }) = long.blocking_next() {
        ends.push(segment_end);
    }
    assert_eq!(ends.len(), 7);
    assert_eq!(ends.iter().filter(|&&e| e).count(), 1);
    assert!(ends[6]);
}

#[test]
fn whole_submissions_and_offline_streams_are_not_windowed() {
    let model = FakeModel::windowed(1, 4);
    let sched = start(&model, SchedulerConfig::default());
    let mut whole = sched
        .submit_whole(vec![segment("w")], request(), Mode::Interactive)
        .expect("whole");
    let mut offline = sched
        .submit(vec![segment("o")], request(), Mode::Offline)
        .expect("offline");
    let mut windowed = sched
        .submit(vec![segment("i")], request(), Mode::Interactive)
        .expect("windowed");
    let count = |h: &mut StreamHandle| std::iter::from_fn(|| h.blocking_next()).count();
    assert_eq!(count(&mut whole), 1);
    assert_eq!(count(&mut offline), 1);
    assert_eq!(count(&mut windowed), 4);
}

fn segment(name: &str) -> Segment {
    Segment {
        phonemes: name.to_owned(),
        ids: vec![1],
    }
}

#[test]
fn a_new_stream_is_encoded_between_the_pieces_of_a_window() {
    // Each window is six 15 ms steps. A stream already playing must not make a newcomer wait
    // for the rest of its window: the newcomer's encoder runs after one piece at most.
    let model = FakeModel::in_pieces(15, 3, 6);
    let cfg = SchedulerConfig {
        margin: Duration::ZERO,
        ..SchedulerConfig::default()
    };
    let sched = start(&model, cfg);
    let mut playing = sched
        .submit_text("a0", request(), Mode::Interactive)
        .expect("a");
    assert!(matches!(
        playing.blocking_next(),
        Some(StreamEvent::Audio { .. })
    ));
    let mut new = sched
        .submit_text("b0", request(), Mode::Interactive)
        .expect("b");
    assert!(matches!(
        new.blocking_next(),
        Some(StreamEvent::Audio { .. })
    ));
    let steps = model.steps();
    let at = |s: &str| steps.iter().position(|x| x == s);
    let begin = at("b0:begin").expect("b was encoded");
    let a_window_end = at("a0#1.5").unwrap_or(usize::MAX);
    assert!(
        begin < a_window_end,
        "the newcomer waited for a whole window: {steps:?}"
    );
    // Pieces that finish no window send nothing: the playing stream's chunks are whole windows.
    let mut chunks = 1;
    while let Some(StreamEvent::Audio { samples, .. }) = playing.blocking_next() {
        assert_eq!(samples.len(), SAMPLE_RATE as usize / 2);
        chunks += 1;
    }
    assert_eq!(chunks, 3);
}

#[test]
fn first_windows_depend_on_the_segments_place_not_on_timing() {
    // The same request must give the same audio whatever the load: the first segment starts
    // with the short window, later ones with the longer one, an export with whole segments.
    let model = FakeModel::windowed(1, 2);
    let sched = start(&model, SchedulerConfig::default());
    for mode in [Mode::Interactive, Mode::Offline] {
        let mut s = sched.submit_text("a|b|c", request(), mode).expect("submit");
        while s.blocking_next().is_some() {}
    }
    let first = Some(FAKE_WINDOWING.first);
    let later = Some(FAKE_WINDOWING.later_first);
    assert_eq!(
        *model.first_windows.lock().expect("log"),
        vec![first, later, later, None, None, None]
    );
}

/// Newcomers that arrive while the model is busy have their encoders run as one batch when
/// the model offers batching; an item that fails fails its own stream only; every stream
/// still gets all of its audio, and the metrics count the batch.
#[test]
fn waiting_encoders_share_one_pass_and_fail_alone() {
    let model = FakeModel::batching(5, 2, 4);
    let sched = start(&model, SchedulerConfig::default());
    // The gate's encoder holds the model while the others arrive.
    let mut gate = sched
        .submit_text("slow0", request(), Mode::Interactive)
        .expect("gate");
    std::thread::sleep(Duration::from_millis(30));
    let mut handles: Vec<StreamHandle> = ["a0|a1", "bad0", "c0", "d0", "e0"]
        .iter()
        .map(|t| {
            sched
                .submit_text(t, request(), Mode::Interactive)
                .expect("submit")
        })
        .collect();
    let count = |h: &mut StreamHandle| {
        let (mut audio, mut failed) = (0, false);
        while let Some(ev) = h.blocking_next() {
            match ev {
                StreamEvent::Audio { .. } => audio += 1,
                StreamEvent::Failed(_) => failed = true,
            }
        }
        (audio, failed)
    };
    assert_eq!(count(&mut gate), (2, false));
    let got: Vec<(usize, bool)> = handles.iter_mut().map(count).collect();
    assert_eq!(
        got,
        [(4, false), (0, true), (2, false), (2, false), (2, false)]
    );
    let steps = model.steps();
    let batches: Vec<&String> = steps.iter().filter(|s| s.ends_with(":batch")).collect();
    // The first four waiting newcomers (the limit) in one pass, oldest first; the fifth later.
    assert_eq!(
        batches.first().map(|s| s.as_str()),
        Some("a0+bad0+c0+d0:batch"),
        "{steps:?}"
    );
    let sizes = sched.metrics().batch_size.snapshot();
    assert!(
        sizes.sum > sizes.count as f64,
        "no step had more than one segment: {sizes:?}"
    );
    assert_eq!(sched.metrics().failed.load(Ordering::Relaxed), 1);
}

/// Where the model offers window batches (and encoder batches, as on a GPU), a step that
/// starts a window takes the next windows of other streams along: newcomers' first windows
/// share one pass; every stream still gets all of its audio, in order; a batch that a first
/// window leads holds only first windows (none padded longer than the chosen one's); and the
/// metrics count the batches.
#[test]
fn windows_of_several_streams_share_one_pass() {
    let model = FakeModel::batching_windows(2, 3, 3, 4);
    let sched = start(&model, SchedulerConfig::default());
    let mut gate = sched
        .submit_text("slow0", request(), Mode::Interactive)
        .expect("gate");
    std::thread::sleep(Duration::from_millis(30));
    let mut handles: Vec<StreamHandle> = ["a0|a1", "b0", "c0|c1", "d0"]
        .iter()
        .map(|t| {
            sched
                .submit_text(t, request(), Mode::Interactive)
                .expect("submit")
        })
        .collect();
    let chunks = |h: &mut StreamHandle| {
        let mut got = Vec::new();
        while let Some(ev) = h.blocking_next() {
            match ev {
                StreamEvent::Audio { segment, .. } => got.push(segment),
                StreamEvent::Failed(e) => panic!("{e}"),
            }
        }
        got
    };
    assert_eq!(chunks(&mut gate), vec![0, 0, 0]);
    let got: Vec<Vec<usize>> = handles.iter_mut().map(chunks).collect();
    assert_eq!(
        got,
        [
            vec![0, 0, 0, 1, 1, 1],
            vec![0, 0, 0],
            vec![0, 0, 0, 1, 1, 1],
            vec![0, 0, 0]
        ]
    );
    let steps = model.steps();
    let batches: Vec<Vec<&str>> = steps
        .iter()
        .filter_map(|s| s.strip_suffix(":windows"))
        .map(|s| s.split('+').collect())
        .collect();
    // The four newcomers, encoded in one pass, decode their first windows in one pass, the
    // oldest (the one the policy picks) first, the others by arrival.
    assert!(
        batches.contains(&vec!["a0#0", "b0#0", "c0#0", "d0#0"]),
        "{steps:?}"
    );
    assert!(batches.iter().all(|b| b.len() <= 4), "{steps:?}");
    for b in &batches {
        if b[0].ends_with("#0") {
            assert!(b.iter().all(|w| w.ends_with("#0")), "{b:?} in {steps:?}");
        }
    }
    let sizes = sched.metrics().batch_size.snapshot();
    assert!(sizes.sum > sizes.count as f64, "{sizes:?}");
}

/// A model that offers no batching (the CPU) begins every segment in a step of its own.
#[test]
fn without_batching_each_encoder_runs_alone() {
    let model = FakeModel::windowed(5, 2);
    let sched = start(&model, SchedulerConfig::default());
    let mut gate = sched
        .submit_text("slow0", request(), Mode::Interactive)
        .expect("gate");
    std::thread::sleep(Duration::from_millis(30));
    let mut others: Vec<StreamHandle> = ["a0", "b0", "c0"]
        .iter()
        .map(|t| {
            sched
                .submit_text(t, request(), Mode::Interactive)
                .expect("submit")
        })
        .collect();
    while gate.blocking_next().is_some() {}
    for h in &mut others {
        while h.blocking_next().is_some() {}
    }
    assert!(model.steps().iter().all(|s| !s.ends_with(":batch")));
    assert!(
        model.steps().iter().all(|s| !s.ends_with(":windows")),
        "a model that offers no window batches (the CPU) decodes a piece a step"
    );
    let sizes = sched.metrics().batch_size.snapshot();
    assert!(sizes.count > 0);
    assert!((sizes.sum - sizes.count as f64).abs() < 1e-9, "{sizes:?}");
}

/// A model error reaches the stream's consumer as itself, not as a message: an input error
/// (nothing to say) stays an input error, a model fault stays a fault.
#[test]
fn failures_keep_their_kind() {
    let model = FakeModel::new(1);
    let sched = start(&model, SchedulerConfig::default());
    let input = sched
        .submit_text("toolong", request(), Mode::Interactive)
        .expect("submit")
        .collect()
        .expect_err("too long");
    assert!(input.is_input_error(), "{input}");
    assert!(matches!(
        input,
        SchedulerError::Synth(SynthError::NothingToSay { .. })
    ));
    let fault = sched
        .submit_text("bad", request(), Mode::Offline)
        .expect("submit")
        .collect()
        .expect_err("fault");
    assert!(!fault.is_input_error(), "{fault}");
}

fn segs(names: &str) -> Vec<Segment> {
    names
        .split('|')
        .map(|p| Segment {
            phonemes: p.to_owned(),
            ids: vec![1],
        })
        .collect()
}

/// The names of the segments a stream's audio came from, until it ends (`None`) or `n` chunks.
fn heard(handle: &mut StreamHandle, n: usize) -> Vec<usize> {
    let mut out = Vec::new();
    while out.len() < n {
        match handle.blocking_next() {
            Some(StreamEvent::Audio { segment, .. }) => out.push(segment),
            Some(StreamEvent::Failed(e)) => panic!("failed: {e}"),
            None => break,
        }
    }
    out
}

/// Text still being written: the stream waits (without ending) while it has nothing, speaks each
/// piece as it is pushed, numbers the segments on from the earlier ones, and ends only after
/// its feed closes and the last pushed segment is said.
#[test]
fn an_open_stream_speaks_pieces_as_they_come_and_ends_when_its_feed_closes() {
    let model = FakeModel::new(5);
    let sched = start(&model, SchedulerConfig::default());
    let (feed, mut handle) = sched.open(request(), Mode::Interactive).expect("open");
    feed.push(segs("a0")).expect("push");
    assert_eq!(heard(&mut handle, 1), [0]);
    // Nothing more yet: the stream is idle, not ended, and not counted as waiting.
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(sched.metrics().queued.load(Ordering::Relaxed), 0);
    assert_eq!(sched.metrics().active.load(Ordering::Relaxed), 1);
    feed.push(segs("a1|a2")).expect("push");
    assert_eq!(heard(&mut handle, 2), [1, 2]);
    feed.push(segs("a3")).expect("push");
    feed.close();
    assert_eq!(
        heard(&mut handle, 9),
        [3],
        "ends after the last pushed segment"
    );
    assert_eq!(sched.metrics().completed.load(Ordering::Relaxed), 1);
}

/// A feed closed with nothing pushed ends the stream at once; a feed whose listener left
/// says so on its next push instead of queueing text nobody will hear.
#[test]
fn an_empty_feed_ends_and_a_left_listener_refuses_more_text() {
    let model = FakeModel::new(5);
    let sched = start(&model, SchedulerConfig::default());
    let (feed, mut handle) = sched.open(request(), Mode::Interactive).expect("open");
    drop(feed);
    assert!(handle.blocking_next().is_none());
    let (feed, handle) = sched.open(request(), Mode::Interactive).expect("open");
    drop(handle);
    assert!(matches!(feed.push(segs("x")), Err(SchedulerError::Ended)));
}

/// Text that comes after the listener heard everything starts again with a short first window
/// and is served as a newcomer; text that comes while audio is still ahead continues with the
/// later-segment window, as a stream submitted whole would.
#[test]
fn text_after_the_listener_ran_dry_starts_with_a_short_window() {
    let model = FakeModel::windowed(2, 1);
    let sched = start(&model, SchedulerConfig::default());
    let (feed, mut handle) = sched.open(request(), Mode::Interactive).expect("open");
    feed.push(segs("a0|a1")).expect("push");
    assert_eq!(heard(&mut handle, 2), [0, 1]);
    // Two half-second chunks were sent: wait until a real-time listener has run dry.
    std::thread::sleep(Duration::from_millis(1100));
    feed.push(segs("a2")).expect("push");
    assert_eq!(heard(&mut handle, 1), [2]);
    let firsts = model.first_windows.lock().expect("log").clone();
    assert_eq!(
        firsts,
        [
            Some(FAKE_WINDOWING.first),
            Some(FAKE_WINDOWING.later_first),
            Some(FAKE_WINDOWING.first)
        ]
    );
    assert_eq!(sched.metrics().underruns.load(Ordering::Relaxed), 0);
}
