//! The voice tables an engine has loaded: stock voices read from the model store, blends
//! computed once, and library voices registered under their recipe.
//!
//! Tables are plain data (510 × 256 floats), not the model: the studio, the HTTP handlers and
//! the model thread all read them from one shared book, so checking a voice name or hashing a
//! table for the render cache never waits for the model.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use crate::assets::ModelStore;

use super::{PiperVoice, StockVoice, VoiceError, VoiceSpec, VoiceTable};

/// Loaded voice tables by canonical spec, and the Piper voices registered by key; shareable
/// between threads.
#[derive(Debug)]
pub struct VoiceBook {
    store: ModelStore,
    tables: Mutex<HashMap<String, Arc<VoiceTable>>>,
    piper: Mutex<HashMap<String, Arc<PiperVoice>>>,
}

impl VoiceBook {
    /// A book over the stock voices in `store`.
    #[must_use]
    pub fn new(store: &ModelStore) -> Self {
        Self {
            store: store.clone(),
            tables: Mutex::new(HashMap::new()),
            piper: Mutex::new(HashMap::new()),
        }
    }

    /// The stock voices in the model store, sorted by name.
    #[must_use]
    pub fn stock_voices(&self) -> Vec<StockVoice> {
        stock_voices(&self.store)
    }

    /// Checks that `spec` can be spoken: a Kokoro voice's table loads, a Piper voice is
    /// registered.
    pub fn check(&self, spec: &VoiceSpec) -> Result<(), VoiceError> {
        match spec.piper_key() {
            Some(key) => self.piper(key).map(|_| ()),
            None => self.voice(spec).map(|_| ()),
        }
    }

    /// Makes a Piper voice speakable; returns the spec that names it.
    pub fn register_piper(&self, voice: PiperVoice) -> VoiceSpec {
        let key = voice.key();
        self.piper
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.clone(), Arc::new(voice));
        VoiceSpec::one(key)
    }

    /// The registered Piper voice with `key`.
    pub fn piper(&self, key: &str) -> Result<Arc<PiperVoice>, VoiceError> {
        self.piper
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .cloned()
            .ok_or_else(|| VoiceError::UnknownPiper {
                key: key.to_owned(),
            })
    }

    /// Loads (once) the table of a stock voice or blend; a table registered for `spec` wins.
    pub fn voice(&self, spec: &VoiceSpec) -> Result<Arc<VoiceTable>, VoiceError> {
        if let Some(key) = spec.piper_key() {
            return Err(VoiceError::MalformedBlend {
                spec: key.to_owned(),
                reason: "a Piper voice has no style table".to_owned(),
            });
        }
        let key = spec.canonical();
        if let Some(t) = self.lock().get(&key) {
            return Ok(Arc::clone(t));
        }
        let mut parts = Vec::with_capacity(spec.terms.len());
        for term in &spec.terms {
            let path = self.store.voice_table(&term.voice);
            if StockVoice::from_name(&term.voice).is_none() || !path.is_file() {
                let available = self
                    .stock_voices()
                    .into_iter()
                    .map(|v| v.name)
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err(VoiceError::Unknown {
                    name: term.voice.clone(),
                    available,
                });
            }
            parts.push((VoiceTable::read(&path)?, term.weight));
        }
        let table = Arc::new(VoiceTable::blend(&parts));
        self.lock().insert(key, Arc::clone(&table));
        Ok(table)
    }

    /// Makes `spec` render with `table` instead of the table its recipe would compute: a saved
    /// library voice (a blend or a matched voice) keeps the exact table it was saved with.
    /// Replaces any table loaded before under the same canonical spec.
    pub fn register(&self, spec: &VoiceSpec, table: VoiceTable) {
        self.lock().insert(spec.canonical(), Arc::new(table));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<VoiceTable>>> {
        // The map is only ever inserted into whole entries: a panic elsewhere cannot leave it
        // half-written, so a poisoned lock still holds a consistent map.
        self.tables.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Stock voices present in the store, sorted by name.
#[must_use]
pub fn stock_voices(store: &ModelStore) -> Vec<StockVoice> {
    let mut voices: Vec<StockVoice> = std::fs::read_dir(store.voices_dir())
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let path = e.ok()?.path();
            if path.extension()? != "bin" {
                return None;
            }
            StockVoice::from_name(path.file_stem()?.to_str()?)
        })
        .collect();
    voices.sort_by(|a, b| a.name.cmp(&b.name));
    voices
}
