//! `TextEncoder` (`enc_p`): phoneme ids to the hidden sequence the duration predictor reads and
//! the prior's mean and log-scale per phoneme.

use candle_core::{Device, Tensor};

use crate::attentions::Encoder;
use crate::checkpoint::Checkpoint;
use crate::layers::{split_channels, Conv, Embedding};
use crate::VitsError;

#[derive(Debug, Clone)]
pub struct TextEncoder {
    emb: Embedding,
    encoder: Encoder,
    proj: Conv,
}

/// What the text encoder gives, each `[1, channels, phonemes]`.
#[derive(Debug, Clone)]
pub struct Encoded {
    /// The transformer's output (the duration predictor's input).
    pub x: Tensor,
    /// The prior's mean per phoneme.
    pub m_p: Tensor,
    /// The prior's log standard deviation per phoneme.
    pub logs_p: Tensor,
}

impl TextEncoder {
    /// Every convolution of the module, for choosing their CPU kernel.
    pub fn convs_mut(&mut self) -> Vec<&mut Conv> {
        let mut v = self.encoder.convs_mut();
        v.push(&mut self.proj);
        v
    }

    pub fn load(ck: &Checkpoint, device: &Device) -> Result<Self, VitsError> {
        Ok(Self {
            emb: Embedding::load(ck, "enc_p.emb", device)?,
            encoder: Encoder::load(ck, "enc_p.encoder", device)?,
            proj: Conv::load(ck, "enc_p.proj", device)?,
        })
    }

    /// The number of phoneme ids the embedding knows.
    #[must_use]
    pub fn symbols(&self) -> usize {
        self.emb.rows()
    }

    pub fn forward(&self, ids: &[i64]) -> Result<Encoded, VitsError> {
        let hidden = self.emb.dim();
        let x = self
            .emb
            .lookup(ids)?
            .affine((hidden as f64).sqrt(), 0.0)?
            .t()?
            .unsqueeze(0)?
            .contiguous()?;
        let x = self.encoder.forward(&x)?;
        let stats = self.proj.forward(&x)?;
        let half = stats.dim(1)? / 2;
        let (m_p, logs_p) = split_channels(&stats, half)?;
        Ok(Encoded { x, m_p, logs_p })
    }
}
