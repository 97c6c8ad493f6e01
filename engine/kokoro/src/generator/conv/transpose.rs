//! The transposed convolution (`nn.ConvTranspose1d`) of the generator's upsamplers and of the
//! inverse STFT's overlap-add, on time-major activations: one product gives every input step's
//! output taps, which are then unrolled into output rows (`generator::unroll` on the CPU, a
//! slab sum elsewhere); a batch of items of their own lengths shares one product and, on a
//! GPU, one unroll ([`ConvTranspose1d::forward_batch_tm`]).

// candle's convention is `new(cfg, vb: VarBuilder)` by value (see `adain.rs`).
#![allow(clippy::needless_pass_by_value)]

use candle_core::{Result, Tensor};
use candle_nn::VarBuilder;

use super::super::epilogue::finish;
use super::super::unroll::Unroll;
use super::{cat_rows, matmul_any_device, one_product_on, par_map, row_pieces};
use crate::cpu_kernels::{CpuKernel, Product, ProductWeights};
use crate::permute::permuted;

/// Transposed 1-D convolution (`nn.ConvTranspose1d`, groups 1), weights `[C_in, C_out, K]`.
#[derive(Debug, Clone)]
pub struct ConvTranspose1d {
    /// `[C_in, Q·stride·C_out]` (kernel zero-padded to `Q·stride` taps): column
    /// `k·C_out + o` holds `weight[:, o, k]` (or its bfloat16 panels, once
    /// [`Self::use_bf16`] chose the faster products).
    weight_tm: ProductWeights,
    c_in: usize,
    /// `Q`: the padded kernel's taps over the stride.
    q: usize,
    /// `[1, C_out]`, and on the host.
    bias: Option<Tensor>,
    bias_host: Option<Vec<f32>>,
    c_out: usize,
    kernel: usize,
    stride: usize,
    padding: usize,
}

impl ConvTranspose1d {
    /// Loads `weight` and `bias` from `vb`.
    pub fn new(
        c_in: usize,
        c_out: usize,
        kernel: usize,
        stride: usize,
        padding: usize,
        vb: VarBuilder,
    ) -> Result<Self> {
        let weight = vb.get((c_in, c_out, kernel), "weight")?;
        let bias = vb.get(c_out, "bias")?;
        Self::from_tensors(&weight, Some(&bias), stride, padding)
    }

    /// From `weight` `[C_in, C_out, K]` and an optional `bias` `[C_out]`.
    pub fn from_tensors(
        weight: &Tensor,
        bias: Option<&Tensor>,
        stride: usize,
        padding: usize,
    ) -> Result<Self> {
        let (c_in, c_out, kernel) = weight.dims3()?;
        let taps = kernel.div_ceil(stride) * stride;
        let weight_tm = permuted(&weight.pad_with_zeros(2, 0, taps - kernel)?, &[0, 2, 1])?
            .reshape((c_in, taps * c_out))?;
        let bias = bias.map(|b| b.reshape((1, c_out))).transpose()?;
        let bias_host = bias
            .as_ref()
            .map(|b| b.flatten_all()?.to_vec1::<f32>())
            .transpose()?;
        Ok(Self {
            weight_tm: ProductWeights::F32(weight_tm),
            c_in,
            q: taps / stride,
            bias,
            bias_host,
            c_out,
            kernel,
            stride,
            padding,
        })
    }

    /// Like [`Conv1d::use_bf16`].
    pub fn use_bf16(&mut self, kernel: CpuKernel) -> Result<bool> {
        self.weight_tm.use_bf16(1, self.c_in, kernel)
    }

    /// Upsampling factor.
    #[must_use]
    pub fn stride(&self) -> usize {
        self.stride
    }

    /// Multiply-adds per output step (`C_in·C_out·K / stride`).
    #[must_use]
    pub fn macs_per_step(&self) -> usize {
        self.c_in * self.c_out * self.kernel / self.stride
    }

    /// Channel-major convenience: `[B, C_in, T]` → `[B, C_out, T_out]`.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let outs = (0..x.dim(0)?)
            .map(|b| self.forward_tm(&x.get(b)?.t()?.contiguous()?)?.t())
            .collect::<Result<Vec<_>>>()?;
        Tensor::stack(&outs, 0)?.contiguous()
    }

    /// `[T, C_in]` → `[(T−1)·stride + K − 2·padding, C_out]`.
    ///
    /// One product `x·W` gives, for every input step `t`, its `Q·stride` output taps; tap
    /// `k = q·stride + r` lands on output step `(t+q)·stride + r − padding`. So the product,
    /// seen as `Q` slabs of `[T, stride·C_out]`, is summed with slab `q` shifted down `q` rows,
    /// and each row of the sum unrolls into `stride` output steps.
    pub fn forward_tm(&self, x: &Tensor) -> Result<Tensor> {
        self.upsample(x, false)
    }

    /// [`Self::forward_tm`] with output row 1 also prepended (`nn.ReflectionPad1d((1, 0))`,
    /// after the generator's last upsampler): `[len + 1, C_out]`, without a second copy of the
    /// output.
    pub fn forward_tm_reflect_top1(&self, x: &Tensor) -> Result<Tensor> {
        self.upsample(x, true)
    }

    fn upsample(&self, x: &Tensor, reflect_top1: bool) -> Result<Tensor> {
        let t = x.dim(0)?;
        // Checked before the product, which would be wasted on a shape that cannot unroll.
        self.checked_len(t)?;
        let taps = self.taps(x)?;
        self.unroll(&taps, reflect_top1)
    }

    /// A batch `x` `[B, T, C_in]` whose item `b` is valid for its first `valid.host()[b]`
    /// rows: `[B, rows, C_out]`, item `b`'s first `checked_len` of those rows (plus the
    /// reflected one) what it gets alone; rows past them are values no valid output may read.
    ///
    /// One product over every item's rows either way. On the CPU each item's taps are then
    /// unrolled on their own; on a GPU (where each unroll is a handful of launches) the rows
    /// past each item's length are zeroed first, so their taps add exact zeros, and one slab
    /// sum unrolls the whole batch: the same launches at any batch size.
    pub fn forward_batch_tm(
        &self,
        x: &Tensor,
        valid: &crate::rows::ValidRows,
        reflect_top1: bool,
    ) -> Result<Tensor> {
        let (b, t, c) = x.dims3()?;
        let host = valid.host();
        if host.len() != b || host.iter().any(|&v| v == 0 || v > t) {
            candle_core::bail!(
                "conv_transpose1d batch: x {:?}, valid rows {host:?}",
                x.dims()
            );
        }
        let len = self.checked_len(t)?;
        let rows = len + usize::from(reflect_top1);
        if !one_product_on(x.device()) {
            let taps = self.taps(&x.reshape((b * t, c))?)?;
            let items = valid
                .computed()?
                .into_iter()
                .enumerate()
                .map(|(k, v)| {
                    let y = self.unroll(&taps.narrow(0, k * t, v)?, reflect_top1)?;
                    let r = y.dim(0)?;
                    y.pad_with_zeros(0, 0, rows - r)
                })
                .collect::<Result<Vec<_>>>()?;
            return Tensor::stack(&items, 0);
        }
        let masked = super::super::batch::mask_valid(x, valid)?;
        let taps = self.taps(&masked.reshape((b * t, c))?)?;
        let taps = taps.reshape((b, t, self.q * self.stride * self.c_out))?;
        let y = self.slab_sum(&taps, len)?.contiguous()?;
        let y = match &self.bias {
            Some(bias) => y.broadcast_add(bias)?,
            None => y,
        };
        if reflect_top1 {
            Tensor::cat(&[&y.narrow(1, 1, 1)?, &y], 1)
        } else {
            Ok(y)
        }
    }

    /// Output steps for `t` input steps (before any reflection pad); an error where there
    /// are none.
    pub fn checked_len(&self, t: usize) -> Result<usize> {
        if self.q == 0 || t == 0 {
            candle_core::bail!("conv_transpose1d: {t} input steps, {} tap groups", self.q);
        }
        let Some(len) = ((t - 1) * self.stride + self.kernel).checked_sub(2 * self.padding) else {
            candle_core::bail!(
                "conv_transpose1d: padding {} exceeds the output",
                self.padding
            );
        };
        Ok(len)
    }

    /// The product `x·W` `[T, Q·stride·C_out]`: every input step's output taps. Rows are
    /// independent, so the rows of several inputs stacked one after another give each
    /// input's own taps (see `generator::batch`).
    pub(super) fn taps(&self, x: &Tensor) -> Result<Tensor> {
        let t = x.dim(0)?;
        let x = x.contiguous()?;
        Ok(match self.weight_tm.product()? {
            Product::F32(w) => par_map(
                x.device(),
                &row_pieces(t, x.device(), 0),
                |&(start, len)| matmul_any_device(&x.narrow(0, start, len)?, &w),
            )
            .and_then(|parts| cat_rows(&parts))?,
            Product::Bf16(w) => w.product(&x, t, 1, 1)?,
        })
    }

    /// Taps `[B, T, Q·stride·C_out]` as output rows, without the bias: the `Q` slabs summed
    /// in order, slab `q` shifted down `q` rows (zeros where a slab was padded), each row
    /// unrolled into `stride` output steps and cropped to `len` past the padding:
    /// `[B, len, C_out]`.
    fn slab_sum(&self, taps: &Tensor, len: usize) -> Result<Tensor> {
        let (b, t, _) = taps.dims3()?;
        let (s, c, q) = (self.stride, self.c_out, self.q);
        let mut sum: Option<Tensor> = None;
        for j in 0..q {
            let slab = taps
                .narrow(2, j * s * c, s * c)?
                .pad_with_zeros(1, j, q - 1 - j)?;
            sum = Some(match sum {
                None => slab,
                Some(acc) => (acc + slab)?,
            });
        }
        let Some(sum) = sum else {
            candle_core::bail!("conv_transpose1d: no tap groups");
        };
        sum.reshape((b, (t + q - 1) * s, c))?
            .narrow(1, self.padding, len)
    }

    /// The output of one input's taps ([`Self::taps`]), with the bias (and the reflected top
    /// row when asked).
    pub(super) fn unroll(&self, taps: &Tensor, reflect_top1: bool) -> Result<Tensor> {
        let t = taps.dim(0)?;
        let (s, c, q) = (self.stride, self.c_out, self.q);
        let len = self.checked_len(t)?;
        let unroll = Unroll {
            steps: t,
            q,
            stride: s,
            channels: c,
            padding: self.padding,
            len,
            bias: self.bias_host.as_deref(),
            reflect_top1,
        };
        if let Some(y) = unroll.run(taps)? {
            return Ok(y);
        }
        let y = self.slab_sum(&taps.unsqueeze(0)?, len)?.squeeze(0)?;
        let y = finish(&y, self.bias.as_ref().zip(self.bias_host.as_deref()), None)?;
        if reflect_top1 {
            super::super::reflection_pad_top1(&y)
        } else {
            Ok(y)
        }
    }
}
