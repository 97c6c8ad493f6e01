//! Ogg Opus: files and streams decode back (with our own reader, as a client's would) to the
//! input's exact length, aligned, at the input's level and pitch; headers carry the tags; bad
//! settings and damaged files are errors, never panics.

use std::path::Path;

use super::stream::Shared;
use super::{amplitude_at, best_lag, encode_file, sine};
use crate::audio::decode::{decode_bytes, DecodeError, DecodeOptions};
use crate::audio::*;

fn tone(rate: u32, n: usize) -> Vec<f32> {
    // a 440 Hz tone under a slow envelope (in seconds, so any rate gives the same signal), so
    // alignment is measurable
    sine(440.0, 0.5, rate, n)
        .iter()
        .enumerate()
        .map(|(i, v)| v * (0.6 + 0.4 * (8.0 * i as f32 / rate as f32).sin()))
        .collect()
}

fn decode(bytes: Vec<u8>, rate: Option<u32>) -> Result<decode::DecodedAudio, DecodeError> {
    let options = DecodeOptions {
        target_rate: rate,
        max_secs: None,
    };
    decode_bytes(bytes, Path::new("clip.opus"), &options)
}

#[test]
fn opus_files_are_gapless_and_keep_the_tone() {
    for rate in [24_000, 48_000] {
        let n = rate as usize * 2 + 123;
        let x = tone(rate, n);
        let bytes = encode_file(
            OutputFormat::Opus { kbps: 48 },
            rate,
            &Metadata::default(),
            &x,
            4000,
        );
        assert_eq!(&bytes[..4], b"OggS");
        let d = decode(bytes, None).expect("decodes");
        assert_eq!(
            (d.sample_rate, d.source_rate, d.source_channels),
            (48_000, rate, 1)
        );
        assert!(d.damaged.is_none() && !d.truncated);
        // pre-skip and the last granule trim the encoder delay and the padding exactly
        let up = (48_000 / rate) as usize;
        assert_eq!(d.samples.len(), n * up, "{rate} Hz: gapless length");
        // compare at 48 kHz against the same tone made at that rate
        let orig: Vec<f64> = tone(48_000, n * up).iter().map(|&v| f64::from(v)).collect();
        let got: Vec<f64> = d.samples.iter().map(|&v| f64::from(v)).collect();
        let lag = best_lag(&orig, &got, 40);
        // Within 4 samples at 48 kHz (83 µs): the voice mode's high-pass (SILK's, cut-off near
        // 60–100 Hz) turns a 440 Hz tone's phase by ~10°, which the cross-correlation reads as
        // 3 samples; a pre-skip wrong by a frame would show as hundreds.
        assert!(
            lag.abs() <= 4,
            "{rate} Hz: trimmed output is aligned (lag {lag})"
        );
        let energy = |v: &[f64]| v.iter().map(|p| p * p).sum::<f64>();
        let change = 10.0 * (energy(&got) / energy(&orig)).log10();
        assert!(
            change.abs() < 0.5,
            "{rate} Hz: level moved by {change:.2} dB"
        );
        let mid = &got[got.len() / 4..got.len() * 3 / 4];
        let at = |f: f64| amplitude_at(mid, f, 48_000);
        for f in [400.0, 480.0, 880.0] {
            assert!(at(f) < 0.05 * at(440.0), "{rate} Hz: energy at {f} Hz");
        }
        // and resampled back to the input rate on request
        let enc = encode_file(
            OutputFormat::Opus { kbps: 48 },
            rate,
            &Metadata::default(),
            &x,
            4000,
        );
        let back = decode(enc, Some(rate)).expect("decodes");
        assert_eq!(back.sample_rate, rate);
        assert!(
            back.samples.len().abs_diff(n) <= 2,
            "{} vs {n}",
            back.samples.len()
        );
    }
}

#[test]
fn opus_headers_carry_the_tags() {
    let meta = Metadata {
        title: Some("Pilot".into()),
        artist: Some("Banter".into()),
        chapters: vec![ChapterMark {
            title: "Intro".into(),
            start_secs: 61.5,
            end_secs: 70.0,
        }],
    };
    let bytes = encode_file(
        OutputFormat::Opus { kbps: 32 },
        24_000,
        &meta,
        &tone(24_000, 4800),
        4800,
    );
    let find = |needle: &[u8]| bytes.windows(needle.len()).position(|w| w == needle);
    let head = find(b"OpusHead").expect("OpusHead");
    assert_eq!(bytes[head + 8], 1, "version");
    assert_eq!(bytes[head + 9], 1, "mono");
    assert_eq!(&bytes[head + 12..head + 16], &24_000u32.to_le_bytes());
    assert!(find(b"OpusTags").is_some_and(|t| t > head));
    for tag in [
        &b"TITLE=Pilot"[..],
        b"ARTIST=Banter",
        b"CHAPTER000=00:01:01.500",
        b"CHAPTER000NAME=Intro",
    ] {
        assert!(find(tag).is_some(), "{}", String::from_utf8_lossy(tag));
    }
    assert_eq!(
        (
            OutputFormat::Opus { kbps: 32 }.extension(),
            OutputFormat::Opus { kbps: 32 }.mime()
        ),
        ("opus", "audio/ogg")
    );
}

#[test]
fn opus_streams_flow_early_and_decode() {
    let rate = 24_000;
    let x = tone(rate, 3 * rate as usize + 77);
    let out = Shared::default();
    let mut sink = stream_encoder(
        out.clone(),
        OutputFormat::Opus { kbps: 48 },
        rate,
        &Metadata::default(),
    )
    .unwrap();
    let header = out.len();
    assert!(header > 0, "the Ogg headers go out at once");
    sink.write(&x[..rate as usize / 10]).unwrap();
    assert!(out.len() > header, "nothing after 100 ms of audio");
    for c in x[rate as usize / 10..].chunks(1234) {
        sink.write(c).unwrap();
    }
    let before_finish = out.len();
    sink.finish().unwrap();
    let bytes = out.0.lock().unwrap().clone();
    assert!(
        before_finish * 10 > bytes.len() * 9,
        "most bytes came before finish"
    );
    let d = decode(bytes, None).expect("decodes");
    assert_eq!(d.samples.len(), x.len() * 2);
}

#[test]
fn bad_opus_settings_and_damaged_files_are_errors() {
    let m = Metadata::default();
    let enc = |f, r| file_encoder(std::io::Cursor::new(Vec::new()), f, r, &m).err();
    assert!(matches!(
        enc(OutputFormat::Opus { kbps: 48 }, 44_100),
        Some(AudioError::UnsupportedRate { rate: 44_100, .. })
    ));
    assert!(matches!(
        enc(OutputFormat::Opus { kbps: 2 }, 24_000),
        Some(AudioError::UnsupportedSetting { .. })
    ));
    let bytes = encode_file(
        OutputFormat::Opus { kbps: 48 },
        24_000,
        &m,
        &tone(24_000, 48_000),
        4800,
    );
    // cut mid-way: what decoded before the break is kept, and flagged
    let cut = decode(bytes[..bytes.len() * 2 / 3].to_vec(), None).expect("keeps the start");
    assert!(cut.damaged.is_some() || cut.samples.len() < 96_000);
    assert!(cut.duration_secs() > 0.5);
    // every prefix and a run of corrupted copies: errors or audio, never a panic
    for len in (0..bytes.len()).step_by(97) {
        let _ = decode(bytes[..len].to_vec(), None);
    }
    let mut state = 0x1234_5678u32;
    for _ in 0..200 {
        let mut b = bytes.clone();
        for _ in 0..8 {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let i = 36 + state as usize % (b.len() - 36);
            b[i] ^= (state >> 24) as u8 | 1;
        }
        let _ = decode(b, None);
    }
    // an OpusHead that is not mono or stereo is refused by name
    let mut surround = bytes.clone();
    let head = surround.windows(8).position(|w| w == b"OpusHead").unwrap();
    surround[head + 9] = 6;
    assert!(matches!(
        decode(surround, None),
        Err(DecodeError::UnsupportedCodec { .. } | DecodeError::Corrupt { .. })
    ));
}

#[test]
fn an_opus_clip_streams_to_the_same_samples_as_it_decodes_whole() {
    let n = 48_000 + 321;
    let bytes = encode_file(
        OutputFormat::Opus { kbps: 48 },
        48_000,
        &Metadata::default(),
        &tone(48_000, n),
        4000,
    );
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("clip.opus");
    std::fs::write(&path, &bytes).expect("write");
    let whole = decode(bytes, None).expect("decodes");
    let mut clip = decode::ClipStream::open(&path, 48_000).expect("opens");
    let mut streamed = Vec::new();
    while clip.read(&mut streamed, 1000).expect("reads") > 0 {}
    // Pre-skip and end trimming as the whole-file reader does them, to the sample.
    assert_eq!(streamed.len(), n);
    assert_eq!(streamed, whole.samples);
    assert!(clip.damaged().is_none());
}
