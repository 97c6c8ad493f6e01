//! Tests of clip decoding: every container, channel layouts up to 8, rates up to 192 kHz,
//! limits, and bad input (which must give a typed error, never a panic).
//!
//! The FLAC, Ogg and MP3 fixtures in `testdata/` are 0.5 s of 22.05 kHz stereo, 440 Hz on
//! the left and 880 Hz on the right (made once with sox and lame; a few KB each); the M4A
//! (AAC, as a phone's voice memo; ALAC, its lossless setting), raw AAC (ADTS) and AIFF ones are
//! the same tones, made once with `PyAV` (`ipod` container, `aac`/`alac`; `adts`; `aiff`,
//! `pcm_s16be`).

use std::io::Cursor;
use std::path::Path;

use proptest::prelude::*;

use super::*;
use crate::audio::wav::{SampleFormat, WavWriter};

const FLAC: &[u8] = include_bytes!("testdata/tone.flac");
const OGG: &[u8] = include_bytes!("testdata/tone.ogg");
const MP3: &[u8] = include_bytes!("testdata/tone.mp3");
const M4A: &[u8] = include_bytes!("testdata/tone.m4a");
const ALAC: &[u8] = include_bytes!("testdata/tone-alac.m4a");
const AIFF: &[u8] = include_bytes!("testdata/tone.aiff");
const ADTS: &[u8] = include_bytes!("testdata/tone.aac");

/// Interleaved samples to WAV bytes.
fn wav_bytes(samples: &[f32], rate: u32, channels: u16, format: SampleFormat) -> Vec<u8> {
    let mut w = WavWriter::new(Cursor::new(Vec::new()), rate, channels, format).expect("header");
    w.write(samples).expect("samples");
    w.finish().expect("finish").into_inner()
}

fn sine(freq: f32, rate: u32, secs: f32, amp: f32) -> Vec<f32> {
    let n = (secs * rate as f32) as usize;
    (0..n)
        .map(|i| amp * (2.0 * std::f32::consts::PI * freq * i as f32 / rate as f32).sin())
        .collect()
}

/// Power of `freq` in `x` (Goertzel), normalised by length.
fn tone_power(x: &[f32], rate: u32, freq: f32) -> f32 {
    let w = 2.0 * std::f32::consts::PI * freq / rate as f32;
    let (mut s1, mut s2) = (0.0f32, 0.0f32);
    for &v in x {
        let s = v + 2.0 * w.cos() * s1 - s2;
        s2 = s1;
        s1 = s;
    }
    (s1 * s1 + s2 * s2 - 2.0 * w.cos() * s1 * s2) / (x.len() as f32).powi(2)
}

fn decode(bytes: Vec<u8>, name: &str, options: DecodeOptions) -> Result<DecodedAudio, DecodeError> {
    decode_bytes(bytes, Path::new(name), &options)
}

#[test]
fn mono_wav_round_trips() {
    let x = sine(440.0, 16_000, 0.5, 0.5);
    let out = decode(
        wav_bytes(&x, 16_000, 1, SampleFormat::Pcm16),
        "a.wav",
        DecodeOptions::default(),
    )
    .expect("decode");
    assert_eq!((out.sample_rate, out.source_channels), (16_000, 1));
    assert_eq!(out.samples.len(), x.len());
    let worst = x
        .iter()
        .zip(&out.samples)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f32::max);
    assert!(worst < 1.0 / 32_000.0, "{worst}");
    assert!(!out.truncated && out.damaged.is_none());
}

#[test]
fn channels_are_averaged() {
    let frames = 4000;
    let x: Vec<f32> = (0..frames).flat_map(|_| [0.5f32, -0.1]).collect();
    let out = decode(
        wav_bytes(&x, 16_000, 2, SampleFormat::Float32),
        "s.wav",
        DecodeOptions::default(),
    )
    .expect("decode");
    assert_eq!(out.samples.len(), frames);
    assert!(out.samples.iter().all(|s| (s - 0.2).abs() < 1e-6));
}

#[test]
fn eight_channels_at_192_khz_become_16_khz_mono() {
    let tone = sine(1000.0, 192_000, 1.0, 0.5);
    let x: Vec<f32> = tone.iter().flat_map(|&s| [s; 8]).collect();
    let bytes = wav_bytes(&x, 192_000, 8, SampleFormat::Pcm24);
    let options = DecodeOptions {
        target_rate: Some(16_000),
        max_secs: None,
    };
    let out = decode(bytes, "surround.wav", options).expect("decode");
    assert_eq!(
        (out.sample_rate, out.source_rate, out.source_channels),
        (16_000, 192_000, 8)
    );
    assert!(
        (15_900..=16_100).contains(&out.samples.len()),
        "{}",
        out.samples.len()
    );
    // The tone survives with its level (a sine of amplitude 0.5 has power 0.0625 here).
    let mid = &out.samples[2000..14_000];
    let p1k = tone_power(mid, 16_000, 1000.0);
    assert!((p1k - 0.0625).abs() < 0.005, "{p1k}");
    assert!(tone_power(mid, 16_000, 3000.0) < 1e-4);
}

#[test]
fn cd_rate_is_resampled_with_the_right_length() {
    let x = sine(440.0, 44_100, 2.0, 0.3);
    let options = DecodeOptions {
        target_rate: Some(16_000),
        max_secs: None,
    };
    let out = decode(
        wav_bytes(&x, 44_100, 1, SampleFormat::Pcm16),
        "cd.wav",
        options,
    )
    .expect("decode");
    assert!(
        (31_900..=32_100).contains(&out.samples.len()),
        "{}",
        out.samples.len()
    );
    assert!(tone_power(&out.samples[4000..28_000], 16_000, 440.0) > 0.02);
}

#[test]
fn max_secs_truncates_and_says_so() {
    let x = sine(440.0, 16_000, 3.0, 0.3);
    let bytes = wav_bytes(&x, 16_000, 1, SampleFormat::Pcm16);
    let cut = decode(
        bytes.clone(),
        "long.wav",
        DecodeOptions {
            target_rate: None,
            max_secs: Some(1.0),
        },
    )
    .expect("decode");
    assert_eq!(cut.samples.len(), 16_000);
    assert!(cut.truncated);
    let all = decode(
        bytes,
        "long.wav",
        DecodeOptions {
            target_rate: None,
            max_secs: Some(5.0),
        },
    )
    .expect("decode");
    assert_eq!(all.samples.len(), 48_000);
    assert!(!all.truncated);
}

#[test]
fn every_compressed_container_decodes() {
    for (bytes, name) in [
        (FLAC, "t.flac"),
        (OGG, "t.ogg"),
        (MP3, "t.mp3"),
        (M4A, "t.m4a"),
        (ALAC, "t-alac.m4a"),
        (AIFF, "t.aiff"),
        (ADTS, "t.aac"),
    ] {
        let out = decode(bytes.to_vec(), name, DecodeOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            (out.sample_rate, out.source_channels),
            (22_050, 2),
            "{name}"
        );
        let secs = out.duration_secs();
        assert!((0.45..0.65).contains(&secs), "{name}: {secs}");
        let x = &out.samples[2000..9000];
        let (p440, p880, p660) = (
            tone_power(x, 22_050, 440.0),
            tone_power(x, 22_050, 880.0),
            tone_power(x, 22_050, 660.0),
        );
        assert!(
            p440 > 0.01 && p880 > 0.01 && p660 < p440 / 50.0,
            "{name}: {p440} {p880} {p660}"
        );
    }
}

#[test]
fn the_extension_is_only_a_hint() {
    let out = decode(FLAC.to_vec(), "wrong.mp3", DecodeOptions::default()).expect("decode");
    assert_eq!(out.source_channels, 2);
}

#[test]
fn text_and_empty_input_are_not_audio() {
    for bytes in [b"hello, this is a text file".to_vec(), Vec::new()] {
        let err = decode(bytes, "notes.wav", DecodeOptions::default()).expect_err("not audio");
        assert!(matches!(err, DecodeError::NotAudio { .. }), "{err:?}");
        assert!(err.to_string().contains("notes.wav"), "{err}");
    }
}

#[test]
fn zero_length_wav_is_empty() {
    let err = decode(
        wav_bytes(&[], 16_000, 1, SampleFormat::Pcm16),
        "z.wav",
        DecodeOptions::default(),
    )
    .expect_err("empty");
    assert!(matches!(err, DecodeError::Empty { .. }), "{err:?}");
}

#[test]
fn cut_off_wav_keeps_what_decoded_or_fails_when_too_short() {
    let x = sine(440.0, 16_000, 1.0, 0.3);
    let bytes = wav_bytes(&x, 16_000, 1, SampleFormat::Pcm16);
    let half = bytes[..44 + 16_000].to_vec(); // 0.5 s of the promised 1 s
    let out = decode(half, "cut.wav", DecodeOptions::default()).expect("partial clip");
    assert!(out.damaged.is_some(), "{out:?}");
    assert!(
        (7_900..=8_000).contains(&out.samples.len()),
        "{}",
        out.samples.len()
    );
    let tiny = bytes[..44 + 1_000].to_vec(); // 31 ms
    let err = decode(tiny, "tiny.wav", DecodeOptions::default()).expect_err("too short");
    assert!(matches!(err, DecodeError::Corrupt { .. }), "{err:?}");
}

#[test]
fn unknown_wav_codec_is_unsupported() {
    // A WAV header with format tag 0x0002 (MS ADPCM), which this build does not decode.
    let mut bytes = wav_bytes(
        &sine(440.0, 16_000, 0.5, 0.3),
        16_000,
        1,
        SampleFormat::Pcm16,
    );
    bytes[20..22].copy_from_slice(&2u16.to_le_bytes());
    let err = decode(bytes, "adpcm.wav", DecodeOptions::default()).expect_err("unsupported");
    assert!(
        matches!(
            err,
            DecodeError::UnsupportedCodec { .. } | DecodeError::NotAudio { .. }
        ),
        "{err:?}"
    );
}

#[test]
fn missing_file_names_the_path() {
    let err = decode_file(
        Path::new("/nonexistent/clip.flac"),
        &DecodeOptions::default(),
    )
    .expect_err("missing");
    assert!(matches!(err, DecodeError::Io { .. }), "{err:?}");
    assert!(err.to_string().contains("/nonexistent/clip.flac"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        let _ = decode(bytes, "random.wav", DecodeOptions { target_rate: Some(16_000), max_secs: Some(2.0) });
    }

    #[test]
    fn damaged_real_files_never_panic(
        which in 0usize..8,
        cut in 0.0f64..1.0,
        flips in proptest::collection::vec((0.0f64..1.0, any::<u8>()), 0..8),
    ) {
        let wav = wav_bytes(&sine(440.0, 16_000, 0.3, 0.3), 16_000, 1, SampleFormat::Pcm16);
        let mut bytes = [FLAC, OGG, MP3, M4A, ALAC, AIFF, ADTS, wav.as_slice()][which].to_vec();
        for (at, value) in flips {
            let i = ((bytes.len() - 1) as f64 * at) as usize;
            bytes[i] = value;
        }
        bytes.truncate((bytes.len() as f64 * cut) as usize);
        let _ = decode(bytes, "damaged", DecodeOptions { target_rate: Some(16_000), max_secs: None });
    }
}
