//! Tests: render keys, cache round trips, LRU eviction order, the cap, recency on hits.

use super::support::{db_path, table};
use crate::library::{Library, LibraryOptions, RenderKey, RenderKeyParts};

fn parts(ids: &[u32]) -> RenderKeyParts<'_> {
    RenderKeyParts {
        model_id: "kokoro-v1.0",
        model_version: "abc123",
        phoneme_ids: ids,
        voice_table_hash: "ffee",
        speed: 1.0,
        sample_rate: 24_000,
        engine_version: "0.1.0",
    }
}

fn key(i: u32) -> RenderKey {
    RenderKey::new(&parts(&[i, 1, 2]))
}

/// `n` samples worth 4·n bytes, recognisable by `seed`.
#[allow(clippy::cast_precision_loss)]
fn audio(seed: u32, n: usize) -> Vec<f32> {
    (0..n).map(|i| seed as f32 + i as f32 * 1e-4).collect()
}

fn capped(dir: &tempfile::TempDir, cap: u64) -> Library {
    Library::open_with(
        db_path(dir),
        LibraryOptions {
            cache_cap_bytes: cap,
            ..LibraryOptions::default()
        },
    )
    .unwrap()
}

#[test]
fn render_keys_are_stable_and_sensitive_to_every_part() {
    let base = parts(&[5, 6, 7]);
    let k = RenderKey::new(&base);
    assert_eq!(k.as_str().len(), 64);
    assert_eq!(k, RenderKey::new(&parts(&[5, 6, 7])));
    assert_eq!(
        RenderKey::from_hex(&k.as_str().to_uppercase()),
        Some(k.clone())
    );
    assert_eq!(RenderKey::from_hex("xyz"), None);
    let variants = [
        RenderKeyParts {
            model_id: "kokoro-v1.1",
            ..base
        },
        RenderKeyParts {
            model_version: "abc124",
            ..base
        },
        RenderKeyParts {
            phoneme_ids: &[5, 6],
            ..base
        },
        RenderKeyParts {
            phoneme_ids: &[5, 6, 7, 0],
            ..base
        },
        RenderKeyParts {
            voice_table_hash: "ffef",
            ..base
        },
        RenderKeyParts {
            speed: 1.05,
            ..base
        },
        RenderKeyParts {
            sample_rate: 48_000,
            ..base
        },
        RenderKeyParts {
            engine_version: "0.1.1",
            ..base
        },
        // moving bytes between adjacent fields must not collide
        RenderKeyParts {
            model_id: "kokoro-v1.0a",
            model_version: "bc123",
            ..base
        },
    ];
    for v in &variants {
        assert_ne!(RenderKey::new(v), k, "{v:?}");
    }
    assert_eq!(
        RenderKey::new(&RenderKeyParts { speed: 0.0, ..base }),
        RenderKey::new(&RenderKeyParts {
            speed: -0.0,
            ..base
        })
    );
    assert_eq!(RenderKey::voice_table_hash(&table(1.0)).len(), 64);
    assert_ne!(
        RenderKey::voice_table_hash(&table(1.0)),
        RenderKey::voice_table_hash(&table(2.0))
    );
}

#[test]
fn durations_round_trip_with_the_audio() {
    let dir = tempfile::tempdir().unwrap();
    let lib = capped(&dir, 1 << 20);
    let passes: [&[u32]; 2] = [&[3, 1, 4, 1, 5], &[9, 2]];
    lib.cache_put_timed(&key(1), &audio(1, 100), 24_000, Some(&passes))
        .unwrap();
    let got = lib.cache_get(&key(1)).unwrap().unwrap();
    assert_eq!(got.durations, Some(vec![vec![3, 1, 4, 1, 5], vec![9, 2]]));
    // Stored without: none, and the audio is still there.
    lib.cache_put(&key(2), &audio(2, 100), 24_000).unwrap();
    let got = lib.cache_get(&key(2)).unwrap().unwrap();
    assert_eq!((got.durations, got.samples.len()), (None, 100));
}

#[test]
fn put_get_round_trip_and_stats() {
    let dir = tempfile::tempdir().unwrap();
    let lib = capped(&dir, 1 << 20);
    assert_eq!(lib.cache_get(&key(1)).unwrap(), None);
    let a = audio(1, 24_000);
    let out = lib.cache_put(&key(1), &a, 24_000).unwrap();
    assert!(out.stored);
    assert_eq!(out.evicted, 0);
    let got = lib.cache_get(&key(1)).unwrap().unwrap();
    assert_eq!(got.samples, a);
    assert_eq!(got.sample_rate, 24_000);
    // replacing a key keeps one entry
    let b = audio(2, 100);
    lib.cache_put(&key(1), &b, 22_050).unwrap();
    let got = lib.cache_get(&key(1)).unwrap().unwrap();
    assert_eq!((got.samples, got.sample_rate), (b, 22_050));
    let stats = lib.cache_stats().unwrap();
    assert_eq!(
        (stats.entries, stats.bytes, stats.cap_bytes),
        (1, 400, 1 << 20)
    );
    assert_eq!((stats.hits, stats.misses), (2, 1));
    assert_eq!(lib.cache_clear().unwrap(), 1);
    assert_eq!(lib.cache_stats().unwrap().entries, 0);
    assert!(
        lib.check().unwrap().is_ok(),
        "audio rows cascade with their metadata"
    );
}

#[test]
fn lru_eviction_respects_the_cap_and_order() {
    let dir = tempfile::tempdir().unwrap();
    // room for exactly 4 entries of 1000 samples (4000 bytes)
    let lib = capped(&dir, 16_000);
    for i in 0..4 {
        let out = lib.cache_put(&key(i), &audio(i, 1000), 24_000).unwrap();
        assert_eq!(out.evicted, 0);
    }
    assert_eq!(
        lib.cache_keys_lru().unwrap(),
        [key(0), key(1), key(2), key(3)]
    );
    // the fifth pushes out the oldest
    let out = lib.cache_put(&key(4), &audio(4, 1000), 24_000).unwrap();
    assert_eq!(out.evicted, 1);
    assert_eq!(
        lib.cache_keys_lru().unwrap(),
        [key(1), key(2), key(3), key(4)]
    );
    assert!(lib.cache_get(&key(0)).unwrap().is_none());
    // a bigger entry evicts as many as needed, oldest first
    let out = lib.cache_put(&key(5), &audio(5, 2500), 24_000).unwrap();
    assert_eq!(out.evicted, 3);
    assert_eq!(lib.cache_keys_lru().unwrap(), [key(4), key(5)]);
    let stats = lib.cache_stats().unwrap();
    assert!(stats.bytes <= 16_000, "{stats:?}");
    assert_eq!(stats.bytes, 14_000);
    // an entry larger than the cap is not stored and evicts nothing
    let out = lib.cache_put(&key(6), &audio(6, 4001), 24_000).unwrap();
    assert!(!out.stored);
    assert_eq!(lib.cache_keys_lru().unwrap(), [key(4), key(5)]);
    assert!(lib.check().unwrap().is_ok());
}

#[test]
fn a_hit_makes_an_entry_most_recent() {
    let dir = tempfile::tempdir().unwrap();
    let lib = capped(&dir, 12_000);
    for i in 0..3 {
        lib.cache_put(&key(i), &audio(i, 1000), 24_000).unwrap();
    }
    // use the oldest: now 1 is the least recently used
    assert_eq!(
        lib.cache_get(&key(0)).unwrap().unwrap().samples,
        audio(0, 1000)
    );
    assert_eq!(lib.cache_keys_lru().unwrap(), [key(1), key(2), key(0)]);
    lib.cache_put(&key(3), &audio(3, 1000), 24_000).unwrap();
    assert!(lib.cache_get(&key(1)).unwrap().is_none(), "1 was evicted");
    assert!(
        lib.cache_get(&key(0)).unwrap().is_some(),
        "0 survived its hit"
    );
    // a miss changes nothing
    assert_eq!(lib.cache_keys_lru().unwrap(), [key(2), key(3), key(0)]);
}

#[test]
fn lowering_the_cap_evicts_on_demand_and_recency_survives_reopening() {
    let dir = tempfile::tempdir().unwrap();
    {
        let lib = capped(&dir, 1 << 20);
        for i in 0..10 {
            lib.cache_put(&key(i), &audio(i, 1000), 24_000).unwrap();
        }
        lib.cache_get(&key(0)).unwrap();
    }
    let mut lib = capped(&dir, 1 << 20);
    assert_eq!(lib.cache_stats().unwrap().entries, 10);
    lib.set_cache_cap(8_000);
    assert_eq!(lib.cache_evict().unwrap(), 8);
    assert_eq!(lib.cache_keys_lru().unwrap(), [key(9), key(0)]);
}
