//! The iSTFTNet generator: decoder features `[1, 512, 2F]` to the 22-channel spectrum
//! (`conv_post`) and then to audio.
//!
//! Steps, each a public method so tests can inject the oracle's tensors and streaming can run
//! them over windows later:
//! 1. [`Generator::harmonic_source`]: F0 → excitation signal ([`super::source`]).
//! 2. [`Generator::source_spectrum`]: its STFT, `har` `[1, 22, 120F+1]` ([`super::stft`]).
//! 3. [`Generator::stage`] ×2: `leaky(0.1) → ups.i (+ reflection pad after ups.1) +
//!    noise_res.i(noise_convs.i(har))`, then the mean of three [`AdaINResBlock1`].
//! 4. [`Generator::post`]: `leaky(0.01) → conv_post`.
//! 5. [`Generator::istft`]: exp/sin and the export's inverse STFT.
//!
//! Nearly all of the model's arithmetic happens in step 3 (dilated convolutions over 20F and
//! 120F+1 steps). Inside, the generator works on time-major `[T, C]` activations (the `_tm`
//! methods), where [`conv`]'s convolutions read their input without an im2col copy and each
//! `AdaIN` + Snake pair is one fused pass ([`AdaIN1d::forward_act_tm`]). The channel-major
//! methods (`[1, C, T]`, the reference's layout) wrap them for tests and callers.

// candle's convention is `new(cfg, vb: VarBuilder)` by value (see `adain.rs`).
#![allow(clippy::needless_pass_by_value)]

use candle_core::{Result, Tensor};
use candle_nn::VarBuilder;

use super::adain::{Activation, AdaIN1d, Snake};
use super::config::{IstftNetConfig, KokoroConfig};
use super::elementwise::{self, leaky_relu};
use super::source::SourceModule;
use super::stft::{self, InverseStft};
use crate::cpu_kernels::CpuKernel;

pub use conv::{Conv1d, ConvTranspose1d};

/// Negative slope before each upsampling stage.
const STAGE_LEAKY_SLOPE: f64 = 0.1;
/// Negative slope before `conv_post` (`F.leaky_relu` default).
const POST_LEAKY_SLOPE: f64 = 0.01;

/// The generator's hyper-parameters: `config.json`'s `istftnet` section plus the style width.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratorConfig {
    pub istft: IstftNetConfig,
    /// Width of the acoustic half of the style vector.
    pub style_dim: usize,
}

impl Default for GeneratorConfig {
    /// Kokoro-82M v1.0.
    fn default() -> Self {
        Self::from(&KokoroConfig::default())
    }
}

impl From<&KokoroConfig> for GeneratorConfig {
    fn from(cfg: &KokoroConfig) -> Self {
        Self {
            istft: cfg.istftnet.clone(),
            style_dim: cfg.style_dim,
        }
    }
}

/// Loads `alpha` `[1, C, 1]` named `name` under `vb` as a Snake activation.
fn snake(channels: usize, vb: &VarBuilder, name: &str) -> Result<Activation> {
    Ok(Activation::Snake(Snake::new(
        vb.get((1, channels, 1), name)?,
    )?))
}

/// Residual block of the generator (`AdaINResBlock1`): three dilated conv pairs, each
/// `x += conv2(snake(adain2(conv1(snake(adain1(x))))))`.
#[derive(Debug, Clone)]
pub struct AdaINResBlock1 {
    layers: Vec<ResLayer>,
}

#[derive(Debug, Clone)]
struct ResLayer {
    adain1: AdaIN1d,
    snake1: Activation,
    conv1: Conv1d,
    adain2: AdaIN1d,
    snake2: Activation,
    conv2: Conv1d,
}

impl AdaINResBlock1 {
    /// Switches the block's convolutions to bfloat16 products where possible; returns how
    /// many switched.
    pub fn use_bf16(&mut self, kernel: CpuKernel) -> Result<usize> {
        let mut n = 0;
        for l in &mut self.layers {
            n += usize::from(l.conv1.use_bf16(kernel)?) + usize::from(l.conv2.use_bf16(kernel)?);
        }
        Ok(n)
    }

    /// `vb` points at the block (`decoder.generator.resblocks.N` or `.noise_res.N`).
    pub fn new(
        channels: usize,
        kernel: usize,
        dilations: &[usize],
        style_dim: usize,
        vb: VarBuilder,
    ) -> Result<Self> {
        if dilations.is_empty() {
            candle_core::bail!("generator: a residual block without layers");
        }
        let layers = dilations
            .iter()
            .enumerate()
            .map(|(j, &d)| {
                Ok(ResLayer {
                    adain1: AdaIN1d::new(style_dim, channels, vb.pp(format!("adain1.{j}")))?,
                    snake1: snake(channels, &vb, &format!("alpha1.{j}"))?,
                    conv1: Conv1d::new(
                        channels,
                        channels,
                        kernel,
                        d * (kernel - 1) / 2,
                        d,
                        1,
                        vb.pp(format!("convs1.{j}")),
                    )?,
                    adain2: AdaIN1d::new(style_dim, channels, vb.pp(format!("adain2.{j}")))?,
                    snake2: snake(channels, &vb, &format!("alpha2.{j}"))?,
                    conv2: Conv1d::new(
                        channels,
                        channels,
                        kernel,
                        (kernel - 1) / 2,
                        1,
                        1,
                        vb.pp(format!("convs2.{j}")),
                    )?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self { layers })
    }

    /// `x` `[1, C, T]`, `s` `[1, style_dim]` → `[1, C, T]`.
    pub fn forward(&self, x: &Tensor, s: &Tensor) -> Result<Tensor> {
        to_channel_major(&self.forward_tm(&to_time_major(x)?, s)?)
    }

    /// Multiply-adds per time step of its convolutions.
    #[must_use]
    pub fn macs_per_step(&self) -> usize {
        self.layers
            .iter()
            .map(|l| l.conv1.macs_per_step() + l.conv2.macs_per_step())
            .sum()
    }

    /// [`Self::forward_tm`]'s intermediates, named (for `kokoro::parity`).
    pub(crate) fn forward_tm_parts(&self, x: &Tensor, s: &Tensor) -> Result<Vec<(String, Tensor)>> {
        let mut out = Vec::new();
        let mut x = x.clone();
        let t = x.dim(0)?;
        for (j, l) in self.layers.iter().enumerate() {
            let h = l.adain1.forward_act_tm(&x, s, &l.snake1, l.conv1.frame())?;
            out.push((format!("layer {j} adain1+snake"), h.clone()));
            let h = l.conv1.forward_tm_padded(&h, t, false, None)?;
            out.push((format!("layer {j} conv1"), h.clone()));
            let h = l.adain2.forward_act_tm(&h, s, &l.snake2, l.conv2.frame())?;
            out.push((format!("layer {j} adain2+snake"), h.clone()));
            x = l.conv2.forward_tm_padded(&h, t, true, Some(&x))?;
            out.push((format!("layer {j} conv2+residual"), x.clone()));
        }
        Ok(out)
    }

    /// Time-major: `x` `[T, C]` → `[T, C]`.
    pub fn forward_tm(&self, x: &Tensor, s: &Tensor) -> Result<Tensor> {
        let mut x = x.clone();
        let t = x.dim(0)?;
        for l in &self.layers {
            // Each intermediate is dropped as soon as the next exists (a shadowed binding
            // would live to the end of the iteration): at the last stage's length they are
            // tens of megabytes each, and this keeps the peak at the layer input, its output
            // and one intermediate.
            let a1 = l.adain1.forward_act_tm(&x, s, &l.snake1, l.conv1.frame())?;
            // conv1 feeds an instance norm, which cancels its bias exactly.
            let c1 = l.conv1.forward_tm_padded(&a1, t, false, None)?;
            drop(a1);
            let a2 = l
                .adain2
                .forward_act_tm(&c1, s, &l.snake2, l.conv2.frame())?;
            drop(c1);
            x = l.conv2.forward_tm_padded(&a2, t, true, Some(&x))?;
        }
        Ok(x)
    }
}

/// `decoder.generator`.
#[derive(Debug, Clone)]
pub struct Generator {
    m_source: SourceModule,
    noise_convs: Vec<Conv1d>,
    noise_res: Vec<AdaINResBlock1>,
    ups: Vec<ConvTranspose1d>,
    /// `resblocks[stage][kernel]`.
    resblocks: Vec<Vec<AdaINResBlock1>>,
    conv_post: Conv1d,
    istft: InverseStft,
    /// Each pass piece's share of the work ([`Self::piece_weights`]), computed once.
    weights: Vec<f64>,
    /// Captured batched passes (`BANTER_CUDA_GRAPHS=1`), shared by clones.
    #[cfg(feature = "cuda")]
    graphs: std::sync::Arc<graphs::Graphs>,
}

impl Generator {
    /// Switches every convolution to bfloat16 products where possible (see
    /// [`crate::cpu_kernels`]); returns how many switched.
    pub fn use_bf16(&mut self, kernel: CpuKernel) -> Result<usize> {
        // Only the residual blocks run in int8 (`cpu_kernels::int8`): the output spectrum, the
        // harmonic source's entry and the upsampling stay off it.
        let mut n = usize::from(self.conv_post.use_bf16(kernel.without_int8())?);
        for c in &mut self.noise_convs {
            n += usize::from(c.use_bf16(kernel.without_int8())?);
        }
        for u in &mut self.ups {
            n += usize::from(u.use_bf16(kernel.without_int8())?);
        }
        for b in self
            .noise_res
            .iter_mut()
            .chain(self.resblocks.iter_mut().flatten())
        {
            n += b.use_bf16(kernel)?;
        }
        Ok(n)
    }

    /// `vb` points at `decoder.generator`.
    pub fn new(cfg: &GeneratorConfig, vb: VarBuilder) -> Result<Self> {
        let stages = cfg.istft.upsample_rates.len();
        let spec_channels = cfg.istft.gen_istft_n_fft + 2;
        let mut noise_convs = Vec::with_capacity(stages);
        let mut noise_res = Vec::with_capacity(stages);
        let mut ups = Vec::with_capacity(stages);
        let mut resblocks = Vec::with_capacity(stages);
        let mut ch = cfg.istft.upsample_initial_channel;
        for (i, (&u, &k)) in cfg
            .istft
            .upsample_rates
            .iter()
            .zip(&cfg.istft.upsample_kernel_sizes)
            .enumerate()
        {
            let c_out = ch / 2;
            ups.push(ConvTranspose1d::new(
                ch,
                c_out,
                k,
                u,
                (k - u) / 2,
                vb.pp(format!("ups.{i}")),
            )?);
            let (nk, nconv) = if i + 1 < stages {
                // Brings the 120F+1 spectrum frames down to this stage's rate.
                let stride: usize = cfg.istft.upsample_rates[i + 1..].iter().product();
                let conv = Conv1d::new(
                    spec_channels,
                    c_out,
                    2 * stride,
                    stride.div_ceil(2),
                    1,
                    stride,
                    vb.pp(format!("noise_convs.{i}")),
                )?;
                (7, conv)
            } else {
                let conv = Conv1d::new(
                    spec_channels,
                    c_out,
                    1,
                    0,
                    1,
                    1,
                    vb.pp(format!("noise_convs.{i}")),
                )?;
                (11, conv)
            };
            noise_convs.push(nconv);
            noise_res.push(AdaINResBlock1::new(
                c_out,
                nk,
                &[1, 3, 5],
                cfg.style_dim,
                vb.pp(format!("noise_res.{i}")),
            )?);
            let blocks = cfg
                .istft
                .resblock_kernel_sizes
                .iter()
                .zip(&cfg.istft.resblock_dilation_sizes)
                .enumerate()
                .map(|(j, (&rk, rd))| {
                    let idx = i * cfg.istft.resblock_kernel_sizes.len() + j;
                    AdaINResBlock1::new(
                        c_out,
                        rk,
                        rd,
                        cfg.style_dim,
                        vb.pp(format!("resblocks.{idx}")),
                    )
                })
                .collect::<Result<Vec<_>>>()?;
            resblocks.push(blocks);
            ch = c_out;
        }
        let conv_post = Conv1d::new(ch, spec_channels, 7, 3, 1, 1, vb.pp("conv_post"))?;
        let mut generator = Self {
            m_source: SourceModule::new(vb.pp("m_source"))?,
            noise_convs,
            noise_res,
            ups,
            resblocks,
            conv_post,
            istft: InverseStft::new(vb.device())?,
            weights: Vec::new(),
            #[cfg(feature = "cuda")]
            graphs: std::sync::Arc::default(),
        };
        generator.weights = generator.compute_piece_weights();
        Ok(generator)
    }

    /// Number of upsampling stages.
    #[must_use]
    pub fn stages(&self) -> usize {
        self.ups.len()
    }

    /// Step 1: F0 `[1, 2F]` (Hz) → harmonic source `[1, 600F]`.
    pub fn harmonic_source(&self, f0: &Tensor) -> Result<Tensor> {
        self.m_source.forward(f0)
    }

    /// Step 2: harmonic source `[1, 600F]` → `har` `[1, 22, 120F+1]` (magnitude; phase).
    pub fn source_spectrum(&self, har_source: &Tensor) -> Result<Tensor> {
        stft::source_spectrum(har_source)
    }

    /// Step 3, stage `i`: `x` `[1, C, T]`, `har` `[1, 22, 120F+1]` → `[1, C/2, T']`.
    pub fn stage(&self, i: usize, x: &Tensor, har: &Tensor, s: &Tensor) -> Result<Tensor> {
        let y = self.stage_tm(i, &to_time_major(x)?, &to_time_major(har)?, s)?;
        to_channel_major(&y)
    }

    /// Time-major step 3, stage `i`: `x` `[T, C]`, `har` `[120F+1, 22]` → `[T', C/2]`.
    pub fn stage_tm(&self, i: usize, x: &Tensor, har: &Tensor, s: &Tensor) -> Result<Tensor> {
        let input = self.stage_input_tm(i, x, har, s)?;
        let mut sum = None;
        for j in 0..self.blocks_per_stage() {
            sum = Some(self.stage_block_tm(i, j, &input, sum, s)?);
        }
        self.stage_output(sum)
    }

    /// Residual blocks per stage (their outputs are averaged).
    #[must_use]
    pub fn blocks_per_stage(&self) -> usize {
        self.resblocks.first().map_or(0, Vec::len)
    }

    /// Stage `i` up to its residual blocks: `leaky(0.1) → ups.i (+ reflection pad after the
    /// last) + noise_res.i(noise_convs.i(har))`.
    fn stage_input_tm(&self, i: usize, x: &Tensor, har: &Tensor, s: &Tensor) -> Result<Tensor> {
        // The noise branch first: its residual block peaks at several buffers of the stage's
        // size, and the upsampled `x` would be one more.
        let x_source = self.noise_res[i].forward_tm(&self.noise_convs[i].forward_tm(har)?, s)?;
        let x = leaky_relu(x, STAGE_LEAKY_SLOPE)?;
        let up = if i + 1 == self.stages() {
            self.ups[i].forward_tm_reflect_top1(&x)?
        } else {
            self.ups[i].forward_tm(&x)?
        };
        drop(x);
        // `up` is fresh: the branch is added into it in place (`up + x_source`, as before).
        epilogue::finish(&up, None, Some(&x_source))
    }

    /// [`Self::stage_input_tm`]'s intermediates, named (for `kokoro::parity`).
    pub(crate) fn stage_input_parts(
        &self,
        i: usize,
        x: &Tensor,
        har: &Tensor,
        s: &Tensor,
    ) -> Result<Vec<(String, Tensor)>> {
        let mut out = Vec::new();
        let noise = self.noise_convs[i].forward_tm(har)?;
        out.push(("noise_conv".to_owned(), noise.clone()));
        for (name, t) in self.noise_res[i].forward_tm_parts(&noise, s)? {
            out.push((format!("noise_res {name}"), t));
        }
        let up = self.ups[i].forward_tm(&leaky_relu(x, STAGE_LEAKY_SLOPE)?)?;
        out.push(("ups".to_owned(), up.clone()));
        if i + 1 == self.stages() {
            out.push(("ups reflection pad".to_owned(), reflection_pad_top1(&up)?));
        }
        out.push(("stage input".to_owned(), self.stage_input_tm(i, x, har, s)?));
        Ok(out)
    }

    /// Adds residual block `j` of stage `i`, run on the stage's `input`, to the running `sum`.
    fn stage_block_tm(
        &self,
        i: usize,
        j: usize,
        input: &Tensor,
        sum: Option<Tensor>,
        s: &Tensor,
    ) -> Result<Tensor> {
        let y = self.resblocks[i][j].forward_tm(input, s)?;
        match sum {
            None => Ok(y),
            // `y` is the block's fresh output (a block has layers, so it is not `input`):
            // adding the sum into it in place needs no third buffer of the stage's size.
            Some(sum) => epilogue::finish(&y, None, Some(&sum)),
        }
    }

    /// The mean of a stage's residual blocks, from their sum.
    fn stage_output(&self, sum: Option<Tensor>) -> Result<Tensor> {
        match sum {
            Some(sum) => elementwise::scale(&sum, 1.0 / self.blocks_per_stage() as f64),
            None => candle_core::bail!("generator: a stage without residual blocks"),
        }
    }

    /// Step 4: last stage output `[1, 128, 120F+1]` → `conv_post` `[1, 22, 120F+1]`.
    pub fn post(&self, x: &Tensor) -> Result<Tensor> {
        to_channel_major(&self.post_tm(&to_time_major(x)?)?)
    }

    /// Time-major step 4: `[120F+1, 128]` → `[120F+1, 22]`.
    pub fn post_tm(&self, x: &Tensor) -> Result<Tensor> {
        self.conv_post.forward_tm(&leaky_relu(x, POST_LEAKY_SLOPE)?)
    }

    /// Time-major steps 3–4: `x` `[2F, 512]`, `har` `[120F+1, 22]` → `conv_post` `[120F+1, 22]`.
    pub fn body_tm(&self, x: &Tensor, har: &Tensor, s: &Tensor) -> Result<Tensor> {
        let mut x = x.clone();
        for i in 0..self.stages() {
            x = self.stage_tm(i, &x, har, s)?;
        }
        self.post_tm(&x)
    }

    /// Steps 3–4 with a given `har`: decoder output `[1, 512, 2F]` → `conv_post` `[1, 22, 120F+1]`.
    pub fn body(&self, x: &Tensor, har: &Tensor, s: &Tensor) -> Result<Tensor> {
        to_channel_major(&self.body_tm(&to_time_major(x)?, &to_time_major(har)?, s)?)
    }

    /// Step 5: `conv_post` `[1, 22, 120F+1]` → audio `[1, 600F]`.
    pub fn istft(&self, conv_post: &Tensor) -> Result<Tensor> {
        self.istft.forward(conv_post)
    }

    /// Time-major step 5: `conv_post` `[120F+1, 22]` → audio `[1, 600F]`.
    pub fn istft_tm(&self, conv_post: &Tensor) -> Result<Tensor> {
        self.istft.forward_tm(conv_post)
    }

    /// All steps: decoder output `[1, 512, 2F]`, F0 `[1, 2F]`, style `[1, 128]` → `[1, 600F]`.
    pub fn forward(&self, x: &Tensor, f0: &Tensor, s: &Tensor) -> Result<Tensor> {
        self.forward_tm(&to_time_major(x)?, f0, s)
    }

    /// All steps from a time-major decoder output `[2F, 512]`: → audio `[1, 600F]`.
    pub fn forward_tm(&self, x: &Tensor, f0: &Tensor, s: &Tensor) -> Result<Tensor> {
        let har = self.source_spectrum(&self.harmonic_source(f0)?)?;
        let post = self.body_tm(x, &to_time_major(&har)?, s)?;
        self.istft.forward_tm(&post)
    }
}

/// `[1, C, T]` → contiguous `[T, C]`.
pub fn to_time_major(x: &Tensor) -> Result<Tensor> {
    x.squeeze(0)?.t()?.contiguous()
}

/// `[T, C]` → contiguous `[1, C, T]`.
pub fn to_channel_major(x: &Tensor) -> Result<Tensor> {
    x.t()?.contiguous()?.unsqueeze(0)
}

/// Time-major `nn.ReflectionPad1d((1, 0))`: prepend row 1 to `[T, C]`.
pub fn reflection_pad_top1(x: &Tensor) -> Result<Tensor> {
    Tensor::cat(&[&x.narrow(0, 1, 1)?, x], 0)
}

pub mod batch;
pub mod conv;
mod epilogue;
#[cfg(feature = "cuda")]
pub mod graphs;
pub mod pass;
pub mod shapes;
mod unroll;

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    fn ramp(shape: (usize, usize, usize), scale: f32) -> Tensor {
        let n = shape.0 * shape.1 * shape.2;
        let v: Vec<f32> = (0..n)
            .map(|i| ((i as f32 * 0.377).sin() * scale) + (i % 5) as f32 * 0.05)
            .collect();
        Tensor::from_vec(v, shape, &Device::Cpu).expect("shape matches the data length")
    }

    /// Times the pieces of one resblock layer at stage-1 size (128 × 17 401).
    #[test]
    #[ignore = "timing report, run explicitly"]
    fn res_layer_piece_timing() {
        use candle_core::DType;
        use std::time::Instant;
        let (c, t) = (128, 17_401);
        let vb = VarBuilder::zeros(DType::F32, &Device::Cpu);
        let adain = AdaIN1d::new(128, c, vb.pp("a")).expect("adain");
        let snake = Activation::Snake(
            Snake::new(Tensor::ones((1, c, 1), DType::F32, &Device::Cpu).expect("a"))
                .expect("snake"),
        );
        let x = ramp((1, c, t), 1.0);
        let s = Tensor::zeros((1, 128), DType::F32, &Device::Cpu).expect("s");
        let time = |name: &str, f: &dyn Fn() -> Tensor| {
            let _ = f();
            let t0 = Instant::now();
            let c0 = conv::process_cpu_seconds();
            for _ in 0..10 {
                let _ = f();
            }
            eprintln!(
                "{name}: {:.2} ms wall, {:.2} ms cpu",
                t0.elapsed().as_secs_f64() * 100.0,
                (conv::process_cpu_seconds() - c0) * 100.0
            );
        };
        time("adain (composed)", &|| {
            let (g, b) = adain.style_affine(&s).expect("affine");
            crate::adain::instance_norm(&x)
                .and_then(|n| n.broadcast_mul(&g))
                .and_then(|n| n.broadcast_add(&b))
                .expect("adain")
        });
        time("snake (composed)", &|| snake.forward(&x).expect("snake"));
        time("adain+snake (fused)", &|| {
            adain.forward_act(&x, &s, &snake).expect("fused")
        });
        let xt = to_time_major(&x).expect("tm");
        time("adain+snake (fused, time-major, padded)", &|| {
            adain
                .forward_act_tm(&xt, &s, &snake, (25, 25))
                .expect("fused")
        });
        time("sin", &|| x.sin().expect("sin"));
        time("add", &|| (&x + &x).expect("add"));
        time("leaky", &|| leaky_relu(&x, 0.1).expect("leaky"));
        let w = ramp((c, c, 11), 0.01);
        let conv = Conv1d::from_tensors(&w, None, 25, 5, 1).expect("conv");
        let xp = xt.pad_with_zeros(0, 25, 25).expect("pad");
        time("conv k11 d5 (time-major)", &|| {
            conv.forward_tm_padded(&xp, t, false, None).expect("conv")
        });
        let conv = Conv1d::from_tensors(&w, None, 5, 1, 1).expect("conv");
        let xp = xt.pad_with_zeros(0, 5, 5).expect("pad");
        time("conv k11 d1 (time-major)", &|| {
            conv.forward_tm_padded(&xp, t, false, None).expect("conv")
        });
    }

    #[test]
    fn reflection_pad_and_leaky() {
        let x = Tensor::new(&[[[1.0f32, -2.0, 3.0]]], &Device::Cpu).expect("x");
        let p = to_time_major(&x)
            .and_then(|x| reflection_pad_top1(&x))
            .and_then(|x| to_channel_major(&x))
            .expect("pad");
        assert_eq!(
            p.to_vec3::<f32>().expect("v")[0][0],
            vec![-2.0, 1.0, -2.0, 3.0]
        );
        let l = leaky_relu(&x, 0.1).expect("leaky");
        assert_eq!(l.to_vec3::<f32>().expect("v")[0][0], vec![1.0, -0.2, 3.0]);
    }
}
