//! Style-conditioned normalisation blocks shared by the prosody predictor and the decoder.
//!
//! Kokoro injects the voice's style vector through adaptive instance normalisation: every
//! [`AdaIN1d`] normalises each channel over the whole time axis and then scales and shifts it
//! with a (γ, β) pair computed from the style by a linear layer. [`AdainResBlk1d`] is the
//! residual block built around two of them (`istftnet.py`'s `AdainResBlk1d`), used by the
//! predictor's F0/N branches and by the decoder's `encode`/`decode.N` stacks.
//!
//! Because the statistics span the whole time axis, these blocks see an utterance at once;
//! streaming has to run them over complete frame windows.
//!
//! Every `AdaIN` in the model is followed by a pointwise activation (`LeakyReLU` in these blocks,
//! Snake in the generator's), so [`AdaIN1d::forward_act`] does both; on the CPU it runs the
//! fused kernel of the private `fused` module, elsewhere the same arithmetic composed from candle ops.

// candle's convention is `new(cfg, vb: VarBuilder)`; the builder is cheap to clone and the
// by-value signature keeps call sites as `Block::new(.., vb.pp("name"))`.
#![allow(clippy::needless_pass_by_value)]

mod batch;
mod fused;

pub use batch::upsample_nearest2_btm;

use candle_core::{DType, Module, Result, Tensor, D};
use candle_nn::VarBuilder;

use super::dense::Dense;

use super::elementwise::leaky_relu;
use super::generator::conv::Conv1d;
use crate::cpu_kernels::CpuKernel;
use crate::rows::ValidRows;

/// Epsilon of the instance norm (`nn.InstanceNorm1d` default).
pub const INSTANCE_NORM_EPS: f64 = 1e-5;
/// Negative slope of the activation inside [`AdainResBlk1d`] (`LeakyReLU(0.2)`).
pub const RES_BLK_LEAKY_SLOPE: f64 = 0.2;

/// Instance norm over time with a style-derived affine transform: `(1+γ)·norm(x) + β`.
///
/// The checkpoint has only `fc` (`[2C, style_dim]`); the `InstanceNorm1d` affine parameters of the
/// reference are absent and stay at identity.
#[derive(Debug, Clone)]
pub struct AdaIN1d {
    fc: Dense,
    channels: usize,
}

impl AdaIN1d {
    /// `vb` points at the module (e.g. `decoder.encode.norm1`); loads `fc.weight`, `fc.bias`.
    pub fn new(style_dim: usize, channels: usize, vb: VarBuilder) -> Result<Self> {
        let fc = Dense::new(style_dim, 2 * channels, vb.pp("fc"))?;
        Ok(Self { fc, channels })
    }

    /// Number of channels this norm expects.
    #[must_use]
    pub fn channels(&self) -> usize {
        self.channels
    }

    /// `(1+γ, β)`, each `[B, C, 1]`, for the style `s` `[B, style_dim]`.
    pub fn style_affine(&self, s: &Tensor) -> Result<(Tensor, Tensor)> {
        let h = self.fc.forward(s)?.unsqueeze(D::Minus1)?;
        let gamma = (h.narrow(1, 0, self.channels)? + 1.0)?;
        let beta = h.narrow(1, self.channels, self.channels)?;
        Ok((gamma, beta))
    }

    /// `x` `[B, C, T]`, `s` `[B, style_dim]` → `[B, C, T]`.
    pub fn forward(&self, x: &Tensor, s: &Tensor) -> Result<Tensor> {
        self.forward_act(x, s, &Activation::Identity)
    }

    /// `act(AdaIN(x, s))`; fused into one pass on the CPU.
    pub fn forward_act(&self, x: &Tensor, s: &Tensor, act: &Activation) -> Result<Tensor> {
        #[cfg(feature = "cuda")]
        if crate::cuda_kernels::applies(x) {
            return crate::cuda_kernels::adain_act_cm(x, &self.fc.forward(s)?, act.gpu());
        }
        let (gamma, beta) = self.style_affine(s)?;
        if x.device().is_cpu() && x.dtype() == DType::F32 {
            let gain = gamma.flatten_all()?.to_vec1::<f32>()?;
            let shift = beta.flatten_all()?.to_vec1::<f32>()?;
            let op = fused::AdaInAct {
                gain: &gain,
                shift: &shift,
                act: act.host(),
            };
            return x.contiguous()?.apply_op1_no_bwd(&op);
        }
        let norm = instance_norm(x)?;
        act.forward(&norm.broadcast_mul(&gamma)?.broadcast_add(&beta)?)
    }

    /// Time-major `act(AdaIN(x, s))` for batch 1: `x` `[T, C]`, `s` `[1, style_dim]` →
    /// `[before + T + after, C]`, the result framed by zero rows (the input frame of the
    /// convolution that follows, see `Conv1d::frame`, so it needs no copy). Fused on the CPU.
    pub fn forward_act_tm(
        &self,
        x: &Tensor,
        s: &Tensor,
        act: &Activation,
        (before, after): (usize, usize),
    ) -> Result<Tensor> {
        #[cfg(feature = "cuda")]
        if crate::cuda_kernels::applies(x) {
            let h = self.fc.forward(s)?;
            return crate::cuda_kernels::adain_act_tm(x, &h, act.gpu(), (before, after));
        }
        let (gamma, beta) = self.style_affine(s)?;
        if x.device().is_cpu() && x.dtype() == DType::F32 {
            let gain = gamma.flatten_all()?.to_vec1::<f32>()?;
            let shift = beta.flatten_all()?.to_vec1::<f32>()?;
            let op = fused::AdaInActTm {
                gain: &gain,
                shift: &shift,
                act: act.host(),
                pad: (before, after),
            };
            return x.contiguous()?.apply_op1_no_bwd(&op);
        }
        let cm = x.t()?.unsqueeze(0)?;
        let y = act.forward(
            &instance_norm(&cm)?
                .broadcast_mul(&gamma)?
                .broadcast_add(&beta)?,
        )?;
        y.squeeze(0)?.t()?.pad_with_zeros(0, before, after)
    }

    /// [`Self::forward_act_tm`] for a batch of items of their own lengths and styles: `x`
    /// `[B, T, C]` whose item `b` is valid for its first `valid.host()[b]` rows (1 ≤ that ≤
    /// T), `s` `[B, style_dim]` → `[B, before + T + after, C]`, each item normalised over its
    /// own rows and framed by zeros as it would be alone (its rows past its length are never
    /// read). One launch sequence for the whole batch on a GPU, reading the lengths where they
    /// already are on the device; item by item on the CPU, which is also the GPU kernel's
    /// reference.
    pub fn forward_act_batch_tm(
        &self,
        x: &Tensor,
        s: &Tensor,
        act: &Activation,
        valid: &ValidRows,
        (before, after): (usize, usize),
    ) -> Result<Tensor> {
        let (batch, t, _) = x.dims3()?;
        let host = valid.host();
        if host.len() != batch || s.dim(0)? != batch || host.iter().any(|&v| v == 0 || v > t) {
            candle_core::bail!(
                "adain batch: x {:?}, styles {:?}, valid rows {host:?}",
                x.dims(),
                s.dims()
            );
        }
        #[cfg(feature = "cuda")]
        if crate::cuda_kernels::applies(x) {
            let h = self.fc.forward(s)?;
            return crate::cuda_kernels::adain_act_btm(
                x,
                &h,
                act.gpu(),
                valid.lengths(),
                (before, after),
            );
        }
        let items = valid
            .computed()?
            .into_iter()
            .enumerate()
            .map(|(b, v)| {
                let item = x.get(b)?.narrow(0, 0, v)?;
                self.forward_act_tm(&item, &s.narrow(0, b, 1)?, act, (before, after + t - v))
            })
            .collect::<Result<Vec<_>>>()?;
        Tensor::stack(&items, 0)
    }
}

/// A pointwise activation that follows an [`AdaIN1d`].
#[derive(Debug, Clone)]
pub enum Activation {
    Identity,
    /// Leaky `ReLU` with this negative slope (< 1).
    LeakyRelu(f64),
    Snake(Snake),
}

impl Activation {
    /// The parameters as the fused kernels take them.
    fn host(&self) -> fused::ActRef<'_> {
        match self {
            Self::Identity => fused::ActRef::Identity,
            Self::LeakyRelu(slope) => fused::ActRef::Leaky(*slope as f32),
            Self::Snake(snake) => fused::ActRef::Snake {
                alpha: &snake.alpha_host,
                inv_alpha: &snake.inv_alpha_host,
            },
        }
    }

    /// The parameters as the CUDA kernels take them.
    #[cfg(feature = "cuda")]
    fn gpu(&self) -> crate::cuda_kernels::GpuAct<'_> {
        use crate::cuda_kernels::GpuAct;
        match self {
            Self::Identity => GpuAct::Identity,
            Self::LeakyRelu(slope) => GpuAct::LeakyRelu(*slope as f32),
            Self::Snake(snake) => GpuAct::Snake(&snake.alpha),
        }
    }

    /// The activation alone, composed from candle ops.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        match self {
            Self::Identity => Ok(x.clone()),
            Self::LeakyRelu(slope) => leaky_relu(x, *slope),
            Self::Snake(snake) => snake.forward(x),
        }
    }
}

/// Snake activation `x + sin²(α·x)/α` with a learned α per channel (`alpha` `[1, C, 1]`).
/// `1/α` is precomputed, as the export does.
#[derive(Debug, Clone)]
pub struct Snake {
    alpha: Tensor,
    inv_alpha: Tensor,
    alpha_host: Vec<f32>,
    inv_alpha_host: Vec<f32>,
}

impl Snake {
    /// From `alpha` `[1, C, 1]`.
    pub fn new(alpha: Tensor) -> Result<Self> {
        let inv_alpha = alpha.recip()?;
        Ok(Self {
            alpha_host: alpha.flatten_all()?.to_vec1::<f32>()?,
            inv_alpha_host: inv_alpha.flatten_all()?.to_vec1::<f32>()?,
            alpha,
            inv_alpha,
        })
    }

    /// Composed from candle ops.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let s = x.broadcast_mul(&self.alpha)?.sin()?.sqr()?;
        x + s.broadcast_mul(&self.inv_alpha)?
    }
}

/// Per-channel normalisation over the last (time) axis: biased variance, eps 1e-5.
pub fn instance_norm(x: &Tensor) -> Result<Tensor> {
    let mean = x.mean_keepdim(D::Minus1)?;
    let xc = x.broadcast_sub(&mean)?;
    let var = xc.sqr()?.mean_keepdim(D::Minus1)?;
    let rstd = (var + INSTANCE_NORM_EPS)?.sqrt()?.recip()?;
    xc.broadcast_mul(&rstd)
}

/// Depthwise transposed convolution `k3 s2 p1 output_padding 1 groups=C` (the `pool` of an
/// upsampling [`AdainResBlk1d`]), doubling the length.
///
/// Written out as two interleaved phases instead of candle's grouped `conv_transpose1d`, which
/// would run one convolution per channel:
/// `out[2m] = w1·x[m]`, `out[2m+1] = w2·x[m] + w0·x[m+1]` (with `x[T] = 0`), plus the bias.
#[derive(Debug, Clone)]
pub struct DepthwiseUpsample {
    /// `[1, C, 1]` taps 0, 1, 2.
    taps: [Tensor; 3],
    /// `[1, C, 1]`.
    bias: Tensor,
    /// The same as `[1, C]` rows, for time-major data.
    taps_tm: [Tensor; 3],
    bias_tm: Tensor,
}

impl DepthwiseUpsample {
    /// `vb` points at the module (`….pool`); loads `weight` `[C, 1, 3]` and `bias` `[C]`.
    pub fn new(channels: usize, vb: VarBuilder) -> Result<Self> {
        let w = vb.get((channels, 1, 3), "weight")?;
        let bias = vb.get(channels, "bias")?.reshape((1, channels, 1))?;
        let tap = |k: usize| -> Result<Tensor> { w.narrow(2, k, 1)?.reshape((1, channels, 1)) };
        let taps = [tap(0)?, tap(1)?, tap(2)?];
        let row = |t: &Tensor| t.reshape((1, channels));
        Ok(Self {
            taps_tm: [row(&taps[0])?, row(&taps[1])?, row(&taps[2])?],
            bias_tm: row(&bias)?,
            taps,
            bias,
        })
    }

    /// Time-major: `x` `[T, C]` → `[2T, C]` (the batch form on a batch of one).
    pub fn forward_tm(&self, x: &Tensor) -> Result<Tensor> {
        self.forward_btm(&x.unsqueeze(0)?)?.squeeze(0)
    }

    /// `x` `[B, C, T]` → `[B, C, 2T]`.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let (b, c, t) = x.dims3()?;
        let [w0, w1, w2] = &self.taps;
        let even = x.broadcast_mul(w1)?;
        let next = x.narrow(2, 1, t - 1)?.pad_with_zeros(2, 0, 1)?;
        let odd = (x.broadcast_mul(w2)? + next.broadcast_mul(w0)?)?;
        // Interleave: [B, C, T, 2] → [B, C, 2T].
        let out = Tensor::stack(&[even, odd], 3)?.reshape((b, c, 2 * t))?;
        out.broadcast_add(&self.bias)
    }
}

/// Residual block: `(conv2(act(norm2(conv1(pool(act(norm1(x))))))) + conv1x1(up2(x))) / √2`.
///
/// `conv1x1` (bias-free) exists only when `dim_in != dim_out`; `pool` and the nearest ×2
/// upsampling of the shortcut only when `upsample` is set.
#[derive(Debug, Clone)]
pub struct AdainResBlk1d {
    conv1: Conv1d,
    conv2: Conv1d,
    norm1: AdaIN1d,
    norm2: AdaIN1d,
    conv1x1: Option<Conv1d>,
    pool: Option<DepthwiseUpsample>,
}

impl AdainResBlk1d {
    /// Switches the block's convolutions to bfloat16 products where possible; returns how
    /// many switched.
    pub fn use_bf16(&mut self, kernel: CpuKernel) -> Result<usize> {
        let mut n =
            usize::from(self.conv1.use_bf16(kernel)?) + usize::from(self.conv2.use_bf16(kernel)?);
        if let Some(c) = &mut self.conv1x1 {
            n += usize::from(c.use_bf16(kernel)?);
        }
        Ok(n)
    }

    /// `vb` points at the block (e.g. `decoder.decode.3`, `predictor.F0.1`).
    pub fn new(
        dim_in: usize,
        dim_out: usize,
        style_dim: usize,
        upsample: bool,
        vb: VarBuilder,
    ) -> Result<Self> {
        let conv1 = Conv1d::new(dim_in, dim_out, 3, 1, 1, 1, vb.pp("conv1"))?;
        let conv2 = Conv1d::new(dim_out, dim_out, 3, 1, 1, 1, vb.pp("conv2"))?;
        let norm1 = AdaIN1d::new(style_dim, dim_in, vb.pp("norm1"))?;
        let norm2 = AdaIN1d::new(style_dim, dim_out, vb.pp("norm2"))?;
        let conv1x1 = if dim_in == dim_out {
            None
        } else {
            Some(Conv1d::new_no_bias(
                dim_in,
                dim_out,
                1,
                0,
                vb.pp("conv1x1"),
            )?)
        };
        let pool = if upsample {
            Some(DepthwiseUpsample::new(dim_in, vb.pp("pool"))?)
        } else {
            None
        };
        Ok(Self {
            conv1,
            conv2,
            norm1,
            norm2,
            conv1x1,
            pool,
        })
    }

    /// Whether this block doubles the time axis.
    #[must_use]
    pub fn upsamples(&self) -> bool {
        self.pool.is_some()
    }

    /// `x` `[B, dim_in, T]`, `s` `[B, style_dim]` → `[B, dim_out, T]` (or `2T` if upsampling).
    ///
    /// Runs time-major inside ([`Self::forward_tm`]), one batch item at a time.
    pub fn forward(&self, x: &Tensor, s: &Tensor) -> Result<Tensor> {
        let outs = (0..x.dim(0)?)
            .map(|b| {
                let xt = x.get(b)?.t()?.contiguous()?;
                self.forward_tm(&xt, &s.narrow(0, b, 1)?)?.t()
            })
            .collect::<Result<Vec<_>>>()?;
        Tensor::stack(&outs, 0)?.contiguous()
    }

    /// Time-major, batch 1: `x` `[T, dim_in]`, `s` `[1, style_dim]` → `[T (or 2T), dim_out]`.
    pub fn forward_tm(&self, x: &Tensor, s: &Tensor) -> Result<Tensor> {
        let act = Activation::LeakyRelu(RES_BLK_LEAKY_SLOPE);
        let t = x.dim(0)? * if self.pool.is_some() { 2 } else { 1 };
        let r = match &self.pool {
            // The transposed conv sits between the norm and conv1, so frame after it.
            Some(pool) => {
                let r = pool.forward_tm(&self.norm1.forward_act_tm(x, s, &act, (0, 0))?)?;
                let (before, after) = self.conv1.frame();
                r.pad_with_zeros(0, before, after)?
            }
            None => self.norm1.forward_act_tm(x, s, &act, self.conv1.frame())?,
        };
        // conv1 feeds an instance norm, which cancels its bias exactly.
        let r = self.conv1.forward_tm_padded(&r, t, false, None)?;
        let r = self.norm2.forward_act_tm(&r, s, &act, self.conv2.frame())?;
        let r = self.conv2.forward_tm_padded(&r, t, true, None)?;

        let mut sc = if self.pool.is_some() {
            upsample_nearest2_tm(x)?
        } else {
            x.clone()
        };
        if let Some(c) = &self.conv1x1 {
            sc = c.forward_tm_padded(&sc, t, false, None)?;
        }
        (r + sc)? * std::f64::consts::FRAC_1_SQRT_2
    }
}

/// Time-major nearest-neighbour ×2: `[T, C]` → `[2T, C]`.
pub fn upsample_nearest2_tm(x: &Tensor) -> Result<Tensor> {
    upsample_nearest2_btm(&x.unsqueeze(0)?)?.squeeze(0)
}

/// Nearest-neighbour ×2 along time: `[B, C, T]` → `[B, C, 2T]`.
pub fn upsample_nearest2(x: &Tensor) -> Result<Tensor> {
    let (b, c, t) = x.dims3()?;
    x.unsqueeze(3)?
        .broadcast_as((b, c, t, 2))?
        .reshape((b, c, 2 * t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rows::ValidRows;
    use candle_core::{DType, Device};
    use candle_nn::VarMap;

    /// `host` lengths of a batch padded to `rows`, on the CPU.
    fn rows(host: &[usize], rows: usize) -> ValidRows {
        ValidRows::upload(host, rows, &Device::Cpu).expect("valid rows")
    }

    fn ramp(shape: (usize, usize, usize), scale: f32) -> Tensor {
        let n = shape.0 * shape.1 * shape.2;
        let v: Vec<f32> = (0..n)
            .map(|i| ((i as f32 * 0.731).sin() * scale) + (i % 7) as f32 * 0.1)
            .collect();
        Tensor::from_vec(v, shape, &Device::Cpu).expect("shape matches the data length")
    }

    trait ExpectContiguous {
        fn expect_contiguous(self) -> Tensor;
    }

    impl ExpectContiguous for Tensor {
        fn expect_contiguous(self) -> Tensor {
            self.contiguous().expect("contiguous copy")
        }
    }

    fn max_abs_diff(a: &Tensor, b: &Tensor) -> f32 {
        (a - b)
            .expect("same shapes")
            .abs()
            .expect("abs")
            .flatten_all()
            .expect("flatten")
            .max(0)
            .expect("non-empty")
            .to_scalar::<f32>()
            .expect("scalar")
    }

    #[test]
    fn depthwise_upsample_matches_grouped_conv_transpose() {
        let dev = Device::Cpu;
        let (c, t) = (5, 9);
        let w = ramp((c, 1, 3), 0.7);
        let bias = Tensor::new(&[0.1f32, -0.2, 0.3, 0.0, 0.5], &dev).expect("bias");
        let vm = VarMap::new();
        {
            let mut data = vm.data().lock().expect("fresh varmap lock");
            data.insert(
                "weight".into(),
                candle_core::Var::from_tensor(&w).expect("var"),
            );
            data.insert(
                "bias".into(),
                candle_core::Var::from_tensor(&bias).expect("var"),
            );
        }
        let vb = VarBuilder::from_varmap(&vm, DType::F32, &dev);
        let up = DepthwiseUpsample::new(c, vb).expect("load");
        let x = ramp((1, c, t), 1.3);
        let got = up.forward(&x).expect("forward");
        let want = x
            .conv_transpose1d(&w, 1, 1, 2, 1, c)
            .expect("reference conv")
            .broadcast_add(&bias.reshape((1, c, 1)).expect("reshape"))
            .expect("bias add");
        assert_eq!(got.dims(), &[1, c, 2 * t]);
        assert!(max_abs_diff(&got, &want) < 1e-6);
    }

    #[test]
    fn instance_norm_has_zero_mean_unit_variance() {
        let x = ramp((1, 3, 50), 4.0);
        let y = instance_norm(&x).expect("norm");
        let mean = y.mean_keepdim(2).expect("mean");
        let var = y.sqr().expect("sqr").mean_keepdim(2).expect("var");
        assert!(
            mean.abs()
                .expect("abs")
                .max_keepdim(1)
                .expect("max")
                .flatten_all()
                .expect("f")
                .to_vec1::<f32>()
                .expect("v")[0]
                < 1e-5
        );
        let ones = Tensor::ones_like(&var).expect("ones");
        assert!(max_abs_diff(&var, &ones) < 1e-3);
    }

    /// The fused CPU kernel against the same arithmetic composed from candle ops.
    #[test]
    fn fused_adain_matches_composed_ops() {
        let dev = Device::Cpu;
        let (c, t, sd) = (6, 37, 4);
        let vm = VarMap::new();
        {
            let mut data = vm.data().lock().expect("fresh varmap lock");
            for (name, shape, scale) in [
                ("fc.weight", (1, 2 * c, sd), 0.3),
                ("fc.bias", (1, 1, 2 * c), 0.2),
            ] {
                let v = ramp(shape, scale).flatten_all().expect("flat");
                let v = if name == "fc.weight" {
                    v.reshape((2 * c, sd))
                } else {
                    v.reshape(2 * c)
                };
                data.insert(
                    name.into(),
                    candle_core::Var::from_tensor(&v.expect("shape")).expect("var"),
                );
            }
        }
        let norm =
            AdaIN1d::new(sd, c, VarBuilder::from_varmap(&vm, DType::F32, &dev)).expect("load");
        let x = (ramp((2, c, t), 2.0) + 0.7).expect("x");
        let s = ramp((1, 2, sd), 1.0).squeeze(0).expect("s");
        let alpha = (ramp((1, c, 1), 0.4).abs().expect("abs") + 0.3).expect("alpha");
        for act in [
            Activation::Identity,
            Activation::LeakyRelu(0.2),
            Activation::Snake(Snake::new(alpha).expect("snake")),
        ] {
            let fused = norm.forward_act(&x, &s, &act).expect("fused");
            let (gamma, beta) = norm.style_affine(&s).expect("affine");
            let composed = act
                .forward(
                    &instance_norm(&x)
                        .and_then(|n| n.broadcast_mul(&gamma))
                        .and_then(|n| n.broadcast_add(&beta))
                        .expect("composed"),
                )
                .expect("act");
            assert!(max_abs_diff(&fused, &composed) < 2e-6, "{act:?}");
            // Time-major kernel, with an uneven zero frame, on the first batch item; long
            // enough to be split across threads (chunks that hold frame and body rows both).
            let long = ramp((1, c, 9000), 3.0).expect_contiguous();
            let xt = long
                .squeeze(0)
                .and_then(|x| x.t()?.contiguous())
                .expect("tm");
            let s0 = s.narrow(0, 0, 1).expect("s0");
            let tm = norm
                .forward_act_tm(&xt, &s0, &act, (2, 5))
                .expect("fused tm");
            assert_eq!(tm.dims(), &[9007, c]);
            let want = norm
                .forward_act(&long, &s0, &act)
                .and_then(|y| y.squeeze(0)?.t()?.pad_with_zeros(0, 2, 5))
                .expect("want");
            assert!(max_abs_diff(&tm, &want) < 2e-5, "tm {act:?}");
            // A batch: item 1 valid for 11 of its 37 rows, the rest junk no output may read,
            // each item with its own style, framed as alone.
            let xb = x.transpose(1, 2).expect("tm").expect_contiguous();
            let junk = Tensor::full(1.0e4f32, (1, t - 11, c), &dev).expect("junk");
            let xb = Tensor::cat(
                &[
                    xb.narrow(0, 0, 1).expect("item 0"),
                    Tensor::cat(
                        &[
                            xb.narrow(0, 1, 1).expect("1").narrow(1, 0, 11).expect("11"),
                            junk,
                        ],
                        1,
                    )
                    .expect("item 1"),
                ],
                0,
            )
            .expect("batch");
            let got = norm
                .forward_act_batch_tm(&xb, &s, &act, &rows(&[t, 11], t), (2, 5))
                .expect("batch");
            assert_eq!(got.dims(), &[2, t + 7, c]);
            for (b, v) in [(0, t), (1, 11)] {
                let want = norm
                    .forward_act(
                        &x.get(b)
                            .expect("b")
                            .narrow(1, 0, v)
                            .expect("v")
                            .unsqueeze(0)
                            .expect("u"),
                        &s.narrow(0, b, 1).expect("s"),
                        &act,
                    )
                    .and_then(|y| y.squeeze(0)?.t()?.pad_with_zeros(0, 2, 5 + t - v))
                    .expect("want");
                assert!(
                    max_abs_diff(&got.get(b).expect("got"), &want) < 2e-5,
                    "item {b} {act:?}"
                );
            }
            // Past the rows, or not one length per item (a zero length cannot even upload).
            assert!(ValidRows::upload(&[t, 0], t, &dev).is_err());
            for bad in [rows(&[t, t + 1], t + 1), rows(&[t], t)] {
                assert!(
                    norm.forward_act_batch_tm(&xb, &s, &act, &bad, (0, 0))
                        .is_err(),
                    "{:?}",
                    bad.host()
                );
            }
        }
    }

    #[test]
    fn leaky_relu_and_nearest_upsample() {
        let x = Tensor::new(&[[[-2.0f32, 0.5, 3.0]]], &Device::Cpu).expect("x");
        let y = leaky_relu(&x, 0.2).expect("leaky");
        assert_eq!(y.to_vec3::<f32>().expect("v")[0][0], vec![-0.4, 0.5, 3.0]);
        let u = upsample_nearest2(&x).expect("up");
        assert_eq!(
            u.to_vec3::<f32>().expect("v")[0][0],
            vec![-2.0, -2.0, 0.5, 0.5, 3.0, 3.0]
        );
    }

    #[test]
    fn zero_weight_block_shapes() {
        let vb = VarBuilder::zeros(DType::F32, &Device::Cpu);
        let blk = AdainResBlk1d::new(6, 4, 8, true, vb).expect("zeros");
        let x = ramp((1, 6, 7), 1.0);
        let s = Tensor::zeros((1, 8), DType::F32, &Device::Cpu).expect("s");
        let y = blk.forward(&x, &s).expect("forward");
        assert_eq!(y.dims(), &[1, 4, 14]);
        assert!(blk.upsamples());
    }
}
