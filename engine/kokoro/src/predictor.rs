//! The prosody predictor (`predictor.*`): how long each phoneme lasts, and the pitch (F0) and
//! energy (N) curves of the utterance.
//!
//! Reference: `ProsodyPredictor` and `DurationEncoder` in kokoro 0.9.4 `modules.py`, driven by
//! `KModel.forward_with_tokens` in `model.py`. The steps, at batch 1 (`T` tokens, `F` frames):
//!
//! 1. [`DurationEncoder`]: `[d_en; s]` through 3 × (`BiLSTM` → [`AdaLayerNorm`] → concat `s`) →
//!    `d` `[T, 640]`, with `s` the predictor half of the style vector.
//! 2. [`ProsodyPredictor::duration_logits`] and [`durations`]: `BiLSTM` → linear to 50 bins →
//!    sigmoid → sum → ÷ speed → round half to even → at least 1 frame per token.
//! 3. [`expand`]: repeat each token's column by its duration (the reference multiplies by a
//!    one-hot alignment matrix; selecting columns gives the same values without the `T×F` matmul).
//! 4. [`ProsodyPredictor::f0_n`]: the `shared` `BiLSTM` over frames, then the F0 and N stacks of
//!    [`AdainResBlk1d`] (the second one upsamples ×2) and a 1×1 projection each → `[1, 2F]`.

// candle's convention is `new(cfg, vb: VarBuilder)`; the builder is cheap to clone and the
// by-value signature keeps call sites as `Block::new(.., vb.pp("name"))`.
#![allow(clippy::needless_pass_by_value)]

use candle_core::{DType, Module, Result, Tensor, D};
use candle_nn::{Conv1d, Conv1dConfig, VarBuilder};

use super::dense::Dense;

use super::adain::AdainResBlk1d;
use super::config::KokoroConfig;
use super::lstm::BiLstm;
use crate::cpu_kernels::CpuKernel;
use crate::rows::PassRows;

/// Epsilon of the duration encoder's `LayerNorm`.
const LAYER_NORM_EPS: f64 = 1e-5;

/// `LayerNorm` over channels without its own affine, modulated by the style:
/// `(1 + γ)·LN(x) + β` with `[γ; β] = fc(s)` (`predictor.text_encoder.lstms.{1,3,5}`).
#[derive(Debug, Clone)]
pub struct AdaLayerNorm {
    fc: Dense,
    channels: usize,
}

impl AdaLayerNorm {
    pub fn new(style_dim: usize, channels: usize, vb: VarBuilder) -> Result<Self> {
        let fc = Dense::new(style_dim, 2 * channels, vb.pp("fc"))?;
        Ok(Self { fc, channels })
    }

    /// `x` `[T, C]`, `s` `[1, style_dim]` → `[T, C]`.
    pub fn forward(&self, x: &Tensor, s: &Tensor) -> Result<Tensor> {
        let h = self.fc.forward(s)?.squeeze(0)?;
        // (1+γ)·LN(x) + β is a LayerNorm whose affine weight is 1+γ and bias is β.
        let weight = (h.narrow(0, 0, self.channels)? + 1.0)?;
        let bias = h.narrow(0, self.channels, self.channels)?;
        candle_nn::ops::layer_norm(&x.contiguous()?, &weight, &bias, LAYER_NORM_EPS as f32)
    }

    /// `x` `[B, T, C]`, `s` `[B, style_dim]` → `[B, T, C]`, each item with its own style.
    pub fn forward_batch(&self, x: &Tensor, s: &Tensor) -> Result<Tensor> {
        let h = self.fc.forward(s)?.unsqueeze(1)?;
        let weight = (h.narrow(2, 0, self.channels)? + 1.0)?;
        let bias = h.narrow(2, self.channels, self.channels)?;
        let ones = Tensor::ones(self.channels, x.dtype(), x.device())?;
        let zeros = ones.zeros_like()?;
        let norm =
            candle_nn::ops::layer_norm(&x.contiguous()?, &ones, &zeros, LAYER_NORM_EPS as f32)?;
        norm.broadcast_mul(&weight)?.broadcast_add(&bias)
    }
}

/// `predictor.text_encoder`: the stack that turns ALBERT features into duration features.
#[derive(Debug, Clone)]
pub struct DurationEncoder {
    lstms: Vec<BiLstm>,
    norms: Vec<AdaLayerNorm>,
}

impl DurationEncoder {
    /// `vb` points at `predictor.text_encoder`; LSTMs are at even indices of `lstms`, norms at odd.
    pub fn new(cfg: &KokoroConfig, vb: VarBuilder) -> Result<Self> {
        let (d, sty) = (cfg.hidden_dim, cfg.style_dim);
        let vb = vb.pp("lstms");
        let mut lstms = Vec::with_capacity(cfg.n_layer);
        let mut norms = Vec::with_capacity(cfg.n_layer);
        for layer in 0..cfg.n_layer {
            lstms.push(BiLstm::new(d + sty, d / 2, vb.pp(2 * layer))?);
            norms.push(AdaLayerNorm::new(sty, d, vb.pp(2 * layer + 1))?);
        }
        Ok(Self { lstms, norms })
    }

    /// `d_en` `[T, hidden]`, `s` `[1, style_dim]` → `d` `[T, hidden + style_dim]`.
    pub fn forward(&self, d_en: &Tensor, s: &Tensor) -> Result<Tensor> {
        let (t, _) = d_en.dims2()?;
        let s_rows = s.broadcast_as((t, s.dim(1)?))?;
        let mut x = Tensor::cat(&[d_en, &s_rows], 1)?;
        for (lstm, norm) in self.lstms.iter().zip(&self.norms) {
            let y = norm.forward(&lstm.forward(&x)?, s)?;
            x = Tensor::cat(&[&y, &s_rows], 1)?;
        }
        Ok(x)
    }

    /// [`Self::forward`] for a padded batch: `d_en` `[B, T, hidden]`, `s` `[B, style_dim]`,
    /// item `b` valid for `lengths[b]` rows → `[B, T, hidden + style_dim]` (padding rows of the
    /// normalised half zero, as the reference's masks leave them).
    pub fn forward_batch(&self, d_en: &Tensor, s: &Tensor, lengths: &[usize]) -> Result<Tensor> {
        let (b, t, _) = d_en.dims3()?;
        let s_rows = s
            .unsqueeze(1)?
            .broadcast_as((b, t, s.dim(1)?))?
            .contiguous()?;
        let mask = super::lstm::valid_mask(lengths, t, d_en.device())?;
        let mut x = Tensor::cat(&[d_en, &s_rows], 2)?;
        for (lstm, norm) in self.lstms.iter().zip(&self.norms) {
            let y = norm
                .forward_batch(&lstm.forward_batch(&x, lengths)?, s)?
                .broadcast_mul(&mask)?;
            x = Tensor::cat(&[&y, &s_rows], 2)?;
        }
        Ok(x)
    }
}

/// `predictor`: duration encoder, duration head and the F0/N branches.
#[derive(Debug, Clone)]
pub struct ProsodyPredictor {
    text_encoder: DurationEncoder,
    lstm: BiLstm,
    duration_proj: Dense,
    shared: BiLstm,
    f0: Vec<AdainResBlk1d>,
    n: Vec<AdainResBlk1d>,
    f0_proj: Conv1d,
    n_proj: Conv1d,
}

impl ProsodyPredictor {
    /// Switches the F0 and N branches' convolutions to bfloat16 where the CPU can; returns
    /// how many switched.
    pub fn use_bf16(&mut self, kernel: CpuKernel) -> Result<usize> {
        let mut n = 0;
        for b in self.f0.iter_mut().chain(&mut self.n) {
            n += b.use_bf16(kernel)?;
        }
        Ok(n)
    }

    /// `vb` points at `predictor`.
    pub fn new(cfg: &KokoroConfig, vb: VarBuilder) -> Result<Self> {
        let (d, sty) = (cfg.hidden_dim, cfg.style_dim);
        let branch = |name: &str| -> Result<Vec<AdainResBlk1d>> {
            let vb = vb.pp(name);
            Ok(vec![
                AdainResBlk1d::new(d, d, sty, false, vb.pp(0))?,
                AdainResBlk1d::new(d, d / 2, sty, true, vb.pp(1))?,
                AdainResBlk1d::new(d / 2, d / 2, sty, false, vb.pp(2))?,
            ])
        };
        let proj =
            |name: &str| candle_nn::conv1d(d / 2, 1, 1, Conv1dConfig::default(), vb.pp(name));
        Ok(Self {
            text_encoder: DurationEncoder::new(cfg, vb.pp("text_encoder"))?,
            lstm: BiLstm::new(d + sty, d / 2, vb.pp("lstm"))?,
            duration_proj: Dense::new(d, cfg.max_dur, vb.pp("duration_proj").pp("linear_layer"))?,
            shared: BiLstm::new(d + sty, d / 2, vb.pp("shared"))?,
            f0: branch("F0")?,
            n: branch("N")?,
            f0_proj: proj("F0_proj")?,
            n_proj: proj("N_proj")?,
        })
    }

    /// Step 1: `d_en` `[T, hidden]`, `s` `[1, style_dim]` → `d` `[T, hidden + style_dim]`.
    pub fn encode_durations(&self, d_en: &Tensor, s: &Tensor) -> Result<Tensor> {
        self.text_encoder.forward(d_en, s)
    }

    /// Step 2a: `d` `[T, hidden + style_dim]` → per-token logits over the duration bins `[T, 50]`.
    pub fn duration_logits(&self, d: &Tensor) -> Result<Tensor> {
        self.duration_proj.forward(&self.lstm.forward(d)?)
    }

    /// Step 1 for a padded batch (see [`DurationEncoder::forward_batch`]).
    pub fn encode_durations_batch(
        &self,
        d_en: &Tensor,
        s: &Tensor,
        lengths: &[usize],
    ) -> Result<Tensor> {
        self.text_encoder.forward_batch(d_en, s, lengths)
    }

    /// Step 2a for a padded batch: `d` `[B, T, hidden + style_dim]` → `[B, T, 50]`.
    pub fn duration_logits_batch(&self, d: &Tensor, lengths: &[usize]) -> Result<Tensor> {
        self.duration_proj
            .forward(&self.lstm.forward_batch(d, lengths)?)
    }

    /// Step 4a for several utterances at once: each `[1, hidden + style_dim, F_b]` →
    /// `[1, hidden, F_b]`, the frames padded to the longest inside.
    pub fn shared_lstm_batch(&self, ens: &[Tensor]) -> Result<Vec<Tensor>> {
        let (out, lengths) = self.shared_lstm_padded(ens)?;
        lengths
            .iter()
            .enumerate()
            .map(|(b, &len)| {
                out.get(b)?
                    .narrow(0, 0, len)?
                    .t()?
                    .unsqueeze(0)?
                    .contiguous()
            })
            .collect()
    }

    /// Step 4a on a padded batch: the `shared` output time-major `[B, F_max, hidden]` (item
    /// `b` valid for its first `F_b` rows) and each item's `F_b`.
    fn shared_lstm_padded(&self, ens: &[Tensor]) -> Result<(Tensor, Vec<usize>)> {
        let rows = ens
            .iter()
            .map(|en| en.squeeze(0)?.t())
            .collect::<Result<Vec<_>>>()?;
        let lengths = rows.iter().map(|r| r.dim(0)).collect::<Result<Vec<_>>>()?;
        let longest = lengths.iter().copied().max().unwrap_or(0);
        let padded = rows
            .iter()
            .zip(&lengths)
            .map(|(r, &len)| r.pad_with_zeros(0, 0, longest - len))
            .collect::<Result<Vec<_>>>()?;
        let out = self
            .shared
            .forward_batch(&Tensor::stack(&padded, 0)?, &lengths)?;
        Ok((out, lengths))
    }

    /// Steps 4a and 4b for several utterances at once: `ens` as for
    /// [`Self::shared_lstm_batch`], `s` `[B, style_dim]` → each item's `(F0, N)`, `[1, 2F_b]`
    /// each, as [`Self::f0_n_branches`] computes them alone up to the order of float sums.
    /// The branches' residual blocks run over the padded batch
    /// ([`AdainResBlk1d::forward_batch_tm`]): on a GPU, one launch sequence per block for
    /// every segment instead of one per segment.
    pub fn f0_n_batch(&self, ens: &[Tensor], s: &Tensor) -> Result<Vec<(Tensor, Tensor)>> {
        let (shared, lengths) = self.shared_lstm_padded(ens)?;
        let frames = shared.dim(1)?;
        let doubled: Vec<usize> = lengths.iter().map(|f| 2 * f).collect();
        let rows = PassRows::upload(
            &[(lengths.clone(), frames), (doubled.clone(), 2 * frames)],
            shared.device(),
        )?;
        let (at_frames, at_double) = (rows.set(0)?, rows.set(1)?);
        let run = |blocks: &[AdainResBlk1d], proj: &Conv1d| -> Result<Tensor> {
            let mut y = shared.clone();
            let mut valid = at_frames;
            for block in blocks {
                let out = if block.upsamples() { at_double } else { valid };
                y = block.forward_batch_tm(&y, s, valid, out)?;
                valid = out;
            }
            proj.forward(&y.transpose(1, 2)?.contiguous()?)?.squeeze(1)
        };
        let (f0, n) = (run(&self.f0, &self.f0_proj)?, run(&self.n, &self.n_proj)?);
        doubled
            .iter()
            .enumerate()
            .map(|(b, &len)| {
                Ok((
                    f0.narrow(0, b, 1)?.narrow(1, 0, len)?,
                    n.narrow(0, b, 1)?.narrow(1, 0, len)?,
                ))
            })
            .collect()
    }

    /// Step 4: `en` `[1, hidden + style_dim, F]` (frame-expanded `d`), `s` `[1, style_dim]` →
    /// `(F0, N)`, each `[1, 2F]`, plus the `shared` LSTM output.
    pub fn f0_n(&self, en: &Tensor, s: &Tensor) -> Result<F0N> {
        let shared = self.shared_lstm(en)?;
        let (f0, n) = self.f0_n_branches(&shared, s)?;
        Ok(F0N { f0, n, shared })
    }

    /// Step 4a: the `shared` `BiLSTM` over frames: `[1, hidden + style_dim, F]` → `[1, hidden, F]`.
    pub fn shared_lstm(&self, en: &Tensor) -> Result<Tensor> {
        let x = self.shared.forward(&en.squeeze(0)?.t()?.contiguous()?)?;
        x.t()?.unsqueeze(0)?.contiguous()
    }

    /// Step 4b: the F0 and N stacks on the `shared` output `[1, hidden, F]` → two `[1, 2F]`.
    pub fn f0_n_branches(&self, shared: &Tensor, s: &Tensor) -> Result<(Tensor, Tensor)> {
        let run = |blocks: &[AdainResBlk1d], proj: &Conv1d| -> Result<Tensor> {
            let mut y = shared.clone();
            for block in blocks {
                y = block.forward(&y, s)?;
            }
            proj.forward(&y)?.squeeze(1)
        };
        Ok((run(&self.f0, &self.f0_proj)?, run(&self.n, &self.n_proj)?))
    }
}

/// Output of [`ProsodyPredictor::f0_n`].
#[derive(Debug, Clone)]
pub struct F0N {
    /// Pitch in Hz, `[1, 2F]` (0 or below means unvoiced).
    pub f0: Tensor,
    /// Energy, `[1, 2F]`.
    pub n: Tensor,
    /// The `shared` `BiLSTM` output `[1, hidden, F]` (kept for stage tests).
    pub shared: Tensor,
}

/// Per-token durations from the logits.
#[derive(Debug, Clone, PartialEq)]
pub struct Durations {
    /// Σ sigmoid(logits) ÷ speed, before rounding: `[T]`.
    pub float: Vec<f32>,
    /// Rounded half to even, at least 1: frames per token, `[T]`.
    pub frames: Vec<u32>,
}

/// Step 2b: `logits` `[T, bins]` → durations in frames (the reference's `pred_dur`).
pub fn durations(logits: &Tensor, speed: f32) -> Result<Durations> {
    let sum = candle_nn::ops::sigmoid(logits)?
        .sum(D::Minus1)?
        .to_dtype(DType::F32)?
        .to_vec1::<f32>()?;
    // A true f32 division, like the graph's Div (candle's `tensor / scalar` multiplies by the
    // reciprocal, which can differ in the last bit and flip a rounding at .5).
    let float: Vec<f32> = sum.iter().map(|&x| x / speed).collect();
    let frames = float.iter().map(|&x| round_duration(x)).collect();
    Ok(Durations { float, frames })
}

/// `round` (half to even, like `torch.round`) then `clamp(min=1)`.
fn round_duration(x: f32) -> u32 {
    let r = x.round_ties_even();
    if r.is_nan() || r < 1.0 {
        1
    } else {
        // Saturating float→int cast: a huge value cannot wrap.
        r as u32
    }
}

/// Index of the token each output frame belongs to: token `i` repeated `frames[i]` times.
#[must_use]
pub fn frame_tokens(frames: &[u32]) -> Vec<u32> {
    frames
        .iter()
        .zip(0u32..)
        .flat_map(|(&n, i)| std::iter::repeat_n(i, n as usize))
        .collect()
}

/// Step 3: `x` `[1, C, T]` → `[1, C, F]`, each token's column repeated by its duration; equal to
/// `x · aln` with the reference's one-hot alignment `aln` `[T, F]`.
pub fn expand(x: &Tensor, frames: &[u32]) -> Result<Tensor> {
    let (_, _, t) = x.dims3()?;
    if frames.len() != t {
        candle_core::bail!("{} durations for {t} tokens", frames.len());
    }
    let index = frame_tokens(frames);
    let index = Tensor::from_vec(
        index,
        frames.iter().map(|&n| n as usize).sum::<usize>(),
        x.device(),
    )?;
    x.contiguous()?.index_select(&index, 2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    #[test]
    fn rounding_is_half_to_even_with_floor_one() {
        let got: Vec<u32> = [0.2f32, 0.5, 1.5, 2.5, 2.500_001, 3.49, f32::NAN, -4.0]
            .iter()
            .map(|&x| round_duration(x))
            .collect();
        assert_eq!(got, vec![1, 1, 2, 2, 3, 3, 1, 1]);
    }

    #[test]
    fn expand_equals_one_hot_matmul() -> Result<()> {
        let dev = Device::Cpu;
        let x = Tensor::arange(0f32, 12.0, &dev)?.reshape((1, 3, 4))?;
        let frames = [2u32, 1, 3, 1];
        let idx = frame_tokens(&frames);
        assert_eq!(idx, vec![0, 0, 1, 2, 2, 2, 3]);
        let mut aln = vec![0f32; 4 * 7];
        for (f, &t) in idx.iter().enumerate() {
            aln[t as usize * 7 + f] = 1.0;
        }
        let aln = Tensor::from_vec(aln, (1, 4, 7), &dev)?;
        let want = x.matmul(&aln)?.to_vec3::<f32>()?;
        assert_eq!(expand(&x, &frames)?.to_vec3::<f32>()?, want);
        assert!(expand(&x, &frames[..3]).is_err());
        Ok(())
    }

    #[test]
    fn durations_divide_by_speed_before_rounding() -> Result<()> {
        let dev = Device::Cpu;
        // sigmoid(0) = 0.5: 6 bins of logit 0 sum to 3.0 frames.
        let logits = Tensor::zeros((2, 6), DType::F32, &dev)?;
        assert_eq!(durations(&logits, 1.0)?.frames, vec![3, 3]);
        // 3 / 2 = 1.5 → 2 (half to even); 3 / 1.2 = 2.5 → 2.
        assert_eq!(durations(&logits, 2.0)?.frames, vec![2, 2]);
        let d = durations(&logits, 1.2)?;
        assert!((d.float[0] - 2.5).abs() < 1e-6);
        assert_eq!(d.frames, vec![2, 2]);
        Ok(())
    }
}
