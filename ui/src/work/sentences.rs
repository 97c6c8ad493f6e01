//! The playback sentence cache: the audio of every sentence played, with the model's durations
//! that time its words, keyed by what determines both (voice, speed, phonemes). Playing again
//! after an edit takes every unchanged sentence from here, so only the edited line is rendered
//! anew; that is what makes "edit while playing" cheap, and a cached sentence is highlighted
//! word by word like a fresh one. Memory is bounded by [`MAX_SAMPLES`]; past it the cache
//! starts over (durations are a few hundred numbers a sentence, not counted).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use engine::TimedAudio;

/// About 14 minutes of 24 kHz audio (55 MB).
pub const MAX_SAMPLES: usize = 20_000_000;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SentenceKey {
    pub voice: String,
    pub speed_bits: u32,
    pub phonemes: String,
}

impl SentenceKey {
    #[must_use]
    pub fn new(voice: &str, speed: f32, phonemes: &str) -> Self {
        Self {
            voice: voice.to_owned(),
            speed_bits: speed.to_bits(),
            phonemes: phonemes.to_owned(),
        }
    }
}

/// The sentences and their total length in samples.
type Entries = (HashMap<SentenceKey, Arc<TimedAudio>>, usize);

#[derive(Debug, Default)]
pub struct SentenceCache {
    map: Mutex<Entries>,
    hits: AtomicUsize,
    misses: AtomicUsize,
}

impl SentenceCache {
    /// The cached audio and durations for `key`, counting a hit or a miss.
    pub fn get(&self, key: &SentenceKey) -> Option<Arc<TimedAudio>> {
        let found = self
            .map
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .0
            .get(key)
            .cloned();
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    pub fn put(&self, key: SentenceKey, audio: Arc<TimedAudio>) {
        let mut guard = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        let (map, samples) = &mut *guard;
        let len = audio.samples.len();
        if *samples + len > MAX_SAMPLES {
            map.clear();
            *samples = 0;
        }
        *samples += len;
        if let Some(old) = map.insert(key, audio) {
            *samples -= old.samples.len();
        }
    }

    /// Sentences taken from the cache and sentences rendered, since the studio started.
    #[must_use]
    pub fn stats(&self) -> (usize, usize) {
        (
            self.hits.load(Ordering::Relaxed),
            self.misses.load(Ordering::Relaxed),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_what_was_put_and_counts() {
        let cache = SentenceCache::default();
        let key = SentenceKey::new("af_bella", 1.0, "həlˈoʊ");
        assert!(cache.get(&key).is_none());
        let audio = TimedAudio {
            samples: vec![0.5; 10],
            durations: vec![Arc::from(&[1, 2, 1][..])],
        };
        cache.put(key.clone(), Arc::new(audio.clone()));
        assert_eq!(
            cache.get(&key).as_deref(),
            Some(&audio),
            "durations kept too"
        );
        assert!(cache
            .get(&SentenceKey::new("af_bella", 1.1, "həlˈoʊ"))
            .is_none());
        assert_eq!(cache.stats(), (1, 2));
    }
}
