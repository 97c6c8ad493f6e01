//! The model thread's loop: wait for the policy to pick work, run one short step (an encoder,
//! alone or batched with equally urgent ones, or a piece of a generator pass), hand each
//! stream its result, then prune cancelled streams and apply the watermarks.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::cost::CostModel;
use super::events::StreamEvent;
use super::metrics::Metrics;
use super::model::{BeginItem, SegmentJob, SegmentModel, Windowing};
use super::policy::{self, Policy};
use super::pool;
use super::state::{Entry, Next, Shared, State};
use crate::speech::{Segment, SpeechRequest, SynthError, SAMPLE_RATE};

pub(super) fn samples_us(n: usize) -> u64 {
    (n as u64 * 1_000_000) / u64::from(SAMPLE_RATE)
}

/// What a scheduling step works on: the next piece of a segment under way, or a new segment
/// (with its first window, when windowed).
pub(super) enum Work {
    Continue(Box<dyn SegmentJob>),
    Begin(Segment, Option<usize>),
    /// The whole next window of a segment under way, in one batched pass with the step's
    /// other windows ([`SegmentModel::advance_windows`]).
    Window(Box<dyn SegmentJob>),
}

/// What one scheduling step produced.
pub(super) struct Step {
    pub(super) job: Box<dyn SegmentJob>,
    /// A chunk's audio, when the step finished one.
    pub(super) samples: Option<Vec<f32>>,
    /// The segment this step began (encoded), if that was the work.
    pub(super) began: Option<Segment>,
    /// Decoder frames of generator the step ran (when it continued a segment).
    pub(super) frames: f64,
}

/// Runs one step of a stream: encodes its next segment, or runs the next piece of the segment
/// under way.
pub(super) fn step(
    model: &dyn SegmentModel,
    work: Work,
    request: &SpeechRequest,
) -> Result<Step, SynthError> {
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
        Work::Window(mut job) => {
            let frames = job.frames_to_audio();
            let samples = model
                .advance_windows(std::slice::from_mut(&mut job))
                .pop()
                .transpose()?;
            Ok(Step {
                job,
                samples: samples.flatten(),
                began: None,
                frames,
            })
        }
    }
}

/// One stream's part of a scheduling step.
pub(super) struct Claim {
    pub(super) id: u64,
    pub(super) request: SpeechRequest,
    /// The segment the work belongs to.
    pub(super) index: usize,
}

/// The model thread.
pub(super) fn run(shared: &Shared, model: &dyn SegmentModel) {
    let metrics = &shared.metrics;
    let limit = shared.config.max_batch.min(model.batch_limit()).max(1);
    let window_limit = model.window_batch_limit().max(1);
    // A GPU step has no parallel sections to poll for.
    let on_cpu = model.device().is_cpu();
    loop {
        let (claims, works) = match next_claims(shared, limit, window_limit) {
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
        for (k, ((result, claim), units)) in results.into_iter().zip(&claims).zip(units).enumerate()
        {
            if let Ok(done) = &result {
                match &done.began {
                    // A batch of windows teaches the cost of the chosen one's frames alone:
                    // what a step costs is an overestimate then, never an underestimate.
                    None if k > 0 => {}
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
/// and `limit` allows, the encoders of equally urgent streams to batch with it; when it
/// starts a window and `window_limit` allows, the next windows of others
/// ([`policy::window_mates`]). `None` on shutdown.
pub(super) fn next_claims(shared: &Shared, limit: usize, window_limit: usize) -> Option<Next> {
    let cfg = shared.config;
    let mut st = shared.lock();
    let (choice, mates, windows) = loop {
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
        if let Some(i) = policy::pick_batched(&views, now, cfg.margin, cfg.policy, window_limit) {
            let windows = if window_limit > 1 && cfg.policy == Policy::Pressing {
                policy::window_mates(&views, i, window_limit - 1)
            } else {
                Vec::new()
            };
            if !windows.is_empty() {
                break (i, windows, true);
            }
            let mates = if limit > 1 && cfg.policy == Policy::Pressing {
                policy::encoder_mates(&views, i, now, cfg.margin, limit - 1)
            } else {
                Vec::new()
            };
            break (i, mates, false);
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
            if windows {
                Work::Window(job)
            } else {
                Work::Continue(job)
            }
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

/// Runs a step: one stream's work, or several streams' encoders in one batched pass, or
/// several streams' next windows in one batched pass.
pub(super) fn run_works(
    model: &dyn SegmentModel,
    works: Vec<Work>,
    claims: &[Claim],
) -> Vec<Result<Step, SynthError>> {
    if works.len() > 1 && works.iter().all(|w| matches!(w, Work::Window(_))) {
        let mut jobs: Vec<Box<dyn SegmentJob>> = works
            .into_iter()
            .filter_map(|w| match w {
                Work::Window(job) => Some(job),
                Work::Continue(_) | Work::Begin(..) => None,
            })
            .collect();
        let frames: Vec<f64> = jobs.iter().map(|j| j.frames_to_audio()).collect();
        let audio = model.advance_windows(&mut jobs);
        if audio.len() != jobs.len() {
            let err = || {
                SynthError::Inference(candle_core::Error::Msg(format!(
                    "{} windows decoded for {} segments",
                    audio.len(),
                    jobs.len()
                )))
            };
            return jobs.iter().map(|_| Err(err())).collect();
        }
        return jobs
            .into_iter()
            .zip(audio)
            .zip(frames)
            .map(|((job, samples), frames)| {
                Ok(Step {
                    job,
                    samples: samples?,
                    began: None,
                    frames,
                })
            })
            .collect();
    }
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
            Work::Continue(_) | Work::Window(_) => None,
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
pub(super) fn settle(
    st: &mut State,
    metrics: &Metrics,
    claim: &Claim,
    result: Result<Step, SynthError>,
) {
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
pub(super) fn prune_and_throttle(st: &mut State, shared: &Shared) {
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

pub(super) fn update_gauges(st: &State, metrics: &Metrics) {
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
pub(super) fn first_window(e: &Entry, windowing: Windowing) -> Option<usize> {
    e.windowed
        .then(|| windowing.first_window(e.next - e.resumed_at))
}

pub(super) fn view(e: &Entry, cost: CostModel, windowing: Windowing) -> policy::StreamView {
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
        window: e.job.as_ref().and_then(|job| job.window_bucket()),
    }
}
