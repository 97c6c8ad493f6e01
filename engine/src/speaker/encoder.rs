//! The GE2E network and the utterance embedding: partials → 3-layer LSTM → `Linear` → `ReLU` →
//! L2 norm, averaged over partials.
//!
//! The LSTM is unidirectional, three layers, batch-first with all partials of an utterance in
//! one batch. Kokoro's `BiLstm` is single-layer, bidirectional and batch 1 with a host fast
//! path tied to that shape; bending it to this shape would cost more than the small recurrence
//! below, which uses only tensor ops and so runs on any candle device. The input projection of
//! each layer is one matmul over all time steps; only `h·W_hhᵀ` and the gates run per step.
//! Gates are in `PyTorch` order i, f, g, o; initial states are zero.

// candle's convention is `new(cfg, vb: VarBuilder)`, by value.
#![allow(clippy::needless_pass_by_value)]

use std::path::Path;

use candle_core::{DType, Device, IndexOp, Module, Tensor, D};
use candle_nn::{Linear, VarBuilder};

use super::mel::{MelSpectrogram, HOP, N_MELS};
use super::preprocess::preprocess;
use super::{at, Embedding, SpeakerError, EMBEDDING_DIM, SAMPLE_RATE};
use crate::audio::decode::DecodedAudio;

/// Frames per partial utterance (1.6 s).
pub const PARTIAL_FRAMES: usize = 160;
/// Partials per second.
pub const PARTIAL_RATE: f64 = 1.3;
/// A last partial is kept only when the audio covers at least this share of it.
pub const MIN_COVERAGE: f64 = 0.75;
const HIDDEN: usize = 256;
const LAYERS: usize = 3;

/// Where the partials of an utterance of `n_samples` lie, as mel-frame ranges (multiply by
/// [`HOP`] for sample ranges), after resemblyzer's `compute_partial_slices`: one every
/// `round(16000 / 1.3 / 160)` = 77 frames, the last dropped when less than 75 % of it is
/// audio (but never the only one).
#[must_use]
pub fn partial_slices(n_samples: usize) -> Vec<std::ops::Range<usize>> {
    let n_frames = (n_samples + 1).div_ceil(HOP);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // 77
    let step = (f64::from(SAMPLE_RATE) / PARTIAL_RATE / HOP as f64).round() as usize;
    let steps = (n_frames + step + 1).saturating_sub(PARTIAL_FRAMES).max(1);
    let mut slices: Vec<_> = (0..steps)
        .step_by(step)
        .map(|i| i..i + PARTIAL_FRAMES)
        .collect();
    if slices.len() > 1 {
        if let Some(last) = slices.last() {
            let start = (last.start * HOP) as f64;
            let coverage = (n_samples as f64 - start) / (PARTIAL_FRAMES * HOP) as f64;
            if coverage < MIN_COVERAGE {
                slices.pop();
            }
        }
    }
    slices
}

/// One unidirectional LSTM layer.
#[derive(Debug, Clone)]
struct LstmLayer {
    /// `[in, 4H]` (`W_ihᵀ`).
    w_ih_t: Tensor,
    /// `[H, 4H]` (`W_hhᵀ`).
    w_hh_t: Tensor,
    /// `b_ih + b_hh`, `[4H]`.
    bias: Tensor,
}

impl LstmLayer {
    fn new(in_dim: usize, layer: usize, vb: &VarBuilder) -> candle_core::Result<Self> {
        let gates = 4 * HIDDEN;
        let w_ih = vb.get((gates, in_dim), &format!("weight_ih_l{layer}"))?;
        let w_hh = vb.get((gates, HIDDEN), &format!("weight_hh_l{layer}"))?;
        let b_ih = vb.get(gates, &format!("bias_ih_l{layer}"))?;
        let b_hh = vb.get(gates, &format!("bias_hh_l{layer}"))?;
        Ok(Self {
            w_ih_t: w_ih.t()?.contiguous()?,
            w_hh_t: w_hh.t()?.contiguous()?,
            bias: (b_ih + b_hh)?,
        })
    }

    /// `[B, T, in]` → all hidden states `[B, T, H]`.
    fn forward(&self, xs: &Tensor) -> candle_core::Result<Tensor> {
        let (batch, steps, in_dim) = xs.dims3()?;
        let proj = xs
            .reshape((batch * steps, in_dim))?
            .matmul(&self.w_ih_t)?
            .broadcast_add(&self.bias)?
            .reshape((batch, steps, 4 * HIDDEN))?;
        let mut h = Tensor::zeros((batch, HIDDEN), xs.dtype(), xs.device())?;
        let mut c = h.clone();
        let mut outputs = Vec::with_capacity(steps);
        for t in 0..steps {
            let gates = (proj.i((.., t, ..))? + h.matmul(&self.w_hh_t)?)?;
            let chunk = |k: usize| gates.narrow(1, k * HIDDEN, HIDDEN);
            let i = candle_nn::ops::sigmoid(&chunk(0)?)?;
            let f = candle_nn::ops::sigmoid(&chunk(1)?)?;
            let g = chunk(2)?.tanh()?;
            let o = candle_nn::ops::sigmoid(&chunk(3)?)?;
            c = ((f * c)? + (i * g)?)?;
            h = (o * c.tanh()?)?;
            outputs.push(h.clone());
        }
        Tensor::stack(&outputs, 1)
    }
}

/// resemblyzer's `VoiceEncoder` with its pretrained weights.
#[derive(Debug, Clone)]
pub struct SpeakerEncoder {
    layers: Vec<LstmLayer>,
    linear: Linear,
    mel: MelSpectrogram,
    device: Device,
}

impl SpeakerEncoder {
    /// Loads `ge2e/pretrained.safetensors` (see `ModelStore::speaker_encoder`) onto `device`.
    pub fn load(path: &Path, device: &Device) -> Result<Self, SpeakerError> {
        let load_err = |source| SpeakerError::Load {
            path: path.to_owned(),
            source,
        };
        let tensors = candle_core::safetensors::load(path, device).map_err(load_err)?;
        let vb = VarBuilder::from_tensors(tensors, DType::F32, device);
        Self::new(vb).map_err(|e| match e {
            SpeakerError::Build(source) => load_err(source),
            other => other,
        })
    }

    /// Builds the network from a builder holding `lstm.*` and `linear.*`.
    pub fn new(vb: VarBuilder) -> Result<Self, SpeakerError> {
        let lstm = vb.pp("lstm");
        let layers = (0..LAYERS)
            .map(|l| LstmLayer::new(if l == 0 { N_MELS } else { HIDDEN }, l, &lstm))
            .collect::<candle_core::Result<Vec<_>>>()
            .map_err(SpeakerError::Build)?;
        let linear = candle_nn::linear(HIDDEN, EMBEDDING_DIM, vb.pp("linear"))
            .map_err(SpeakerError::Build)?;
        let mel = MelSpectrogram::new()?;
        Ok(Self {
            layers,
            linear,
            mel,
            device: vb.device().clone(),
        })
    }

    /// Embeds a decoded clip, which must be 16 kHz mono (decode with a 16 kHz target rate).
    pub fn embed_clip(&self, clip: &DecodedAudio) -> Result<Embedding, SpeakerError> {
        if clip.sample_rate != SAMPLE_RATE {
            return Err(SpeakerError::WrongRate {
                rate: clip.sample_rate,
            });
        }
        self.embed_samples_16k(&clip.samples)
    }

    /// Embeds raw 16 kHz mono audio: volume normalisation, silence trimming, then
    /// [`Self::embed_preprocessed`].
    pub fn embed_samples_16k(&self, samples: &[f32]) -> Result<Embedding, SpeakerError> {
        self.embed_preprocessed(&preprocess(samples))
    }

    /// Embeds audio that is already preprocessed (normalised and trimmed).
    pub fn embed_preprocessed(&self, wav: &[f32]) -> Result<Embedding, SpeakerError> {
        let partials = self.partial_embeddings(wav)?;
        let mut mean = [0.0f32; EMBEDDING_DIM];
        for p in &partials {
            mean.iter_mut().zip(p).for_each(|(m, v)| *m += v);
        }
        Embedding::from_unnormalised(mean).ok_or(SpeakerError::NoSpeech { samples: wav.len() })
    }

    /// The L2-normalised embedding of every partial of a preprocessed utterance.
    pub fn partial_embeddings(
        &self,
        wav: &[f32],
    ) -> Result<Vec<[f32; EMBEDDING_DIM]>, SpeakerError> {
        if wav.is_empty() {
            return Err(SpeakerError::NoSpeech { samples: 0 });
        }
        let slices = partial_slices(wav.len());
        let needed = slices.last().map_or(0, |s| s.end * HOP);
        let mut padded = wav.to_vec();
        if needed > padded.len() {
            padded.resize(needed, 0.0);
        }
        let mel = self.mel.compute(&padded)?;
        let batch = slices
            .iter()
            .map(|s| mel.narrow(0, s.start, s.len()))
            .collect::<candle_core::Result<Vec<_>>>()
            .and_then(|parts| Tensor::stack(&parts, 0))
            .and_then(|t| t.to_device(&self.device))
            .map_err(at("partials"))?;
        let embeds = self.forward(&batch)?;
        let rows: Vec<Vec<f32>> = embeds.to_vec2().map_err(at("embedding readback"))?;
        Ok(rows
            .into_iter()
            .map(|r| {
                let mut out = [0.0f32; EMBEDDING_DIM];
                out.iter_mut().zip(r).for_each(|(o, v)| *o = v);
                out
            })
            .collect())
    }

    /// The network on a batch of partial mel spectrograms `[B, 160, 40]` → `[B, 256]`, each row
    /// L2-normalised.
    pub fn forward(&self, mels: &Tensor) -> Result<Tensor, SpeakerError> {
        let mut xs = mels.clone();
        for layer in &self.layers {
            xs = layer.forward(&xs).map_err(at("lstm"))?;
        }
        (|| {
            let last = xs.i((.., xs.dim(1)? - 1, ..))?;
            let raw = self.linear.forward(&last)?.relu()?;
            let norm = raw.sqr()?.sum_keepdim(D::Minus1)?.sqrt()?;
            raw.broadcast_div(&norm.clamp(f32::MIN_POSITIVE, f32::MAX)?)
        })()
        .map_err(at("projection"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_slices_follow_the_reference() {
        // resemblyzer 0.1.4 `compute_partial_slices(n, 1.3, 0.75)` mel ranges.
        let starts = |n: usize| {
            partial_slices(n)
                .iter()
                .map(|r| r.start)
                .collect::<Vec<_>>()
        };
        assert_eq!(starts(1000), [0]); // shorter than one partial: still one
        assert_eq!(starts(25_600), [0]); // exactly 1.6 s
        assert_eq!(starts(16_000 * 3), [0, 77, 154]);
        assert_eq!(starts(16_000 * 5), [0, 77, 154, 231, 308]);
        assert!(partial_slices(80_000)
            .iter()
            .all(|r| r.len() == PARTIAL_FRAMES));
    }

    #[test]
    fn zero_weights_give_no_speech_not_nan() {
        let vb = VarBuilder::zeros(DType::F32, &Device::Cpu);
        let enc = SpeakerEncoder::new(vb).expect("zeros");
        let wav = vec![0.1f32; 16_000];
        let partials = enc.partial_embeddings(&wav).expect("runs");
        assert_eq!(partials.len(), 1);
        assert!(partials[0].iter().all(|v| *v == 0.0));
        let err = enc
            .embed_preprocessed(&wav)
            .expect_err("all-zero embedding");
        assert!(matches!(err, SpeakerError::NoSpeech { .. }), "{err:?}");
        assert!(enc.embed_preprocessed(&[]).is_err());
    }
}
