//! CPU kernel for an `AdaIN` followed by a pointwise activation, in one pass over the data.
//!
//! Composed from candle ops, `act((1+γ)·instnorm(x) + β)` costs about ten full passes over the
//! tensor (mean, subtract, square, mean, scale, shift, then the activation's own passes), each
//! single-threaded and allocating. On the generator's `[128, 120F+1]` activations that cost more
//! than the convolutions. This kernel reads each channel twice for its statistics and once more
//! to write the result, with the channels split across threads. The arithmetic follows the
//! composed order (`(x − mean)·rstd·g + b`, then the activation) so both paths agree to float
//! rounding; the statistics are accumulated in f64.

use candle_core::{CpuStorage, CustomOp1, Layout, Result, Shape};

use super::INSTANCE_NORM_EPS;

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
        let mut out = vec![0.0f32; x.len()];
        if t > 0 {
            let threads = candle_core::utils::get_num_threads().clamp(1, rows.max(1));
            let per = rows.div_ceil(threads);
            std::thread::scope(|scope| {
                for (chunk, (xs, os)) in x.chunks(per * t).zip(out.chunks_mut(per * t)).enumerate()
                {
                    scope.spawn(move || {
                        for (i, (xr, or)) in xs.chunks(t).zip(os.chunks_mut(t)).enumerate() {
                            let row = chunk * per + i;
                            self.row(row, row % c, xr, or);
                        }
                    });
                }
            });
        }
        Ok((CpuStorage::F32(out), layout.shape().clone()))
    }
}

impl AdaInAct<'_> {
    fn row(&self, row: usize, channel: usize, x: &[f32], out: &mut [f32]) {
        let n = x.len() as f64;
        let mean = sum_f64(x, |v| v) / n;
        let var = sum_f64(x, |v| (v - mean) * (v - mean)) / n;
        let rstd = (1.0 / (var + INSTANCE_NORM_EPS).sqrt()) as f32;
        let mean = mean as f32;
        let (g, b) = (self.gain[row], self.shift[row]);
        let norm = |v: f32| (v - mean) * rstd * g + b;
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
                let (a, ia) = (alpha[channel], inv_alpha[channel]);
                for (o, &v) in out.iter_mut().zip(x) {
                    let y = norm(v);
                    let s = (a * y).sin();
                    *o = y + ia * (s * s);
                }
            }
        }
    }
}

/// `Σ f(x)` in f64 with eight independent accumulators, so the loop vectorises despite the
/// strict floating-point order.
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
        let mut out = vec![0.0f32; (top + t + bottom) * c];
        if t == 0 || c == 0 {
            return Ok((CpuStorage::F32(out), Shape::from((top + t + bottom, c))));
        }
        let threads = if x.len() < PARALLEL_MIN {
            1
        } else {
            candle_core::utils::get_num_threads().clamp(1, t)
        };
        let rows_per = t.div_ceil(threads);

        // Per-channel Σx and Σx² in f64, each thread over its own rows.
        let partials: Vec<(Vec<f64>, Vec<f64>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = x
                .chunks(rows_per * c)
                .map(|rows| scope.spawn(move || channel_sums(rows, c)))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| (vec![f64::NAN; c], vec![f64::NAN; c]))
                })
                .collect()
        });
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

        let body = &mut out[top * c..(top + t) * c];
        let (mean, scale, shift) = (&mean_f32, &scale, self.shift);
        std::thread::scope(|scope| {
            for (xs, os) in x.chunks(rows_per * c).zip(body.chunks_mut(rows_per * c)) {
                scope.spawn(move || {
                    for (xr, or) in xs.chunks_exact(c).zip(os.chunks_exact_mut(c)) {
                        apply_row(xr, or, [mean, scale, shift], self.act);
                    }
                });
            }
        });
        Ok((CpuStorage::F32(out), Shape::from((top + t + bottom, c))))
    }
}

/// Per-channel `(Σx, Σx²)` over the rows of a `[rows, c]` slice.
fn channel_sums(rows: &[f32], c: usize) -> (Vec<f64>, Vec<f64>) {
    let mut sum = vec![0.0f64; c];
    let mut sq = vec![0.0f64; c];
    for row in rows.chunks_exact(c) {
        for ((s, q), &v) in sum.iter_mut().zip(sq.iter_mut()).zip(row) {
            let v = f64::from(v);
            *s += v;
            *q += v * v;
        }
    }
    (sum, sq)
}

/// One time step: `act((x − mean)·scale + shift)` per channel.
fn apply_row(x: &[f32], out: &mut [f32], [mean, scale, shift]: [&[f32]; 3], act: ActRef<'_>) {
    let norm = x
        .iter()
        .zip(mean)
        .zip(scale)
        .zip(shift)
        .map(|(((&v, &m), &s), &b)| (v - m) * s + b);
    match act {
        ActRef::Identity => {
            for (dst, y) in out.iter_mut().zip(norm) {
                *dst = y;
            }
        }
        ActRef::Leaky(slope) => {
            for (dst, y) in out.iter_mut().zip(norm) {
                *dst = y.max(y * slope);
            }
        }
        ActRef::Snake { alpha, inv_alpha } => {
            for (((dst, y), &a), &ia) in out.iter_mut().zip(norm).zip(alpha).zip(inv_alpha) {
                let s = (a * y).sin();
                *dst = y + ia * (s * s);
            }
        }
    }
}
