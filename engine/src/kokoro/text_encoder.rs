//! The acoustic text encoder (`text_encoder.*`): phoneme ids → per-token features for the decoder.
//!
//! Reference: `TextEncoder` in kokoro 0.9.4 `modules.py` (from `StyleTTS` 2). An embedding, then
//! `n_layer` blocks of weight-normed Conv1d (k5, pad 2; the weight norm is folded into
//! `cnn.k.0.weight` by the converter) → `LayerNorm` over channels (`cnn.k.1.gamma/beta`, eps 1e-5)
//! → `LeakyReLU` 0.2, then a `BiLSTM`. At batch 1 with no padding the reference's masks are
//! no-ops, so [`TextEncoder::forward`] leaves them out; [`TextEncoder::forward_batch`] applies
//! them. The decoder consumes `asr = t_en · aln`, i.e. these features repeated per predicted
//! frame (see [`super::predictor::expand`]).

// candle's convention is `new(cfg, vb: VarBuilder)`; the builder is cheap to clone and the
// by-value signature keeps call sites as `Block::new(.., vb.pp("name"))`.
#![allow(clippy::needless_pass_by_value)]

use candle_core::{Module, Result, Tensor};
use candle_nn::{Conv1d, Conv1dConfig, Embedding, LayerNorm, VarBuilder};

use super::config::KokoroConfig;
use super::lstm::BiLstm;

/// Negative slope of the `LeakyReLU` after each CNN block.
const LEAKY_SLOPE: f64 = 0.2;
/// Epsilon of the channel `LayerNorm`.
const LAYER_NORM_EPS: f64 = 1e-5;

/// One `cnn.k` block: conv → channel `LayerNorm` → `LeakyReLU`.
#[derive(Debug, Clone)]
struct ConvBlock {
    conv: Conv1d,
    norm: LayerNorm,
}

impl ConvBlock {
    fn new(channels: usize, kernel: usize, vb: VarBuilder) -> Result<Self> {
        let conv_cfg = Conv1dConfig {
            padding: (kernel - 1) / 2,
            ..Conv1dConfig::default()
        };
        let conv = candle_nn::conv1d(channels, channels, kernel, conv_cfg, vb.pp("0"))?;
        let ln = vb.pp("1");
        let norm = LayerNorm::new(
            ln.get(channels, "gamma")?,
            ln.get(channels, "beta")?,
            LAYER_NORM_EPS,
        );
        Ok(Self { conv, norm })
    }

    /// `[1, C, T]` → `[1, C, T]`.
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let y = self.conv.forward(&x.contiguous()?)?.transpose(1, 2)?;
        let y = self.norm.forward(&y)?.transpose(1, 2)?;
        candle_nn::ops::leaky_relu(&y, LEAKY_SLOPE)
    }
}

/// `text_encoder`: ids → `[1, hidden, T]`.
#[derive(Debug, Clone)]
pub struct TextEncoder {
    embedding: Embedding,
    cnn: Vec<ConvBlock>,
    lstm: BiLstm,
}

impl TextEncoder {
    /// `vb` points at `text_encoder`.
    pub fn new(cfg: &KokoroConfig, vb: VarBuilder) -> Result<Self> {
        let c = cfg.hidden_dim;
        let embedding = candle_nn::embedding(cfg.n_token, c, vb.pp("embedding"))?;
        let cnn = (0..cfg.n_layer)
            .map(|k| ConvBlock::new(c, cfg.text_encoder_kernel_size, vb.pp("cnn").pp(k)))
            .collect::<Result<Vec<_>>>()?;
        let lstm = BiLstm::new(c, c / 2, vb.pp("lstm"))?;
        Ok(Self {
            embedding,
            cnn,
            lstm,
        })
    }

    /// `ids` `[T]` (u32, pads included) → `t_en` `[1, hidden, T]`.
    pub fn forward(&self, ids: &Tensor) -> Result<Tensor> {
        let mut x = self.embedding.forward(ids)?.t()?.unsqueeze(0)?;
        for block in &self.cnn {
            x = block.forward(&x)?;
        }
        let x = x.squeeze(0)?.t()?.contiguous()?;
        self.lstm.forward(&x)?.t()?.unsqueeze(0)
    }

    /// A padded batch: `ids` `[B, T]` (u32), item `b` valid for `lengths[b]` ids →
    /// `[B, hidden, T]`. Padding columns are zeroed before every convolution (the reference's
    /// masks), so each item's valid columns equal [`Self::forward`] on that item alone: a
    /// convolution's zero padding and a zeroed column are the same thing.
    pub fn forward_batch(&self, ids: &Tensor, lengths: &[usize]) -> Result<Tensor> {
        let (_, t) = ids.dims2()?;
        let mask = super::lstm::valid_mask(lengths, t, ids.device())?;
        let mask_cols = mask.transpose(1, 2)?;
        let mut x = self
            .embedding
            .forward(ids)?
            .broadcast_mul(&mask)?
            .transpose(1, 2)?;
        for block in &self.cnn {
            x = block.forward(&x)?.broadcast_mul(&mask_cols)?;
        }
        let x = x.transpose(1, 2)?.contiguous()?;
        self.lstm.forward_batch(&x, lengths)?.transpose(1, 2)
    }
}
