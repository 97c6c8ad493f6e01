//! Playback rendering: the episode from a chosen line, sentence by sentence, as pressing
//! (interactive) streams of the shared engine, placed on the export's own timeline
//! ([`engine::render::Timeline`]) so what the author hears is what they will get, to the sample
//! (before loudness normalisation).
//!
//! The thread sends each sentence's audio as soon as the scheduler delivers it; the UI appends
//! it to the play buffer and the waveform. Stopping sets the cancel flag and drops the stream
//! handle, which cancels the stream in the scheduler before its next segment.
//!
//! Sentences already heard come from the [`SentenceCache`] instead of the model, so playing
//! again after an edit renders only what changed. Behind it is the library's render cache,
//! the export's own (same keys, same whole-segment samples): what the author just heard is
//! not rendered again when they export it, and a sentence exported before plays at once.
//!
//! Every sentence's words follow its audio ([`PlayEvent::Words`]): the walk times them from the
//! model's durations (kept in the cache beside the samples, so a cached sentence is timed too),
//! in seconds on the playback timeline, the playhead's own clock. They drive the script's word
//! highlight, click-to-seek and the timeline's word boundaries.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};

use engine::render::cache::Cached;
use engine::render::listening::ForListener;
use engine::render::{plan_episode, Placement, RenderError, SentenceSource, Timeline};
use engine::script::Episode;
use engine::words::TimedWord;
use engine::{Engine, SpeechRequest};

use super::sentences::{SentenceCache, SentenceKey};
use super::{send, spawn, Failure, Waker, EVENTS};

pub enum PlayEvent {
    /// Line `line` (episode index) by `speaker` starts at sample `at` of this playback.
    LineStart {
        line: usize,
        speaker: String,
        at: usize,
    },
    /// Audio to append (silences included).
    Audio(Vec<f32>),
    /// The words of the sentence just sent, of line `line` (episode index), timed in seconds
    /// from the start of this playback; sent after its [`PlayEvent::Audio`], only when the
    /// model's durations timed them.
    Words {
        line: usize,
        words: Vec<TimedWord>,
    },
    /// Everything from the start line on has been rendered.
    Done,
    Failed(super::Failure),
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
    engine: Engine,
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
        let stopped = {
            let flag = Arc::clone(&flag);
            move || flag.load(Ordering::Relaxed)
        };
        let cached = super::resolve::open(library.as_deref())
            .map(|lib| Cached::new(ForListener::new(stopped.clone()), lib));
        let uncached = ForListener::new(stopped);
        let source: &dyn SentenceSource = match &cached {
            Some(cached) => cached,
            None => &uncached,
        };
        let job = Job {
            engine: &engine,
            cache: &cache,
            source,
            cancel: &flag,
        };
        let mut episode = episode;
        let event = match super::resolve::episode(library.as_deref(), &engine, &mut episode)
            .map_err(Failure::from)
            .and_then(|()| render(&job, &episode, from, &tx, &waker))
        {
            Ok(()) => PlayEvent::Done,
            Err(e) => PlayEvent::Failed(e),
        };
        if !flag.load(Ordering::Relaxed) {
            send(&tx, &waker, event);
        }
    }) {
        send(&tx2, &waker2, PlayEvent::Failed(Failure::from(e)));
    }
    PlayJob { rx, cancel }
}

/// What a playback render works with.
struct Job<'a> {
    engine: &'a Engine,
    cache: &'a SentenceCache,
    /// The model for a listener, behind the library's render cache when it opens.
    source: &'a dyn SentenceSource,
    cancel: &'a AtomicBool,
}

/// Walks the episode's timeline (the export's, to the sample) from line `from`, sending each
/// silence and trimmed sentence as it is ready.
fn render(
    job: &Job<'_>,
    episode: &Episode,
    from: usize,
    tx: &mpsc::SyncSender<PlayEvent>,
    waker: &Waker,
) -> Result<(), Failure> {
    let plans = plan_episode(episode)?;
    let mut walk = Timeline::new(&plans, from, episode.settings.gap_secs);
    while let Some(placement) = walk.next() {
        if job.cancel.load(Ordering::Relaxed) {
            return Ok(());
        }
        match placement {
            Placement::Silence(n) => send(tx, waker, PlayEvent::Audio(vec![0.0; n])),
            Placement::LineStart { plan, at } => send(
                tx,
                waker,
                PlayEvent::LineStart {
                    line: plan.index,
                    speaker: plan.speaker.clone(),
                    at: at as usize,
                },
            ),
            Placement::Sentence(slot) => {
                let sentence = slot.sentence;
                let key = SentenceKey::new(&slot.plan.voice, sentence.speed, &sentence.phonemes);
                let speech = if let Some(cached) = job.cache.get(&key) {
                    cached
                } else {
                    let request = SpeechRequest::new(&slot.plan.voice, sentence.speed)?;
                    let speech = match job
                        .source
                        .sentence(job.engine, &sentence.phonemes, &request)
                    {
                        Ok(speech) => Arc::new(speech),
                        Err(RenderError::Cancelled) => return Ok(()),
                        Err(e) => return Err(e.into()),
                    };
                    job.cache.put(key, Arc::clone(&speech));
                    speech
                };
                let placed = walk.place(&slot, &speech.samples, &speech.durations);
                let audio = speech.samples[placed.keep].to_vec();
                send(tx, waker, PlayEvent::Audio(audio));
                if !placed.cue.words.is_empty() {
                    let words = placed.cue.words;
                    let line = slot.plan.index;
                    send(tx, waker, PlayEvent::Words { line, words });
                }
            }
            Placement::LineEnd(_) => {}
        }
    }
    Ok(())
}
