//! CPU kernel for an `AdaIN` followed by a pointwise activation, in one pass over the data.
//!
//! Composed from candle ops, `act((1+γ)·instnorm(x) + β)` costs about ten full passes over the
//! tensor (mean, subtract, square, mean, scale, shift, then the activation's own passes), each
//! single-threaded and allocating. On the generator's `[128, 120F+1]` activations that cost more
//! than the convolutions. This kernel reads each channel twice for its statistics and once more
//! to write the result, with the channels split across threads. The arithmetic follows the
//! composed order (`(x − mean)·rstd·g + b`, then the activation) so both paths agree to float
//! rounding; the statistics are accumulated in f64.

// The vector loops must be inlined into pulp's target-feature frames (see the note above
// `RowMoments`): `#[inline(always)]` is how, not a hint.
#![allow(clippy::inline_always)]

use candle_core::{CpuStorage, CustomOp1, Layout, Result, Shape};
use rayon::prelude::*;

use super::INSTANCE_NORM_EPS;
use crate::fill;

/// The activation applied after the norm, with host copies of its per-channel parameters.
#[derive(Debug, Clone, Copy)]
pub(super) enum ActRef<'a> {
    Identity,
    /// `max(y, slope·y)` (slope < 1).
    Leaky(f32),
    /// `y + inv_alpha·sin²(alpha·y)`, per channel.
    Snake {
        alpha: &'a [f32],
        inv_alpha: &'a [f32],
    },
}

/// `act((x − mean)·rstd·gain + shift)` per row of a contiguous `[B, C, T]` f32 tensor.
pub(super) struct AdaInAct<'a> {
    /// `1 + γ`, one per `(batch, channel)` row.
    pub gain: &'a [f32],
    /// `β`, one per row.
    pub shift: &'a [f32],
    pub act: ActRef<'a>,
}

impl CustomOp1 for AdaInAct<'_> {
    fn name(&self) -> &'static str {
        "adain-act"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> Result<(CpuStorage, Shape)> {
        let (b, c, t) = layout.shape().dims3()?;
        let Some((start, end)) = layout.contiguous_offsets() else {
            candle_core::bail!("adain-act: input must be contiguous");
        };
        let x = &storage.as_slice::<f32>()?[start..end];
        let rows = b * c;
        if self.gain.len() != rows || self.shift.len() != rows {
            candle_core::bail!("adain-act: {} gains for {rows} rows", self.gain.len());
        }
        if let ActRef::Snake { alpha, inv_alpha } = self.act {
            if alpha.len() != c || inv_alpha.len() != c {
                candle_core::bail!("adain-act: {} snake alphas for {c} channels", alpha.len());
            }
        }
        let out = if t > 0 {
            fill::par_filled(x.len(), t, |row, or| {
                self.row(row, row % c, &x[row * t..][..t], or);
            })
        } else {
            Vec::new()
        };
        Ok((CpuStorage::F32(out), layout.shape().clone()))
    }
}

impl AdaInAct<'_> {
    fn row(&self, row: usize, channel: usize, x: &[f32], out: &mut [f32]) {
        let (mean, var) = pulp::Arch::new().dispatch(RowMoments { x });
        let rstd = (1.0 / (var + INSTANCE_NORM_EPS).sqrt()) as f32;
        let mean = mean as f32;
        let (g, b) = (self.gain[row], self.shift[row]);
        pulp::Arch::new().dispatch(ActRow {
            x,
            out,
            norm: [mean, rstd, g, b],
            act: self.act,
            channel,
        });
    }
}

// pulp compiles a loop for the CPU's widest vector unit only when the whole loop is inlined
// into its target-feature frame. A closure handed to `Arch::dispatch` is not: it is compiled
// once for the baseline CPU and called from there (a profile of tuning renders showed these
// loops on SSE2, two f64 lanes, at a fifth of the render time). So each loop below is a struct
// whose `with_simd` is `#[inline(always)]`, calling only `#[inline(always)]` code.

/// Mean and variance (two passes, f64) of one row.
struct RowMoments<'a> {
    x: &'a [f32],
}

impl pulp::WithSimd for RowMoments<'_> {
    type Output = (f64, f64);

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> (f64, f64) {
        let n = self.x.len() as f64;
        let mean = sum_f64(self.x, |v| v) / n;
        let var = sum_f64(self.x, |v| (v - mean) * (v - mean)) / n;
        (mean, var)
    }
}

/// One `(batch, channel)` row through the norm and the activation (a Snake that sees a value
/// beyond [`SIN_FAST_LIMIT`] redoes the row with libm, as [`ApplyRows`] does).
struct ActRow<'a> {
    x: &'a [f32],
    out: &'a mut [f32],
    /// `mean, rstd, gain, shift`.
    norm: [f32; 4],
    act: ActRef<'a>,
    channel: usize,
}

impl pulp::WithSimd for ActRow<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let [mean, rstd, g, b] = self.norm;
        let norm = |v: f32| (v - mean) * rstd * g + b;
        let (x, out) = (self.x, self.out);
        match self.act {
            ActRef::Identity => {
                for (o, &v) in out.iter_mut().zip(x) {
                    *o = norm(v);
                }
            }
            ActRef::Leaky(slope) => {
                for (o, &v) in out.iter_mut().zip(x) {
                    let y = norm(v);
                    *o = y.max(y * slope);
                }
            }
            ActRef::Snake { alpha, inv_alpha } => {
                let (a, ia) = (alpha[self.channel], inv_alpha[self.channel]);
                let mut far = false;
                for (o, &v) in out.iter_mut().zip(x) {
                    let y = norm(v);
                    far |= (a * y).abs() > SIN_FAST_LIMIT;
                    *o = y + ia * sin_squared(a * y);
                }
                if far {
                    for (o, &v) in out.iter_mut().zip(x) {
                        let y = norm(v);
                        let s = (a * y).sin();
                        *o = y + ia * (s * s);
                    }
                }
            }
        }
    }
}

/// `Σ f(x)` in f64 with eight independent accumulators, so the loop vectorises despite the
/// strict floating-point order.
#[inline(always)]
fn sum_f64(x: &[f32], f: impl Fn(f64) -> f64) -> f64 {
    let mut acc = [0.0f64; 8];
    let chunks = x.chunks_exact(8);
    let tail: f64 = chunks.remainder().iter().map(|&v| f(f64::from(v))).sum();
    for ch in chunks {
        for (a, &v) in acc.iter_mut().zip(ch) {
            *a += f(f64::from(v));
        }
    }
    acc.iter().sum::<f64>() + tail
}

/// Time-major variant: `act((x − mean)·rstd·gain + shift)` on a contiguous `[T, C]` f32 tensor
/// (statistics per channel over the T rows), written into `[pad.0 + T + pad.1, C]` with zero
/// rows around it, ready for the convolution that follows.
pub(super) struct AdaInActTm<'a> {
    /// `1 + γ`, one per channel.
    pub gain: &'a [f32],
    /// `β`, one per channel.
    pub shift: &'a [f32],
    pub act: ActRef<'a>,
    /// Zero rows before and after the output.
    pub pad: (usize, usize),
}

/// Below this many elements the time-major kernel stays on one thread.
const PARALLEL_MIN: usize = 1 << 15;

impl CustomOp1 for AdaInActTm<'_> {
    fn name(&self) -> &'static str {
        "adain-act-tm"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> Result<(CpuStorage, Shape)> {
        let (t, c) = layout.shape().dims2()?;
        let Some((start, end)) = layout.contiguous_offsets() else {
            candle_core::bail!("adain-act-tm: input must be contiguous");
        };
        let x = &storage.as_slice::<f32>()?[start..end];
        if self.gain.len() != c || self.shift.len() != c {
            candle_core::bail!("adain-act-tm: {} gains for {c} channels", self.gain.len());
        }
        if let ActRef::Snake { alpha, inv_alpha } = self.act {
            if alpha.len() != c || inv_alpha.len() != c {
                candle_core::bail!(
                    "adain-act-tm: {} snake alphas for {c} channels",
                    alpha.len()
                );
            }
        }
        let (top, bottom) = self.pad;
        let total = top + t + bottom;
        if t == 0 || c == 0 {
            let out = vec![0.0f32; total * c];
            return Ok((CpuStorage::F32(out), Shape::from((total, c))));
        }
        let rows_per = if x.len() < PARALLEL_MIN {
            t
        } else {
            t.div_ceil(2 * rayon::current_num_threads().max(1))
        };

        // Per-channel Σx and Σx² in f64, over row ranges in parallel.
        let partials: Vec<(Vec<f64>, Vec<f64>)> = x
            .par_chunks(rows_per * c)
            .map(|rows| channel_sums(rows, c))
            .collect();
        let n = t as f64;
        let mut scale = vec![0.0f32; c];
        let mut mean_f32 = vec![0.0f32; c];
        for ch in 0..c {
            let sum: f64 = partials.iter().map(|p| p.0[ch]).sum();
            let sq: f64 = partials.iter().map(|p| p.1[ch]).sum();
            let mean = sum / n;
            let var = (sq / n - mean * mean).max(0.0);
            let rstd = 1.0 / (var + INSTANCE_NORM_EPS).sqrt();
            // y = (x − mean)·(rstd·g) + b; subtracting the mean first keeps channels whose
            // mean dwarfs their spread exact.
            scale[ch] = (rstd * f64::from(self.gain[ch])) as f32;
            mean_f32[ch] = mean as f32;
        }

        // Output rows in chunks of `rows_per`, each zeroed and filled by its own task (the
        // padding rows stay zero): an output row r is input row r − top.
        let (mean, scale, shift) = (&mean_f32, &scale, self.shift);
        let out = fill::par_filled(total * c, rows_per * c, |k, os| {
            let first = k * rows_per;
            let last = first + os.len() / c;
            let (a, b) = (first.max(top), last.min(top + t));
            if a < b {
                apply_rows(
                    &x[(a - top) * c..(b - top) * c],
                    &mut os[(a - first) * c..(b - first) * c],
                    c,
                    [mean, scale, shift],
                    self.act,
                );
            }
        });
        Ok((CpuStorage::F32(out), Shape::from((total, c))))
    }
}

/// Per-channel `(Σx, Σx²)` over the rows of a `[rows, c]` slice.
fn channel_sums(rows: &[f32], c: usize) -> (Vec<f64>, Vec<f64>) {
    pulp::Arch::new().dispatch(ChannelSums { rows, c })
}

struct ChannelSums<'a> {
    rows: &'a [f32],
    c: usize,
}

impl pulp::WithSimd for ChannelSums<'_> {
    type Output = (Vec<f64>, Vec<f64>);

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> Self::Output {
        let c = self.c;
        let mut sum = vec![0.0f64; c];
        let mut sq = vec![0.0f64; c];
        let (s, q) = (&mut sum[..c], &mut sq[..c]);
        for row in self.rows.chunks_exact(c) {
            let row = &row[..c];
            for k in 0..c {
                let v = f64::from(row[k]);
                s[k] += v;
                q[k] += v * v;
            }
        }
        (sum, sq)
    }
}

/// Time steps `x` `[rows, c]` → `out`: `act((x − mean)·scale + shift)` per channel.
fn apply_rows(x: &[f32], out: &mut [f32], c: usize, params: [&[f32]; 3], act: ActRef<'_>) {
    pulp::Arch::new().dispatch(ApplyRows {
        x,
        out,
        c,
        params,
        act,
    });
}

struct ApplyRows<'a> {
    x: &'a [f32],
    out: &'a mut [f32],
    c: usize,
    /// Per channel: mean, scale, shift.
    params: [&'a [f32]; 3],
    act: ActRef<'a>,
}

impl pulp::WithSimd for ApplyRows<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let Self {
            x,
            out,
            c,
            params: [mean, scale, shift],
            act,
        } = self;
        let (mean, scale, shift) = (&mean[..c], &scale[..c], &shift[..c]);
        for (x, out) in x.chunks_exact(c).zip(out.chunks_exact_mut(c)) {
            let (x, out) = (&x[..c], &mut out[..c]);
            match act {
                ActRef::Identity => {
                    for k in 0..c {
                        out[k] = (x[k] - mean[k]) * scale[k] + shift[k];
                    }
                }
                ActRef::Leaky(slope) => {
                    for k in 0..c {
                        let y = (x[k] - mean[k]) * scale[k] + shift[k];
                        out[k] = y.max(y * slope);
                    }
                }
                ActRef::Snake { alpha, inv_alpha } => {
                    let (a, ia) = (&alpha[..c], &inv_alpha[..c]);
                    let mut far = false;
                    for k in 0..c {
                        let y = (x[k] - mean[k]) * scale[k] + shift[k];
                        let z = a[k] * y;
                        far |= z.abs() > SIN_FAST_LIMIT;
                        out[k] = y + ia[k] * sin_squared(z);
                    }
                    if far {
                        for k in 0..c {
                            let y = (x[k] - mean[k]) * scale[k] + shift[k];
                            let s = (a[k] * y).sin();
                            out[k] = y + ia[k] * (s * s);
                        }
                    }
                }
            }
        }
    }
}

/// Largest |x| for which [`sin_squared`]'s range reduction is exact (`j·π_B` needs j < 2¹⁴).
const SIN_FAST_LIMIT: f32 = 40_000.0;

/// `sin²(x)` for |x| ≤ [`SIN_FAST_LIMIT`], branch-free so the loops around it vectorise
/// (libm's `sinf` is an opaque call per element, the largest single cost of the Snake).
///
/// `x = j·π + r` with `r ∈ [−π/2, π/2]` (Cody–Waite with a four-part π, each part short enough
/// that `j·part` is exact), then `sin r` by its Taylor series to `r¹³` (truncation below 1e-9
/// on that range). `sin²` needs no sign, so the parity of `j` is irrelevant. Within 2 ulp of
/// `sinf(x)²` (checked in the tests).
#[inline(always)]
fn sin_squared(x: f32) -> f32 {
    const PI_A: f32 = 3.140_625;
    const PI_B: f32 = 0.000_967_025_76;
    const PI_C: f32 = 6.277_114e-7;
    const PI_D: f32 = 1.215_420_1e-10;
    // Adding and subtracting 1.5·2²³ rounds to the nearest integer (|x/π| < 2²²).
    const ROUND: f32 = 12_582_912.0;
    let j = (x * std::f32::consts::FRAC_1_PI + ROUND) - ROUND;
    let r = x - j * PI_A;
    let r = r - j * PI_B;
    let r = r - j * PI_C;
    let r = r - j * PI_D;
    let r2 = r * r;
    let p = 1.0 / 6_227_020_800.0;
    let p = p * r2 - 1.0 / 39_916_800.0;
    let p = p * r2 + 1.0 / 362_880.0;
    let p = p * r2 - 1.0 / 5040.0;
    let p = p * r2 + 1.0 / 120.0;
    let p = p * r2 - 1.0 / 6.0;
    let s = r + r * r2 * p;
    s * s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sin_squared_matches_libm() {
        let mut worst = 0.0f32;
        let mut x = -SIN_FAST_LIMIT;
        while x <= SIN_FAST_LIMIT {
            for v in [x, x * 1e-3, x * 1e-6] {
                let want = f64::from(v).sin().powi(2);
                let got = f64::from(sin_squared(v));
                // Error relative to the f32 spacing at the value (and absolute near 0).
                let err = ((got - want) / want.abs().max(1e-30))
                    .abs()
                    .min((got - want).abs() * 1e7);
                worst = worst.max(err as f32);
            }
            x += 0.777;
        }
        assert!(worst < 5e-7, "worst relative error {worst}");
    }
}
