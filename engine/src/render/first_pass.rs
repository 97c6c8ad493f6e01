//! Pass one: every sentence through Kokoro, placed on the timeline, streamed to a raw file on
//! disk while the loudness meter listens.
//!
//! Loudness normalisation needs the integrated loudness of the *whole* episode before the first
//! sample can be scaled, so an episode is rendered in two passes. Holding 90 minutes in memory
//! would take half a gigabyte; instead this pass appends 24 kHz f32 samples to a temporary file
//! beside the output (same file system, not a RAM-backed /tmp) and keeps only the timeline: one
//! cue per sentence and one mark per line, a few hundred bytes per minute.

use std::io::{BufWriter, Write};
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tempfile::NamedTempFile;

use crate::audio::LoudnessMeter;
use crate::speech::{SpeechRequest, SAMPLE_RATE};
use crate::Engine;

use super::ahead::Ahead;
use super::captions::{Cue, LineMark};
use super::plan::LinePlan;
use super::timeline::{Placement, SoundMark, Timeline};
use super::{Progress, RenderError, SentenceAudio, SentenceSource};

/// The rendered timeline, waiting to be mastered.
pub struct Draft {
    /// Raw little-endian f32 mono samples at [`SAMPLE_RATE`].
    pub raw: NamedTempFile,
    pub samples: u64,
    pub cues: Vec<Cue>,
    pub lines: Vec<LineMark>,
    /// Sample ranges each line occupies (gaps excluded), for stems.
    pub spans: Vec<(String, Range<u64>)>,
    /// Sample ranges where a voice sounds, one per sentence, in order: what ducks a bed.
    pub speech: Vec<Range<u64>>,
    /// Where every sound cue starts.
    pub sounds: Vec<SoundMark>,
    /// Integrated loudness of the unscaled mix; `None` when it is silent.
    pub loudness: Option<f64>,
    pub compute: Duration,
}

struct RawFile<'a> {
    out: BufWriter<&'a std::fs::File>,
    meter: LoudnessMeter,
    samples: u64,
    scratch: Vec<u8>,
}

impl RawFile<'_> {
    fn push(&mut self, samples: &[f32], path: &Path) -> Result<(), RenderError> {
        self.meter.add(samples)?;
        self.scratch.clear();
        for s in samples {
            self.scratch.extend_from_slice(&s.to_le_bytes());
        }
        self.out
            .write_all(&self.scratch)
            .map_err(|e| RenderError::io(path, e))?;
        self.samples += samples.len() as u64;
        Ok(())
    }

    fn silence(&mut self, n: usize, path: &Path) -> Result<(), RenderError> {
        let zeros = [0.0f32; 4096];
        let mut left = n;
        while left > 0 {
            let k = left.min(zeros.len());
            self.push(&zeros[..k], path)?;
            left -= k;
        }
        Ok(())
    }
}

/// One sentence the walk asks for: its line's voice as written, its phonemes and the request.
struct Ask {
    voice: String,
    phonemes: String,
    request: SpeechRequest,
}

/// Renders `plans` in order into a raw temporary file in `dir`. Up to
/// [`Engine::render_lookahead`] sentences are rendered ahead of the one being placed (see
/// `render::ahead`); they are placed in order all the same.
pub fn render_draft(
    engine: &Engine,
    source: &dyn SentenceSource,
    plans: &[LinePlan],
    episode_gap: Option<f32>,
    dir: &Path,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Draft, RenderError> {
    // Every sentence the walk will ask for, in its order: which they are does not depend on
    // the audio, only where they land does.
    let sentences: Vec<Ask> = Timeline::new(plans, 0, episode_gap)
        .filter_map(|p| match p {
            Placement::Sentence(slot) => Some(slot),
            _ => None,
        })
        .map(|slot| {
            Ok(Ask {
                voice: slot.plan.voice.clone(),
                phonemes: slot.sentence.phonemes.clone(),
                request: SpeechRequest::new(&slot.plan.voice, slot.sentence.speed)?,
            })
        })
        .collect::<Result<_, RenderError>>()?;
    let lookahead = engine.render_lookahead();
    let ahead = Ahead::new(sentences.len(), lookahead);
    let render = |k: usize| {
        let ask = &sentences[k];
        source.sentence(engine, &ask.phonemes, &ask.request)
    };
    std::thread::scope(|scope| {
        // However the walk ends (done, an error, a panic), no sentence starts after it, so
        // the scope's join waits only for those under way.
        let _stop = ahead.stop_on_drop();
        if lookahead > 1 {
            ahead
                .start(scope, cancel, &render)
                .map_err(|e| RenderError::io(dir, e))?;
        }
        let next = |k: usize| {
            if lookahead > 1 {
                ahead.take(k)
            } else {
                render(k)
            }
        };
        walk_draft(plans, episode_gap, dir, cancel, progress, &sentences, &next)
    })
}

/// The walk of [`render_draft`], with sentence `k`'s audio from `next(k)`.
fn walk_draft(
    plans: &[LinePlan],
    episode_gap: Option<f32>,
    dir: &Path,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(&Progress),
    sentences: &[Ask],
    next: &dyn Fn(usize) -> Result<SentenceAudio, RenderError>,
) -> Result<Draft, RenderError> {
    let raw = tempfile::Builder::new()
        .prefix(&crate::scratch::prefix("render"))
        .suffix(".raw")
        .tempfile_in(dir)
        .map_err(|e| RenderError::io(dir, e))?;
    let raw_path = raw.path().to_path_buf();
    let started = Instant::now();
    let total: usize = plans.iter().map(LinePlan::phoneme_count).sum();
    let mut done = 0usize;
    let mut cues = Vec::new();
    let mut lines = Vec::new();
    let mut spans = Vec::new();
    let mut speech = Vec::new();
    let mut speaking = false;
    let file = raw.as_file();
    let mut tl = RawFile {
        out: BufWriter::with_capacity(1 << 16, file),
        meter: LoudnessMeter::new(SAMPLE_RATE)?,
        samples: 0,
        scratch: Vec::new(),
    };
    let mut walk = Timeline::new(plans, 0, episode_gap);
    let mut line_start = 0;
    let mut sentence = 0;
    while let Some(placement) = walk.next() {
        if cancel.load(Ordering::Relaxed) {
            return Err(RenderError::Cancelled);
        }
        match placement {
            Placement::Silence(n) => tl.silence(n, &raw_path)?,
            Placement::LineStart { at, plan } => {
                line_start = at;
                speaking = plan.speaks();
            }
            Placement::Sentence(slot) => {
                // The list was made by the same walk; a mismatch would be a bug, never a
                // sentence placed in another's audio.
                match sentences.get(sentence) {
                    Some(ask)
                        if ask.phonemes == slot.sentence.phonemes
                            && ask.voice == slot.plan.voice
                            && ask.request.speed.to_bits() == slot.sentence.speed.to_bits() => {}
                    _ => {
                        return Err(RenderError::Internal(format!(
                            "sentence {sentence} of the walk is not the one rendered for it"
                        )))
                    }
                }
                let audio = next(sentence)?;
                sentence += 1;
                let placed = walk.place(&slot, &audio.samples, &audio.durations);
                speech.push(placed.at..placed.at + placed.keep.len() as u64);
                tl.push(&audio.samples[placed.keep], &raw_path)?;
                cues.push(placed.cue);
                done += slot.sentence.phonemes.chars().count();
                progress(&Progress {
                    done_phonemes: done,
                    total_phonemes: total,
                    audio_secs: walk.secs(),
                    elapsed: started.elapsed(),
                    line: slot.plan.index,
                    lines: plans.len(),
                });
            }
            // A line that only plays sound cues is no one's speech (no caption, no line mark).
            Placement::LineEnd(mark) if speaking => {
                spans.push((mark.speaker.clone(), line_start..walk.position()));
                lines.push(mark);
            }
            Placement::LineEnd(_) => {}
        }
    }
    debug_assert_eq!(
        walk.position(),
        tl.samples,
        "the file holds what the walk placed"
    );
    tl.out.flush().map_err(|e| RenderError::io(&raw_path, e))?;
    let samples = tl.samples;
    let loudness = tl.meter.integrated_lufs();
    drop(tl);
    Ok(Draft {
        raw,
        samples,
        cues,
        lines,
        spans,
        speech,
        sounds: walk.take_sounds(),
        loudness,
        compute: started.elapsed(),
    })
}
