//! The short-time Fourier transforms at both ends of the iSTFTNet generator.
//!
//! - [`source_spectrum`]: the forward STFT of the harmonic source (reflect pad 10, periodic
//!   Hann(20), hop 5, 11 bins), returned as `[magnitude; phase]`, which the generator's noise
//!   branches read. It runs on the host in f64 (one pool task per bin) with an exact real DFT
//!   and `atan2` (torch's `stft`/`angle` semantics). The export's own DFT leaves rounding
//!   noise in the imaginary part of near-silent bins, so their phases cannot be reproduced
//!   anyway (`kokoro-port.md` §2f); measured on the dev clip, `atan2` with an exact `+0`
//!   imaginary part agrees with the export's DC phase in 99.8 % of frames, its `-π` quirk in
//!   10 %.
//! - [`InverseStft`]: turns the generator's `conv_post` output (log-magnitude; phase before
//!   `sin`) into audio exactly as the ONNX export does (§2g): overlap-add of Hann-windowed
//!   inverse DFTs, only samples 1..19 divided by the single-frame window sum, 10 samples trimmed
//!   at each end. The result is 1.5× a normalised iSTFT in steady state, which is the level users
//!   of kokoro-onnx hear. Built from candle ops so it runs on any device.

use candle_core::{DType, Device, Result, Tensor};
use rayon::prelude::*;

use super::generator::{to_time_major, ConvTranspose1d};
use super::rows::ValidRows;

/// FFT size (and window length) of both transforms.
pub const N_FFT: usize = 20;
/// Hop between frames, in samples.
pub const HOP: usize = 5;
/// One-sided frequency bins: `N_FFT / 2 + 1`.
pub const BINS: usize = N_FFT / 2 + 1;
/// Centre padding on each side of the forward transform's input.
const PAD: usize = N_FFT / 2;

/// Periodic Hann window of length [`N_FFT`], in f64.
fn hann() -> [f64; N_FFT] {
    std::array::from_fn(|n| {
        0.5 - 0.5 * (2.0 * std::f64::consts::PI * n as f64 / N_FFT as f64).cos()
    })
}

/// `(cos, sin)` of `2π·m/N_FFT` with exact values on the axes, so the DC and Nyquist bins of a
/// real signal get an imaginary part of exactly zero.
fn unit_circle(m: usize) -> (f64, f64) {
    match m % N_FFT {
        0 => (1.0, 0.0),
        5 => (0.0, 1.0),
        10 => (-1.0, 0.0),
        15 => (0.0, -1.0),
        m => {
            let a = 2.0 * std::f64::consts::PI * m as f64 / N_FFT as f64;
            (a.cos(), a.sin())
        }
    }
}

/// Number of STFT frames for `samples` input samples (centre padding): `samples / HOP + 1`.
#[must_use]
pub fn frame_count(samples: usize) -> usize {
    samples / HOP + 1
}

/// Host STFT of `x`: `[2·BINS, frames]` row-major, magnitudes then phases.
///
/// Returns `None` when `x` is too short to reflect-pad (fewer than `PAD + 1` samples).
#[must_use]
pub fn source_spectrum_host(x: &[f32]) -> Option<Vec<f32>> {
    let n = x.len();
    if n <= PAD {
        return None;
    }
    let padded: Vec<f64> = (0..n + 2 * PAD)
        .map(|i| {
            let j = i as isize - PAD as isize;
            let j = if j < 0 {
                -j
            } else if j >= n as isize {
                2 * (n as isize - 1) - j
            } else {
                j
            };
            f64::from(x[j as usize])
        })
        .collect();
    let frames = frame_count(n);
    let win = hann();
    // Basis: cos and −sin, per bin and tap, window folded in.
    let mut cos_w = [[0.0f64; N_FFT]; BINS];
    let mut nsin_w = [[0.0f64; N_FFT]; BINS];
    for k in 0..BINS {
        for t in 0..N_FFT {
            let (c, s) = unit_circle(k * t);
            cos_w[k][t] = c * win[t];
            nsin_w[k][t] = -s * win[t];
        }
    }
    // One task per bin: it writes that bin's magnitude row and its phase row.
    let mut out = vec![0.0f32; 2 * BINS * frames];
    let (mags, phases) = out.split_at_mut(BINS * frames);
    mags.par_chunks_mut(frames.max(1))
        .zip(phases.par_chunks_mut(frames.max(1)))
        .enumerate()
        .for_each(|(k, (mag, phase))| {
            for (f, (m, p)) in mag.iter_mut().zip(phase.iter_mut()).enumerate() {
                let seg = &padded[f * HOP..f * HOP + N_FFT];
                // Accumulators start at +0 so an all-zero imaginary part stays +0 (atan2 → +π
                // or 0).
                let (mut re, mut im) = (0.0f64, 0.0f64);
                for t in 0..N_FFT {
                    re += cos_w[k][t] * seg[t];
                    im += nsin_w[k][t] * seg[t];
                }
                *m = re.hypot(im) as f32;
                *p = im.atan2(re) as f32;
            }
        });
    Some(out)
}

/// Forward STFT of the harmonic source `[1, S]` → `har` `[1, 22, S/5 + 1]` (mag; phase).
pub fn source_spectrum(har_source: &Tensor) -> Result<Tensor> {
    let x = har_source.flatten_all()?.to_vec1::<f32>()?;
    let frames = frame_count(x.len());
    let spec = source_spectrum_host(&x).ok_or_else(|| {
        candle_core::Error::Msg(format!(
            "harmonic source of {} samples is too short for the STFT",
            x.len()
        ))
    })?;
    Tensor::from_vec(spec, (1, 2 * BINS, frames), har_source.device())
}

/// The export's inverse STFT (see the module docs).
#[derive(Debug, Clone)]
pub struct InverseStft {
    /// Transposed convolution (stride [`HOP`]) whose kernel `[2·BINS, 1, N_FFT]` holds in row
    /// k the windowed inverse DFT of a unit real part at bin k, in row `BINS + k` that of a
    /// unit imaginary part: it overlap-adds the frames.
    overlap_add: ConvTranspose1d,
    /// `1 / Hann²` for raw samples `PAD..N_FFT`, the only divided ones that survive the trim.
    head_gain: Tensor,
}

impl InverseStft {
    /// Builds the constant basis on `device`.
    pub fn new(device: &Device) -> Result<Self> {
        let win = hann();
        let mut basis = vec![0.0f32; 2 * BINS * N_FFT];
        for k in 0..BINS {
            // Bins 0 and N/2 appear once in a real signal's spectrum, the others twice.
            let weight = if k == 0 || k == N_FFT / 2 { 1.0 } else { 2.0 } / N_FFT as f64;
            for t in 0..N_FFT {
                let (c, s) = unit_circle(k * t);
                basis[k * N_FFT + t] = (weight * c * win[t]) as f32;
                basis[(BINS + k) * N_FFT + t] = (-weight * s * win[t]) as f32;
            }
        }
        let basis = Tensor::from_vec(basis, (2 * BINS, 1, N_FFT), device)?;
        let head: Vec<f32> = (PAD..N_FFT)
            .map(|t| (1.0 / (win[t] * win[t])) as f32)
            .collect();
        let head_gain = Tensor::from_vec(head, (N_FFT - PAD, 1), device)?;
        Ok(Self {
            overlap_add: ConvTranspose1d::from_tensors(&basis, None, HOP, 0)?,
            head_gain,
        })
    }

    /// Time-major `conv_post` outputs `[B, L, 22]` of a batch whose item `b` is valid for its
    /// first `valid.host()[b]` rows: the items' audio padded to one row each, `[B, N]`, item
    /// `b`'s first `5·(valid − 1)` samples what it gets alone.
    ///
    /// Item by item on the CPU (each padded with zeros to the longest). On a GPU the whole
    /// batch goes through each step at once (the overlap-add zeroes the rows past each item's
    /// length, see [`ConvTranspose1d::forward_batch_tm`]), with no per-item launch.
    pub fn forward_batch_tm(&self, x: &Tensor, valid: &ValidRows) -> Result<Tensor> {
        let (b, l, _) = x.dims3()?;
        let host = valid.host();
        if host.len() != b || host.iter().any(|&v| v < 2 || v > l) {
            candle_core::bail!("inverse STFT batch: x {:?}, valid rows {host:?}", x.dims());
        }
        if !crate::generator::conv::one_product_on(x.device()) {
            let items = valid
                .computed()?
                .into_iter()
                .enumerate()
                .map(|(k, v)| self.forward_tm(&x.get(k)?.narrow(0, 0, v)?))
                .collect::<Result<Vec<_>>>()?;
            let lens = items.iter().map(|a| a.dim(1)).collect::<Result<Vec<_>>>()?;
            let n = lens.iter().copied().max().unwrap_or(0);
            let items = items
                .iter()
                .zip(lens)
                .map(|(a, len)| a.pad_with_zeros(1, 0, n - len))
                .collect::<Result<Vec<_>>>()?;
            return Tensor::cat(&items, 0);
        }
        // Rows past an item's length are zeroed before the exponential, so whatever they
        // held, everything stays finite for the overlap-add's mask to zero.
        let x = crate::generator::batch::mask_valid(&x.to_dtype(DType::F32)?, valid)?;
        let mag = x.narrow(2, 0, BINS)?.exp()?;
        let phase = x.narrow(2, BINS, BINS)?.sin()?;
        let re = (&mag * phase.cos()?)?;
        let im = (&mag * phase.sin()?)?;
        let spec = Tensor::cat(&[re, im], 2)?;
        let raw = self.overlap_add.forward_batch_tm(&spec, valid, false)?;
        let len = raw.dim(1)?;
        let head = raw
            .narrow(1, PAD, N_FFT - PAD)?
            .broadcast_mul(&self.head_gain)?;
        Tensor::cat(&[head, raw.narrow(1, N_FFT, len - N_FFT)?], 1)?.squeeze(2)
    }

    /// `conv_post` output `[1, 22, L]` → audio `[1, 5·(L − 1)]`.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        self.forward_tm(&to_time_major(x)?)
    }

    /// Time-major `conv_post` output `[L, 22]` → audio `[1, 5·(L − 1)]`.
    pub fn forward_tm(&self, x: &Tensor) -> Result<Tensor> {
        let x = x.to_dtype(DType::F32)?;
        let mag = x.narrow(1, 0, BINS)?.exp()?;
        let phase = x.narrow(1, BINS, BINS)?.sin()?;
        let re = (&mag * phase.cos()?)?;
        let im = (&mag * phase.sin()?)?;
        let spec = Tensor::cat(&[re, im], 1)?;
        // Overlap-add of the per-frame inverse DFTs: [5·(L−1) + 20, 1].
        let raw = self.overlap_add.forward_tm(&spec)?;
        let len = raw.dim(0)?;
        let head = raw
            .narrow(0, PAD, N_FFT - PAD)?
            .broadcast_mul(&self.head_gain)?;
        let tail = raw.narrow(0, N_FFT, len - N_FFT - PAD)?;
        Tensor::cat(&[head, tail], 0)?.t()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spectrum_of_a_bin_centred_cosine() {
        // cos at bin 2 (2·24000/20 = 2400 Hz): away from the edges, all energy sits in bin 2
        // with magnitude Σ hann·cos² = 5 and phase following the frame position.
        let x: Vec<f32> = (0..200)
            .map(|i| (2.0 * std::f64::consts::PI * 2.0 * i as f64 / 20.0).cos() as f32)
            .collect();
        let frames = frame_count(x.len());
        let s = source_spectrum_host(&x).expect("long enough");
        for f in 3..frames - 3 {
            for k in 0..BINS {
                let mag = s[k * frames + f];
                let want = if k == 2 {
                    5.0
                } else if k == 1 || k == 3 {
                    2.5
                } else {
                    0.0
                };
                assert!((mag - want).abs() < 1e-5, "frame {f} bin {k}: {mag}");
            }
        }
        // DC phase of a real, exactly zero-imaginary bin follows torch's angle(): 0 or +π.
        assert!(s[BINS * frames..(BINS + 1) * frames]
            .iter()
            .all(|p| *p == 0.0 || (*p - std::f32::consts::PI).abs() < 1e-6));
    }

    #[test]
    fn inverse_of_forward_is_one_and_a_half_times_the_signal() {
        // A spectrum with only DC (magnitude 1, phase 0) in every frame. Each frame adds
        // hann/20; four periodic Hanns a hop apart sum to 2, so the export's level is 0.1, which
        // is 1.5× the 1/15 a normalised iSTFT (÷ Σhann² = 1.5) would give.
        let dev = Device::Cpu;
        let frames = 40;
        let mut data = vec![-30.0f32; 2 * BINS * frames]; // exp(-30) ≈ 0 for every bin…
        for v in &mut data[..frames] {
            *v = 0.0; // …except DC: magnitude exp(0) = 1, phase sin(0) = 0.
        }
        for v in &mut data[BINS * frames..] {
            *v = 0.0;
        }
        let x = Tensor::from_vec(data, (1, 2 * BINS, frames), &dev).expect("shape");
        let audio = InverseStft::new(&dev)
            .expect("basis")
            .forward(&x)
            .expect("istft")
            .flatten_all()
            .expect("flat")
            .to_vec1::<f32>()
            .expect("host");
        assert_eq!(audio.len(), HOP * (frames - 1));
        // Each frame contributes hann/20; 4 overlapping periodic Hanns sum to 2 → 2/20 = 0.1.
        for (i, v) in audio.iter().enumerate().skip(10).take(150) {
            assert!((v - 0.1).abs() < 1e-6, "sample {i}: {v}");
        }
    }
}
