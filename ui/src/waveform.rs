//! What the timeline shows: a min/max envelope of the audio rendered so far (one bucket per
//! 10 ms, computed as chunks arrive so drawing costs the same at any length), the region each
//! line occupies, labelled with its speaker, and the words spoken in it, on the playhead's clock
//! (the script's word highlight and click-to-seek read them too); under the speech, the sound
//! cues and the envelope of the beds and sounds ([`lane`]).

use engine::words::TimedWord;
use engine::SAMPLE_RATE;

pub mod lane;

pub use lane::{LaneCue, SoundLane};

/// Samples per envelope bucket (10 ms).
pub const BUCKET: usize = SAMPLE_RATE as usize / 100;

/// A min/max envelope of audio, one bucket per [`BUCKET`] samples, grown as chunks arrive.
#[derive(Debug, Clone, Default)]
pub struct Envelope {
    /// (min, max) per bucket.
    pub peaks: Vec<(f32, f32)>,
    partial: Option<(f32, f32, usize)>,
}

impl Envelope {
    pub fn push(&mut self, samples: &[f32]) {
        let (mut lo, mut hi, mut n) = self.partial.take().unwrap_or((0.0, 0.0, 0));
        for &s in samples {
            lo = lo.min(s);
            hi = hi.max(s);
            n += 1;
            if n == BUCKET {
                self.peaks.push((lo, hi));
                (lo, hi, n) = (0.0, 0.0, 0);
            }
        }
        if n > 0 {
            self.partial = Some((lo, hi, n));
        }
    }

    /// Peak absolute level (0 when silent).
    #[must_use]
    pub fn peak(&self) -> f32 {
        self.peaks
            .iter()
            .map(|(lo, hi)| lo.abs().max(hi.abs()))
            .fold(0.0, f32::max)
    }
}

/// One line's place in the rendered audio.
#[derive(Debug, Clone, PartialEq)]
pub struct Region {
    pub line: usize,
    pub speaker: String,
    pub start: usize,
    /// Grows as the line's audio arrives.
    pub end: usize,
    /// The line's words rendered so far, in order (none when the model gave no durations).
    pub words: Vec<Word>,
}

/// A word of the rendered audio, in samples of the playback (the playhead's clock).
#[derive(Debug, Clone, PartialEq)]
pub struct Word {
    /// As the author wrote it.
    pub text: String,
    pub start: usize,
    pub end: usize,
}

/// The rendered audio as the timeline panel draws it: its envelope, its lines and their words.
/// Named for what it is, apart from the engine's `render::Timeline`, the walk that places every
/// sentence of an export.
#[derive(Debug, Clone, Default)]
pub struct Waveform {
    /// The document revision this audio was rendered from.
    pub revision: u64,
    /// The line playback started from.
    pub start_line: usize,
    /// The speech's envelope.
    pub envelope: Envelope,
    pub regions: Vec<Region>,
    pub samples: usize,
    /// Everything from the start line on has been rendered.
    pub complete: bool,
    /// The sound cues under the speech (empty when the script has none).
    pub lane: SoundLane,
}

impl Waveform {
    #[must_use]
    pub fn new(revision: u64, start_line: usize) -> Self {
        Self {
            revision,
            start_line,
            ..Self::default()
        }
    }

    pub fn line_start(&mut self, line: usize, speaker: String, at: usize) {
        self.regions.push(Region {
            line,
            speaker,
            start: at,
            end: at,
            words: Vec::new(),
        });
    }

    /// Adds the timed words of a sentence of line `line` (seconds from the playback's start).
    pub fn add_words(&mut self, line: usize, words: &[TimedWord]) {
        let Some(region) = self.regions.iter_mut().rev().find(|r| r.line == line) else {
            return;
        };
        let sample = |secs: f64| (secs.max(0.0) * f64::from(SAMPLE_RATE)).round() as usize;
        region.words.extend(words.iter().map(|w| {
            let start = sample(w.start);
            Word {
                text: w.word.clone(),
                start,
                end: sample(w.end).max(start),
            }
        }));
    }

    /// The words of line `line` rendered so far (none if it is not in this audio).
    #[must_use]
    pub fn line_words(&self, line: usize) -> &[Word] {
        self.regions
            .iter()
            .rev()
            .find(|r| r.line == line)
            .map_or(&[], |r| &r.words)
    }

    /// The word being spoken at `sample`: its line and its index among the line's words, found
    /// by binary search (words are in time order). None between words (a pause at punctuation
    /// belongs to no word) and outside speech.
    #[must_use]
    pub fn word_at(&self, sample: usize) -> Option<(usize, usize)> {
        let region = self.region_at(sample)?;
        let k = region
            .words
            .partition_point(|w| w.start <= sample)
            .checked_sub(1)?;
        (sample < region.words[k].end).then_some((region.line, k))
    }

    pub fn push(&mut self, samples: &[f32]) {
        self.envelope.push(samples);
        self.samples += samples.len();
        if let Some(r) = self.regions.last_mut() {
            r.end = self.samples;
        }
    }

    /// Seconds of audio rendered.
    #[must_use]
    pub fn secs(&self) -> f64 {
        self.samples as f64 / f64::from(SAMPLE_RATE)
    }

    /// The region under `sample`, or the last one that started before it.
    #[must_use]
    pub fn region_at(&self, sample: usize) -> Option<&Region> {
        self.regions.iter().rev().find(|r| r.start <= sample)
    }

    /// Peak absolute level of the speech rendered so far (0 when silent).
    #[must_use]
    pub fn peak(&self) -> f32 {
        self.envelope.peak()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_and_regions_grow_with_chunks() {
        let mut t = Waveform::new(3, 0);
        t.line_start(0, "Alice".into(), 0);
        t.push(&vec![0.5; BUCKET + 10]);
        assert_eq!(t.envelope.peaks.len(), 1);
        t.push(&vec![-0.25; BUCKET - 10]);
        assert_eq!(t.envelope.peaks, vec![(0.0, 0.5), (-0.25, 0.5)]);
        t.line_start(1, "Bob".into(), t.samples);
        t.push(&[0.1; 100]);
        assert_eq!(t.regions[0].end, 2 * BUCKET);
        assert_eq!(t.regions[1].end, 2 * BUCKET + 100);
        assert_eq!(t.region_at(2 * BUCKET + 5).map(|r| r.line), Some(1));
        assert_eq!(t.region_at(5).map(|r| r.line), Some(0));
        assert!((t.peak() - 0.5).abs() < 1e-6);
    }

    fn timed(word: &str, start: f64, end: f64) -> TimedWord {
        TimedWord {
            word: word.into(),
            start,
            end,
            source_line: 1,
            source_column: 1,
        }
    }

    #[test]
    fn the_word_at_a_sample_is_found_in_its_line() {
        let sr = SAMPLE_RATE as usize;
        let mut t = Waveform::new(0, 0);
        t.line_start(0, "Ann".into(), 0);
        t.push(&vec![0.0; 2 * sr]);
        t.add_words(0, &[timed("Good", 0.1, 0.4), timed("morning", 0.4, 0.9)]);
        t.add_words(0, &[timed("Hi", 1.2, 1.5)]);
        t.line_start(1, "Ben".into(), 2 * sr);
        t.push(&vec![0.0; sr]);
        t.add_words(1, &[timed("Morning", 2.1, 2.6)]);
        t.add_words(7, &[timed("lost", 0.0, 1.0)]);
        assert_eq!(t.line_words(0).len(), 3, "two sentences of line 0");
        assert_eq!(t.line_words(0)[1].start, sr * 4 / 10);
        assert!(t.line_words(7).is_empty(), "a line not in this audio");
        assert_eq!(t.word_at(0), None, "before the first word");
        assert_eq!(t.word_at(sr / 5), Some((0, 0)));
        assert_eq!(
            t.word_at(sr * 4 / 10),
            Some((0, 1)),
            "a word starts where it ends"
        );
        assert_eq!(t.word_at(sr), None, "the pause after morning");
        assert_eq!(t.word_at(sr * 13 / 10), Some((0, 2)));
        assert_eq!(t.word_at(sr * 22 / 10), Some((1, 0)));
        assert_eq!(t.word_at(sr * 27 / 10), None, "after the last word");
    }
}
