//! The model as the model thread holds it, and the words every layer shares about speech:
//! what to say ([`SpeechRequest`]), how precisely ([`Precision`]) and what can go wrong
//! ([`SynthError`]).
//!
//! [`Synthesizer`] is crate-private and neither `Send` nor `Sync`: the scheduler's model thread
//! loads it and it never leaves that thread, so nothing else in the program can run Kokoro
//! beside the scheduler (the type system, not a comment, keeps the rule). Everyone else asks
//! [`crate::Engine`], which queues the work. Cutting text into segments needs no model and
//! lives in [`crate::segments`]; voice tables live in [`crate::voice::VoiceBook`].

use std::marker::PhantomData;
use std::sync::Arc;

use candle_core::{Device, Tensor};

use crate::assets::ModelStore;
use crate::device::{DeviceChoice, DeviceError};
use crate::kokoro::model::{EncodeInput, Kokoro};
use crate::kokoro::stream::{ChunkPlan, SegmentDecoder};
use crate::kokoro::ModelError;
use crate::phonemes::{Language, PhonemeError};
use crate::segments::Segment;
use crate::voice::{VoiceBook, VoiceError, VoiceSpec, VoiceTable};

pub use crate::kokoro::config::SAMPLE_RATE;

/// Slowest and fastest speaking rate accepted (the model's own limits).
pub use crate::kokoro::config::SPEED_RANGE;

/// Everything that can go wrong between text and audio.
#[derive(Debug, thiserror::Error)]
pub enum SynthError {
    #[error("the text is empty; give some words to speak")]
    EmptyText,
    #[error("nothing to say: `{excerpt}` has no speakable symbols")]
    NothingToSay { excerpt: String },
    #[error("speed {value} is outside {}–{}; pick a value in that range", SPEED_RANGE.start(), SPEED_RANGE.end())]
    Speed { value: f32 },
    #[error(transparent)]
    Voice(#[from] VoiceError),
    #[error(transparent)]
    Phonemes(#[from] PhonemeError),
    #[error(transparent)]
    Device(#[from] DeviceError),
    #[error("model files are missing or incomplete in {dir}; run `banter models fetch`")]
    ModelMissing { dir: String },
    #[error("loading the model from {path}: {source}")]
    Load {
        path: String,
        source: candle_core::Error,
    },
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error("model inference failed: {0}")]
    Inference(#[from] candle_core::Error),
    #[error("starting the model thread: {0}")]
    Start(#[source] std::io::Error),
}

impl SynthError {
    /// True when the caller's input was at fault (exit status 2), false for internal faults.
    #[must_use]
    pub fn is_input_error(&self) -> bool {
        matches!(
            self,
            Self::EmptyText
                | Self::NothingToSay { .. }
                | Self::Speed { .. }
                | Self::Voice(_)
                | Self::Device(_)
        ) || matches!(self, Self::Model(e) if e.is_input_error())
    }
}

/// What to say and how.
#[derive(Debug, Clone)]
pub struct SpeechRequest {
    pub voice: VoiceSpec,
    pub speed: f32,
    /// Overrides the language implied by the voice name (e.g. an American voice reading French).
    pub language: Option<Language>,
}

impl SpeechRequest {
    pub fn new(voice: &str, speed: f32) -> Result<Self, SynthError> {
        Ok(Self {
            voice: VoiceSpec::parse(voice)?,
            speed,
            language: None,
        })
    }
}

/// The arithmetic of the model's big products (the decoder's convolutions, the encoders'
/// dense layers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precision {
    /// f32 throughout, as the reference computes (and as the stage goldens check).
    F32,
    /// bfloat16 products with f32 sums on AVX-512 BF16 vectors: about 1.8× faster decoding
    /// than f32, 37–42 dB from the f32 audio and as close to the reference (see
    /// `kokoro::bf16`). Elsewhere this is the same as `F32`.
    Bf16,
    /// The default: the same bfloat16 products on AMX tiles where the CPU has them (Intel
    /// Xeon since Sapphire Rapids); elsewhere, where AVX-512 VNNI measures well ahead of the
    /// vector kernels, [`Self::Int8`]; else the faster vector kernel on this CPU, bfloat16 or
    /// f32 FMAs (each measured once per process: `kokoro::bf16::fma`, `kokoro::bf16::int8`).
    Amx,
    /// f32 products on the packed panels with AVX-512 FMAs: the f32 arithmetic (only the
    /// order of the sums differs from [`Self::F32`]), faster than the bfloat16 vectors on
    /// CPUs that issue `VDPBF16PS` at half the FMA rate. Elsewhere the same as `F32`.
    Fma,
    /// 8-bit products (AVX-512 VNNI) in the generator's residual blocks, with
    /// a scale per output channel and per input frame (`kokoro::bf16::int8`), the other
    /// layers as [`Self::Amx`] runs them: what `Amx` picks on CPUs with VNNI and no AMX where
    /// VNNI measures faster. On CPUs without VNNI the same as `Amx`.
    Int8,
}

impl Precision {
    /// The variable that chooses: `f32`, `bf16` (vectors only), `fma` (f32 vectors only),
    /// `int8` (the generator in 8 bits) or `amx` (the default).
    pub const ENV: &'static str = "BANTER_PRECISION";

    /// [`Self::Amx`] unless [`Self::ENV`] says `f32`, `bf16`, `fma` or `int8`; an unknown value is
    /// warned about and ignored.
    #[must_use]
    pub fn from_env() -> Self {
        let Ok(v) = std::env::var(Self::ENV) else {
            return Self::Amx;
        };
        match v.trim().to_ascii_lowercase().as_str() {
            "f32" => Self::F32,
            "bf16" | "avx512" => Self::Bf16,
            "fma" => Self::Fma,
            "int8" => Self::Int8,
            "amx" | "auto" | "" => Self::Amx,
            _ => {
                tracing::warn!(
                    "{}={v:?} is not f32, bf16, fma, int8 or amx; using amx where the CPU has it",
                    Self::ENV
                );
                Self::Amx
            }
        }
    }

    /// The kernel the bfloat16 products run on, or `None` for f32.
    #[must_use]
    pub fn bf16_kernel(self) -> Option<crate::kokoro::bf16::Bf16Kernel> {
        use crate::kokoro::bf16::Bf16Kernel;
        match self {
            Self::F32 => None,
            Self::Bf16 => Some(Bf16Kernel::Vectors),
            Self::Amx => Some(Bf16Kernel::auto()),
            Self::Fma => Some(Bf16Kernel::F32),
            Self::Int8 => Some(Bf16Kernel::Int8),
        }
    }
}

/// Where the packed bfloat16 weights are kept between starts (`kokoro::bf16::cache`):
/// `BANTER_CACHE_DIR` (empty: nowhere, every start packs), else `$XDG_CACHE_HOME/banter`.
fn packed_cache_dir() -> Option<std::path::PathBuf> {
    match std::env::var_os("BANTER_CACHE_DIR") {
        Some(dir) if dir.is_empty() => None,
        Some(dir) => Some(dir.into()),
        None => dirs::cache_dir().map(|d| d.join("banter")),
    }
}

/// The loaded model, on the model thread. Not `Send`: see the module docs.
pub(crate) struct Synthesizer {
    model: Arc<Kokoro>,
    device: Device,
    voices: Arc<VoiceBook>,
    /// Keeps the type on the thread that loaded it.
    _model_thread_only: PhantomData<*const ()>,
}

impl Synthesizer {
    /// Loads the converted weights from `store` onto `device`; voice tables come from `voices`.
    pub(crate) fn load(
        store: &ModelStore,
        device: DeviceChoice,
        voices: Arc<VoiceBook>,
    ) -> Result<Self, SynthError> {
        if !store.is_ready() {
            return Err(SynthError::ModelMissing {
                dir: store.root().display().to_string(),
            });
        }
        let device = device.open()?;
        let path = store.kokoro_weights();
        let load_error = |source| SynthError::Load {
            path: path.display().to_string(),
            source,
        };
        let model_error = |e| match e {
            ModelError::Tensor(e) => load_error(e),
            other => SynthError::Model(other),
        };
        let model = match Precision::from_env().bf16_kernel() {
            Some(kernel) => {
                let cache = packed_cache_dir();
                let (model, used) = Kokoro::load_bf16(&path, &device, kernel, cache.as_deref())
                    .map_err(model_error)?;
                tracing::debug!(?used, "packed weights");
                model
            }
            None => Kokoro::load(&path, &device).map_err(model_error)?,
        };
        Ok(Self {
            model: Arc::new(model),
            device,
            voices,
            _model_thread_only: PhantomData,
        })
    }

    /// The device the model runs on.
    pub(crate) fn device(&self) -> &Device {
        &self.device
    }

    /// How many segments' encoders the scheduler should batch in one pass: 8 on CUDA, where a
    /// batch costs about one launch sequence instead of `B`; 1 on the CPU, where a batch
    /// costs ~0.9–1.0× its members one by one (`banter bench batch`) and would only delay
    /// the first member's audio. `BANTER_ENCODER_BATCH=N` overrides (1–64).
    pub(crate) fn encoder_batch(&self) -> usize {
        const ENV: &str = "BANTER_ENCODER_BATCH";
        if let Ok(v) = std::env::var(ENV) {
            match v.trim().parse::<usize>() {
                Ok(n) if (1..=64).contains(&n) => return n,
                _ => tracing::warn!("{ENV}={v:?} is not a number from 1 to 64; ignored"),
            }
        }
        if self.device.is_cuda() {
            8
        } else {
            1
        }
    }

    /// Encodes `segment` (everything before its first audio) and returns its decoder, which
    /// yields the audio in the windows of `plan`.
    pub(crate) fn begin(
        &self,
        segment: &Segment,
        request: &SpeechRequest,
        plan: ChunkPlan,
    ) -> Result<SegmentDecoder, SynthError> {
        check_speed(request.speed)?;
        let voice = self.voices.voice(&request.voice)?;
        let style = self.style(&voice, segment.ids.len())?;
        Ok(SegmentDecoder::new(
            Arc::clone(&self.model),
            &segment.ids,
            &style,
            request.speed,
            plan,
        )?)
    }

    /// [`Self::begin`] for several segments (of any requests) at once: their encoders run as
    /// one padded batch ([`crate::kokoro::model::KokoroEncoder::encode_batch`]), then each
    /// gets its decoder. One result per item, in order; an item's error is its own.
    pub(crate) fn begin_batch(
        &self,
        items: &[(&Segment, &SpeechRequest, ChunkPlan)],
    ) -> Vec<Result<SegmentDecoder, SynthError>> {
        let styles: Vec<Result<Tensor, SynthError>> = items
            .iter()
            .map(|(segment, request, _)| {
                check_speed(request.speed)?;
                let voice = self.voices.voice(&request.voice)?;
                self.style(&voice, segment.ids.len())
            })
            .collect();
        let ready: Vec<usize> = (0..items.len()).filter(|&i| styles[i].is_ok()).collect();
        let inputs: Vec<EncodeInput<'_>> = ready
            .iter()
            .filter_map(|&i| {
                let style = styles[i].as_ref().ok()?;
                Some(EncodeInput {
                    tokens: &items[i].0.ids,
                    style,
                    speed: items[i].1.speed,
                })
            })
            .collect();
        let mut encoded = self.model.encoder().encode_batch(&inputs).into_iter();
        let mut out = Vec::with_capacity(items.len());
        for (i, style) in styles.into_iter().enumerate() {
            out.push(style.and_then(|style| {
                // `encode_batch` returns one result per input; running short is a bug of ours,
                // reported as the model's fault rather than a panic.
                let prosody = encoded.next().ok_or_else(|| {
                    SynthError::Inference(candle_core::Error::Msg(
                        "the batched encoder returned too few results".into(),
                    ))
                })?;
                Ok(SegmentDecoder::from_prosody(
                    Arc::clone(&self.model),
                    &prosody.map_err(ModelError::from)?,
                    &style,
                    items[i].2,
                )?)
            }));
        }
        out
    }

    fn style(&self, voice: &VoiceTable, ids: usize) -> Result<Tensor, SynthError> {
        Ok(Tensor::from_slice(
            voice.style_for(ids),
            (1, crate::voice::STYLE_DIM),
            &self.device,
        )?)
    }
}

pub(crate) fn check_speed(speed: f32) -> Result<(), SynthError> {
    if speed.is_finite() && SPEED_RANGE.contains(&speed) {
        Ok(())
    } else {
        Err(SynthError::Speed { value: speed })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speed_limits() {
        assert!(check_speed(1.0).is_ok());
        assert!(check_speed(0.5).is_ok());
        assert!(check_speed(2.0).is_ok());
        for bad in [0.49, 2.01, f32::NAN, f32::INFINITY, -1.0] {
            assert!(matches!(check_speed(bad), Err(SynthError::Speed { .. })));
        }
    }
}
