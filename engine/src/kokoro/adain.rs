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

// candle's convention is `new(cfg, vb: VarBuilder)`; the builder is cheap to clone and the
// by-value signature keeps call sites as `Block::new(.., vb.pp("name"))`.
#![allow(clippy::needless_pass_by_value)]

use candle_core::{Module, Result, Tensor, D};
use candle_nn::{Conv1d, Conv1dConfig, Linear, VarBuilder};

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
    fc: Linear,
    channels: usize,
}

impl AdaIN1d {
    /// `vb` points at the module (e.g. `decoder.encode.norm1`); loads `fc.weight`, `fc.bias`.
    pub fn new(style_dim: usize, channels: usize, vb: VarBuilder) -> Result<Self> {
        let fc = candle_nn::linear(style_dim, 2 * channels, vb.pp("fc"))?;
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
        let (gamma, beta) = self.style_affine(s)?;
        let norm = instance_norm(x)?;
        norm.broadcast_mul(&gamma)?.broadcast_add(&beta)
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
}

impl DepthwiseUpsample {
    /// `vb` points at the module (`….pool`); loads `weight` `[C, 1, 3]` and `bias` `[C]`.
    pub fn new(channels: usize, vb: VarBuilder) -> Result<Self> {
        let w = vb.get((channels, 1, 3), "weight")?;
        let bias = vb.get(channels, "bias")?.reshape((1, channels, 1))?;
        let tap = |k: usize| -> Result<Tensor> { w.narrow(2, k, 1)?.reshape((1, channels, 1)) };
        Ok(Self {
            taps: [tap(0)?, tap(1)?, tap(2)?],
            bias,
        })
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
    /// `vb` points at the block (e.g. `decoder.decode.3`, `predictor.F0.1`).
    pub fn new(
        dim_in: usize,
        dim_out: usize,
        style_dim: usize,
        upsample: bool,
        vb: VarBuilder,
    ) -> Result<Self> {
        let k3 = Conv1dConfig {
            padding: 1,
            ..Conv1dConfig::default()
        };
        let conv1 = candle_nn::conv1d(dim_in, dim_out, 3, k3, vb.pp("conv1"))?;
        let conv2 = candle_nn::conv1d(dim_out, dim_out, 3, k3, vb.pp("conv2"))?;
        let norm1 = AdaIN1d::new(style_dim, dim_in, vb.pp("norm1"))?;
        let norm2 = AdaIN1d::new(style_dim, dim_out, vb.pp("norm2"))?;
        let conv1x1 = if dim_in == dim_out {
            None
        } else {
            Some(candle_nn::conv1d_no_bias(
                dim_in,
                dim_out,
                1,
                Conv1dConfig::default(),
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
    pub fn forward(&self, x: &Tensor, s: &Tensor) -> Result<Tensor> {
        let mut r = leaky_relu(&self.norm1.forward(x, s)?, RES_BLK_LEAKY_SLOPE)?;
        if let Some(pool) = &self.pool {
            r = pool.forward(&r)?;
        }
        let r = self.conv1.forward(&r)?;
        let r = leaky_relu(&self.norm2.forward(&r, s)?, RES_BLK_LEAKY_SLOPE)?;
        let r = self.conv2.forward(&r)?;

        let mut sc = if self.pool.is_some() {
            upsample_nearest2(x)?
        } else {
            x.clone()
        };
        if let Some(c) = &self.conv1x1 {
            sc = c.forward(&sc)?;
        }
        (r + sc)? * std::f64::consts::FRAC_1_SQRT_2
    }
}

/// Leaky `ReLU` with the given negative slope: `max(x, 0) + slope·min(x, 0)`.
pub fn leaky_relu(x: &Tensor, slope: f64) -> Result<Tensor> {
    let pos = x.relu()?;
    let neg = (x - &pos)?;
    pos + (neg * slope)?
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
    use candle_core::{DType, Device};
    use candle_nn::VarMap;

    fn ramp(shape: (usize, usize, usize), scale: f32) -> Tensor {
        let n = shape.0 * shape.1 * shape.2;
        let v: Vec<f32> = (0..n)
            .map(|i| ((i as f32 * 0.731).sin() * scale) + (i % 7) as f32 * 0.1)
            .collect();
        Tensor::from_vec(v, shape, &Device::Cpu).expect("shape matches the data length")
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
