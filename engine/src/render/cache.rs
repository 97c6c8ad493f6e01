//! The render cache in the pipeline: a [`SentenceSource`] that looks every sentence up in the
//! voice library's render cache before asking the model, and stores what the model made.
//!
//! Why per sentence: the renderer asks for audio one sentence at a time, so re-rendering an
//! unchanged script renders nothing, and editing one line re-renders only the sentences whose
//! phonemes changed (gaps and placement are recomputed, which costs nothing). The key
//! ([`RenderKey`]) holds everything that determines a sentence's audio: the model's id and
//! file hash, the phoneme ids of every Kokoro pass the sentence takes, the hash of the voice's
//! style table (so a blend edited under the same name misses), the speed, 24 kHz and the
//! engine's version.
//!
//! The cache is a convenience: a library error (busy past its timeout, a full disk) is logged
//! and the sentence is rendered or left uncached; it never fails a render.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::library::{CachedAudio, Library, RenderKey, RenderKeyParts};
use crate::scheduler::Metrics;
use crate::speech::{SpeechRequest, SAMPLE_RATE};
use crate::Engine;

use super::{RenderError, SentenceAudio, SentenceSource};

/// The model id recorded in every render key.
pub const MODEL_ID: &str = crate::assets::manifest::KOKORO_V1.id;
/// Marks the boundary between two Kokoro passes of one sentence in the key's id list (no
/// phoneme id is this large), so `[a b][c]` and `[a][b c]` hash differently.
const PASS_BREAK: u32 = u32::MAX;

/// The model version recorded in every render key: the ONNX file's sha256 and the version of
/// the conversion to safetensors.
#[must_use]
pub fn model_version() -> String {
    format!(
        "{}+{}",
        crate::assets::manifest::KOKORO_V1.model.sha256,
        kokoro::onnx::CONVERTER_VERSION
    )
}

/// What a Piper voice's audio depends on beyond the ids, in the key's voice slot: the model
/// file's content, the speaker and the voice's inference settings.
fn piper_voice_hash(voice: &crate::voice::PiperVoice) -> String {
    use sha2::{Digest, Sha256};
    let i = voice.config.inference;
    let text = format!(
        "piper\0{}\0{:?}\0{}\0{}\0{}",
        voice.sha256, voice.speaker, i.noise_scale, i.length_scale, i.noise_w
    );
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// Hits, misses and model time of one [`Cached`] source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheCounts {
    pub hits: u64,
    pub misses: u64,
    /// Time spent in the inner source (the model) on misses.
    pub model_time: Duration,
    /// Sentences that could not be read from or written to the cache (logged).
    pub errors: u64,
}

/// A [`SentenceSource`] with the library's render cache in front of `inner`.
pub struct Cached<S> {
    inner: S,
    library: Mutex<Library>,
    /// Voice table hashes by canonical voice spec (hashing a table costs ~1 ms).
    table_hashes: Mutex<HashMap<String, String>>,
    model_version: String,
    metrics: Option<Arc<Metrics>>,
    hits: AtomicU64,
    misses: AtomicU64,
    errors: AtomicU64,
    model_us: AtomicU64,
}

impl<S: SentenceSource> Cached<S> {
    #[must_use]
    pub fn new(inner: S, library: Library) -> Self {
        Self {
            inner,
            library: Mutex::new(library),
            table_hashes: Mutex::new(HashMap::new()),
            model_version: model_version(),
            metrics: None,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            model_us: AtomicU64::new(0),
        }
    }

    /// Also counts hits in a scheduler's [`Metrics::cache_hits`] (served on `/metrics`).
    #[must_use]
    pub fn with_metrics(mut self, metrics: Arc<Metrics>) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// What this source has done so far.
    #[must_use]
    pub fn counts(&self) -> CacheCounts {
        CacheCounts {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            model_time: Duration::from_micros(self.model_us.load(Ordering::Relaxed)),
            errors: self.errors.load(Ordering::Relaxed),
        }
    }

    /// The wrapped source and the library back.
    pub fn into_parts(self) -> (S, Library) {
        let library = self
            .library
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        (self.inner, library)
    }

    /// The key of one sentence; `None` when the voice cannot be loaded (the inner source will
    /// then report that error itself).
    fn key(&self, engine: &Engine, phonemes: &str, request: &SpeechRequest) -> Option<RenderKey> {
        let spec = request.voice.canonical();
        let known = self
            .table_hashes
            .lock()
            .ok()
            .and_then(|m| m.get(&spec).cloned());
        let table_hash = if let Some(h) = known {
            h
        } else {
            let h = match engine.piper_voice(&request.voice).ok()? {
                Some(voice) => piper_voice_hash(&voice),
                None => RenderKey::voice_table_hash(&*engine.voice(&request.voice).ok()?),
            };
            if let Ok(mut m) = self.table_hashes.lock() {
                m.insert(spec, h.clone());
            }
            h
        };
        let passes: Vec<Vec<u32>> = engine
            .sentence_segments_for(phonemes, request)
            .ok()?
            .into_iter()
            .map(|s| s.ids)
            .collect();
        Some(sentence_key(
            &self.model_version,
            &passes,
            &table_hash,
            request.speed,
            request.language,
        ))
    }

    /// The cached audio under `key`, else `render()`'s, stored under `key`. Counts hits and
    /// misses; a cache failure is logged and counted, never returned.
    fn fetch_or_render(
        &self,
        key: Option<&RenderKey>,
        render: impl FnOnce() -> Result<SentenceAudio, RenderError>,
    ) -> Result<SentenceAudio, RenderError> {
        if let Some(key) = key {
            match self.with_library(|l| l.cache_get(key)) {
                // An entry from before word timing has no durations: rendered again.
                Ok(Some(CachedAudio {
                    samples,
                    sample_rate: SAMPLE_RATE,
                    durations: Some(durations),
                })) => {
                    self.hits.fetch_add(1, Ordering::Relaxed);
                    if let Some(m) = &self.metrics {
                        m.cache_hits.fetch_add(1, Ordering::Relaxed);
                    }
                    return Ok(SentenceAudio {
                        samples,
                        durations: durations.into_iter().map(Arc::from).collect(),
                    });
                }
                Ok(_) => {}
                Err(e) => {
                    self.errors.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(error = %e, "render cache read failed; rendering the sentence");
                }
            }
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        let audio = render()?;
        let spent = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.model_us.fetch_add(spent, Ordering::Relaxed);
        if let Some(key) = key {
            let passes: Vec<&[u32]> = audio.durations.iter().map(|d| &d[..]).collect();
            let put = self.with_library(|l| {
                l.cache_put_timed(key, &audio.samples, SAMPLE_RATE, Some(&passes))
            });
            if let Err(e) = put {
                self.errors.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(error = %e, "render cache write failed; the sentence stays uncached");
            }
        }
        Ok(audio)
    }

    fn with_library<T>(&self, f: impl FnOnce(&Library) -> T) -> T {
        let guard = self
            .library
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&guard)
    }
}

impl<S: SentenceSource> SentenceSource for Cached<S> {
    fn sentence(
        &self,
        engine: &Engine,
        phonemes: &str,
        request: &SpeechRequest,
    ) -> Result<SentenceAudio, RenderError> {
        let key = self.key(engine, phonemes, request);
        self.fetch_or_render(key.as_ref(), || {
            self.inner.sentence(engine, phonemes, request)
        })
    }
}

/// The render key of one sentence: the ids of each Kokoro pass it takes (in order), the voice
/// table's hash, the speed and the language override, with this model and engine.
#[must_use]
pub fn sentence_key(
    model_version: &str,
    passes: &[Vec<u32>],
    table_hash: &str,
    speed: f32,
    language: Option<crate::phonemes::Language>,
) -> RenderKey {
    let mut ids = Vec::new();
    for (k, pass) in passes.iter().enumerate() {
        if k > 0 {
            ids.push(PASS_BREAK);
        }
        ids.extend_from_slice(pass);
    }
    // The language acts through the phonemes, already in the key; it is folded into the
    // engine version as well so that a language-dependent model path can never collide.
    let language = language.map_or("", crate::phonemes::Language::espeak_code);
    let engine_version = format!("{}/{language}", env!("CARGO_PKG_VERSION"));
    RenderKey::new(&RenderKeyParts {
        model_id: MODEL_ID,
        model_version,
        phoneme_ids: &ids,
        voice_table_hash: table_hash,
        speed,
        sample_rate: SAMPLE_RATE,
        engine_version: &engine_version,
    })
}

#[cfg(test)]
mod tests;
