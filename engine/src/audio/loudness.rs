//! Loudness measurement (EBU R128 / ITU-R BS.1770-4, via the `ebur128` crate) and the gain that
//! takes an episode to a target such as -16 LUFS (podcast stereo) or -19 LUFS (podcast mono).
//!
//! Mono convention: the one channel is weighted 1.0 as BS.1770 specifies for a single front
//! channel, *not* counted twice as "dual mono". So a 1 kHz sine with a peak of -20 dBFS reads
//! -23.0 LUFS (the K-weighting gain at 1 kHz, +0.69 dB, cancels the formula's -0.691), and a
//! mono file measures 3 dB lower than the same signal on both channels of a stereo file. That is
//! why podcast guidelines give mono targets 3 dB below stereo ones.

use ebur128::{EbuR128, Mode};

use super::AudioError;

/// Integrated loudness, sample peak and true peak of a mono signal fed in pieces.
pub struct LoudnessMeter {
    inner: EbuR128,
    rate: u32,
}

impl LoudnessMeter {
    pub fn new(sample_rate: u32) -> Result<Self, AudioError> {
        let inner = EbuR128::new(
            1,
            sample_rate,
            Mode::I | Mode::SAMPLE_PEAK | Mode::TRUE_PEAK,
        )
        .map_err(|source| AudioError::Loudness {
            rate: sample_rate,
            source,
        })?;
        Ok(Self {
            inner,
            rate: sample_rate,
        })
    }

    pub fn add(&mut self, samples: &[f32]) -> Result<(), AudioError> {
        self.inner
            .add_frames_f32(samples)
            .map_err(|source| AudioError::Loudness {
                rate: self.rate,
                source,
            })
    }

    /// Gated integrated loudness in LUFS; `None` when nothing passed the -70 LUFS gate (silence,
    /// or less than one 400 ms block).
    #[must_use]
    pub fn integrated_lufs(&self) -> Option<f64> {
        self.inner.loudness_global().ok().filter(|l| l.is_finite())
    }

    /// Highest inter-sample peak estimate (4× oversampled below 96 kHz) in dBTP; -inf for silence.
    #[must_use]
    pub fn true_peak_dbtp(&self) -> f64 {
        let peak = self.inner.true_peak(0).unwrap_or(0.0);
        20.0 * peak.log10()
    }

    /// Highest absolute sample value (linear, 1.0 = full scale).
    #[must_use]
    pub fn sample_peak(&self) -> f64 {
        self.inner.sample_peak(0).unwrap_or(0.0)
    }
}

/// Gain (linear) that takes `measured_lufs` to `target_lufs`, limited to +30 dB so near-silence
/// is not blown up to full scale. Non-finite inputs give unity gain.
#[must_use]
pub fn gain_for(measured_lufs: f64, target_lufs: f64) -> f32 {
    let db = target_lufs - measured_lufs;
    if !db.is_finite() {
        return 1.0;
    }
    10f64.powf(db.min(30.0) / 20.0) as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    fn sine(freq: f64, peak_dbfs: f64, rate: u32, secs: f64) -> Vec<f32> {
        let a = 10f64.powf(peak_dbfs / 20.0);
        let n = (secs * f64::from(rate)) as usize;
        (0..n)
            .map(|i| (a * (2.0 * PI * freq * i as f64 / f64::from(rate)).sin()) as f32)
            .collect()
    }

    #[test]
    fn sine_at_minus_20_dbfs_reads_minus_23_lufs_mono() {
        for rate in [24_000, 48_000] {
            let mut m = LoudnessMeter::new(rate).unwrap();
            let s = sine(1000.0, -20.0, rate, 10.0);
            for chunk in s.chunks(1000) {
                m.add(chunk).unwrap();
            }
            let l = m.integrated_lufs().unwrap();
            assert!((l + 23.0).abs() < 0.05, "{rate} Hz: {l} LUFS");
            assert!((m.sample_peak() - 0.1).abs() < 1e-3, "{}", m.sample_peak());
            let tp = m.true_peak_dbtp();
            assert!((-20.1..=-19.9).contains(&tp), "{tp} dBTP");
        }
    }

    #[test]
    fn silence_has_no_loudness() {
        let mut m = LoudnessMeter::new(24_000).unwrap();
        m.add(&vec![0.0; 48_000]).unwrap();
        assert_eq!(m.integrated_lufs(), None);
        assert!(m.true_peak_dbtp().is_infinite());
    }

    #[test]
    fn gain_reaches_target_and_is_capped() {
        let g = gain_for(-23.0, -16.0);
        assert!((20.0 * f64::from(g).log10() - 7.0).abs() < 1e-4);
        assert!((gain_for(-80.0, -16.0) - 10f32.powf(1.5)).abs() < 1e-3);
        assert!(gain_for(-10.0, -16.0) < 1.0);
        assert!((gain_for(f64::NEG_INFINITY, -16.0) - 1.0).abs() < f32::EPSILON);

        // applying the gain moves the measured loudness onto the target
        let s = sine(440.0, -30.0, 24_000, 5.0);
        let mut m = LoudnessMeter::new(24_000).unwrap();
        m.add(&s).unwrap();
        let g = gain_for(m.integrated_lufs().unwrap(), -19.0);
        let louder: Vec<f32> = s.iter().map(|x| x * g).collect();
        let mut m2 = LoudnessMeter::new(24_000).unwrap();
        m2.add(&louder).unwrap();
        assert!((m2.integrated_lufs().unwrap() + 19.0).abs() < 0.01);
    }
}
