//! Frame-time statistics: with `BANTER_FRAME_STATS=1`, the studio records how long each frame's
//! UI work took and the interval between frames, and prints their 50th/99th percentiles to
//! stderr on exit. This is how the "60 fps while rendering" claim is measured.

use std::time::{Duration, Instant};

/// Frames measured before the oldest are dropped (about 30 minutes at 60 fps).
const MAX_FRAMES: usize = 100_000;

#[derive(Debug, Default)]
pub struct FrameStats {
    enabled: bool,
    work_ms: Vec<f32>,
    interval_ms: Vec<f32>,
    last: Option<Instant>,
}

impl FrameStats {
    #[must_use]
    pub fn from_env() -> Self {
        Self {
            enabled: std::env::var("BANTER_FRAME_STATS").is_ok_and(|v| v == "1"),
            ..Self::default()
        }
    }

    pub fn record(&mut self, work: Duration) {
        if !self.enabled || self.work_ms.len() >= MAX_FRAMES {
            return;
        }
        let now = Instant::now();
        if let Some(last) = self.last {
            self.interval_ms
                .push(now.duration_since(last).as_secs_f32() * 1000.0);
        }
        self.last = Some(now);
        self.work_ms.push(work.as_secs_f32() * 1000.0);
    }

    /// `(p50, p99)` of the UI work per frame, in milliseconds.
    #[must_use]
    pub fn work_percentiles(&self) -> Option<(f32, f32)> {
        percentiles(&self.work_ms)
    }

    pub fn report(&self) {
        if !self.enabled {
            return;
        }
        if let (Some((w50, w99)), Some((i50, i99))) =
            (percentiles(&self.work_ms), percentiles(&self.interval_ms))
        {
            eprintln!(
                "frame stats: {} frames; UI work p50 {w50:.2} ms, p99 {w99:.2} ms; \
                 frame interval p50 {i50:.2} ms, p99 {i99:.2} ms",
                self.work_ms.len()
            );
        }
    }
}

fn percentiles(values: &[f32]) -> Option<(f32, f32)> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f32::total_cmp);
    let at = |q: f32| v[((v.len() - 1) as f32 * q).round() as usize];
    Some((at(0.5), at(0.99)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_a_known_series() {
        let v: Vec<f32> = (1..=100).map(|i| i as f32).collect();
        let (p50, p99) = percentiles(&v).expect("non-empty");
        assert!((p50 - 51.0).abs() < 1.0, "{p50}");
        assert!((p99 - 99.0).abs() < 1.0, "{p99}");
        assert!(percentiles(&[]).is_none());
    }
}
