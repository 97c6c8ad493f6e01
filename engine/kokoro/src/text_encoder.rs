//! The acoustic text encoder (`text_encoder.*`): phoneme ids → per-token features for the decoder.
//!
//! Reference: `TextEncoder` in kokoro 0.9.4 `modules.py` (from `StyleTTS` 2). An embedding, then
//! `n_layer` blocks of weight-normed Conv1d (k5, pad 2; the weight norm is folded into
//! `cnn.k.0.weight` by the converter) → `LayerNorm` over channels (`cnn.k.1.gamma/beta`, eps 1e-5)
//! → `LeakyReLU` 0.2, then a `BiLSTM`. It runs time-major (`[T, C]`), as the embedding gives it
//! and the LSTM takes it. At batch 1 with no padding the reference's masks are
//! no-ops, so [`TextEncoder::forward`] leaves them out; [`TextEncoder::forward_batch`] applies
//! them. The decoder consumes `asr = t_en · aln`, i.e. these features repeated per predicted
//! frame (see [`super::predictor::expand`]).

// candle's convention is `new(cfg, vb: VarBuilder)`; the builder is cheap to clone and the
// by-value signature keeps call sites as `Block::new(.., vb.pp("name"))`.
#![allow(clippy::needless_pass_by_value)]

use candle_core::{Module, Result, Tensor};
use candle_nn::{Embedding, LayerNorm, VarBuilder};

use super::config::KokoroConfig;
use super::cpu_kernels::CpuKernel;
use super::elementwise::leaky_relu;
use super::generator::conv::Conv1d;
use super::lstm::BiLstm;

/// Negative slope of the `LeakyReLU` after each CNN block.
const LEAKY_SLOPE: f64 = 0.2;
/// Epsilon of the channel `LayerNorm`.
const LAYER_NORM_EPS: f64 = 1e-5;

/// One `cnn.k` block: conv → channel `LayerNorm` → `LeakyReLU`, on time-major rows, where the
/// norm's channels are the last dimension and the convolution keeps its weights in its product
/// layout (candle's channel-major `conv1d` repacked all 5 MB of them on every call: 14 ms of a
/// lone first segment's serial time).
#[derive(Debug, Clone)]
struct ConvBlock {
    conv: Conv1d,
    norm: LayerNorm,
}

impl ConvBlock {
    fn new(channels: usize, kernel: usize, vb: VarBuilder) -> Result<Self> {
        let conv = Conv1d::new(
            channels,
            channels,
            kernel,
            (kernel - 1) / 2,
            1,
            1,
            vb.pp("0"),
        )?;
        let ln = vb.pp("1");
        let norm = LayerNorm::new(
            ln.get(channels, "gamma")?,
            ln.get(channels, "beta")?,
            LAYER_NORM_EPS,
        );
        Ok(Self { conv, norm })
    }

    /// `[T, C]` → `[T, C]`.
    fn forward_tm(&self, x: &Tensor) -> Result<Tensor> {
        let y = self.conv.forward_tm(x)?;
        leaky_relu(&self.norm.forward(&y)?, LEAKY_SLOPE)
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

    /// Runs the convolutions' products in bfloat16 where the CPU can (see
    /// [`crate::cpu_kernels`]); returns how many layers switched.
    pub fn use_bf16(&mut self, kernel: CpuKernel) -> Result<usize> {
        let mut n = 0;
        for block in &mut self.cnn {
            n += usize::from(block.conv.use_bf16(kernel)?);
        }
        Ok(n)
    }

    /// `ids` `[T]` (u32, pads included) → `t_en` `[1, hidden, T]`.
    pub fn forward(&self, ids: &Tensor) -> Result<Tensor> {
        let mut x = self.embedding.forward(ids)?;
        for block in &self.cnn {
            x = block.forward_tm(&x)?;
        }
        self.lstm.forward(&x)?.t()?.unsqueeze(0)
    }

    /// A padded batch: `ids` `[B, T]` (u32), item `b` valid for `lengths[b]` ids →
    /// `[B, hidden, T]`. Padding columns are zeroed before every convolution (the reference's
    /// masks), so each item's valid columns equal [`Self::forward`] on that item alone: a
    /// convolution's zero padding and a zeroed column are the same thing.
    pub fn forward_batch(&self, ids: &Tensor, lengths: &[usize]) -> Result<Tensor> {
        let (_, t) = ids.dims2()?;
        let mask = super::lstm::valid_mask(lengths, t, ids.device())?;
        let mut x = self.embedding.forward(ids)?.broadcast_mul(&mask)?;
        for block in &self.cnn {
            let items = (0..lengths.len())
                .map(|b| block.forward_tm(&x.get(b)?))
                .collect::<Result<Vec<_>>>()?;
            x = Tensor::stack(&items, 0)?.broadcast_mul(&mask)?;
        }
        self.lstm.forward_batch(&x, lengths)?.transpose(1, 2)
    }
}
