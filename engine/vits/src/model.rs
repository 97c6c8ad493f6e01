//! `SynthesizerTrn.infer`: one sentence's phoneme ids to samples, every stage kept.
//!
//! Text encoder → stochastic durations (noise · `noise_w`) → each phoneme's prior repeated for
//! its frames, sampled with noise · `noise_scale` → flow in reverse → HiFi-GAN. The noise comes
//! from a seeded generator, so the same text, voice and settings always give the same audio
//! (tests pass the reference's own noise instead, [`Noise::Given`]).

use std::path::Path;

use candle_core::{Device, Tensor};

use crate::checkpoint::Checkpoint;
use crate::config::Inference;
use crate::duration::DurationPredictor;
use crate::flow::Flow;
use crate::generator::Generator;
use crate::layers::Embedding;
use crate::text_encoder::TextEncoder;
use crate::{CpuKernel, VitsError};

/// Where the model's two noise draws come from.
#[derive(Debug, Clone)]
pub enum Noise {
    /// Standard normal values from this seed (deterministic, the product's choice).
    Seeded(u64),
    /// The duration predictor's `[1, 2, phonemes]` and the prior's `[1, channels, frames]`
    /// noise, as the reference drew them (tests).
    Given { dp: Tensor, z: Tensor },
}

/// Every stage of one sentence, for the goldens and for word timing.
#[derive(Debug, Clone)]
pub struct Stages {
    /// Encoder output `[1, hidden, phonemes]`.
    pub enc_x: Tensor,
    pub m_p: Tensor,
    pub logs_p: Tensor,
    /// Log-durations `[1, 1, phonemes]`.
    pub logw: Tensor,
    /// Frames per phoneme id (the reference's `w_ceil`).
    pub durations: Vec<u32>,
    /// Prior sample `[1, channels, frames]`.
    pub z_p: Tensor,
    /// The decoder's input.
    pub z: Tensor,
    /// Samples at the voice's rate.
    pub audio: Vec<f32>,
}

/// A Piper voice's model.
#[derive(Debug, Clone)]
pub struct Vits {
    enc_p: TextEncoder,
    dp: DurationPredictor,
    flow: Flow,
    dec: Generator,
    emb_g: Option<Embedding>,
    device: Device,
}

impl Vits {
    /// Loads the model of the `.onnx` at `path` onto `device`.
    pub fn read(path: &Path, device: &Device) -> Result<Self, VitsError> {
        Self::load(&Checkpoint::read(path)?, device)
    }

    /// Loads the model from a read checkpoint onto `device`; on the CPU the generator runs
    /// on the kernel [`cpu_kernel_from_env`] names.
    pub fn load(ck: &Checkpoint, device: &Device) -> Result<Self, VitsError> {
        let emb_g = if ck.params.contains_key("emb_g.weight") {
            Some(Embedding::load(ck, "emb_g", device)?)
        } else {
            None
        };
        let mut model = Self {
            enc_p: TextEncoder::load(ck, device)?,
            dp: DurationPredictor::load(ck, device)?,
            flow: Flow::load(ck, device)?,
            dec: Generator::load(ck, device)?,
            emb_g,
            device: device.clone(),
        };
        model.use_cpu_kernel(cpu_kernel_from_env())?;
        Ok(model)
    }

    /// Runs the model's convolutions on CPU kernels (packing their weights once), or on
    /// candle's ops with `None`; returns whether the generator runs on `kernel` (see
    /// [`Generator::use_cpu_kernel`]).
    ///
    /// The generator and the flow take `kernel` itself (in bfloat16 the flow is 3–4× faster
    /// than in f32, the latent then ~50 dB from the reference's). The text encoder and the
    /// duration predictor take the f32 kernel ([`CpuKernel::F32`]) whatever `kernel` is: the
    /// durations are a ceiling of their output, and bfloat16 products there did move a
    /// phoneme's length by a frame on the goldens.
    pub fn use_cpu_kernel(&mut self, kernel: Option<CpuKernel>) -> Result<bool, VitsError> {
        let exact = kernel.map(|_| CpuKernel::F32);
        for conv in self
            .enc_p
            .convs_mut()
            .into_iter()
            .chain(self.dp.convs_mut())
        {
            conv.use_cpu_kernel(exact)?;
        }
        for conv in self.flow.convs_mut() {
            conv.use_cpu_kernel(kernel)?;
        }
        self.dec.use_cpu_kernel(kernel)
    }

    /// The CPU kernel the generator runs on, `None` for candle's ops.
    #[must_use]
    pub fn cpu_kernel(&self) -> Option<CpuKernel> {
        self.dec.cpu_kernel()
    }

    /// Samples per decoder frame.
    #[must_use]
    pub fn hop(&self) -> usize {
        self.dec.hop()
    }

    /// Phoneme ids the model knows.
    #[must_use]
    pub fn symbols(&self) -> usize {
        self.enc_p.symbols()
    }

    /// Speakers the model has (1 for a one-speaker voice).
    #[must_use]
    pub fn speakers(&self) -> usize {
        self.emb_g.as_ref().map_or(1, Embedding::rows)
    }

    /// Runs one sentence's ids (with Piper's `^`, pads and `$`), every stage kept.
    pub fn infer(
        &self,
        ids: &[i64],
        scales: Inference,
        speaker: Option<i64>,
        noise: &Noise,
    ) -> Result<Stages, VitsError> {
        let prior = self.encode(ids, scales, speaker, noise)?;
        let z = self.flow.reverse(&prior.z_p, prior.g.as_ref())?;
        let audio = self
            .dec
            .forward(&z, prior.g.as_ref())?
            .flatten_all()?
            .to_vec1()?;
        Ok(Stages {
            enc_x: prior.enc_x,
            m_p: prior.m_p,
            logs_p: prior.logs_p,
            logw: prior.logw,
            durations: prior.durations,
            z_p: prior.z_p,
            z,
            audio,
        })
    }

    /// Everything before the flow: the text encoder, the durations and the prior's sample.
    /// Cheap next to [`Self::decode`]; the durations say how long the sentence will be.
    pub fn encode(
        &self,
        ids: &[i64],
        scales: Inference,
        speaker: Option<i64>,
        noise: &Noise,
    ) -> Result<Prior, VitsError> {
        if ids.is_empty() {
            return Err(VitsError::Input("no phoneme ids".to_owned()));
        }
        let g = match (&self.emb_g, speaker) {
            (Some(emb), Some(id)) => Some(emb.lookup(&[id])?.unsqueeze(2)?),
            (Some(_), None) => {
                return Err(VitsError::Input(
                    "this voice has several speakers; choose one".to_owned(),
                ))
            }
            (None, Some(id)) if id != 0 => {
                return Err(VitsError::Input(format!(
                    "speaker {id} asked of a one-speaker voice"
                )))
            }
            (None, _) => None,
        };
        let enc = self.enc_p.forward(ids)?;
        let t = ids.len();
        let mut rng = match noise {
            Noise::Seeded(seed) => Some(Normal::new(*seed)),
            Noise::Given { .. } => None,
        };
        let dp_noise = match (noise, rng.as_mut()) {
            (Noise::Given { dp, .. }, _) => dp.clone(),
            (_, Some(r)) => r.tensor(&[1, 2, t], &self.device)?,
            _ => unreachable_noise()?,
        };
        let dp_noise = dp_noise.affine(f64::from(scales.noise_w), 0.0)?;
        let logw = self.dp.reverse(&enc.x, &dp_noise, g.as_ref())?;
        let w: Vec<f32> = logw.flatten_all()?.to_vec1()?;
        let durations: Vec<u32> = w
            .iter()
            .map(|&l| (l.exp() * scales.length_scale).ceil().max(0.0) as u32)
            .collect();
        let frames: usize = durations.iter().map(|&d| d as usize).sum();
        let (m, logs) = if frames == 0 {
            // the reference keeps one frame of nothing
            let c = enc.m_p.dim(1)?;
            let zero = Tensor::zeros((1, c, 1), candle_core::DType::F32, &self.device)?;
            (zero.clone(), zero)
        } else {
            let index: Vec<u32> = durations
                .iter()
                .enumerate()
                .flat_map(|(i, &d)| std::iter::repeat_n(i as u32, d as usize))
                .collect();
            let index = Tensor::from_vec(index, frames, &self.device)?;
            (
                enc.m_p.index_select(&index, 2)?,
                enc.logs_p.index_select(&index, 2)?,
            )
        };
        let shape = m.dims().to_vec();
        let z_noise = match (noise, rng.as_mut()) {
            (Noise::Given { z, .. }, _) => {
                if z.dims() != shape.as_slice() {
                    return Err(VitsError::Input(format!(
                        "given prior noise {:?}, the sentence needs {shape:?}",
                        z.dims()
                    )));
                }
                z.clone()
            }
            (_, Some(r)) => r.tensor(&shape, &self.device)?,
            _ => unreachable_noise()?,
        };
        let z_p = (&m + (z_noise * logs.exp()?)?.affine(f64::from(scales.noise_scale), 0.0)?)?;
        Ok(Prior {
            enc_x: enc.x,
            m_p: enc.m_p,
            logs_p: enc.logs_p,
            logw,
            durations,
            z_p,
            g,
        })
    }

    /// The flow and the decoder: a prior's sample to samples at the voice's rate.
    pub fn decode(&self, prior: &Prior) -> Result<Vec<f32>, VitsError> {
        let z = self.flow.reverse(&prior.z_p, prior.g.as_ref())?;
        Ok(self
            .dec
            .forward(&z, prior.g.as_ref())?
            .flatten_all()?
            .to_vec1()?)
    }

    /// The samples of frames `range` of a sentence, decoded from those frames and `context`
    /// more on each side (then cut away), for streaming: the flow and the decoder are
    /// convolutions without any statistic over time, so once `context` covers their reach
    /// (see [`DECODE_CONTEXT`]) a window is the same samples as the whole decode.
    pub fn decode_window(
        &self,
        prior: &Prior,
        range: std::ops::Range<usize>,
        context: usize,
    ) -> Result<Vec<f32>, VitsError> {
        let frames = prior.frames();
        if range.start >= range.end || range.end > frames {
            return Err(VitsError::Input(format!(
                "window {range:?} outside the sentence's {frames} frames"
            )));
        }
        let lo = range.start.saturating_sub(context);
        let hi = (range.end + context).min(frames);
        let z_p = prior.z_p.narrow(2, lo, hi - lo)?.contiguous()?;
        let z = self.flow.reverse(&z_p, prior.g.as_ref())?;
        let audio: Vec<f32> = self
            .dec
            .forward(&z, prior.g.as_ref())?
            .flatten_all()?
            .to_vec1()?;
        let hop = self.hop();
        Ok(audio[(range.start - lo) * hop..(range.end - lo) * hop].to_vec())
    }
}

/// Frames of context on each side that make a window's audio the whole decode's
/// ([`Vits::decode_window`]): on a medium voice 40 frames leave 69 dB, 48 give the same
/// samples (315 dB); the streaming test checks it.
pub const DECODE_CONTEXT: usize = 48;

/// A sentence encoded up to the flow ([`Vits::encode`]).
#[derive(Debug, Clone)]
pub struct Prior {
    pub enc_x: Tensor,
    pub m_p: Tensor,
    pub logs_p: Tensor,
    pub logw: Tensor,
    /// Frames per phoneme id.
    pub durations: Vec<u32>,
    /// The prior's sample `[1, channels, frames]`.
    pub z_p: Tensor,
    /// The speaker embedding `[1, gin, 1]` of a multi-speaker voice.
    pub g: Option<Tensor>,
}

impl Prior {
    /// Decoder frames in the sentence.
    #[must_use]
    pub fn frames(&self) -> usize {
        self.z_p.dim(2).unwrap_or(0)
    }
}

/// The generator's kernel as `BANTER_PRECISION` names it (the variable Kokoro's precision
/// reads): `f32` candle's f32 ops (the reference's arithmetic and order), `fma` f32 products on
/// the packed kernels, `bf16` bfloat16 products on the vectors, `int8` 8-bit products; unset,
/// `amx` or `auto` the faster of bfloat16 and f32 vectors on this CPU (AMX tiles where it has
/// them). int8 is never the default here: it was judged on Kokoro's generator, not on VITS's.
#[must_use]
pub fn cpu_kernel_from_env() -> Option<CpuKernel> {
    let v = std::env::var("BANTER_PRECISION").unwrap_or_default();
    match v.trim().to_ascii_lowercase().as_str() {
        "f32" => None,
        "fma" => Some(CpuKernel::F32),
        "bf16" | "avx512" => Some(CpuKernel::Vectors),
        "int8" => Some(CpuKernel::Int8),
        _ => Some(CpuKernel::Tiles),
    }
}

fn unreachable_noise() -> Result<Tensor, VitsError> {
    Err(VitsError::Input("no noise source".to_owned()))
}

/// Standard normal values from a seed: `SplitMix64` and Box–Muller. Small, fast and the same on
/// every machine, which is all the sampling needs.
struct Normal {
    state: u64,
    spare: Option<f32>,
}

impl Normal {
    fn new(seed: u64) -> Self {
        Self {
            state: seed,
            spare: None,
        }
    }

    fn uniform(&mut self) -> f64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        // 53 random bits in (0, 1]
        ((z >> 11) as f64 + 1.0) / (1u64 << 53) as f64
    }

    fn next(&mut self) -> f32 {
        if let Some(v) = self.spare.take() {
            return v;
        }
        let (u1, u2) = (self.uniform(), self.uniform());
        let r = (-2.0 * u1.ln()).sqrt();
        let theta = 2.0 * std::f64::consts::PI * u2;
        self.spare = Some((r * theta.sin()) as f32);
        (r * theta.cos()) as f32
    }

    fn tensor(&mut self, shape: &[usize], device: &Device) -> Result<Tensor, VitsError> {
        let n: usize = shape.iter().product();
        let v: Vec<f32> = (0..n).map(|_| self.next()).collect();
        Ok(Tensor::from_vec(v, shape, device)?)
    }
}

#[cfg(test)]
mod tests {
    use super::Normal;

    #[test]
    fn the_seeded_noise_is_standard_normal_and_repeatable() {
        let mut a = Normal::new(7);
        let v: Vec<f32> = (0..20_000).map(|_| a.next()).collect();
        let mean = v.iter().sum::<f32>() / v.len() as f32;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f32>() / v.len() as f32;
        assert!(mean.abs() < 0.03, "mean {mean}");
        assert!((var - 1.0).abs() < 0.05, "variance {var}");
        let mut b = Normal::new(7);
        assert!(v
            .iter()
            .take(100)
            .all(|&x| (x - b.next()).abs() < f32::EPSILON));
    }
}
