//! Playback rendering: the episode from a chosen line, sentence by sentence, as pressing
//! (interactive) streams of the shared engine, placed on the export's own timeline
//! ([`engine::render::Timeline`]) so what the author hears is what they will get, to the sample
//! (before loudness normalisation).
//!
//! The thread sends each sentence's audio as soon as the scheduler delivers it; the UI appends
//! it to the waveform, and the mix to the play buffer. The mix is made here, on this thread,
//! by the export's own mixer ([`engine::render::mix::LiveMix`], the walk in [`walk`]): the
//! beds and sounds the script's cues ask for, ducked under the voices as in the export, so the
//! audio callback only ever copies finished samples, and seeking back or playing again replays
//! the same mix from the buffer. Cue files are found in the project's folder and measured before
//! the first sentence, so speech waits for a sound alone on its line as it does in the export.
//! Stopping sets the cancel flag and drops the stream handle, which cancels the stream in the
//! scheduler before its next segment.
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

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};

use engine::render::cache::Cached;
use engine::render::listening::ForListener;
use engine::render::mix;
use engine::render::{
    plan_episode, RenderError, SentenceAudio, SentenceSlot, SentenceSource, SoundMark,
};
use engine::script::Episode;
use engine::words::TimedWord;
use engine::{Engine, SpeechRequest};

use super::sentences::{SentenceCache, SentenceKey};
use super::{send, spawn, Failure, Waker, EVENTS};

mod walk;

pub enum PlayEvent {
    /// Line `line` (episode index) by `speaker` starts at sample `at` of this playback.
    LineStart {
        line: usize,
        speaker: String,
        at: usize,
    },
    /// The voices placed (silences included): what the timeline's waveform draws.
    Speech(Vec<f32>),
    /// What is heard, a little behind the speech when cues play: the voices with the beds and
    /// sounds mixed in (`heard`, for the play buffer), and the beds and sounds alone (`cues`,
    /// for the timeline's sound lane; empty when no cue plays).
    Mixed {
        heard: Vec<f32>,
        cues: Vec<f32>,
    },
    /// Sound cues placed, each with a sound's length in samples (none for beds).
    Cues(Vec<(SoundMark, Option<u64>)>),
    /// Things worth knowing about the cues that do not stop playback (a damaged file, an
    /// overlap longer than its sound).
    Notices(Vec<String>),
    /// The words of the sentence just sent, of line `line` (episode index), timed in seconds
    /// from the start of this playback; sent after its [`PlayEvent::Speech`], only when the
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

/// Starts rendering `episode` from line index `from` (the first audible line at or after it),
/// its cue files found under `sounds_dir` (the project's folder).
pub fn start(
    engine: Engine,
    episode: Episode,
    from: usize,
    sounds_dir: PathBuf,
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
            .and_then(|()| render(&job, &episode, from, &sounds_dir, &tx, &waker))
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

impl Job<'_> {
    /// The audio of `slot`'s sentence, from the studio's cache or the model; `None` when the
    /// playback was stopped while it rendered.
    fn speech(&self, slot: &SentenceSlot<'_>) -> Result<Option<Arc<SentenceAudio>>, Failure> {
        let sentence = slot.sentence;
        let key = SentenceKey::new(&slot.plan.voice, sentence.speed, &sentence.phonemes);
        if let Some(cached) = self.cache.get(&key) {
            return Ok(Some(cached));
        }
        let request = SpeechRequest::new(&slot.plan.voice, sentence.speed)?;
        let speech = match self
            .source
            .sentence(self.engine, &sentence.phonemes, &request)
        {
            Ok(speech) => Arc::new(speech),
            Err(RenderError::Cancelled) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        self.cache.put(key, Arc::clone(&speech));
        Ok(Some(speech))
    }
}

/// Plans the episode, finds and measures its cue files under `sounds_dir` (so speech waits for
/// a sound alone on its line, as in the export), and walks it from line `from`.
fn render(
    job: &Job<'_>,
    episode: &Episode,
    from: usize,
    sounds_dir: &Path,
    tx: &mpsc::SyncSender<PlayEvent>,
    waker: &Waker,
) -> Result<(), Failure> {
    let mut plans = plan_episode(episode)?;
    let mut notices = Vec::new();
    let files = mix::resolve(&mut plans, episode, sounds_dir, &mut notices)?;
    if !notices.is_empty() {
        send(tx, waker, PlayEvent::Notices(notices));
    }
    let walk = walk::Walk {
        plans: &plans,
        episode,
        files: &files,
        from,
        open: &mix::open_file,
        cancel: job.cancel,
    };
    walk.run(&mut |slot| job.speech(slot), &mut |e| send(tx, waker, e))
}

#[cfg(test)]
mod tests;
