//! The harmonic excitation of the iSTFTNet generator (`SourceModuleHnNSF` with its `SineGen`).
//!
//! From the predicted F0 curve (two values per acoustic frame) it builds 9 harmonics of a sine
//! with a phase accumulated frame by frame, merges them with a learned linear layer and `tanh`,
//! and returns one excitation sample per output audio sample (300 per F0 value).
//!
//! This follows the deterministic ONNX export, not the `PyTorch` training code: every harmonic
//! starts at phase 0 and no Gaussian noise is added (`shared/docs/kokoro-port.md` §2e). The phase
//! reaches 1e4–1e5 rad, so f32 rounding is audible in the phase; the code reproduces the
//! export's f32 operation order step by step to stay as close to it as f32 allows. It runs on the
//! host: the phases are a sequential scan over a few hundred frames; the samples between them
//! (9 sines each) are filled in parallel.

// candle's convention is `new(vb: VarBuilder)` by value (see `adain.rs`).
#![allow(clippy::needless_pass_by_value)]

use candle_core::{Result, Tensor};
use candle_nn::VarBuilder;

use super::fill::par_filled;

/// Audio samples per F0 value: `prod(upsample_rates) · hop` = 10·6·5.
pub const SAMPLES_PER_F0: usize = 300;
/// Fundamental plus 8 overtones.
pub const HARMONICS: usize = 9;
/// Amplitude of each sine before the merge.
pub const SINE_AMP: f32 = 0.1;
/// F0 (Hz) above which a sample counts as voiced.
pub const VOICED_THRESHOLD: f32 = 10.0;

/// `m_source`: sine generator plus the `l_linear` merge of its harmonics.
#[derive(Debug, Clone)]
pub struct SourceModule {
    weight: [f32; HARMONICS],
    bias: f32,
}

impl SourceModule {
    /// `vb` points at `decoder.generator.m_source`; loads `l_linear.weight` `[1, 9]` and bias.
    pub fn new(vb: VarBuilder) -> Result<Self> {
        let vb = vb.pp("l_linear");
        let w = vb
            .get((1, HARMONICS), "weight")?
            .flatten_all()?
            .to_vec1::<f32>()?;
        let b = vb.get(1, "bias")?.to_vec1::<f32>()?;
        let mut weight = [0.0; HARMONICS];
        weight.copy_from_slice(&w);
        Ok(Self { weight, bias: b[0] })
    }

    /// Harmonic source for an F0 curve `[1, N]` (Hz): `[1, 300·N]`, on the same device.
    pub fn forward(&self, f0: &Tensor) -> Result<Tensor> {
        let f0_host = f0.flatten_all()?.to_vec1::<f32>()?;
        let src = self.harmonic_source(&f0_host);
        let n = src.len();
        Tensor::from_vec(src, (1, n), f0.device())
    }

    /// Host version of [`Self::forward`]: one excitation sample per output sample.
    ///
    /// The phases are a running sum (serial, one row per frame); the samples between them are
    /// independent, so the pool computes them a few frames per task, each sample exactly as a
    /// serial loop would.
    #[must_use]
    pub fn harmonic_source(&self, f0: &[f32]) -> Vec<f32> {
        /// Frames per parallel task: 2 400 samples, 21 600 sines.
        const FRAMES_PER_TASK: usize = 8;
        let phases = frame_phases(f0);
        let frames = f0.len();
        let scale = SAMPLES_PER_F0 as f32;
        let last = frames.saturating_sub(1);
        let chunk = FRAMES_PER_TASK * SAMPLES_PER_F0;
        par_filled(frames * SAMPLES_PER_F0, chunk, |task, out| {
            for (k, sample) in out.iter_mut().enumerate() {
                let j = task * chunk + k;
                // Linear, half-pixel resize by 300 (ONNX `Resize`), coordinate clamped to the
                // input.
                let pos = ((j as f32 + 0.5) / scale - 0.5).clamp(0.0, last as f32);
                let i0 = pos.floor() as usize;
                let i1 = (i0 + 1).min(last);
                let w = pos - i0 as f32;
                // The upsampled F0 is constant inside a frame, so its voicing is the frame's.
                let voiced = f0[j / SAMPLES_PER_F0] > VOICED_THRESHOLD;
                let mut acc = 0.0f32;
                for ((&p0, &p1), &weight) in phases[i0].iter().zip(&phases[i1]).zip(&self.weight) {
                    let phase = (1.0 - w) * p0 + w * p1;
                    let sine = if voiced { phase.sin() * SINE_AMP } else { 0.0 };
                    acc += sine * weight;
                }
                *sample = (acc + self.bias).tanh();
            }
        })
    }
}

/// Accumulated phase of each harmonic at each F0 frame, already ×2π and ×300 as in the export:
/// `cumsum(frac(f0·h / 24000)) · 2 · π · 300`, each step rounded to f32 in that order.
#[must_use]
pub fn frame_phases(f0: &[f32]) -> Vec<[f32; HARMONICS]> {
    let mut sum = [0.0f32; HARMONICS];
    f0.iter()
        .map(|&f| {
            let mut row = [0.0f32; HARMONICS];
            for (h, (s, r)) in sum.iter_mut().zip(row.iter_mut()).enumerate() {
                let cycles = f * (h + 1) as f32 / super::config::SAMPLE_RATE as f32;
                *s += cycles - cycles.floor();
                *r = *s * 2.0 * std::f32::consts::PI * SAMPLES_PER_F0 as f32;
            }
            row
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module() -> SourceModule {
        let mut weight = [0.0; HARMONICS];
        weight[0] = 1.0;
        SourceModule { weight, bias: 0.0 }
    }

    #[test]
    fn unvoiced_frames_give_tanh_of_bias() {
        let m = SourceModule {
            weight: [0.3; HARMONICS],
            bias: -0.03,
        };
        let out = m.harmonic_source(&[0.0, 5.0, 0.0]);
        assert_eq!(out.len(), 900);
        assert!(out.iter().all(|&v| (v - (-0.03f32).tanh()).abs() < 1e-7));
    }

    #[test]
    fn steady_f0_gives_a_sine_of_that_frequency() {
        // 200 Hz over 8 frames: after the first half frame the fundamental is a 200 Hz sine,
        // so the samples one period (120 samples) apart agree.
        let f0 = vec![200.0f32; 8];
        let out = module().harmonic_source(&f0);
        let amp = out.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        assert!((amp - 0.1f32.tanh()).abs() < 1e-3, "amplitude {amp}");
        for j in 300..out.len() - 300 {
            assert!((out[j] - out[j + 120]).abs() < 2e-3, "sample {j}");
        }
    }

    #[test]
    fn phases_accumulate_per_frame() {
        let p = frame_phases(&[2400.0, 2400.0]);
        // 2400/24000 = 0.1 cycle per frame → 0.1·2π·300 rad after the first frame.
        let want = 0.1 * 2.0 * std::f32::consts::PI * 300.0;
        assert!((p[0][0] - want).abs() < 1e-2);
        assert!((p[1][0] - 2.0 * want).abs() < 1e-2);
        // The 10th harmonic would wrap; the 9th (0.9 cycle) does not.
        assert!((p[0][8] - 9.0 * want).abs() < 1e-1);
    }
}
