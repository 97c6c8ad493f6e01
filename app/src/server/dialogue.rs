//! A planned episode spoken through the scheduler, as a stream of timeline events: the engine
//! side of `POST /v1/dialogue`.
//!
//! The timeline is the one `banter render` makes (`engine::render::draft`): every sentence is
//! trimmed to its audible extent and placed after the turn gap, sentence gap or `[pause:]` that
//! `engine::render::timing` gives, and half a second of room ends the episode. Sentence and line
//! times are therefore the same as the rendered file's captions and markers; what differs is
//! that nothing is loudness-normalised (that needs the whole episode before the first sample).
//!
//! Scheduling: the sentences of one line that share a speed go to the scheduler as one
//! interactive stream of one segment per sentence (`Synthesizer::sentence_segments`), so the
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
use std::sync::Arc;
use std::time::Duration;

use engine::render::{timing, LinePlan, Step};
use engine::scheduler::{Mode, Scheduler, SchedulerError, StreamEvent, StreamHandle};
use engine::synth::{Segment, SpeechRequest, Synthesizer, SAMPLE_RATE};
use tokio::sync::mpsc;

use super::backend::{synth_error, BackendError};

/// Line streams submitted to the scheduler ahead of the one being played.
pub const LOOKAHEAD: usize = 2;
/// Silence after the last line (as a rendered episode has).
pub const TAIL_SECS: f32 = 0.5;
/// How long a submission refused because the scheduler's queue is full is retried.
const QUEUE_RETRY: Duration = Duration::from_secs(30);

/// A planned episode to speak.
#[derive(Debug, Clone)]
pub struct DialogueJob {
    pub lines: Vec<LinePlan>,
    /// The script's `gap:` setting, if any.
    pub episode_gap: Option<f32>,
}

/// One sentence on the output timeline (seconds from the first sample).
#[derive(Debug, Clone, PartialEq)]
pub struct SentenceMark {
    /// Index of the script line (0-based) and where it was written (1-based).
    pub line: usize,
    pub source_line: usize,
    pub speaker: String,
    pub voice: String,
    pub text: String,
    pub start: f64,
    pub end: f64,
}

/// One line on the output timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct LineMark {
    pub line: usize,
    pub source_line: usize,
    pub speaker: String,
    pub voice: String,
    pub start: f64,
    pub end: f64,
}

/// What the driver sends, in timeline order: for each sentence its mark then its audio (the
/// silence before it included); a line's mark after its last sentence; `Done` or `Failed` last.
#[derive(Debug)]
pub enum DialogueEvent {
    Sentence(SentenceMark),
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
fn runs(synth: &Synthesizer, lines: &[LinePlan]) -> Result<VecDeque<Run>, BackendError> {
    let mut out = VecDeque::new();
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
                let request =
                    SpeechRequest::new(&plan.voice, sentence.speed).map_err(|e| synth_error(&e))?;
                synth.voice(&request.voice).map_err(|e| synth_error(&e))?;
                current = Some(Run {
                    request,
                    segments: Vec::new(),
                    sentences: VecDeque::new(),
                });
            }
            let Some(run) = current.as_mut() else {
                continue;
            };
            let segments = synth.sentence_segments(&sentence.phonemes);
            run.sentences.push_back(segments.len());
            run.segments.extend(segments);
        }
        out.extend(current);
    }
    Ok(out)
}

/// Runs waiting, and those submitted with their handles, in order.
struct Feed {
    scheduler: Scheduler,
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
                match self.scheduler.submit_whole(
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
                    Err(SchedulerError::Shutdown) => return Err(BackendError::Stopped),
                    Err(SchedulerError::Synth(e)) => return Err(synth_error(&e)),
                }
            };
            self.submitted.push_back((run.sentences, handle));
        }
        Ok(())
    }

    /// The untrimmed audio of the next sentence.
    async fn next_sentence(&mut self) -> Result<Vec<f32>, BackendError> {
        self.fill().await?;
        let Some((sizes, handle)) = self.submitted.front_mut() else {
            return Err(BackendError::Internal(
                "dialogue plan ran out of sentences".into(),
            ));
        };
        let segments = sizes.pop_front().unwrap_or(0);
        let mut audio = Vec::new();
        let mut ended = 0;
        while ended < segments {
            match handle.next().await {
                Some(StreamEvent::Audio {
                    samples,
                    segment_end,
                    ..
                }) => {
                    audio.extend_from_slice(&samples);
                    ended += usize::from(segment_end);
                }
                Some(StreamEvent::Failed(message)) => return Err(BackendError::Internal(message)),
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
    scheduler: &Scheduler,
    synth: &Arc<Synthesizer>,
    runtime: &tokio::runtime::Handle,
    job: DialogueJob,
) -> Result<mpsc::Receiver<DialogueEvent>, BackendError> {
    let waiting = runs(synth, &job.lines)?;
    let (tx, rx) = mpsc::channel(4);
    let feed = Feed {
        scheduler: scheduler.clone(),
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

fn samples_of(secs: f32) -> u64 {
    (secs.max(0.0) * SAMPLE_RATE as f32).round() as u64
}

/// Walks the timeline; mirrors `engine::render::draft::render_draft`.
async fn drive(
    mut feed: Feed,
    job: &DialogueJob,
    tx: &mpsc::Sender<DialogueEvent>,
) -> Result<(), Stop> {
    let mut written: u64 = 0; // samples sent so far
    let mut pending: u64 = 0; // silence placed but not yet sent
    let (mut lines, mut sentences) = (0, 0);
    let mut prev: Option<&LinePlan> = None;
    for plan in job.lines.iter().filter(|p| !p.is_silent()) {
        pending += samples_of(match prev {
            Some(prev) => timing::turn_gap(prev, plan, job.episode_gap),
            None => plan.lead_pause.unwrap_or(0.0),
        });
        let line_start = written + pending;
        let last_speak = plan.steps.iter().rposition(|s| matches!(s, Step::Speak(_)));
        for (k, step) in plan.steps.iter().enumerate() {
            let sentence = match step {
                Step::Silence(s) => {
                    pending += samples_of(*s);
                    continue;
                }
                Step::Speak(sentence) => sentence,
            };
            let follows_speech = k > 0 && matches!(plan.steps.get(k - 1), Some(Step::Speak(_)));
            if follows_speech {
                pending += samples_of(timing::sentence_gap(sentence.speed));
            }
            let audio = feed.next_sentence().await?;
            let cut_off = plan.cut_off && Some(k) == last_speak;
            let keep = timing::audible_range(&audio, SAMPLE_RATE, cut_off);
            let start = written + pending;
            let end = start + keep.len() as u64;
            send(
                tx,
                DialogueEvent::Sentence(SentenceMark {
                    line: plan.index,
                    source_line: plan.position.line,
                    speaker: plan.speaker.clone(),
                    voice: plan.voice.clone(),
                    text: sentence.caption.clone(),
                    start: secs(start) + f64::from(timing::LEAD_MARGIN_SECS),
                    end: secs(end),
                }),
            )
            .await?;
            let mut samples = vec![0.0f32; pending as usize];
            samples.extend_from_slice(&audio[keep]);
            send(
                tx,
                DialogueEvent::Audio {
                    samples,
                    start: secs(written),
                },
            )
            .await?;
            written = end;
            pending = 0;
            sentences += 1;
        }
        send(
            tx,
            DialogueEvent::Line(LineMark {
                line: plan.index,
                source_line: plan.position.line,
                speaker: plan.speaker.clone(),
                voice: plan.voice.clone(),
                start: secs(line_start),
                end: secs(written + pending),
            }),
        )
        .await?;
        lines += 1;
        prev = Some(plan);
    }
    pending += samples_of(TAIL_SECS);
    send(
        tx,
        DialogueEvent::Audio {
            samples: vec![0.0; pending as usize],
            start: secs(written),
        },
    )
    .await?;
    written += pending;
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
