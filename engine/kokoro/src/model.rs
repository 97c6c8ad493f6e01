//! The encoder half of Kokoro-82M: phoneme ids and a voice style → durations, pitch, energy and
//! the frame-rate text features the decoder turns into audio.
//!
//! Reference: `KModel.forward_with_tokens` in kokoro 0.9.4 `model.py`, steps 1–5 of the pipeline
//! in `shared/docs/kokoro-port.md` §1 (everything before `self.decoder(...)`). [`KokoroEncoder`]
//! owns the weights under `bert`, `bert_encoder`, `predictor` and `text_encoder`; each stage is
//! also callable on its own so tests can feed it the oracle's upstream tensors.

// candle's convention is `new(cfg, vb: VarBuilder)`; the builder is cheap to clone and the
// by-value signature keeps call sites as `Block::new(.., vb.pp("name"))`.
#![allow(clippy::needless_pass_by_value)]

use candle_core::{DType, Device, Module, Tensor};
use candle_nn::VarBuilder;

use super::dense::Dense;

use super::albert::Albert;
use super::config::{KokoroConfig, PAD_ID, SPEED_RANGE};
use super::predictor::{self, Durations, ProsodyPredictor, F0N};
use super::text_encoder::TextEncoder;
use super::ModelError;
use crate::cpu_kernels::CpuKernel;

mod batch;
mod packed;

pub use batch::{BatchLayout, EncodeInput};
pub use packed::PackedCache;

/// Why encoding failed.
#[derive(Debug, thiserror::Error)]
pub enum EncodeError {
    #[error("loading the Kokoro encoder weights")]
    Load(#[source] candle_core::Error),
    #[error("no phoneme tokens to encode")]
    Empty,
    #[error("{len} phoneme tokens, more than the {max} Kokoro accepts in one call")]
    TooLong { len: usize, max: usize },
    #[error("token id {id} at position {index} is outside the vocabulary (0..{n_token})")]
    TokenOutOfRange {
        id: u32,
        index: usize,
        n_token: usize,
    },
    #[error("style vector has shape {shape:?}, expected [1, {expected}]")]
    StyleShape { shape: Vec<usize>, expected: usize },
    #[error("speed {speed} is outside {}..={}", SPEED_RANGE.start(), SPEED_RANGE.end())]
    Speed { speed: f32 },
    #[error("Kokoro encoder stage `{stage}` failed")]
    Stage {
        stage: &'static str,
        #[source]
        source: candle_core::Error,
    },
}

impl EncodeError {
    /// True when the caller's input was at fault (nothing to encode, too many phonemes, an id
    /// outside the vocabulary, a speed out of range), false for the model's own faults.
    #[must_use]
    pub fn is_input_error(&self) -> bool {
        matches!(
            self,
            Self::Empty | Self::TooLong { .. } | Self::TokenOutOfRange { .. } | Self::Speed { .. }
        )
    }
}

type Result<T> = std::result::Result<T, EncodeError>;

/// Attach the stage name to a candle error.
fn at<T>(stage: &'static str, r: candle_core::Result<T>) -> Result<T> {
    r.map_err(|source| EncodeError::Stage { stage, source })
}

/// What the decoder needs from the encoder, for one utterance of `F` frames.
#[derive(Debug, Clone)]
pub struct Prosody {
    /// Frames per token, pads included (`Σ = F`).
    pub pred_dur: Vec<u32>,
    /// Text features repeated per frame, `[1, hidden, F]`.
    pub asr: Tensor,
    /// Pitch in Hz at twice the frame rate, `[1, 2F]`.
    pub f0: Tensor,
    /// Energy at twice the frame rate, `[1, 2F]`.
    pub n: Tensor,
}

impl Prosody {
    /// Number of frames `F` (each becomes 600 samples, 25 ms, of audio).
    #[must_use]
    pub fn frames(&self) -> usize {
        self.pred_dur.iter().map(|&d| d as usize).sum()
    }
}

/// Kokoro's encoder half: ALBERT + prosody predictor + text encoder.
#[derive(Debug, Clone)]
pub struct KokoroEncoder {
    cfg: KokoroConfig,
    bert: Albert,
    bert_encoder: Dense,
    predictor: ProsodyPredictor,
    text_encoder: TextEncoder,
    device: Device,
}

impl KokoroEncoder {
    /// Switches ALBERT's products, the prosody predictor's F0/N convolutions and the text
    /// encoder's convolutions to bfloat16 where the CPU can; returns how many layers switched.
    pub fn use_bf16(&mut self, kernel: CpuKernel) -> candle_core::Result<usize> {
        Ok(self.bert.use_bf16(kernel)?
            + self.predictor.use_bf16(kernel)?
            + self.text_encoder.use_bf16(kernel)?)
    }

    /// `vb` is the checkpoint root (tensor names `bert.*`, `bert_encoder.*`, `predictor.*`,
    /// `text_encoder.*`).
    pub fn new(cfg: &KokoroConfig, vb: VarBuilder) -> Result<Self> {
        let build = || -> candle_core::Result<Self> {
            Ok(Self {
                cfg: cfg.clone(),
                bert: Albert::new(&cfg.plbert, cfg.n_token, vb.pp("bert"))?,
                bert_encoder: Dense::new(
                    cfg.plbert.hidden_size,
                    cfg.hidden_dim,
                    vb.pp("bert_encoder"),
                )?,
                predictor: ProsodyPredictor::new(cfg, vb.pp("predictor"))?,
                text_encoder: TextEncoder::new(cfg, vb.pp("text_encoder"))?,
                device: vb.device().clone(),
            })
        };
        build().map_err(EncodeError::Load)
    }

    #[must_use]
    pub fn config(&self) -> &KokoroConfig {
        &self.cfg
    }

    /// The prosody predictor, for callers that time or probe its sub-steps.
    #[must_use]
    pub fn predictor(&self) -> &ProsodyPredictor {
        &self.predictor
    }

    #[must_use]
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Whole encoder: `tokens` are phoneme ids without the boundary pads, `style` is the full
    /// `[1, 256]` voice row (its second half drives the predictor), `speed` divides durations.
    pub fn encode(&self, tokens: &[u32], style: &Tensor, speed: f32) -> Result<Prosody> {
        let ids = self.padded_ids(tokens)?;
        let s = self.predictor_style(style)?;
        if !SPEED_RANGE.contains(&speed) {
            return Err(EncodeError::Speed { speed });
        }
        let bert_out = self.bert(&ids)?;
        let d_en = self.bert_encoder(&bert_out)?;
        let d = self.duration_features(&d_en, &s)?;
        let durations = self.durations(&d, speed)?;
        let en = self.frame_features(&d, &durations.frames)?;
        let f0n = self.f0_n(&en, &s)?;
        let t_en = self.text_features(&ids)?;
        let asr = self.frame_text_features(&t_en, &durations.frames)?;
        Ok(Prosody {
            pred_dur: durations.frames,
            asr,
            f0: f0n.f0,
            n: f0n.n,
        })
    }

    /// Validates `tokens` and returns `[1, T]` u32 ids with a pad on each side.
    pub fn padded_ids(&self, tokens: &[u32]) -> Result<Tensor> {
        let ids = self.checked_ids(tokens)?;
        let t = ids.len();
        at("tokens", Tensor::from_vec(ids, (1, t), &self.device))
    }

    /// Validates `tokens` and returns them with a pad on each side.
    fn checked_ids(&self, tokens: &[u32]) -> Result<Vec<u32>> {
        if tokens.is_empty() {
            return Err(EncodeError::Empty);
        }
        let max = self.cfg.max_tokens().saturating_sub(2);
        if tokens.len() > max {
            return Err(EncodeError::TooLong {
                len: tokens.len(),
                max,
            });
        }
        let n_token = self.cfg.n_token;
        if let Some((index, &id)) = tokens
            .iter()
            .enumerate()
            .find(|(_, &id)| id as usize >= n_token)
        {
            return Err(EncodeError::TokenOutOfRange { id, index, n_token });
        }
        let mut ids = Vec::with_capacity(tokens.len() + 2);
        ids.push(PAD_ID);
        ids.extend_from_slice(tokens);
        ids.push(PAD_ID);
        Ok(ids)
    }

    /// The predictor half `style[:, 128:]` as `[1, style_dim]` f32 on the model's device.
    pub fn predictor_style(&self, style: &Tensor) -> Result<Tensor> {
        let sd = self.cfg.style_dim;
        let expected = self.cfg.style_width();
        if style.dims() != [1, expected] {
            return Err(EncodeError::StyleShape {
                shape: style.dims().to_vec(),
                expected,
            });
        }
        at(
            "style",
            style
                .to_device(&self.device)
                .and_then(|s| s.to_dtype(DType::F32))
                .and_then(|s| s.narrow(1, sd, sd)),
        )
    }

    /// Step 1a: `ids` `[1, T]` → ALBERT output `[1, T, 768]`.
    pub fn bert(&self, ids: &Tensor) -> Result<Tensor> {
        at("bert", self.bert.forward(ids, None))
    }

    /// Step 1b: ALBERT output `[1, T, 768]` → `d_en` `[T, hidden]` (the reference's `d_en` is
    /// the transpose `[1, hidden, T]`; rows are what the LSTMs consume).
    pub fn bert_encoder(&self, bert_out: &Tensor) -> Result<Tensor> {
        at(
            "bert_encoder",
            self.bert_encoder
                .forward(bert_out)
                .and_then(|x| x.squeeze(0)),
        )
    }

    /// Step 2: `d_en` `[T, hidden]` and predictor style → `d` `[T, hidden + style_dim]`.
    pub fn duration_features(&self, d_en: &Tensor, s: &Tensor) -> Result<Tensor> {
        at("duration_encoder", self.predictor.encode_durations(d_en, s))
    }

    /// Step 3a: `d` → duration logits `[T, max_dur]`.
    pub fn duration_logits(&self, d: &Tensor) -> Result<Tensor> {
        at("duration_logits", self.predictor.duration_logits(d))
    }

    /// Step 3: `d` → durations (float and rounded) at `speed`.
    pub fn durations(&self, d: &Tensor, speed: f32) -> Result<Durations> {
        let logits = self.duration_logits(d)?;
        at("durations", predictor::durations(&logits, speed))
    }

    /// Step 4a: `d` `[T, hidden + style_dim]` → `en` `[1, hidden + style_dim, F]`.
    pub fn frame_features(&self, d: &Tensor, frames: &[u32]) -> Result<Tensor> {
        at(
            "en",
            d.t()
                .and_then(|x| x.unsqueeze(0))
                .and_then(|x| predictor::expand(&x, frames)),
        )
    }

    /// Step 4b: `en` `[1, hidden + style_dim, F]` → F0, N `[1, 2F]` (and the shared LSTM output).
    pub fn f0_n(&self, en: &Tensor, s: &Tensor) -> Result<F0N> {
        at("f0_n", self.predictor.f0_n(en, s))
    }

    /// Step 5a: `ids` `[1, T]` → `t_en` `[1, hidden, T]`.
    pub fn text_features(&self, ids: &Tensor) -> Result<Tensor> {
        at(
            "text_encoder",
            ids.squeeze(0)
                .and_then(|ids| self.text_encoder.forward(&ids)),
        )
    }

    /// Step 5b: `t_en` `[1, hidden, T]` → `asr` `[1, hidden, F]`.
    pub fn frame_text_features(&self, t_en: &Tensor, frames: &[u32]) -> Result<Tensor> {
        at("asr", predictor::expand(t_en, frames))
    }
}

/// The whole Kokoro-82M model: the encoder half and the decoder, loaded once from one file.
#[derive(Debug, Clone)]
pub struct Kokoro {
    encoder: KokoroEncoder,
    decoder: super::decoder::Decoder,
    style_dim: usize,
}

impl Kokoro {
    /// Loads the converted f32 safetensors (see [`super::weights`]) onto `device`.
    pub fn load(path: &std::path::Path, device: &Device) -> std::result::Result<Self, ModelError> {
        let vb = super::weights::var_builder(path, device)?;
        Self::new(&KokoroConfig::default(), vb)
    }

    /// Builds the model from a `VarBuilder` rooted at the checkpoint's top level.
    pub fn new(cfg: &KokoroConfig, vb: VarBuilder) -> std::result::Result<Self, ModelError> {
        let encoder = KokoroEncoder::new(cfg, vb.clone())?;
        let decoder = super::decoder::Decoder::with_config(
            &super::generator::GeneratorConfig::from(cfg),
            vb.pp("decoder"),
        )?;
        Ok(Self {
            encoder,
            decoder,
            style_dim: cfg.style_dim,
        })
    }

    /// Computes the big products (ALBERT, the F0/N branches, the decoder's convolutions) in
    /// bfloat16 from now on, on CPUs with AVX-512
    /// BF16 (about twice the f32 rate; see [`crate::cpu_kernels`]). Returns how many convolutions
    /// switched: 0 where the CPU lacks the instructions or the model is not on the CPU.
    pub fn use_bf16(&mut self, kernel: CpuKernel) -> candle_core::Result<usize> {
        // Durations and pitch come from the encoder: int8 stays in the generator (see
        // `cpu_kernels::int8`).
        Ok(self.encoder.use_bf16(kernel.without_int8())? + self.decoder.use_bf16(kernel)?)
    }

    /// The encoder half (phonemes → durations, F0, N, frame features).
    #[must_use]
    pub fn encoder(&self) -> &KokoroEncoder {
        &self.encoder
    }

    /// The decoder (frame features → audio).
    #[must_use]
    pub fn decoder(&self) -> &super::decoder::Decoder {
        &self.decoder
    }

    /// Width of the acoustic half of a style vector (the first `style_dim` of 256).
    #[must_use]
    pub fn style_dim(&self) -> usize {
        self.style_dim
    }
}
