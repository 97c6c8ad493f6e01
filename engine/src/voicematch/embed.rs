//! Embeddings of clips and of voices, each computed once and cached in the library.
//!
//! A clip is keyed by the sha256 of its file's bytes (hashed while streaming, so an hour-long
//! file is not held in memory twice), a voice by [`probe_key`]: the hash of everything that
//! determines its rendered probe. Both keys carry the encoder's id and version, so a new
//! encoder recomputes rather than compares embeddings from two different spaces.
//!
//! A Piper voice's probe is keyed by [`piper_probe_key`]: the sha256 of its model file *as it
//! is now* (hashed before the cache is read, not taken from the library's record) and its
//! speaker, as the render cache keys Piper audio. A model file replaced under the same name is
//! therefore never scored from the embedding of the file that was there before.

use std::io::Read;
use std::path::Path;

use candle_core::Device;
use sha2::{Digest, Sha256};

use super::{VoiceMatchError, MAX_CLIP_SECS, MIN_SPEECH_SECS, PROBE_TEXT};
use crate::assets::ModelStore;
use crate::audio::decode::{decode_file, DecodeError, DecodeOptions};
use crate::audio::Resampler;
use crate::library::{EmbeddingKey, Library};
use crate::render::cache::{model_version, MODEL_ID};
use crate::speaker::preprocess::preprocess;
use crate::speaker::{
    Embedding, SpeakerEncoder, SpeakerError, EMBEDDING_DIM, ENCODER_ID, ENCODER_VERSION,
    SAMPLE_RATE as ENCODER_RATE,
};
use crate::speech::SynthError;
use crate::speech::{SpeechRequest, SAMPLE_RATE};
use crate::voice::{file_sha256, PiperVoice, VoiceError, VoiceSpec};
use crate::{Engine, Mode};

/// Whether an embedding came from the library or was computed now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheUse {
    Hit,
    Miss,
}

impl CacheUse {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Hit => "hit",
            Self::Miss => "miss",
        }
    }
}

/// A reference clip's embedding and what it was made from.
#[derive(Debug, Clone, PartialEq)]
pub struct ClipEmbedding {
    pub embedding: Embedding,
    pub cache: CacheUse,
    /// Seconds of the clip that were embedded (at most [`MAX_CLIP_SECS`]).
    pub embedded_secs: f64,
    /// True when the clip was longer than [`MAX_CLIP_SECS`] and only its start was embedded.
    pub truncated: bool,
    /// Seconds of speech left after trimming silences; `None` on a cache hit.
    pub speech_secs: Option<f64>,
    /// Set when the stream broke off part-way (what decoded before was used).
    pub damaged: Option<String>,
}

/// The speaker encoder with the library's embedding cache around it.
#[derive(Debug, Clone)]
pub struct VoiceEmbedder {
    encoder: SpeakerEncoder,
}

impl VoiceEmbedder {
    #[must_use]
    pub fn new(encoder: SpeakerEncoder) -> Self {
        Self { encoder }
    }

    /// Loads the encoder from the store (fetch it first with
    /// [`ModelStore::ensure_speaker_encoder`]).
    pub fn load(store: &ModelStore, device: &Device) -> Result<Self, VoiceMatchError> {
        Ok(Self::new(SpeakerEncoder::load(
            &store.speaker_encoder(),
            device,
        )?))
    }

    /// Embeds the clip at `path`, or reads its embedding from `library` when this exact file
    /// was embedded before (the encoder does not run then).
    pub fn embed_clip(
        &self,
        library: &Library,
        path: &Path,
    ) -> Result<ClipEmbedding, VoiceMatchError> {
        let key = EmbeddingKey {
            audio_hash: clip_hash(path)?,
            encoder: ENCODER_ID.to_owned(),
            encoder_version: ENCODER_VERSION,
        };
        if let Some(stored) = library.get_embedding(&key)? {
            if let Some(embedding) = embedding_from(&stored.vector) {
                return Ok(ClipEmbedding {
                    embedding,
                    cache: CacheUse::Hit,
                    embedded_secs: stored.clip_secs,
                    truncated: stored.clip_secs >= MAX_CLIP_SECS - 1e-3,
                    speech_secs: None,
                    damaged: None,
                });
            }
        }
        let clip = decode_clip(path)?;
        let (embedding, speech_secs) = self.embed_speech(&clip.samples).map_err(|e| match e {
            SpeechError::Silence => VoiceMatchError::Silence {
                path: path.to_owned(),
            },
            SpeechError::TooShort(speech_secs) => VoiceMatchError::TooLittleSpeech {
                path: path.to_owned(),
                speech_secs,
            },
            SpeechError::Encoder(e) => e.into(),
        })?;
        let embedded_secs = clip.duration_secs();
        library.put_embedding(&key, embedding.as_slice(), embedded_secs, clip.source_rate)?;
        Ok(ClipEmbedding {
            embedding,
            cache: CacheUse::Miss,
            embedded_secs,
            truncated: clip.truncated,
            speech_secs: Some(speech_secs),
            damaged: clip.damaged,
        })
    }

    /// Embeds 16 kHz mono audio that must hold at least [`MIN_SPEECH_SECS`] of speech;
    /// returns the embedding and the seconds of speech found.
    pub fn embed_speech(&self, samples_16k: &[f32]) -> Result<(Embedding, f64), SpeechError> {
        let speech = preprocess(samples_16k);
        let speech_secs = speech.len() as f64 / f64::from(ENCODER_RATE);
        if speech.is_empty() {
            return Err(SpeechError::Silence);
        }
        if speech_secs < MIN_SPEECH_SECS {
            return Err(SpeechError::TooShort(speech_secs));
        }
        match self.encoder.embed_preprocessed(&speech) {
            Ok(e) => Ok((e, speech_secs)),
            Err(SpeakerError::NoSpeech { .. }) => Err(SpeechError::Silence),
            Err(e) => Err(SpeechError::Encoder(e)),
        }
    }

    /// Embeds audio at `rate` (a rendered line or probe) with no minimum length: short audio
    /// gives a noisier embedding, which callers weigh themselves.
    pub fn embed_audio(&self, samples: &[f32], rate: u32) -> Result<Embedding, VoiceMatchError> {
        let resampled;
        let at_16k = if rate == ENCODER_RATE {
            samples
        } else {
            let mut r = Resampler::new(rate, ENCODER_RATE)?;
            let mut out = Vec::with_capacity(samples.len() * 2 / 3 + 16);
            r.process(samples, &mut out)?;
            r.flush(&mut out)?;
            resampled = out;
            &resampled
        };
        Ok(self.encoder.embed_samples_16k(at_16k)?)
    }

    /// The probe embedding of `spec` (a stock voice or blend, as the synthesizer renders it:
    /// a table registered for it wins), rendering the probe only if the library lacks it.
    pub fn voice_embedding(
        &self,
        library: &Library,
        engine: &Engine,
        spec: &VoiceSpec,
    ) -> Result<(Embedding, CacheUse), VoiceMatchError> {
        let table = engine.voice(spec)?;
        let key = probe_key(
            &crate::library::RenderKey::voice_table_hash(&table),
            spec.language().espeak_code(),
        );
        self.probe(library, engine, &key, spec.clone())
    }

    /// The embedding stored under `key`, else the probe spoken in `voice`, embedded and
    /// stored under `key`.
    fn probe(
        &self,
        library: &Library,
        engine: &Engine,
        key: &EmbeddingKey,
        voice: VoiceSpec,
    ) -> Result<(Embedding, CacheUse), VoiceMatchError> {
        if let Some(stored) = library.get_embedding(key)? {
            if let Some(e) = embedding_from(&stored.vector) {
                return Ok((e, CacheUse::Hit));
            }
        }
        let request = SpeechRequest {
            voice,
            speed: 1.0,
            language: None,
        };
        // Background work: a probe never delays anyone listening, and it is decoded whole, so
        // the same voice always gives the same embedding.
        let audio = engine.synthesize(PROBE_TEXT, &request, Mode::Background)?;
        let embedding = self.embed_audio(&audio, SAMPLE_RATE)?;
        let secs = audio.len() as f64 / f64::from(SAMPLE_RATE);
        library.put_embedding(key, embedding.as_slice(), secs, SAMPLE_RATE)?;
        Ok((embedding, CacheUse::Miss))
    }
}

impl VoiceEmbedder {
    /// The probe embedding of a Piper voice, rendering the probe (registered with `engine`
    /// first) only if the library lacks it. The model file is hashed first: a file that is
    /// gone, unreadable or no longer the one added is a [`VoiceError::PiperFile`] naming it.
    pub fn piper_embedding(
        &self,
        library: &Library,
        engine: &Engine,
        voice: &PiperVoice,
    ) -> Result<(Embedding, CacheUse), VoiceMatchError> {
        let refuse = |reason: String| {
            VoiceMatchError::Synth(SynthError::Voice(VoiceError::PiperFile {
                name: voice.name.clone(),
                path: voice.onnx.clone(),
                reason,
            }))
        };
        let sha256 = file_sha256(&voice.onnx).map_err(|e| {
            refuse(format!(
                "the model file cannot be read ({e}): was it moved or deleted?"
            ))
        })?;
        if sha256 != voice.sha256 {
            return Err(refuse(
                "the file changed since the voice was added (its sha256 differs); add the voice \
                 again if the new file is the voice you want"
                    .to_owned(),
            ));
        }
        let key = piper_probe_key(voice, &sha256);
        // Registered first: the probe (if it must be spoken) speaks through the voice's key.
        engine.register_piper(voice.clone());
        self.probe(library, engine, &key, VoiceSpec::one(voice.key()))
    }
}

/// The embedding-cache key of a Piper voice's probe: the model file's content (`sha256`, as
/// hashed now), the speaker, the voice's inference settings and espeak voice, the probe text
/// and this Banter (its VITS port and Piper phonemizer).
#[must_use]
pub fn piper_probe_key(voice: &PiperVoice, sha256: &str) -> EmbeddingKey {
    let i = voice.config.inference;
    keyed_probe(
        b"banter.piper-probe.v1\0",
        &[
            sha256,
            &format!("{:?}", voice.speaker),
            &format!("{}\0{}\0{}", i.noise_scale, i.length_scale, i.noise_w),
            &voice.config.espeak_voice,
            env!("CARGO_PKG_VERSION"),
            PROBE_TEXT,
        ],
    )
}

/// A probe's embedding-cache key: the sha256 of `tag`, then each part with its length first
/// (so no two lists of parts hash alike), under this encoder.
fn keyed_probe(tag: &[u8], parts: &[&str]) -> EmbeddingKey {
    let mut h = Sha256::new();
    h.update(tag);
    for part in parts {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    EmbeddingKey {
        audio_hash: hex::encode(h.finalize()),
        encoder: ENCODER_ID.to_owned(),
        encoder_version: ENCODER_VERSION,
    }
}

/// A reference clip decoded as the encoder takes it: 16 kHz mono, at most [`MAX_CLIP_SECS`].
pub(crate) fn decode_clip(path: &Path) -> Result<crate::audio::decode::DecodedAudio, DecodeError> {
    decode_file(
        path,
        &DecodeOptions {
            target_rate: Some(ENCODER_RATE),
            max_secs: Some(MAX_CLIP_SECS),
        },
    )
}

/// Why audio could not be embedded as a speaker's voice.
#[derive(Debug, thiserror::Error)]
pub enum SpeechError {
    #[error("no speech found (silence only)")]
    Silence,
    #[error("only {0:.1} s of speech")]
    TooShort(f64),
    #[error(transparent)]
    Encoder(SpeakerError),
}

/// The embedding-cache key of a voice's probe: the model, the engine, the probe text, the
/// language it is phonemized in, and the voice's style table hash.
#[must_use]
pub fn probe_key(voice_table_hash: &str, language: &str) -> EmbeddingKey {
    keyed_probe(
        b"banter.voice-probe.v1\0",
        &[
            MODEL_ID,
            &model_version(),
            env!("CARGO_PKG_VERSION"),
            language,
            PROBE_TEXT,
            voice_table_hash,
        ],
    )
}

/// A stored vector as an [`Embedding`]; `None` if it has the wrong width or is all zero.
#[must_use]
pub fn embedding_from(vector: &[f32]) -> Option<Embedding> {
    let values: [f32; EMBEDDING_DIM] = vector.try_into().ok()?;
    Embedding::from_unnormalised(values)
}

/// Lowercase hex sha256 of a clip file's bytes, read in blocks: the key of its embedding.
pub fn clip_hash(path: &Path) -> Result<String, VoiceMatchError> {
    let io = |source| VoiceMatchError::Io {
        path: path.to_owned(),
        source,
    };
    let mut file = fs_err::File::open(path).map_err(io)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex::encode(h.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_keys_depend_on_voice_and_language() {
        let a = probe_key("table-a", "en-us");
        assert_eq!(a, probe_key("table-a", "en-us"));
        assert_ne!(a, probe_key("table-b", "en-us"));
        assert_ne!(a, probe_key("table-a", "en-gb"));
        assert_eq!(a.encoder, ENCODER_ID);
        assert_eq!(a.audio_hash.len(), 64);
    }

    #[test]
    fn stored_vectors_of_the_wrong_shape_are_ignored() {
        assert!(embedding_from(&[1.0; 10]).is_none());
        assert!(embedding_from(&[0.0; EMBEDDING_DIM]).is_none());
        let e = embedding_from(&[2.0; EMBEDDING_DIM]).expect("valid");
        assert!((e.cosine(&e) - 1.0).abs() < 1e-5);
    }

    fn piper(speaker: Option<i64>, espeak: &str) -> PiperVoice {
        let json = format!(
            r#"{{"audio": {{"sample_rate": 22050}}, "espeak": {{"voice": "{espeak}"}},
                "phoneme_id_map": {{"^": [1], "_": [0], "$": [2]}}, "num_speakers": 4}}"#
        );
        PiperVoice {
            name: "joe".into(),
            onnx: "/v/joe.onnx".into(),
            sha256: "ab".repeat(32),
            config: std::sync::Arc::new(
                vits::config::PiperConfig::parse(&json).expect("a valid config"),
            ),
            speaker,
        }
    }

    #[test]
    fn piper_probe_keys_follow_the_file_content_and_speaker() {
        let sha = "ab".repeat(32);
        let a = piper_probe_key(&piper(None, "en-us"), &sha);
        assert_eq!(a, piper_probe_key(&piper(None, "en-us"), &sha));
        // A replaced file (another sha256), another speaker, another espeak voice.
        assert_ne!(a, piper_probe_key(&piper(None, "en-us"), &"cd".repeat(32)));
        assert_ne!(a, piper_probe_key(&piper(Some(1), "en-us"), &sha));
        assert_ne!(
            piper_probe_key(&piper(Some(1), "en-us"), &sha),
            piper_probe_key(&piper(Some(2), "en-us"), &sha)
        );
        assert_ne!(a, piper_probe_key(&piper(None, "en-gb"), &sha));
        // Never a Kokoro probe's key.
        assert_ne!(a.audio_hash, probe_key(&sha, "en-us").audio_hash);
    }
}
