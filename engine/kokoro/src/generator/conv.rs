//! Convolutions on time-major activations (`[T, C]`, one row per time step), written as matrix
//! products so they spend their time in candle's GEMM and run on any device.
//!
//! With time-major data, the im2col matrix of an undilated convolution needs no copy: row `t`
//! of `unfold(x)` is the contiguous run `x[t·stride .. t·stride + K]` of rows, so
//! `Tensor::unfold` on the flattened input gives an overlapping `[T_out, K·C_in]` view that the
//! GEMM reads directly. A dilated convolution (dilation `d`) is `d` undilated ones over the
//! input's `d` phases (rows `ρ, ρ+d, ρ+2d…`), so it costs one copy of the input and one of the
//! output instead of a `K`-fold unfold. Long products are split by rows over rayon's pool (the
//! one candle's GEMM runs on), and a CPU epilogue adds bias and residual in one pass.
//!
//! candle 0.11's own CPU `conv1d` unfolds channel-major data with a scalar loop and its
//! `conv_transpose1d` takes a direct loop whenever there is padding; at the generator's sizes
//! these were about 1.5× and 4× slower (see the timing tests).

// candle's convention is `new(cfg, vb: VarBuilder)` by value (see `adain.rs`).
#![allow(clippy::needless_pass_by_value)]

use candle_core::{Result, Tensor, D};
use candle_nn::VarBuilder;

use super::epilogue::finish;
use crate::cpu_kernels::{CpuKernel, Product, ProductWeights, Stored};

/// Most output rows per matrix product: keeps each unfolded view's element count far below
/// 2²⁴, where `Tensor::unfold` (which counts windows in f32) stays exact.
const ROWS_PER_PRODUCT: usize = 16_384;

/// Fewer output rows than this are computed as one product.
const SPLIT_MIN_ROWS: usize = 1024;

/// Most input elements one unfolded product reads on a GPU: `Tensor::unfold` counts the
/// flattened input's windows in f32, exact below 2²⁴; half of that leaves a margin.
const GPU_UNFOLD_ELEMS: usize = 1 << 23;

/// Splits `rows` output rows into equal pieces `(start, len)`.
///
/// On the CPU: a multiple of the thread count, none longer than [`ROWS_PER_PRODUCT`], so every
/// thread gets the same amount of work. On a GPU as few as the unfold allows (one, at Kokoro's
/// sizes), `row_elems` being the input elements one output row adds (0: no unfold): the GPU's
/// GEMM is parallel already, and every piece would add an im2col copy, a GEMM and a
/// concatenation to the launches the GPU waits on.
fn row_pieces(rows: usize, device: &candle_core::Device, row_elems: usize) -> Vec<(usize, usize)> {
    if !device.is_cpu() {
        let max_rows = GPU_UNFOLD_ELEMS
            .checked_div(row_elems)
            .map_or(usize::MAX, |r| r.max(1));
        let pieces = rows.div_ceil(max_rows).max(1);
        return even_pieces(rows, pieces);
    }
    // Short inputs (the decoder body's 1024-wide layers) stay whole: the GEMM parallelises
    // over their many output columns itself, and each split would repack the weights.
    let threads = if rows < SPLIT_MIN_ROWS {
        1
    } else {
        candle_core::utils::get_num_threads().max(1)
    };
    let rounds = rows.div_ceil(threads * ROWS_PER_PRODUCT).max(1);
    even_pieces(rows, (threads * rounds).min(rows.max(1)))
}

/// `rows` in `pieces` runs of equal length (the last shorter).
fn even_pieces(rows: usize, pieces: usize) -> Vec<(usize, usize)> {
    let len = rows.div_ceil(pieces.max(1)).max(1);
    (0..rows)
        .step_by(len)
        .map(|start| (start, len.min(rows - start)))
        .collect()
}

/// 1-D convolution (`nn.Conv1d`, groups 1) with weights `[C_out, C_in, K]` and optional bias.
#[derive(Debug, Clone)]
pub struct Conv1d {
    /// `[K·C_in, C_out]`: row `k·C_in + c` holds `weight[:, c, k]` (or its bfloat16 panels,
    /// once [`Self::use_bf16`] chose the faster products).
    weight_tm: ProductWeights,
    /// `[1, C_out]`.
    bias: Option<Tensor>,
    /// The same on the host, for the CPU epilogue.
    bias_host: Option<Vec<f32>>,
    c_in: usize,
    c_out: usize,
    kernel: usize,
    padding: usize,
    dilation: usize,
    stride: usize,
}

impl Conv1d {
    /// Loads `weight` `[C_out, C_in, K]` and `bias` `[C_out]` from `vb`.
    pub fn new(
        c_in: usize,
        c_out: usize,
        kernel: usize,
        padding: usize,
        dilation: usize,
        stride: usize,
        vb: VarBuilder,
    ) -> Result<Self> {
        let weight = vb.get((c_out, c_in, kernel), "weight")?;
        let bias = vb.get(c_out, "bias")?;
        Self::from_tensors(&weight, Some(&bias), padding, dilation, stride)
            .map(|conv| conv.named(&vb))
    }

    /// Loads `weight` only (a bias-free convolution).
    pub fn new_no_bias(
        c_in: usize,
        c_out: usize,
        kernel: usize,
        padding: usize,
        vb: VarBuilder,
    ) -> Result<Self> {
        let weight = vb.get((c_out, c_in, kernel), "weight")?;
        Self::from_tensors(&weight, None, padding, 1, 1).map(|conv| conv.named(&vb))
    }

    /// Names the weights `weight` under `vb`'s prefix, for the packed-weights cache.
    fn named(mut self, vb: &VarBuilder) -> Self {
        self.weight_tm = self.weight_tm.named(format!("{}.weight", vb.prefix()));
        self
    }

    /// From `weight` `[C_out, C_in, K]` and an optional `bias` `[C_out]`.
    pub fn from_tensors(
        weight: &Tensor,
        bias: Option<&Tensor>,
        padding: usize,
        dilation: usize,
        stride: usize,
    ) -> Result<Self> {
        let (c_out, c_in, kernel) = weight.dims3()?;
        if dilation > 1 && stride > 1 {
            candle_core::bail!("conv1d: dilation and stride together are not supported");
        }
        let bias = bias.map(|b| b.reshape((1, c_out))).transpose()?;
        let bias_host = bias
            .as_ref()
            .map(|b| b.flatten_all()?.to_vec1::<f32>())
            .transpose()?;
        Ok(Self {
            weight_tm: ProductWeights::stored(weight.clone(), Stored::Conv),
            bias,
            bias_host,
            c_in,
            c_out,
            kernel,
            padding,
            dilation,
            stride,
        })
    }

    /// From now on computes its products in bfloat16 (see [`crate::cpu_kernels`]) if the
    /// weights live on a CPU that has the instructions and `C_in` is even. Returns whether it
    /// does.
    pub fn use_bf16(&mut self, kernel: CpuKernel) -> Result<bool> {
        self.weight_tm.use_bf16(self.kernel, self.c_in, kernel)
    }

    /// Multiply-adds per output step (`C_in·C_out·K`): the cost weight of a generator piece.
    #[must_use]
    pub fn macs_per_step(&self) -> usize {
        self.c_in * self.c_out * self.kernel
    }

    /// The convolution's own zero padding on each side.
    #[must_use]
    pub fn padding(&self) -> usize {
        self.padding
    }

    /// Output steps for an input of `t_in` steps.
    #[must_use]
    pub fn output_len(&self, t_in: usize) -> usize {
        let span = self.dilation * (self.kernel - 1) + 1;
        (t_in + 2 * self.padding).saturating_sub(span) / self.stride + 1
    }

    /// Zero rows `(before, after)` to frame an input with for [`Self::forward_tm_padded`]:
    /// the convolution's padding on each side.
    #[must_use]
    pub fn frame(&self) -> (usize, usize) {
        (self.padding, self.padding)
    }

    /// Channel-major convenience: `[B, C_in, T]` → `[B, C_out, T_out]`.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let outs = (0..x.dim(0)?)
            .map(|b| self.forward_tm(&x.get(b)?.t()?.contiguous()?)?.t())
            .collect::<Result<Vec<_>>>()?;
        Tensor::stack(&outs, 0)?.contiguous()
    }

    /// `[T, C_in]` → `[T_out, C_out]`.
    pub fn forward_tm(&self, x: &Tensor) -> Result<Tensor> {
        let t_in = x.dim(0)?;
        let (top, bottom) = self.frame();
        let xp = x.pad_with_zeros(0, top, bottom)?;
        self.forward_tm_padded(&xp, t_in, true, None)
    }

    /// Like [`Self::forward_tm`] for an input of `t_in` steps already framed by the zero rows
    /// of [`Self::frame`] (as [`crate::adain::AdaIN1d::forward_act_tm`] writes it).
    /// With `with_bias` false the bias is left out (for a convolution feeding an instance
    /// norm, which removes any per-channel constant anyway); `residual` `[T_out, C_out]` is
    /// added to the result in the same pass as the bias.
    pub fn forward_tm_padded(
        &self,
        xp: &Tensor,
        t_in: usize,
        with_bias: bool,
        residual: Option<&Tensor>,
    ) -> Result<Tensor> {
        let (rows, c_in) = xp.dims2()?;
        if c_in != self.c_in {
            candle_core::bail!("conv1d: input has {c_in} channels, expected {}", self.c_in);
        }
        let span = self.dilation * (self.kernel - 1) + 1;
        if t_in + 2 * self.padding < span || rows < t_in + 2 * self.padding {
            candle_core::bail!(
                "conv1d: {rows} rows for {t_in} steps with padding {} and kernel span {span}",
                self.padding
            );
        }
        let t_out = self.output_len(t_in);
        let bias = if with_bias {
            self.bias.as_ref().zip(self.bias_host.as_deref())
        } else {
            None
        };
        let d = self.dilation;
        let xp = xp.contiguous()?;
        let weight = match self.weight_tm.product()? {
            Product::F32(w) => w,
            Product::Bf16(w) => {
                return finish(&w.product(&xp, t_out, self.stride, d)?, bias, residual);
            }
        };
        let y = if d == 1 {
            self.undilated(&weight, &xp, t_out)?
        } else {
            // Phase ρ holds rows ρ, ρ+d, ρ+2d…; on it the kernel is undilated. One copy in,
            // one out, instead of a K-fold unfold.
            let per_phase_out = t_out.div_ceil(d);
            let per_phase = rows.div_ceil(d).max(per_phase_out + self.kernel - 1);
            let phased = xp
                .pad_with_zeros(0, 0, per_phase * d - rows)?
                .reshape((per_phase, d, c_in))?
                .transpose(0, 1)?
                .contiguous()?;
            if let Some(y) = self.phases_in_one_product(&weight, &phased, per_phase_out, t_out)? {
                y
            } else {
                let outs = (0..d)
                    .map(|rho| self.undilated(&weight, &phased.get(rho)?, per_phase_out))
                    .collect::<Result<Vec<_>>>()?;
                // [per_phase_out, d, C_out]: output step t = ρ + d·w.
                Tensor::stack(&outs, 1)?
                    .reshape((per_phase_out * d, self.c_out))?
                    .narrow(0, 0, t_out)?
            }
        };
        finish(&y, bias, residual)
    }

    /// [`Self::forward_tm_padded`] for a batch: `xp` `[B, rows, C_in]` holds each item's
    /// input of `t_in` steps framed by at least the zero rows of [`Self::frame`] (and zeros
    /// past each item's own valid steps, as alone, where its valid outputs read them);
    /// `residual` is `[B, T_out, C_out]`. Returns `[B, T_out, C_out]`.
    ///
    /// The items run as one sequence through one set of products: with every item's block of
    /// rows a multiple of the stride long, output row `j` of item `b` reads exactly item `b`'s
    /// framed rows `j·stride ..` (as alone); the outputs whose kernel straddles two items are
    /// computed and dropped.
    pub fn forward_batch_framed(
        &self,
        xp: &Tensor,
        t_in: usize,
        with_bias: bool,
        residual: Option<&Tensor>,
    ) -> Result<Tensor> {
        let (b, rows, c_in) = xp.dims3()?;
        let s = self.stride;
        let block = rows.max(t_in + 2 * self.padding).next_multiple_of(s);
        let xp = xp.pad_with_zeros(1, 0, block - rows)?;
        let t_out = self.output_len(t_in);
        let per_item = block / s;
        let total = b * block;
        let flat = xp.reshape((total, c_in))?;
        let flat_t_in = total - 2 * self.padding;
        let flat_out = self.output_len(flat_t_in);
        let residual = residual
            .map(|r| {
                r.pad_with_zeros(1, 0, per_item - t_out)?
                    .reshape((b * per_item, self.c_out))?
                    .narrow(0, 0, flat_out)?
                    .contiguous()
            })
            .transpose()?;
        let y = self.forward_tm_padded(&flat, flat_t_in, with_bias, residual.as_ref())?;
        y.pad_with_zeros(0, 0, b * per_item - flat_out)?
            .reshape((b, per_item, self.c_out))?
            .narrow(1, 0, t_out)?
            .contiguous()
    }

    /// On a GPU, all `d` phases of a dilated convolution as one im2col and one product
    /// (`phased` `[d, per_phase, C_in]` contiguous): the flattened phases are unfolded as one
    /// sequence, so windows start at every row; the `K−1` windows at the end of each phase
    /// straddle two phases and are computed and dropped. `None` on the CPU (its row pieces
    /// spread the phases over threads), with a stride, or beyond the unfold's exact range.
    fn phases_in_one_product(
        &self,
        weight: &Tensor,
        phased: &Tensor,
        per_phase_out: usize,
        t_out: usize,
    ) -> Result<Option<Tensor>> {
        let (d, per_phase, c) = phased.dims3()?;
        let k = self.kernel;
        if !one_product_on(phased.device())
            || self.stride != 1
            || d * per_phase * c > GPU_UNFOLD_ELEMS
        {
            return Ok(None);
        }
        let view = phased.flatten_all()?.unfold(0, k * c, c)?; // [total − K + 1, K·C_in]
        let y = matmul_any_device(&view, weight)?
            .pad_with_zeros(0, 0, k - 1)?
            .reshape((d, per_phase, self.c_out))?
            .narrow(1, 0, per_phase_out)?
            .transpose(0, 1)? // [per_phase_out, d, C_out]: output step t = ρ + d·w
            .contiguous()?
            .reshape((per_phase_out * d, self.c_out))?
            .narrow(0, 0, t_out)?;
        debug_assert_eq!(y.dim(0)?, t_out);
        #[cfg(test)]
        tests::ONE_PRODUCT_RUNS.with(|n| n.set(n.get() + 1));
        Ok(Some(y))
    }

    /// Undilated direct convolution of a contiguous `[rows, C_in]` input: `[t_out, C_out]`.
    fn undilated(&self, weight: &Tensor, xp: &Tensor, t_out: usize) -> Result<Tensor> {
        let (k, c, s) = (self.kernel, self.c_in, self.stride);
        par_map(
            xp.device(),
            &row_pieces(t_out, xp.device(), s * c),
            |&(start, len)| {
                // Input rows start·s .. (start+len−1)·s + k, flattened and viewed as overlapping
                // windows of k rows, one every s rows.
                let block = xp.narrow(0, start * s, (len - 1) * s + k)?.flatten_all()?;
                let view = block.unfold(0, k * c, s * c)?;
                matmul_any_device(&view, weight)
            },
        )
        .and_then(|parts| cat_rows(&parts))
    }
}

/// Whether a dilated convolution's phases go through one product: on a GPU (and, in the
/// unit tests, on the CPU when a test asks, so the GPU's arithmetic is tested here).
#[cfg(not(test))]
pub(crate) fn one_product_on(device: &candle_core::Device) -> bool {
    !device.is_cpu()
}

#[cfg(test)]
pub(crate) fn one_product_on(device: &candle_core::Device) -> bool {
    !device.is_cpu() || tests::ONE_PRODUCT_ON_CPU.with(std::cell::Cell::get)
}

/// `lhs · rhs`; on devices other than the CPU an overlapping `unfold` view is first made
/// contiguous (their GEMMs need a plain leading dimension).
fn matmul_any_device(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
    if lhs.device().is_cpu() {
        lhs.matmul(rhs)
    } else {
        lhs.contiguous()?.matmul(rhs)
    }
}

/// Concatenates row blocks (no copy for a single block).
fn cat_rows(parts: &[Tensor]) -> Result<Tensor> {
    match parts {
        [one] => Ok(one.clone()),
        _ => Tensor::cat(parts, D::Minus2),
    }
}

/// Runs `f` over `items` on rayon's pool (the one candle's GEMM uses, so nested products
/// share the same workers instead of oversubscribing), returning the results in order.
///
/// On the CPU only. On a GPU the pieces run one after another from this thread: its kernels
/// are parallel already, and work launched from other threads is ordered only by the device's
/// one stream (the engine's `device` module says why that matters).
fn par_map<I: Sync>(
    device: &candle_core::Device,
    items: &[I],
    f: impl Fn(&I) -> Result<Tensor> + Sync,
) -> Result<Vec<Tensor>> {
    use rayon::prelude::*;
    if items.len() <= 1 || !device.is_cpu() {
        return items.iter().map(&f).collect();
    }
    items.par_iter().map(&f).collect()
}

/// CPU time of this process (all threads), from `/proc/self/stat` (Linux, 10 ms ticks).
#[cfg(test)]
pub(crate) fn process_cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = after.split_whitespace().collect();
    // Fields 14 and 15 (utime, stime) are the 12th and 13th after the command name.
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0) / 100.0;
    tick(11) + tick(12)
}

mod transpose;
pub use transpose::ConvTranspose1d;

#[cfg(test)]
pub(crate) mod tests;
