//! Kokoro's acoustic decoder (`istftnet.py`'s `Decoder`): aligned text features, F0 and energy
//! curves and the acoustic half of the style vector in, 24 kHz audio out.
//!
//! The body ([`Decoder::body`]) halves F0/N to the frame rate with strided convolutions, runs
//! the `encode` block and four `decode` blocks (each fed again with the ASR residual and the
//! F0/N features; the last one upsamples ×2), and hands `[1, 512, 2F]` to the
//! [`Generator`], which produces `600·F` samples (25 ms per frame).

// candle's convention is `new(vb: VarBuilder)` by value (see `adain.rs`).
#![allow(clippy::needless_pass_by_value)]

use candle_core::{Module, Tensor, D};
use candle_nn::{Conv1d, Conv1dConfig, VarBuilder};

use super::adain::AdainResBlk1d;
use super::generator::{to_channel_major, to_time_major, Generator, GeneratorConfig};
use crate::cpu_kernels::CpuKernel;
use crate::rows::PassRows;

/// Width of the aligned text features (`asr`).
pub const ASR_DIM: usize = 512;
/// Width of the ASR residual re-injected before every `decode` block.
const ASR_RES_DIM: usize = 64;
/// Width of the `encode`/`decode` blocks.
const HIDDEN: usize = 1024;

/// What can go wrong running the decoder.
#[derive(Debug, thiserror::Error)]
pub enum DecoderError {
    /// An input tensor does not have the shape the decoder needs.
    #[error("decoder input `{tensor}` has shape {got:?}, expected {expected}")]
    InputShape {
        tensor: &'static str,
        got: Vec<usize>,
        expected: String,
    },
    /// A tensor operation failed (a missing or misshapen weight when loading).
    #[error("decoder tensor op: {0}")]
    Candle(#[from] candle_core::Error),
}

/// One segment's input to [`Decoder::body_batch_tm`], each tensor as [`Decoder::body_tm`]
/// takes it.
#[derive(Debug, Clone, Copy)]
pub struct BodyInput<'a> {
    /// `[1, 512, F]`.
    pub asr: &'a Tensor,
    /// `[1, 2F]`.
    pub f0: &'a Tensor,
    /// `[1, 2F]`.
    pub n: &'a Tensor,
    /// The acoustic half of the style row, `[1, style_dim]`.
    pub style: &'a Tensor,
}

/// `decoder`: the body plus the [`Generator`].
#[derive(Debug, Clone)]
pub struct Decoder {
    f0_conv: Conv1d,
    n_conv: Conv1d,
    encode: AdainResBlk1d,
    asr_res: Conv1d,
    decode: Vec<AdainResBlk1d>,
    generator: Generator,
    style_dim: usize,
}

impl Decoder {
    /// Switches the body's and the generator's convolutions to bfloat16 products where
    /// possible; returns how many switched.
    pub fn use_bf16(&mut self, kernel: CpuKernel) -> candle_core::Result<usize> {
        // int8 stays in the generator (see `cpu_kernels::int8`).
        let body = kernel.for_body();
        let mut n = self.encode.use_bf16(body)? + self.generator.use_bf16(kernel)?;
        for b in &mut self.decode {
            n += b.use_bf16(body)?;
        }
        Ok(n)
    }

    /// Kokoro-82M v1.0's decoder; `vb` points at `decoder`.
    pub fn new(vb: VarBuilder) -> Result<Self, DecoderError> {
        Self::with_config(&GeneratorConfig::default(), vb)
    }

    /// Decoder with explicit generator hyper-parameters; `vb` points at `decoder`.
    pub fn with_config(cfg: &GeneratorConfig, vb: VarBuilder) -> Result<Self, DecoderError> {
        let sd = cfg.style_dim;
        let half = Conv1dConfig {
            padding: 1,
            stride: 2,
            ..Conv1dConfig::default()
        };
        let block_in = HIDDEN + 2 + ASR_RES_DIM;
        let decode = (0..4)
            .map(|i| {
                let (out, up) = if i == 3 {
                    (cfg.istft.upsample_initial_channel, true)
                } else {
                    (HIDDEN, false)
                };
                AdainResBlk1d::new(block_in, out, sd, up, vb.pp(format!("decode.{i}")))
            })
            .collect::<candle_core::Result<Vec<_>>>()?;
        Ok(Self {
            f0_conv: candle_nn::conv1d(1, 1, 3, half, vb.pp("F0_conv"))?,
            n_conv: candle_nn::conv1d(1, 1, 3, half, vb.pp("N_conv"))?,
            encode: AdainResBlk1d::new(ASR_DIM + 2, HIDDEN, sd, false, vb.pp("encode"))?,
            asr_res: candle_nn::conv1d(
                ASR_DIM,
                ASR_RES_DIM,
                1,
                Conv1dConfig::default(),
                vb.pp("asr_res.0"),
            )?,
            decode,
            generator: Generator::new(cfg, vb.pp("generator"))?,
            style_dim: sd,
        })
    }

    /// The generator, for running its steps one by one.
    #[must_use]
    pub fn generator(&self) -> &Generator {
        &self.generator
    }

    /// Checks `asr` `[1, 512, F]`, `f0`/`n` `[1, 2F]`, `style` `[1, style_dim]`; returns `F`.
    fn check_inputs(
        &self,
        asr: &Tensor,
        f0: &Tensor,
        n: &Tensor,
        style: &Tensor,
    ) -> Result<usize, DecoderError> {
        let bad = |tensor: &'static str, t: &Tensor, expected: String| DecoderError::InputShape {
            tensor,
            got: t.dims().to_vec(),
            expected,
        };
        let frames = match asr.dims() {
            &[1, ASR_DIM, f] if f > 0 => f,
            _ => return Err(bad("asr", asr, format!("[1, {ASR_DIM}, F] with F > 0"))),
        };
        for (name, t) in [("f0", f0), ("n", n)] {
            if t.dims() != [1, 2 * frames] {
                return Err(bad(name, t, format!("[1, {}] (2·F)", 2 * frames)));
            }
        }
        if style.dims() != [1, self.style_dim] {
            return Err(bad("style", style, format!("[1, {}]", self.style_dim)));
        }
        Ok(frames)
    }

    /// Decoder body: → `[1, 512, 2F]`, the generator's input.
    pub fn body(
        &self,
        asr: &Tensor,
        f0: &Tensor,
        n: &Tensor,
        style: &Tensor,
    ) -> Result<Tensor, DecoderError> {
        Ok(to_channel_major(&self.body_tm(asr, f0, n, style)?)?)
    }

    /// Decoder body, time-major output `[2F, 512]` (what the generator runs on).
    pub fn body_tm(
        &self,
        asr: &Tensor,
        f0: &Tensor,
        n: &Tensor,
        style: &Tensor,
    ) -> Result<Tensor, DecoderError> {
        self.check_inputs(asr, f0, n, style)?;
        let (f0c, nc) = self.frame_rate_curves(f0, n)?;
        let (f0c, nc) = (to_time_major(&f0c)?, to_time_major(&nc)?);
        let x = Tensor::cat(&[&to_time_major(asr)?, &f0c, &nc], 1)?;
        let mut x = self.encode.forward_tm(&x, style)?;
        let asr_res = to_time_major(&self.asr_res.forward(asr)?)?;
        for block in &self.decode {
            // Every block up to and including the upsampling one gets the residual features.
            x = Tensor::cat(&[&x, &asr_res, &f0c, &nc], 1)?;
            x = block.forward_tm(&x, style)?;
        }
        Ok(x)
    }

    /// [`Self::body_tm`] for several segments at once → each item's `[2F_b, 512]`, what it
    /// gives alone up to the order of float sums. The items are padded to the longest and
    /// every block runs over the whole batch, each item normalised over its own frames
    /// ([`AdainResBlk1d::forward_batch_tm`]): on a GPU, one launch sequence per block for all
    /// the segments a scheduler starts together instead of one per segment. An item's bad
    /// input fails the whole call (the caller may then run the items alone, each with its own
    /// error).
    pub fn body_batch_tm(&self, items: &[BodyInput<'_>]) -> Result<Vec<Tensor>, DecoderError> {
        let frames = items
            .iter()
            .map(|i| self.check_inputs(i.asr, i.f0, i.n, i.style))
            .collect::<Result<Vec<_>, _>>()?;
        let Some(&longest) = frames.iter().max() else {
            return Ok(Vec::new());
        };
        let asr = pad_cat(items.iter().map(|i| i.asr), longest)?;
        // Zeros past each item's curve, as its strided convolution pads it alone.
        let (f0c, nc) = self.frame_rate_curves(
            &pad_cat(items.iter().map(|i| i.f0), 2 * longest)?,
            &pad_cat(items.iter().map(|i| i.n), 2 * longest)?,
        )?;
        let style = Tensor::cat(&items.iter().map(|i| i.style).collect::<Vec<_>>(), 0)?;
        let tm = |t: &Tensor| t.transpose(1, 2)?.contiguous();
        let (f0c, nc) = (tm(&f0c)?, tm(&nc)?);
        let doubled: Vec<usize> = frames.iter().map(|f| 2 * f).collect();
        let rows = PassRows::upload(
            &[(frames.clone(), longest), (doubled, 2 * longest)],
            asr.device(),
        )?;
        let (at_frames, at_double) = (rows.set(0)?, rows.set(1)?);
        let x = Tensor::cat(&[&tm(&asr)?, &f0c, &nc], 2)?;
        let mut x = self
            .encode
            .forward_batch_tm(&x, &style, at_frames, at_frames)?;
        let asr_res = tm(&self.asr_res.forward(&asr)?)?;
        let mut valid = at_frames;
        for block in &self.decode {
            x = Tensor::cat(&[&x, &asr_res, &f0c, &nc], 2)?;
            let out = if block.upsamples() { at_double } else { valid };
            x = block.forward_batch_tm(&x, &style, valid, out)?;
            valid = out;
        }
        Ok(frames
            .iter()
            .enumerate()
            .map(|(b, &f)| x.get(b)?.narrow(0, 0, 2 * f)?.contiguous())
            .collect::<candle_core::Result<Vec<_>>>()?)
    }

    /// F0 and N `[1, 2F]` through their strided convolutions: two `[1, 1, F]` curves.
    fn frame_rate_curves(&self, f0: &Tensor, n: &Tensor) -> candle_core::Result<(Tensor, Tensor)> {
        let f0c = self.f0_conv.forward(&f0.unsqueeze(1)?)?;
        let nc = self.n_conv.forward(&n.unsqueeze(1)?)?;
        Ok((f0c, nc))
    }

    /// The `encode` block's input `[1, 514, F]`: asr, then F0 and N at the frame rate.
    pub fn input_features(
        &self,
        asr: &Tensor,
        f0: &Tensor,
        n: &Tensor,
    ) -> Result<Tensor, DecoderError> {
        let (f0c, nc) = self.frame_rate_curves(f0, n)?;
        Ok(Tensor::cat(&[asr, &f0c, &nc], 1)?)
    }

    /// Only the `encode` block, for stage tests: `[1, 514, F]` (asr; F0c; Nc) → `[1, 1024, F]`.
    pub fn encode(&self, dec_in: &Tensor, style: &Tensor) -> Result<Tensor, DecoderError> {
        Ok(self.encode.forward(dec_in, style)?)
    }

    /// Whole decoder: `asr` `[1, 512, F]`, `f0`/`n` `[1, 2F]`, `style` `[1, 128]` (acoustic
    /// half) → audio `[600·F]`.
    pub fn forward(
        &self,
        asr: &Tensor,
        f0: &Tensor,
        n: &Tensor,
        style: &Tensor,
    ) -> Result<Tensor, DecoderError> {
        let x = self.body_tm(asr, f0, n, style)?;
        Ok(self.generator.forward_tm(&x, f0, style)?.squeeze(0)?)
    }
}

/// `[1, …, t_b]` tensors zero-padded on their last axis to `len` and concatenated: `[B, …, len]`.
fn pad_cat<'a>(items: impl Iterator<Item = &'a Tensor>, len: usize) -> candle_core::Result<Tensor> {
    let rows = items
        .map(|t| t.pad_with_zeros(D::Minus1, 0, len - t.dim(D::Minus1)?))
        .collect::<candle_core::Result<Vec<_>>>()?;
    Tensor::cat(&rows, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{DType, Device};

    /// Zero weights: every shape and the frame arithmetic, without the model.
    #[test]
    fn zero_weight_decoder_gives_600_samples_per_frame() {
        let dev = Device::Cpu;
        let dec = Decoder::new(VarBuilder::zeros(DType::F32, &dev)).expect("zeros");
        let frames = 3;
        let asr = Tensor::zeros((1, ASR_DIM, frames), DType::F32, &dev).expect("asr");
        let f0 = Tensor::full(150.0f32, (1, 2 * frames), &dev).expect("f0");
        let n = Tensor::zeros((1, 2 * frames), DType::F32, &dev).expect("n");
        let s = Tensor::zeros((1, 128), DType::F32, &dev).expect("s");
        let audio = dec.forward(&asr, &f0, &n, &s).expect("forward");
        assert_eq!(audio.dims(), &[600 * frames]);
    }

    #[test]
    fn rejects_mismatched_f0() {
        let dev = Device::Cpu;
        let dec = Decoder::new(VarBuilder::zeros(DType::F32, &dev)).expect("zeros");
        let asr = Tensor::zeros((1, ASR_DIM, 4), DType::F32, &dev).expect("asr");
        let f0 = Tensor::zeros((1, 7), DType::F32, &dev).expect("f0");
        let s = Tensor::zeros((1, 128), DType::F32, &dev).expect("s");
        let err = dec.forward(&asr, &f0, &f0, &s).expect_err("bad shape");
        assert!(matches!(err, DecoderError::InputShape { tensor: "f0", .. }));
    }
}
