//! Where every sentence and silence of an episode goes: the one walk over the planned lines
//! that the export, the studio's playback and `/v1/dialogue` all follow, so the three agree
//! to the sample.
//!
//! [`Timeline`] yields [`Placement`]s in order: the silence before a line (the turn gap, or a
//! leading `[pause:]`), the line's start, its sentences with the sentence gaps and `[pause:]`
//! silences between them, the line's end, and after the last line [`TAIL_SECS`] of room. A
//! sentence's length is only known once it is rendered, so the consumer renders each
//! [`Placement::Sentence`] and hands the audio back to [`Timeline::place`], which trims it to its
//! audible range ([`timing::audible_range`]) and says where it lands. Positions are counted in
//! samples at the model's rate; silences are rounded to whole samples once, here.
//!
//! Given the model's durations with the audio, `place` also times every word of the sentence
//! ([`crate::words`]): the word's samples in the untrimmed audio, moved by the trim and the
//! sentence's place, and kept inside the sentence's cue. So a word's time is a position in the
//! final file, whatever the gaps, pauses, speeds and output sample rate.

use std::ops::Range;
use std::sync::Arc;

use crate::segments::sentence_segments;
use crate::speech::SAMPLE_RATE;
use crate::words::{refine, word_samples, Pass, TimedWord};

use super::captions::{Cue, LineMark};
use super::plan::{LinePlan, SentencePlan, Step};
use super::timing;
use crate::script::SoundCue;

/// Room after the last word, as every episode ends.
pub const TAIL_SECS: f32 = 0.5;

/// One thing on the timeline, in order.
#[derive(Debug)]
pub enum Placement<'a> {
    /// This many samples of silence.
    Silence(usize),
    /// A line starts at `at` (samples from the start of the walk).
    LineStart { plan: &'a LinePlan, at: u64 },
    /// A sentence to render; give its audio to [`Timeline::place`].
    Sentence(SentenceSlot<'a>),
    /// The line that started last ends here.
    LineEnd(LineMark),
}

/// A sentence waiting for its audio.
#[derive(Debug, Clone, Copy)]
pub struct SentenceSlot<'a> {
    pub plan: &'a LinePlan,
    pub sentence: &'a SentencePlan,
    /// The last sentence of a line cut off by a dash: it stops dead, the next speaker talks
    /// over its decay.
    pub cut_off: bool,
}

/// Where a sound cue starts on the timeline (the mix plays it there; the markers list it).
#[derive(Debug, Clone, PartialEq)]
pub struct SoundMark {
    pub cue: SoundCue,
    /// Its first sample (samples from the start of the walk).
    pub at: u64,
    /// Index of the script line that holds it.
    pub line: usize,
}

/// Where a rendered sentence landed.
#[derive(Debug, Clone, PartialEq)]
pub struct Placed {
    /// The part of the rendered audio that goes on the timeline.
    pub keep: Range<usize>,
    /// Its caption cue (times in seconds from the start of the walk).
    pub cue: Cue,
    /// Its first sample on the timeline.
    pub at: u64,
}

/// The walk over an episode's planned lines (see the module docs).
pub struct Timeline<'a> {
    lines: Vec<&'a LinePlan>,
    episode_gap: Option<f32>,
    /// Index into `lines` of the line being walked, and of its next step.
    line: usize,
    step: usize,
    /// Where the line being walked stands: not started, started, or its steps all yielded.
    phase: Phase,
    /// The sentence gap before step `step` has been yielded.
    gap_out: bool,
    position: u64,
    line_start: u64,
    /// The timed words of the line being walked, for its [`LineMark`].
    line_words: Vec<TimedWord>,
    /// The sound cues placed so far, in order of their lines (see [`Timeline::take_sounds`]).
    sounds: Vec<SoundMark>,
    tail_done: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Gap,
    Start,
    Steps,
}

impl<'a> Timeline<'a> {
    /// Walks the audible lines of `plans` whose index is `from` or later; the first line gets
    /// its leading `[pause:]` (no turn gap: nothing comes before it), later ones their turn
    /// gaps (`episode_gap` is the script's `gap:` setting).
    #[must_use]
    pub fn new(plans: &'a [LinePlan], from: usize, episode_gap: Option<f32>) -> Self {
        Self {
            lines: plans
                .iter()
                .filter(|p| p.index >= from && !p.is_silent())
                .collect(),
            episode_gap,
            line: 0,
            step: 0,
            phase: Phase::Gap,
            gap_out: false,
            position: 0,
            line_start: 0,
            line_words: Vec::new(),
            sounds: Vec::new(),
            tail_done: false,
        }
    }

    /// Samples placed so far.
    #[must_use]
    pub fn position(&self) -> u64 {
        self.position
    }

    /// Seconds placed so far.
    #[must_use]
    pub fn secs(&self) -> f64 {
        secs(self.position)
    }

    /// The sound cues placed since the last call: a cue alone on its line where the walk
    /// reached it (the silence that follows is its wait), a cue among a sentence's words when
    /// that word starts (the sentence's start when the audio came without word timing).
    pub fn take_sounds(&mut self) -> Vec<SoundMark> {
        std::mem::take(&mut self.sounds)
    }

    /// Places the audio rendered for `slot`: trims it to its audible range and advances.
    /// `durations` are the frames per token of each Kokoro pass the audio took; without them
    /// (empty) the cue has no words.
    pub fn place(
        &mut self,
        slot: &SentenceSlot<'_>,
        audio: &[f32],
        durations: &[Arc<[u32]>],
    ) -> Placed {
        let keep = timing::audible_range(audio, SAMPLE_RATE, slot.cut_off);
        let at = self.position;
        self.position += keep.len() as u64;
        let end = secs(self.position);
        let mut cue = Cue {
            // An audible span shorter than the lead margin (a near-silent sentence, or none at
            // all) still makes a cue that starts no later than it ends.
            start: (secs(at) + f64::from(timing::LEAD_MARGIN_SECS)).min(end),
            end,
            speaker: slot.plan.speaker.clone(),
            text: slot.sentence.caption.clone(),
            line: slot.plan.index,
            source_line: slot.plan.position.line,
            words: Vec::new(),
        };
        cue.words = timed_words(slot, audio, durations, &keep, at, &cue);
        for inline in &slot.sentence.sounds {
            let start = cue.words.get(inline.word).map_or(cue.start, |w| w.start);
            self.sounds.push(SoundMark {
                cue: inline.cue.clone(),
                at: (start * f64::from(SAMPLE_RATE)).round() as u64,
                line: slot.plan.index,
            });
        }
        self.line_words.extend(cue.words.iter().cloned());
        Placed { keep, cue, at }
    }

    fn silence(&mut self, secs: f32) -> Option<Placement<'a>> {
        let n = samples(secs);
        self.position += n as u64;
        (n > 0).then_some(Placement::Silence(n))
    }

    /// The next step of the line being walked, or its end.
    fn next_step(&mut self, plan: &'a LinePlan) -> Placement<'a> {
        loop {
            let k = self.step;
            let Some(step) = plan.steps.get(k) else {
                self.line += 1;
                self.step = 0;
                self.phase = Phase::Gap;
                return Placement::LineEnd(LineMark {
                    line: plan.index,
                    speaker: plan.speaker.clone(),
                    voice: plan.voice.clone(),
                    start: secs(self.line_start),
                    end: secs(self.position),
                    source_line: plan.position.line,
                    words: std::mem::take(&mut self.line_words),
                });
            };
            match step {
                Step::Silence(s) => {
                    self.step += 1;
                    if let Some(p) = self.silence(*s) {
                        return p;
                    }
                }
                Step::Sound(sound) => {
                    self.step += 1;
                    self.sounds.push(SoundMark {
                        cue: sound.cue.clone(),
                        at: self.position,
                        line: plan.index,
                    });
                    // Speech waits for a sound alone on its line (less its overlap).
                    if let Some(wait) = sound.wait.filter(|_| sound.cue.alone) {
                        if let Some(p) = self.silence(wait) {
                            return p;
                        }
                    }
                }
                Step::Speak(sentence) => {
                    // Between two sentences of a line; a `[pause:]` or a sound alone on its
                    // line between them replaces it (a cue at the end of the words does not).
                    let before = plan.steps[..k]
                        .iter()
                        .rev()
                        .find(|s| !matches!(s, Step::Sound(x) if !x.cue.alone));
                    let follows_speech = matches!(before, Some(Step::Speak(_)));
                    if follows_speech && !self.gap_out {
                        self.gap_out = true;
                        if let Some(p) = self.silence(timing::sentence_gap(sentence.speed)) {
                            return p;
                        }
                    }
                    self.gap_out = false;
                    self.step += 1;
                    let last_speak = plan.steps.iter().rposition(|s| matches!(s, Step::Speak(_)));
                    return Placement::Sentence(SentenceSlot {
                        plan,
                        sentence,
                        cut_off: plan.cut_off && Some(k) == last_speak,
                    });
                }
            }
        }
    }
}

impl<'a> Iterator for Timeline<'a> {
    type Item = Placement<'a>;

    fn next(&mut self) -> Option<Placement<'a>> {
        loop {
            let Some(&plan) = self.lines.get(self.line) else {
                if self.tail_done {
                    return None;
                }
                self.tail_done = true;
                match self.silence(TAIL_SECS) {
                    Some(p) => return Some(p),
                    None => continue,
                }
            };
            match self.phase {
                Phase::Gap => {
                    self.phase = Phase::Start;
                    let gap = match self.line.checked_sub(1).map(|i| self.lines[i]) {
                        Some(prev) => timing::turn_gap(prev, plan, self.episode_gap),
                        None => plan.lead_pause.unwrap_or(0.0),
                    };
                    if let Some(p) = self.silence(gap) {
                        return Some(p);
                    }
                }
                Phase::Start => {
                    self.phase = Phase::Steps;
                    self.line_start = self.position;
                    return Some(Placement::LineStart {
                        plan,
                        at: self.position,
                    });
                }
                Phase::Steps => return Some(self.next_step(plan)),
            }
        }
    }
}

/// The words of a placed sentence on the timeline: their samples in the untrimmed audio, moved
/// by the trim (`keep`) and the sentence's place (`at`), inside the cue.
fn timed_words(
    slot: &SentenceSlot<'_>,
    audio: &[f32],
    durations: &[Arc<[u32]>],
    keep: &Range<usize>,
    at: u64,
    cue: &Cue,
) -> Vec<TimedWord> {
    let sentence = slot.sentence;
    let segments = sentence_segments(&sentence.phonemes);
    if durations.is_empty() || segments.len() != durations.len() {
        return Vec::new();
    }
    let passes: Vec<Pass<'_>> = segments
        .iter()
        .zip(durations)
        .map(|(s, d)| Pass {
            phonemes: &s.phonemes,
            durations: d,
        })
        .collect();
    let ranges: Vec<Range<usize>> = sentence.words.iter().map(|w| w.phonemes.clone()).collect();
    let mut samples = word_samples(&sentence.phonemes, &ranges, &passes);
    refine(&mut samples, audio);
    let (lo, hi) = (keep.start as u64, keep.end as u64);
    let place = |s: u64| secs(at + s.clamp(lo, hi) - lo).clamp(cue.start, cue.end);
    sentence
        .words
        .iter()
        .zip(samples)
        .map(|(w, s)| TimedWord {
            word: w.text.clone(),
            start: place(s.start),
            end: place(s.end),
            source_line: w.at.line,
            source_column: w.at.column,
        })
        .collect()
}

/// Samples of `secs` of silence at the model's rate (negative: none).
#[must_use]
pub fn samples(secs: f32) -> usize {
    (secs.max(0.0) * SAMPLE_RATE as f32).round() as usize
}

fn secs(samples: u64) -> f64 {
    samples as f64 / f64::from(SAMPLE_RATE)
}

#[cfg(test)]
mod tests;
