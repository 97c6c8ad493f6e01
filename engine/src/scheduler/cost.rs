//! What the model's steps cost, learnt while the scheduler runs.
//!
//! Why: the policy admits a new stream only if every playing one still gets its next audio in
//! time, which needs the cost of what stands before that audio, and of the step about to run.

use crate::speech::Segment;

/// Running averages of what steps cost.
///
/// A step that *begins* a segment runs its encoder, measured in units of phoneme ids at speed 1
/// (the work grows with the audio's length, so with ids ÷ speed) plus a fixed share per pass.
/// Every other step runs a piece of generator, measured in decoder frames (context included,
/// weighted by the piece's share of a pass). Segment length in frames is learnt per unit too,
/// to estimate a whole segment's generator before it is encoded.
#[derive(Debug, Clone, Copy)]
pub(super) struct CostModel {
    /// Seconds per unit to encode a segment.
    encode: f64,
    /// Seconds per decoder frame of generator.
    frame: f64,
    /// Decoder frames per unit.
    frames_per_unit: f64,
}

impl CostModel {
    /// Units a pass costs before its first phoneme.
    const OVERHEAD_UNITS: f64 = 12.0;
    /// Weight of the newest measurement.
    const ALPHA: f64 = 0.3;

    pub(super) fn units(segment: &Segment, speed: f32) -> f64 {
        segment.ids.len() as f64 / f64::from(speed.max(0.1)) + Self::OVERHEAD_UNITS
    }

    /// Compute time from the start of an unbegun segment to its first audio, when its first
    /// window is `first_window` decoder frames including their context (or the segment whole).
    pub(super) fn to_first_audio(
        self,
        segment: &Segment,
        speed: f32,
        first_window: Option<usize>,
    ) -> f64 {
        let units = Self::units(segment, speed);
        let frames = self.frames_per_unit * units;
        let generator = match first_window {
            None => frames,
            Some(decoded) => frames.min(decoded as f64),
        };
        units * self.encode + self.frame * generator
    }

    /// Compute time of encoding `segment`.
    pub(super) fn encoding(self, segment: &Segment, speed: f32) -> f64 {
        self.encode * Self::units(segment, speed)
    }

    /// Compute time of `frames` decoder frames of generator.
    pub(super) fn generator(self, frames: f64) -> f64 {
        self.frame * frames
    }

    /// `segment` was encoded in `secs` and has `frames` decoder frames.
    pub(super) fn observe_begin(
        &mut self,
        segment: &Segment,
        speed: f32,
        secs: f64,
        frames: usize,
    ) {
        let units = Self::units(segment, speed);
        ewma(&mut self.encode, secs / units);
        ewma(&mut self.frames_per_unit, frames as f64 / units);
    }

    /// A piece of generator over `frames` decoder frames took `secs`.
    pub(super) fn observe_generator(&mut self, frames: f64, secs: f64) {
        if frames > 0.0 {
            ewma(&mut self.frame, secs / frames);
        }
    }
}

fn ewma(average: &mut f64, sample: f64) {
    if sample.is_finite() {
        *average += CostModel::ALPHA * (sample - *average);
    }
}

impl Default for CostModel {
    /// A 2-core CPU's figures (the encoder ~1.6 ms per unit, the generator ~2.5 ms per decoder
    /// frame, ~3.8 frames per unit); the first measurements replace them.
    fn default() -> Self {
        Self {
            encode: 0.0016,
            frame: 0.0025,
            frames_per_unit: 3.8,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segment(ids: usize) -> Segment {
        Segment {
            phonemes: "x".repeat(ids),
            ids: vec![1; ids],
        }
    }

    #[test]
    fn the_estimates_follow_what_is_measured() {
        let mut cost = CostModel::default();
        let seg = segment(50);
        let before = cost.to_first_audio(&seg, 1.0, None);
        for _ in 0..30 {
            cost.observe_begin(&seg, 1.0, 0.5, 1000);
            cost.observe_generator(100.0, 1.0);
        }
        let after = cost.to_first_audio(&seg, 1.0, None);
        assert!((after - (0.5 + 1000.0 * 0.01)).abs() < 0.05, "{after}");
        assert!(after > before * 10.0);
        // A windowed first audio costs the encoder and one short window with its context
        // (20 + 16 frames decoded), not the segment.
        let windowed = cost.to_first_audio(&seg, 1.0, Some(36));
        assert!((windowed - (0.5 + 36.0 * 0.01)).abs() < 0.05, "{windowed}");
    }
}
