//! The cache wrapper's bookkeeping without the model: a fake renderer stands in for Kokoro.

use std::cell::Cell;

use super::*;
use crate::library::LibraryOptions;
use crate::phonemes::Language;
use crate::render::FromModel as Direct;

fn library(dir: &tempfile::TempDir) -> Library {
    Library::open(dir.path().join("library.sqlite")).expect("open a temp library")
}

/// Audio of `n` samples with one pass's durations, as the model gives a sentence.
fn said(value: f32, n: usize) -> SentenceAudio {
    SentenceAudio {
        samples: vec![value; n],
        durations: vec![Arc::from(vec![2u32, 5, 1, 3])],
    }
}

fn key(ids: &[u32], speed: f32) -> RenderKey {
    sentence_key(&model_version(), &[ids.to_vec()], "table-a", speed, None)
}

#[test]
fn second_request_is_a_hit_and_does_not_render() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cached = Cached::new(Direct, library(&dir));
    let renders = Cell::new(0);
    let fake = || {
        renders.set(renders.get() + 1);
        Ok(said(0.25, 4800))
    };
    let k = key(&[1, 2, 3], 1.0);
    let first = cached.fetch_or_render(Some(&k), fake).expect("render");
    let second = cached.fetch_or_render(Some(&k), fake).expect("hit");
    assert_eq!(first, second, "the hit has the audio and the durations");
    assert_eq!(renders.get(), 1, "the hit must not render");
    let counts = cached.counts();
    assert_eq!((counts.hits, counts.misses, counts.errors), (1, 1, 0));
    // A different sentence misses and renders.
    cached
        .fetch_or_render(Some(&key(&[1, 2, 4], 1.0)), fake)
        .expect("render");
    assert_eq!(renders.get(), 2);
    assert_eq!(cached.counts().misses, 2);
}

#[test]
fn an_entry_without_durations_is_rendered_again() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cached = Cached::new(Direct, library(&dir));
    let k = key(&[4, 2], 1.0);
    cached
        .with_library(|l| l.cache_put(&k, &[0.5; 10], SAMPLE_RATE))
        .expect("an entry from before word timing");
    let got = cached
        .fetch_or_render(Some(&k), || Ok(said(0.25, 10)))
        .expect("render");
    assert_eq!(got, said(0.25, 10));
    assert_eq!((cached.counts().hits, cached.counts().misses), (0, 1));
    let again = cached
        .fetch_or_render(Some(&k), || Err(RenderError::Cancelled))
        .expect("now a hit");
    assert_eq!(again, said(0.25, 10));
}

#[test]
fn hits_are_counted_in_the_scheduler_metrics() {
    let dir = tempfile::tempdir().expect("temp dir");
    let metrics = Arc::new(Metrics::default());
    let cached = Cached::new(Direct, library(&dir)).with_metrics(Arc::clone(&metrics));
    let k = key(&[7], 1.0);
    for _ in 0..3 {
        cached
            .fetch_or_render(Some(&k), || Ok(said(0.1, 10)))
            .expect("ok");
    }
    assert_eq!(metrics.cache_hits.load(Ordering::Relaxed), 2);
}

#[test]
fn render_errors_pass_through_and_nothing_is_stored() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cached = Cached::new(Direct, library(&dir));
    let k = key(&[9, 9], 1.0);
    let err = cached
        .fetch_or_render(Some(&k), || Err(RenderError::Cancelled))
        .expect_err("the inner error");
    assert!(matches!(err, RenderError::Cancelled));
    let (_, lib) = cached.into_parts();
    assert_eq!(lib.cache_stats().expect("stats").entries, 0);
}

#[test]
fn no_key_always_renders() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cached = Cached::new(Direct, library(&dir));
    let renders = Cell::new(0);
    for _ in 0..2 {
        cached
            .fetch_or_render(None, || {
                renders.set(renders.get() + 1);
                Ok(said(0.0, 3))
            })
            .expect("ok");
    }
    assert_eq!(renders.get(), 2);
    assert_eq!(cached.counts().hits, 0);
}

#[test]
fn a_cache_too_small_to_store_still_renders() {
    let dir = tempfile::tempdir().expect("temp dir");
    let options = LibraryOptions {
        cache_cap_bytes: 16,
        ..LibraryOptions::default()
    };
    let lib = Library::open_with(dir.path().join("l.sqlite"), options).expect("open");
    let cached = Cached::new(Direct, lib);
    let k = key(&[1], 1.0);
    for _ in 0..2 {
        let audio = cached
            .fetch_or_render(Some(&k), || Ok(said(0.5, 100)))
            .expect("ok");
        assert_eq!(audio.samples.len(), 100);
    }
    assert_eq!(cached.counts().misses, 2, "nothing fit in the cache");
}

#[test]
fn keys_separate_everything_that_changes_the_audio() {
    let v = model_version();
    let base = sentence_key(&v, &[vec![1, 2, 3]], "t", 1.0, None);
    assert_eq!(base, sentence_key(&v, &[vec![1, 2, 3]], "t", 1.0, None));
    let others = [
        sentence_key(&v, &[vec![1, 2, 4]], "t", 1.0, None),
        sentence_key(&v, &[vec![1], vec![2, 3]], "t", 1.0, None),
        sentence_key(&v, &[vec![1, 2], vec![3]], "t", 1.0, None),
        sentence_key(&v, &[vec![1, 2, 3]], "u", 1.0, None),
        sentence_key(&v, &[vec![1, 2, 3]], "t", 1.1, None),
        sentence_key(&v, &[vec![1, 2, 3]], "t", 1.0, Some(Language::EnGb)),
        sentence_key("other-model", &[vec![1, 2, 3]], "t", 1.0, None),
    ];
    for (i, k) in others.iter().enumerate() {
        assert_ne!(&base, k, "variant {i} must change the key");
    }
    for (i, a) in others.iter().enumerate() {
        for b in &others[i + 1..] {
            assert_ne!(a, b);
        }
    }
}
