//! The GE2E speaker encoder against resemblyzer 0.1.4 (`tools/goldens/ge2e.py`), on four
//! clips Banter rendered (`af_heart` twice, `am_michael` with an inserted pause, `bf_emma`).
//!
//! The reference trims silences with WebRTC's VAD, Banter with an energy VAD, so the stages
//! are checked apart: features and network on the reference's own trimming (the mask is in
//! the golden) must match to cosine ≥ 0.999; the full Banter pipeline is measured against the
//! reference and must stay close; and whatever the VAD, one voice on two sentences must be
//! more alike than two voices.

use std::path::PathBuf;
use std::time::Instant;

use candle_core::Device;
use engine::audio::decode::{decode_file, DecodeOptions, DecodedAudio};
use engine::speaker::preprocess::{apply_mask, normalize_volume};
use engine::speaker::{Embedding, SpeakerEncoder, EMBEDDING_DIM, SAMPLE_RATE};
use serde_json::Value;

use crate::support::{goldens_dir, model_store};

/// Parity bar for the stages after trimming.
const MIN_COSINE: f32 = 0.999;
/// The full pipeline with Banter's energy VAD against resemblyzer's (WebRTC VAD) result.
const MIN_COSINE_OWN_VAD: f32 = 0.99;

fn dir() -> PathBuf {
    goldens_dir().join("ge2e")
}

fn golden() -> Value {
    let text = std::fs::read_to_string(dir().join("ge2e.json")).expect("read ge2e.json");
    serde_json::from_str(&text).expect("parse ge2e.json")
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number") as f32)
        .collect()
}

fn embedding(v: &Value) -> Embedding {
    let values: [f32; EMBEDDING_DIM] = floats(v).try_into().expect("256 values");
    Embedding(values)
}

fn bools(v: &Value) -> Vec<bool> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_bool().expect("bool"))
        .collect()
}

/// The encoder from the model store; `None` (skipped) when it is not fetched, outside CI.
fn encoder() -> Option<SpeakerEncoder> {
    let store = model_store()?;
    if !store.speaker_encoder_ready() {
        assert!(
            std::env::var_os("CI").is_none(),
            "speaker encoder missing in {} (`banter models fetch` brings it)",
            store.root().display()
        );
        eprintln!("skipped: speaker encoder not fetched");
        return None;
    }
    Some(SpeakerEncoder::load(&store.speaker_encoder(), &Device::Cpu).expect("load encoder"))
}

fn decode(name: &str) -> DecodedAudio {
    let options = DecodeOptions {
        target_rate: Some(SAMPLE_RATE),
        max_secs: None,
    };
    decode_file(&dir().join(name), &options).expect("decode clip")
}

#[test]
fn embeddings_match_resemblyzer() {
    let Some(enc) = encoder() else { return };
    let golden = golden();
    let clips = golden["clips"].as_array().expect("clips");
    for clip in clips {
        let name = clip["file"].as_str().expect("file");
        let audio = decode(name);
        assert_eq!(audio.source_rate, SAMPLE_RATE, "{name}: clips are 16 kHz");
        assert_eq!(Some(audio.samples.len() as u64), clip["samples"].as_u64());
        let mut normalised = audio.samples.clone();
        normalize_volume(&mut normalised);

        // Stages after trimming, on the reference's VAD mask.
        let trimmed = apply_mask(&normalised, &bools(&clip["vad_mask"]));
        assert_eq!(Some(trimmed.len() as u64), clip["trimmed_len"].as_u64());
        let partials = enc.partial_embeddings(&trimmed).expect("partials");
        let reference_partials = clip["partials"].as_array().expect("partials");
        assert_eq!(partials.len(), reference_partials.len(), "{name}");
        let after_vad = enc.embed_preprocessed(&trimmed).expect("embed");
        let cos_after_vad = after_vad.cosine(&embedding(&clip["embedding"]));

        // No trimming at all, both sides.
        let no_vad = enc.embed_preprocessed(&normalised).expect("embed");
        let cos_no_vad = no_vad.cosine(&embedding(&clip["embedding_no_vad"]));

        // Banter's whole pipeline (energy VAD) against the reference's whole pipeline.
        let own = enc.embed_clip(&audio).expect("embed");
        let cos_own = own.cosine(&embedding(&clip["embedding"]));
        let own_flags = engine::speaker::preprocess::voice_flags(&normalised);
        let ref_flags = bools(&clip["vad_flags"]);
        let agree = own_flags
            .iter()
            .zip(&ref_flags)
            .filter(|(a, b)| a == b)
            .count();
        eprintln!(
            "{name}: 1 - cos: ref-trim {:.1e}, no-VAD {:.1e}, own VAD {:.1e} \
             (VAD windows agree {agree}/{})",
            1.0 - cos_after_vad,
            1.0 - cos_no_vad,
            1.0 - cos_own,
            ref_flags.len()
        );
        assert!(
            agree * 20 >= ref_flags.len() * 19,
            "{name}: energy VAD agrees with WebRTC's on only {agree}/{} windows",
            ref_flags.len()
        );
        assert!(cos_after_vad >= MIN_COSINE, "{name}: {cos_after_vad}");
        assert!(cos_no_vad >= MIN_COSINE, "{name}: {cos_no_vad}");
        assert!(cos_own >= MIN_COSINE_OWN_VAD, "{name}: {cos_own}");
    }
}

#[test]
fn mel_frames_match_librosa() {
    let Some(enc) = encoder() else { return };
    drop(enc);
    let golden = golden();
    let clip = &golden["clips"][0];
    let audio = decode(clip["file"].as_str().expect("file"));
    let mut wav = audio.samples;
    normalize_volume(&mut wav);
    let mut trimmed = apply_mask(&wav, &bools(&clip["vad_mask"]));
    let frames = clip["mel_frames"].as_u64().expect("frames") as usize;
    let needed = (frames - 1) * engine::speaker::mel::HOP;
    if trimmed.len() < needed {
        trimmed.resize(needed, 0.0);
    }
    let mel = engine::speaker::mel::MelSpectrogram::new()
        .expect("mel")
        .compute(&trimmed)
        .expect("compute");
    assert_eq!(mel.dims()[0], frames);
    let ours: Vec<Vec<f32>> = mel.to_vec2().expect("rows");
    let mut worst = 0.0f32;
    for (row, reference) in ours.iter().zip(clip["mel_head"].as_array().expect("head")) {
        for (a, b) in row.iter().zip(floats(reference)) {
            // Relative to the value, with a floor for near-silent bins.
            worst = worst.max((a - b).abs() / b.abs().max(1e-4));
        }
    }
    eprintln!("mel head: worst relative difference {worst:.2e}");
    assert!(worst < 1e-3, "{worst}");
}

#[test]
fn one_voice_is_closer_to_itself_than_to_others() {
    let Some(enc) = encoder() else { return };
    let embed = |name: &str| enc.embed_clip(&decode(name)).expect("embed");
    let (a, b) = (embed("heart_a.flac"), embed("heart_b.flac"));
    let (m, e) = (embed("michael.flac"), embed("emma.flac"));
    let same = a.cosine(&b);
    let others = [
        a.cosine(&m),
        a.cosine(&e),
        b.cosine(&m),
        b.cosine(&e),
        m.cosine(&e),
    ];
    eprintln!("af_heart vs af_heart {same:.4}; across voices {others:?}");
    for other in others {
        assert!(
            same > other + 0.1,
            "same voice {same} vs different voices {other}"
        );
    }
}

#[test]
fn embedding_a_five_second_clip_is_fast() {
    let Some(enc) = encoder() else { return };
    // michael (3.3 s) and heart_a (2.7 s) back to back: about 6 s, cut to 5 s.
    let mut wav = decode("michael.flac").samples;
    wav.extend(decode("heart_a.flac").samples);
    wav.truncate(5 * SAMPLE_RATE as usize);
    enc.embed_samples_16k(&wav).expect("warm-up");
    let runs = 5;
    let start = Instant::now();
    for _ in 0..runs {
        enc.embed_samples_16k(&wav).expect("embed");
    }
    let ms = start.elapsed().as_secs_f64() * 1e3 / f64::from(runs);
    eprintln!("embedding 5 s of audio: {ms:.1} ms (CPU)");
    assert!(ms < 2_000.0, "{ms} ms");
}
