//! Playback rendering: the episode from a chosen line, sentence by sentence, as pressing
//! (interactive) streams on the shared scheduler, placed with the same gaps and trimming as an
//! export so what the author hears is what they will get (before loudness normalisation).
//!
//! The thread sends each sentence's audio as soon as the scheduler delivers it; the UI appends
//! it to the play buffer and the waveform. Stopping sets the cancel flag and drops the stream
//! handle, which cancels the stream in the scheduler before its next segment.
//!
//! Sentences already heard come from the [`SentenceCache`] instead of the model, so playing
//! again after an edit renders only what changed.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};

use engine::render::{plan_episode, timing, LinePlan, Step};
use engine::scheduler::{Mode, Scheduler, StreamEvent};
use engine::script::Episode;
use engine::synth::{SpeechRequest, Synthesizer, SAMPLE_RATE};

use super::sentences::{SentenceCache, SentenceKey};
use super::{send, spawn, Waker, EVENTS};

pub enum PlayEvent {
    /// Line `line` (episode index) by `speaker` starts at sample `at` of this playback.
    LineStart {
        line: usize,
        speaker: String,
        at: usize,
    },
    /// Audio to append (silences included).
    Audio(Vec<f32>),
    /// Everything from the start line on has been rendered.
    Done,
    Failed(String),
}

/// A running playback render; dropping it stops the render.
pub struct PlayJob {
    pub rx: mpsc::Receiver<PlayEvent>,
    cancel: Arc<AtomicBool>,
}

impl PlayJob {
    pub fn stop(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

impl Drop for PlayJob {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Starts rendering `episode` from line index `from` (the first audible line at or after it).
pub fn start(
    synth: Arc<Synthesizer>,
    scheduler: Scheduler,
    episode: Episode,
    from: usize,
    cache: Arc<SentenceCache>,
    library: Option<PathBuf>,
    waker: Waker,
) -> PlayJob {
    let (tx, rx) = mpsc::sync_channel(EVENTS);
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&cancel);
    let tx2 = tx.clone();
    let waker2 = waker.clone();
    if let Err(e) = spawn("banter-play", move || {
        let job = Job {
            synth: &synth,
            scheduler: &scheduler,
            cache: &cache,
            cancel: &flag,
        };
        let mut episode = episode;
        let event = match super::resolve::episode(library.as_deref(), &synth, &mut episode)
            .and_then(|()| render(&job, &episode, from, &tx, &waker))
        {
            Ok(()) => PlayEvent::Done,
            Err(e) => PlayEvent::Failed(e),
        };
        if !flag.load(Ordering::Relaxed) {
            send(&tx, &waker, event);
        }
    }) {
        send(&tx2, &waker2, PlayEvent::Failed(e));
    }
    PlayJob { rx, cancel }
}

fn silence(secs: f32) -> Vec<f32> {
    vec![0.0; (secs.max(0.0) * SAMPLE_RATE as f32).round() as usize]
}

/// What a playback render works with.
struct Job<'a> {
    synth: &'a Synthesizer,
    scheduler: &'a Scheduler,
    cache: &'a SentenceCache,
    cancel: &'a AtomicBool,
}

fn render(
    job: &Job<'_>,
    episode: &Episode,
    from: usize,
    tx: &mpsc::SyncSender<PlayEvent>,
    waker: &Waker,
) -> Result<(), String> {
    let plans = plan_episode(episode).map_err(|e| e.to_string())?;
    let mut written = 0usize;
    let mut prev: Option<&LinePlan> = None;
    for plan in plans.iter().filter(|p| p.index >= from && !p.is_silent()) {
        let gap = match prev {
            Some(prev) => timing::turn_gap(prev, plan, episode.settings.gap_secs),
            None => plan.lead_pause.unwrap_or(0.0),
        };
        let pad = silence(gap);
        written += pad.len();
        if !pad.is_empty() {
            send(tx, waker, PlayEvent::Audio(pad));
        }
        send(
            tx,
            waker,
            PlayEvent::LineStart {
                line: plan.index,
                speaker: plan.speaker.clone(),
                at: written,
            },
        );
        let last_speak = plan.steps.iter().rposition(|s| matches!(s, Step::Speak(_)));
        let mut first = true;
        for (k, step) in plan.steps.iter().enumerate() {
            if job.cancel.load(Ordering::Relaxed) {
                return Ok(());
            }
            let audio = match step {
                Step::Silence(secs) => silence(*secs),
                Step::Speak(sentence) => {
                    let mut audio = Vec::new();
                    if !first && k > 0 && !matches!(plan.steps.get(k - 1), Some(Step::Silence(_))) {
                        audio = silence(timing::sentence_gap(sentence.speed));
                    }
                    first = false;
                    let key = SentenceKey::new(&plan.voice, sentence.speed, &sentence.phonemes);
                    let speech = if let Some(cached) = job.cache.get(&key) {
                        cached.to_vec()
                    } else {
                        let request = SpeechRequest::new(&plan.voice, sentence.speed)
                            .map_err(|e| e.to_string())?;
                        let speech = speak(job, &sentence.phonemes, request)?;
                        if job.cancel.load(Ordering::Relaxed) {
                            return Ok(());
                        }
                        job.cache.put(key, &speech);
                        speech
                    };
                    let cut_off = plan.cut_off && Some(k) == last_speak;
                    let keep = timing::audible_range(&speech, SAMPLE_RATE, cut_off);
                    audio.extend_from_slice(&speech[keep]);
                    audio
                }
            };
            written += audio.len();
            send(tx, waker, PlayEvent::Audio(audio));
        }
        prev = Some(plan);
    }
    Ok(())
}

/// One sentence through the scheduler as a pressing stream, decoded whole: playback trims and
/// queues whole sentences, so windows would buy no earlier audio.
fn speak(job: &Job<'_>, phonemes: &str, request: SpeechRequest) -> Result<Vec<f32>, String> {
    let segments = job.synth.sentence_segments(phonemes);
    let mut handle = job
        .scheduler
        .submit_whole(segments, request, Mode::Interactive)
        .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    while let Some(event) = handle.blocking_next() {
        if job.cancel.load(Ordering::Relaxed) {
            return Ok(out);
        }
        match event {
            StreamEvent::Audio { samples, .. } => out.extend_from_slice(&samples),
            StreamEvent::Failed(message) => return Err(message),
        }
    }
    Ok(out)
}
