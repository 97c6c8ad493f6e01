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
use crate::synth::{SpeechRequest, Synthesizer, SAMPLE_RATE};

use super::captions::{Cue, LineMark};
use super::plan::{LinePlan, Step};
use super::timing;
use super::{Progress, RenderError, SentenceSource};

/// The rendered timeline, waiting to be mastered.
pub struct Draft {
    /// Raw little-endian f32 mono samples at [`SAMPLE_RATE`].
    pub raw: NamedTempFile,
    pub samples: u64,
    pub cues: Vec<Cue>,
    pub lines: Vec<LineMark>,
    /// Sample ranges each line occupies (gaps excluded), for stems.
    pub spans: Vec<(String, Range<u64>)>,
    /// Integrated loudness of the unscaled mix; `None` when it is silent.
    pub loudness: Option<f64>,
    pub compute: Duration,
}

struct Timeline<'a> {
    out: BufWriter<&'a std::fs::File>,
    meter: LoudnessMeter,
    samples: u64,
    scratch: Vec<u8>,
}

impl Timeline<'_> {
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

    fn silence(&mut self, secs: f32, path: &Path) -> Result<(), RenderError> {
        let n = (secs.max(0.0) * SAMPLE_RATE as f32).round() as usize;
        let zeros = [0.0f32; 4096];
        let mut left = n;
        while left > 0 {
            let k = left.min(zeros.len());
            self.push(&zeros[..k], path)?;
            left -= k;
        }
        Ok(())
    }

    fn secs(&self) -> f64 {
        self.samples as f64 / f64::from(SAMPLE_RATE)
    }
}

/// Renders `plans` in order into a raw temporary file in `dir`.
pub fn render_draft(
    synth: &Synthesizer,
    source: &dyn SentenceSource,
    plans: &[LinePlan],
    episode_gap: Option<f32>,
    dir: &Path,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Draft, RenderError> {
    let raw = tempfile::Builder::new()
        .prefix(".banter-render-")
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
    let file = raw.as_file();
    let mut tl = Timeline {
        out: BufWriter::with_capacity(1 << 16, file),
        meter: LoudnessMeter::new(SAMPLE_RATE)?,
        samples: 0,
        scratch: Vec::new(),
    };
    let mut prev: Option<&LinePlan> = None;
    for plan in plans.iter().filter(|p| !p.is_silent()) {
        if let Some(prev) = prev {
            tl.silence(timing::turn_gap(prev, plan, episode_gap), &raw_path)?;
        } else if let Some(lead) = plan.lead_pause {
            tl.silence(lead, &raw_path)?;
        }
        let line_start = tl.samples;
        let last_speak = plan.steps.iter().rposition(|s| matches!(s, Step::Speak(_)));
        let mut first_in_line = true;
        for (k, step) in plan.steps.iter().enumerate() {
            if cancel.load(Ordering::Relaxed) {
                return Err(RenderError::Cancelled);
            }
            match step {
                Step::Silence(secs) => tl.silence(*secs, &raw_path)?,
                Step::Speak(sentence) => {
                    if !first_in_line && !matches!(plan.steps.get(k - 1), Some(Step::Silence(_))) {
                        tl.silence(timing::sentence_gap(sentence.speed), &raw_path)?;
                    }
                    first_in_line = false;
                    let request = SpeechRequest::new(&plan.voice, sentence.speed)?;
                    let audio = source.sentence(synth, &sentence.phonemes, &request)?;
                    let cut_off = plan.cut_off && Some(k) == last_speak;
                    let keep = timing::audible_range(&audio, SAMPLE_RATE, cut_off);
                    let start = tl.secs();
                    tl.push(&audio[keep], &raw_path)?;
                    cues.push(Cue {
                        start: start + f64::from(timing::LEAD_MARGIN_SECS),
                        end: tl.secs(),
                        speaker: plan.speaker.clone(),
                        text: sentence.caption.clone(),
                        line: plan.index,
                        source_line: plan.position.line,
                    });
                    done += sentence.phonemes.chars().count();
                    progress(&Progress {
                        done_phonemes: done,
                        total_phonemes: total,
                        audio_secs: tl.secs(),
                        elapsed: started.elapsed(),
                        line: plan.index,
                        lines: plans.len(),
                    });
                }
            }
        }
        lines.push(LineMark {
            line: plan.index,
            speaker: plan.speaker.clone(),
            voice: plan.voice.clone(),
            start: line_start as f64 / f64::from(SAMPLE_RATE),
            end: tl.secs(),
            source_line: plan.position.line,
        });
        spans.push((plan.speaker.clone(), line_start..tl.samples));
        prev = Some(plan);
    }
    // A little room after the last word, as every episode ends.
    tl.silence(0.5, &raw_path)?;
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
        loudness,
        compute: started.elapsed(),
    })
}
