//! A look-ahead true-peak limiter, the last stage before encoding: loudness normalisation can
//! push a speech peak over full scale, and lossy decoders and DACs clip *inter-sample* peaks that
//! a sample-peak limiter never sees (EBU R128 asks for <= -1 dBTP).
//!
//! How it works, per input sample:
//! 1. Estimate the true peak of each interval [n, n+1] by 4× oversampling: the sample itself plus
//!    three fractional points from a polyphase Hann-windowed sinc, 12 taps per phase (48 in all).
//!    That is the interpolator design ITU-R BS.1770-4 Annex 2 describes and the one true-peak
//!    meters (libebur128 and the `ebur128` crate) use, so "under the ceiling" means what a meter
//!    will read; a longer filter would disagree with them by up to ~0.1 dB near Nyquist.
//! 2. The gain that interval needs is `min(1, ceiling / peak)`.
//! 3. Take the minimum of that over a window reaching `look-ahead + filter half-length` ahead,
//!    let it recover exponentially (release, ~60 ms), and average it over the look-ahead
//!    (~1.5 ms box filter: a linear attack that reaches the needed gain exactly when the peak
//!    arrives). Averaging values each no higher than what every sample near the peak needs keeps
//!    the gain at or below it, so no sample or interpolated point can exceed the ceiling.
//! 4. Delay the signal by the same amount and multiply.
//!
//! The delay is fixed (`latency()` samples) and compensated: `process` starts emitting once it
//! has enough look-ahead and `flush` emits the tail, so output sample k is input sample k times
//! its gain and the lengths match. When nothing exceeds the ceiling the gain is exactly 1.0 and
//! the output is bit-identical to the input.

use std::collections::VecDeque;
use std::f64::consts::PI;

/// Taps each side of an interpolated point.
const HALF: usize = 6;
/// Oversampling factor of the peak estimate.
const FACTOR: usize = 4;
/// Head-room below the ceiling for what the gain's own movement adds to inter-sample peaks, in dB.
const MARGIN_DB: f64 = 0.05;

/// Keeps the true peak of a mono stream at or below a ceiling in dBTP.
pub struct TruePeakLimiter {
    ceiling: f64,
    lookahead: usize,
    release: f64,
    /// Interpolation filters for the fractional phases 1/4, 2/4, 3/4 (taps for x[n-5..=n+6]).
    phases: [[f64; 2 * HALF]; FACTOR - 1],
    /// The last 2·HALF inputs (oldest first), for the peak estimate.
    hist: VecDeque<f32>,
    /// Monotonic deque for the sliding minimum of the needed gain: (index, gain).
    mins: VecDeque<(u64, f64)>,
    /// Released gains over the look-ahead (box filter) and their sum.
    boxed: VecDeque<f64>,
    box_sum: f64,
    released: f64,
    /// Inputs waiting for their gain.
    delay: VecDeque<f32>,
    /// Index of the next interval whose needed gain is computed.
    next_j: i64,
}

impl TruePeakLimiter {
    #[must_use]
    pub fn new(sample_rate: u32, ceiling_dbtp: f64) -> Self {
        let rate = f64::from(sample_rate.max(1));
        let lookahead = ((0.0015 * rate).round() as usize).max(1);
        let mut phases = [[0.0; 2 * HALF]; FACTOR - 1];
        for (p, taps) in phases.iter_mut().enumerate() {
            let frac = (p + 1) as f64 / FACTOR as f64;
            for (i, tap) in taps.iter_mut().enumerate() {
                // tap i multiplies x[n + i + 1 - HALF]; its distance from the point n + frac:
                let t = frac - (i as f64 + 1.0 - HALF as f64);
                let window = 0.5 + 0.5 * (PI * t / HALF as f64).cos();
                *tap = window * (PI * t).sin() / (PI * t);
            }
        }
        let mut limiter = Self {
            ceiling: 10f64.powf((ceiling_dbtp - MARGIN_DB) / 20.0),
            lookahead,
            release: 1.0 - (-1.0 / (0.060 * rate)).exp(),
            phases,
            hist: VecDeque::new(),
            mins: VecDeque::new(),
            boxed: VecDeque::new(),
            box_sum: 0.0,
            released: 1.0,
            delay: VecDeque::new(),
            next_j: 0,
        };
        limiter.reset();
        limiter
    }

    /// The fixed delay, in samples, between an input and the gain that applies to it.
    #[must_use]
    pub fn latency(&self) -> usize {
        self.lookahead - 1 + 2 * HALF
    }

    /// Limits `input`, appending to `out` every sample whose look-ahead is complete.
    pub fn process(&mut self, input: &[f32], out: &mut Vec<f32>) {
        out.reserve(input.len());
        for &x in input {
            let x = if x.is_finite() { x } else { 0.0 };
            if let Some((s, _)) = self.step(x) {
                out.push(s);
            }
        }
    }

    /// As [`Self::process`], also appending to `gains` the gain each output sample got, so
    /// other signals (a mix's stems) can follow the same gain and still add up to the output.
    pub fn process_gains(&mut self, input: &[f32], out: &mut Vec<f32>, gains: &mut Vec<f64>) {
        for &x in input {
            let x = if x.is_finite() { x } else { 0.0 };
            if let Some((s, g)) = self.step(x) {
                out.push(s);
                gains.push(g);
            }
        }
    }

    /// Emits the last `latency()` samples and resets, ready for a new stream.
    pub fn flush(&mut self, out: &mut Vec<f32>) {
        for _ in 0..self.latency() {
            if let Some((s, _)) = self.step(0.0) {
                out.push(s);
            }
        }
        self.reset();
    }

    /// As [`Self::flush`], with the gains (see [`Self::process_gains`]).
    pub fn flush_gains(&mut self, out: &mut Vec<f32>, gains: &mut Vec<f64>) {
        for _ in 0..self.latency() {
            if let Some((s, g)) = self.step(0.0) {
                out.push(s);
                gains.push(g);
            }
        }
        self.reset();
    }

    /// Scales a signal that follows the limited one sample for sample by the gain the limiter
    /// gave that sample (exactly as the limiter scales its own).
    #[must_use]
    pub fn apply(sample: f32, gain: f64) -> f32 {
        if gain >= 1.0 {
            sample
        } else {
            (f64::from(sample) * gain) as f32
        }
    }

    fn reset(&mut self) {
        self.hist.clear();
        self.hist.extend(std::iter::repeat_n(0.0, 2 * HALF));
        self.mins.clear();
        self.boxed.clear();
        self.boxed.extend(std::iter::repeat_n(1.0, self.lookahead));
        self.box_sum = self.lookahead as f64;
        self.released = 1.0;
        self.delay.clear();
        // Sample t's arrival completes interval t - HALF; the first HALF arrivals complete
        // intervals before the stream (gain 1 over zeros).
        self.next_j = -(HALF as i64);
    }

    /// Peak estimate of the interval starting at `hist[HALF - 1]`.
    fn interval_peak(&self) -> f64 {
        let mut peak = f64::from(self.hist[HALF - 1]).abs();
        for taps in &self.phases {
            let y: f64 = taps
                .iter()
                .zip(&self.hist)
                .map(|(t, &x)| t * f64::from(x))
                .sum();
            peak = peak.max(y.abs());
        }
        peak
    }

    /// Takes one input; gives the delayed sample whose gain is now known, and that gain.
    fn step(&mut self, x: f32) -> Option<(f32, f64)> {
        self.hist.pop_front();
        self.hist.push_back(x);
        self.delay.push_back(x);

        // 1-2: the gain interval j needs.
        let peak = self.interval_peak();
        let need = if peak > self.ceiling {
            self.ceiling / peak
        } else {
            1.0
        };
        let j = self.next_j;
        self.next_j += 1;

        // 3: sliding minimum over the last W intervals (older ones have gain 1).
        let window = (self.lookahead + 2 * HALF + 1) as i64;
        let key = (j + window) as u64; // shifted so it is never negative
        while self.mins.back().is_some_and(|&(_, g)| g >= need) {
            self.mins.pop_back();
        }
        self.mins.push_back((key, need));
        while self
            .mins
            .front()
            .is_some_and(|&(i, _)| i + window as u64 <= key)
        {
            self.mins.pop_front();
        }
        let min = self.mins.front().map_or(1.0, |&(_, g)| g);
        let recovered = self.released + (1.0 - self.released) * self.release;
        self.released = min.min(recovered);

        // box filter over the look-ahead; re-summed each full turn so rounding cannot drift
        let old = self.boxed.pop_front().unwrap_or(1.0);
        self.boxed.push_back(self.released);
        self.box_sum += self.released - old;
        if key.is_multiple_of(self.lookahead as u64) {
            self.box_sum = self.boxed.iter().sum();
        }
        let gain = (self.box_sum / self.lookahead as f64).min(1.0);

        // 4: the delayed sample this gain belongs to.
        if self.delay.len() > self.latency() {
            let gain = gain.min(1.0);
            return self.delay.pop_front().map(|s| (Self::apply(s, gain), gain));
        }
        None
    }
}

#[cfg(test)]
mod tests;
