//! A planned episode spoken through the scheduler, as a stream of timeline events: the engine
//! side of `POST /v1/dialogue`.
//!
//! The timeline is the one `banter render` and the studio's playback walk
//! ([`engine::render::Timeline`]): every sentence is trimmed to its audible extent and placed
//! after the turn gap, sentence gap or `[pause:]` it gives, and its tail of room ends the
//! episode. Sentence, line and word times (each sentence's durations go to `Timeline::place`
//! with its audio) are therefore the same as the rendered file's captions and markers, to the
//! sample; what differs is that nothing is loudness-normalised (that needs the
//! whole episode before the first sample).
//!
//! Scheduling: the sentences of one line that share a speed go to the scheduler as one
//! interactive stream of one segment per sentence (`Engine::sentence_segments`), so the
//! scheduler sees a stream that is pressing until its first sentence is out and then only when
//! its listener runs short, exactly like a speech request. At most [`LOOKAHEAD`] such streams
//! are submitted at once: the next line is being rendered while this one plays, and no more.
//!
//! Flow control: events go through a small bounded channel to the HTTP body, and from there
//! through hyper to TCP. A client that reads slowly fills its socket, the body stops polling,
//! this driver waits on the channel, stops taking audio from the scheduler, the stream's unread
//! audio passes the scheduler's high watermark and the model turns to others. A client that
//! leaves closes the channel; the driver returns and dropping its stream handles cancels them.

use std::collections::VecDeque;
use std::time::Duration;

use engine::render::{Cue, LineMark, LinePlan, Placement, Step, Timeline};
use engine::Segment;
use engine::{Engine, Mode, SchedulerError, StreamEvent, StreamHandle, TimedAudio};
use engine::{SpeechRequest, SAMPLE_RATE};
use tokio::sync::mpsc;

use super::backend::{library_request, synth_error, BackendError};

/// Line streams submitted to the scheduler ahead of the one being played.
pub const LOOKAHEAD: usize = 2;
/// How long a submission refused because the scheduler's queue is full is retried.
const QUEUE_RETRY: Duration = Duration::from_secs(30);

/// A planned episode to speak.
#[derive(Debug, Clone)]
pub struct DialogueJob {
    pub lines: Vec<LinePlan>,
    /// The script's `gap:` setting, if any.
    pub episode_gap: Option<f32>,
}

/// What the driver sends, in timeline order: for each sentence its cue then its audio (the
/// silence before it included); a line's mark after its last sentence; `Done` or `Failed` last.
#[derive(Debug)]
pub enum DialogueEvent {
    /// A sentence's place on the timeline (seconds from the first sample), its words timed on
    /// the same timeline (`cue.words`), and its voice.
    Sentence {
        cue: Cue,
        voice: String,
    },
    /// 24 kHz mono samples starting at `start` seconds.
    Audio {
        samples: Vec<f32>,
        start: f64,
    },
    Line(LineMark),
    Done {
        lines: usize,
        sentences: usize,
        duration: f64,
    },
    Failed(BackendError),
}

/// The sentences of one line that share a speed: one scheduler stream.
struct Run {
    request: SpeechRequest,
    segments: Vec<Segment>,
    /// Segments per sentence, in order (a sentence beyond Kokoro's limit has several).
    sentences: VecDeque<usize>,
}

/// Cuts the plan into runs and checks every voice and speed before anything is submitted.
fn runs(engine: &Engine, lines: &[LinePlan]) -> Result<VecDeque<Run>, BackendError> {
    let mut out = VecDeque::new();
    let stock = engine.stock_voices();
    for plan in lines.iter().filter(|p| !p.is_silent()) {
        let mut current: Option<Run> = None;
        for step in &plan.steps {
            let Step::Speak(sentence) = step else {
                continue;
            };
            if current
                .as_ref()
                .is_some_and(|r| (r.request.speed - sentence.speed).abs() > f32::EPSILON)
            {
                out.extend(current.take());
            }
            if current.is_none() {
                let request = match library_request(engine, &stock, &plan.voice, sentence.speed) {
                    Some(request) => request,
                    None => SpeechRequest::new(&plan.voice, sentence.speed)
                        .map_err(|e| synth_error(&e))?,
                };
                engine.voice(&request.voice).map_err(|e| synth_error(&e))?;
                current = Some(Run {
                    request,
                    segments: Vec::new(),
                    sentences: VecDeque::new(),
                });
            }
            let Some(run) = current.as_mut() else {
                continue;
            };
            let segments = engine.sentence_segments(&sentence.phonemes);
            run.sentences.push_back(segments.len());
            run.segments.extend(segments);
        }
        out.extend(current);
    }
    Ok(out)
}

/// Runs waiting, and those submitted with their handles, in order.
struct Feed {
    engine: Engine,
    waiting: VecDeque<Run>,
    submitted: VecDeque<(VecDeque<usize>, StreamHandle)>,
}

impl Feed {
    async fn fill(&mut self) -> Result<(), BackendError> {
        while self.submitted.len() < LOOKAHEAD {
            let Some(run) = self.waiting.pop_front() else {
                return Ok(());
            };
            let deadline = tokio::time::Instant::now() + QUEUE_RETRY;
            let handle = loop {
                // Whole segments: a sentence is sent once it is complete and trimmed, so
                // windows would cost context and exactness for nothing.
                match self.engine.submit_whole(
                    run.segments.clone(),
                    run.request.clone(),
                    Mode::Interactive,
                ) {
                    Ok(handle) => break handle,
                    Err(SchedulerError::QueueFull { waiting })
                        if tokio::time::Instant::now() < deadline =>
                    {
                        tracing::debug!(waiting, "scheduler queue full; dialogue waits");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                    Err(SchedulerError::QueueFull { waiting }) => {
                        return Err(BackendError::Busy { queued: waiting })
                    }
                    Err(SchedulerError::Shutdown | SchedulerError::Ended) => {
                        return Err(BackendError::Stopped)
                    }
                    Err(SchedulerError::Synth(e)) => return Err(synth_error(&e)),
                }
            };
            self.submitted.push_back((run.sentences, handle));
        }
        Ok(())
    }

    /// The untrimmed audio of the next sentence, and the durations of each of its segments
    /// (they come with a segment's first chunk), which time its words.
    async fn next_sentence(&mut self) -> Result<TimedAudio, BackendError> {
        self.fill().await?;
        let Some((sizes, handle)) = self.submitted.front_mut() else {
            return Err(BackendError::Internal(
                "dialogue plan ran out of sentences".into(),
            ));
        };
        let segments = sizes.pop_front().unwrap_or(0);
        let mut audio = TimedAudio::default();
        let mut ended = 0;
        while ended < segments {
            match handle.next().await {
                Some(StreamEvent::Audio {
                    samples,
                    segment_end,
                    durations,
                    ..
                }) => {
                    audio.samples.extend_from_slice(&samples);
                    audio.durations.extend(durations);
                    ended += usize::from(segment_end);
                }
                Some(StreamEvent::Failed(e)) => return Err(synth_error(&e)),
                None => return Err(BackendError::Internal("a line stream ended early".into())),
            }
        }
        if sizes.is_empty() {
            self.submitted.pop_front();
            self.fill().await?;
        }
        Ok(audio)
    }
}

/// Checks the plan (voices, speeds) and starts speaking it; events come on the receiver.
pub fn start(
    engine: &Engine,
    runtime: &tokio::runtime::Handle,
    job: DialogueJob,
) -> Result<mpsc::Receiver<DialogueEvent>, BackendError> {
    let waiting = runs(engine, &job.lines)?;
    let (tx, rx) = mpsc::channel(4);
    let feed = Feed {
        engine: engine.clone(),
        waiting,
        submitted: VecDeque::new(),
    };
    runtime.spawn(async move {
        let failure = match drive(feed, &job, &tx).await {
            Ok(()) | Err(Stop::ClientLeft) => return,
            Err(Stop::Failed(e)) => e,
        };
        let _ = tx.send(DialogueEvent::Failed(failure)).await;
    });
    Ok(rx)
}

enum Stop {
    ClientLeft,
    Failed(BackendError),
}

impl From<BackendError> for Stop {
    fn from(e: BackendError) -> Self {
        Stop::Failed(e)
    }
}

async fn send(tx: &mpsc::Sender<DialogueEvent>, event: DialogueEvent) -> Result<(), Stop> {
    tx.send(event).await.map_err(|_| Stop::ClientLeft)
}

fn secs(samples: u64) -> f64 {
    samples as f64 / f64::from(SAMPLE_RATE)
}

/// Walks the episode's timeline, sending each sentence's cue and audio (with the silence
/// placed before it) as soon as the sentence is rendered.
async fn drive(
    mut feed: Feed,
    job: &DialogueJob,
    tx: &mpsc::Sender<DialogueEvent>,
) -> Result<(), Stop> {
    let mut walk = Timeline::new(&job.lines, 0, job.episode_gap);
    let mut written: u64 = 0; // samples sent so far
    let mut pending: usize = 0; // silence placed but not yet sent
    let (mut lines, mut sentences) = (0, 0);
    while let Some(placement) = walk.next() {
        match placement {
            Placement::Silence(n) => pending += n,
            Placement::LineStart { .. } => {}
            Placement::Sentence(slot) => {
                let audio = feed.next_sentence().await?;
                let placed = walk.place(&slot, &audio.samples, &audio.durations);
                let voice = slot.plan.voice.clone();
                send(
                    tx,
                    DialogueEvent::Sentence {
                        cue: placed.cue,
                        voice,
                    },
                )
                .await?;
                let mut samples = vec![0.0f32; pending];
                samples.extend_from_slice(&audio.samples[placed.keep]);
                let start = secs(written);
                written += samples.len() as u64;
                pending = 0;
                sentences += 1;
                send(tx, DialogueEvent::Audio { samples, start }).await?;
            }
            Placement::LineEnd(mark) => {
                lines += 1;
                send(tx, DialogueEvent::Line(mark)).await?;
            }
        }
    }
    // The silence after the last sentence, the tail included.
    let start = secs(written);
    written += pending as u64;
    send(
        tx,
        DialogueEvent::Audio {
            samples: vec![0.0; pending],
            start,
        },
    )
    .await?;
    debug_assert_eq!(written, walk.position());
    send(
        tx,
        DialogueEvent::Done {
            lines,
            sentences,
            duration: secs(written),
        },
    )
    .await
}
