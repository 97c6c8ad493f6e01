//! What the timeline shows: a min/max envelope of the audio rendered so far (one bucket per
//! 10 ms, computed as chunks arrive so drawing costs the same at any length) and the region each
//! line occupies, labelled with its speaker.

use engine::synth::SAMPLE_RATE;

/// Samples per envelope bucket (10 ms).
pub const BUCKET: usize = SAMPLE_RATE as usize / 100;

/// One line's place in the rendered audio.
#[derive(Debug, Clone, PartialEq)]
pub struct Region {
    pub line: usize,
    pub speaker: String,
    pub start: usize,
    /// Grows as the line's audio arrives.
    pub end: usize,
}

#[derive(Debug, Clone, Default)]
pub struct Timeline {
    /// The document revision this audio was rendered from.
    pub revision: u64,
    /// The line playback started from.
    pub start_line: usize,
    /// (min, max) per bucket.
    pub peaks: Vec<(f32, f32)>,
    pub regions: Vec<Region>,
    pub samples: usize,
    /// Everything from the start line on has been rendered.
    pub complete: bool,
    partial: Option<(f32, f32, usize)>,
}

impl Timeline {
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
        });
    }

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

    /// Peak absolute level rendered so far (0 when silent).
    #[must_use]
    pub fn peak(&self) -> f32 {
        self.peaks
            .iter()
            .map(|(lo, hi)| lo.abs().max(hi.abs()))
            .fold(0.0, f32::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_and_regions_grow_with_chunks() {
        let mut t = Timeline::new(3, 0);
        t.line_start(0, "Alice".into(), 0);
        t.push(&vec![0.5; BUCKET + 10]);
        assert_eq!(t.peaks.len(), 1);
        t.push(&vec![-0.25; BUCKET - 10]);
        assert_eq!(t.peaks, vec![(0.0, 0.5), (-0.25, 0.5)]);
        t.line_start(1, "Bob".into(), t.samples);
        t.push(&[0.1; 100]);
        assert_eq!(t.regions[0].end, 2 * BUCKET);
        assert_eq!(t.regions[1].end, 2 * BUCKET + 100);
        assert_eq!(t.region_at(2 * BUCKET + 5).map(|r| r.line), Some(1));
        assert_eq!(t.region_at(5).map(|r| r.line), Some(0));
        assert!((t.peak() - 0.5).abs() < 1e-6);
    }
}
