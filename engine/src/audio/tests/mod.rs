//! Round trips of the file encoders through symphonia (an independent decoder) and ID3 read back
//! with the `id3` crate. The streaming encoders are tested in `stream_tests.rs`.

use super::*;
use std::f64::consts::PI;
use std::io::Cursor;

use symphonia::core::codecs::audio::AudioDecoderOptions;
use symphonia::core::formats::probe::Hint;
use symphonia::core::formats::{FormatOptions, TrackType};
use symphonia::core::io::MediaSourceStream;
use symphonia::core::meta::MetadataOptions;

pub(super) struct Decoded {
    pub(super) rate: u32,
    pub(super) samples: Vec<f64>,
    /// FLAC: whether the decoded MD5 matched STREAMINFO's (None if there was none).
    pub(super) md5_ok: Option<bool>,
}

pub(super) fn decode(bytes: Vec<u8>, gapless: bool) -> Decoded {
    let mss = MediaSourceStream::new(
        Box::new(Cursor::new(bytes)),
        symphonia::core::io::MediaSourceStreamOptions::default(),
    );
    let mut format = symphonia::default::get_probe()
        .probe(
            &Hint::new(),
            mss,
            FormatOptions::default(),
            MetadataOptions::default(),
        )
        .unwrap();
    let track = format.default_track(TrackType::Audio).unwrap();
    let params = track
        .codec_params
        .as_ref()
        .unwrap()
        .audio()
        .unwrap()
        .clone();
    let id = track.id;
    let mut opts = AudioDecoderOptions::default();
    opts.gapless = gapless;
    opts.verify = true;
    let mut dec = symphonia::default::get_codecs()
        .make_audio_decoder(&params, &opts)
        .unwrap();
    let (mut samples, mut tmp) = (Vec::new(), Vec::new());
    loop {
        let p = match format.next_packet() {
            Ok(Some(p)) => p,
            Ok(None) => break,
            // symphonia's WAV reader ends a stream of unknown length (0xFFFFFFFF sizes) by
            // failing to read a whole packet: the partial last packet is lost, see the caller
            Err(symphonia::core::errors::Error::IoError(e))
                if e.kind() == std::io::ErrorKind::UnexpectedEof =>
            {
                break
            }
            Err(e) => panic!("{e}"),
        };
        if p.track_id == id {
            dec.decode(&p)
                .unwrap()
                .copy_to_vec_interleaved::<f64>(&mut tmp);
            samples.extend_from_slice(&tmp);
        }
    }
    Decoded {
        rate: params.sample_rate.unwrap(),
        samples,
        md5_ok: dec.finalize().verify_ok,
    }
}

/// A test signal with everything an encoder must survive: tones, noise, values past full scale,
/// a NaN and silence.
pub(super) fn signal(rate: u32, n: usize) -> Vec<f32> {
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let mut x: Vec<f32> = (0..n)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let noise = (s >> 40) as f64 / (1u64 << 24) as f64 - 0.5;
            let t = i as f64 / f64::from(rate);
            (0.6 * (2.0 * PI * 440.0 * t).sin() + 0.2 * noise) as f32
        })
        .collect();
    for (i, v) in x.iter_mut().enumerate().take(n.min(400)).skip(n.min(300)) {
        *v = if i % 2 == 0 { 1.7 } else { -1.3 };
    }
    if n > 10 {
        x[10] = f32::NAN;
        x[11] = f32::INFINITY;
    }
    x
}

pub(super) fn sine(freq: f64, amp: f64, rate: u32, n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| (amp * (2.0 * PI * freq * i as f64 / f64::from(rate)).sin()) as f32)
        .collect()
}

pub(super) fn encode_file(
    format: OutputFormat,
    rate: u32,
    meta: &Metadata,
    x: &[f32],
    chunk: usize,
) -> Vec<u8> {
    let file = tempfile::tempfile().unwrap();
    let mut sink = file_encoder(
        std::io::BufWriter::new(file.try_clone().unwrap()),
        format,
        rate,
        meta,
    )
    .unwrap();
    for c in x.chunks(chunk) {
        sink.write(c).unwrap();
    }
    sink.finish().unwrap();
    let mut file = file;
    let mut bytes = Vec::new();
    std::io::Seek::rewind(&mut file).unwrap();
    std::io::Read::read_to_end(&mut file, &mut bytes).unwrap();
    bytes
}

/// What an integer format holds for `x`, as symphonia reports it (value / 2^(bits-1)).
pub(super) fn expected_int(x: &[f32], bits: u8) -> Vec<f64> {
    let scale = f64::from(1u32 << (bits - 1));
    x.iter()
        .map(|&s| f64::from(quantize(s, bits)) / scale)
        .collect()
}

#[test]
fn wav_files_round_trip_exactly() {
    for (sf, bits) in [
        (SampleFormat::Pcm16, 16),
        (SampleFormat::Pcm24, 24),
        (SampleFormat::Float32, 0),
    ] {
        for n in [0, 1, 12_345] {
            let x = signal(24_000, n);
            let bytes = encode_file(
                OutputFormat::Wav(sf),
                24_000,
                &Metadata::default(),
                &x,
                1000,
            );
            let d = decode(bytes, true);
            assert_eq!(d.rate, 24_000);
            let expect: Vec<f64> = if bits == 0 {
                x.iter()
                    .map(|&s| if s.is_finite() { f64::from(s) } else { 0.0 })
                    .collect()
            } else {
                expected_int(&x, bits)
            };
            assert_eq!(d.samples, expect, "{sf:?} n={n}");
        }
    }
}

#[test]
fn wav_file_matches_the_wav_writer() {
    let x = signal(24_000, 5000);
    for sf in [
        SampleFormat::Pcm16,
        SampleFormat::Pcm24,
        SampleFormat::Float32,
    ] {
        let ours = encode_file(OutputFormat::Wav(sf), 24_000, &Metadata::default(), &x, 333);
        let mut w = WavWriter::new(Cursor::new(Vec::new()), 24_000, 1, sf).unwrap();
        w.write(&x).unwrap();
        assert_eq!(ours, w.finish().unwrap().into_inner(), "{sf:?}");
    }
}

#[test]
fn flac_files_round_trip_bit_exact_with_md5() {
    let meta = Metadata {
        title: Some("Ep 1".into()),
        artist: Some("Banter".into()),
        chapters: vec![ChapterMark {
            title: "Intro".into(),
            start_secs: 0.0,
            end_secs: 1.0,
        }],
    };
    for bits in [16u8, 24] {
        for rate in [24_000, 44_100] {
            for n in [1, 4096, 12_345] {
                let x = signal(rate, n);
                let bytes = encode_file(OutputFormat::Flac { bits }, rate, &meta, &x, 1000);
                assert_eq!(&bytes[..4], b"fLaC");
                let body = &bytes[8..42];
                let total = u64::from_be_bytes(body[10..18].try_into().unwrap()) & ((1 << 36) - 1);
                assert_eq!(total, n as u64, "STREAMINFO total samples");
                let d = decode(bytes.clone(), true);
                assert_eq!(d.rate, rate);
                assert_eq!(
                    d.samples,
                    expected_int(&x, bits),
                    "{bits} bits {rate} Hz n={n}"
                );
                assert_eq!(d.md5_ok, Some(true), "MD5 in STREAMINFO");
                let text = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]);
                assert!(text.contains("TITLE=Ep 1") && text.contains("CHAPTER001NAME=Intro"));
            }
        }
    }
}

/// Amplitude of `freq` in `x` (Hann-windowed single-bin DFT; a sine of amplitude A reads A).
pub(super) fn amplitude_at(x: &[f64], freq: f64, rate: u32) -> f64 {
    let n = x.len() as f64;
    let (mut re, mut im, mut wsum) = (0.0, 0.0, 0.0);
    for (i, &v) in x.iter().enumerate() {
        let w = 0.5 - 0.5 * (2.0 * PI * i as f64 / n).cos();
        let ph = 2.0 * PI * freq * i as f64 / f64::from(rate);
        re += w * v * ph.cos();
        im += w * v * ph.sin();
        wsum += w;
    }
    2.0 * (re * re + im * im).sqrt() / wsum
}

/// Lag (in -range..=range) at which `b` best matches `a`.
pub(super) fn best_lag(a: &[f64], b: &[f64], range: i64) -> i64 {
    let xc = |lag: i64| -> f64 {
        (0..a.len() as i64)
            .filter_map(|i| {
                let j = i + lag;
                (j >= 0 && (j as usize) < b.len()).then(|| a[i as usize] * b[j as usize])
            })
            .sum()
    };
    (-range..=range)
        .max_by(|&p, &q| xc(p).total_cmp(&xc(q)))
        .unwrap()
}

#[test]
fn mp3_files_are_gapless_and_keep_the_tone() {
    for rate in [24_000, 44_100, 48_000] {
        let n = rate as usize * 2 + 123;
        // a 440 Hz tone under a slow envelope, so alignment is measurable
        let x: Vec<f32> = sine(440.0, 0.5, rate, n)
            .iter()
            .enumerate()
            .map(|(i, v)| v * (0.6 + 0.4 * (i as f32 / 3000.0).sin()))
            .collect();
        let bytes = encode_file(
            OutputFormat::Mp3 { kbps: 128 },
            rate,
            &Metadata::default(),
            &x,
            4000,
        );
        let d = decode(bytes.clone(), true);
        assert_eq!(d.rate, rate);
        // the LAME info frame tells the decoder the encoder delay and padding
        assert_eq!(d.samples.len(), n, "{rate} Hz: gapless length");
        // without trimming: whole frames, delay (576 + 529) and padding under one frame extra
        let raw = decode(bytes, false);
        let frame = if rate >= 32_000 { 1152 } else { 576 };
        assert_eq!(raw.samples.len() % frame, 0);
        assert!(raw.samples.len() >= n + 1105 && raw.samples.len() < n + 1105 + frame);
        let orig: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
        assert_eq!(
            best_lag(&orig, &d.samples, 20),
            0,
            "{rate} Hz: trimmed output is aligned"
        );
        let energy = |v: &[f64]| v.iter().map(|p| p * p).sum::<f64>();
        // LAME scales its input by 0.95 (-0.45 dB) at 160 kbit/s and below, on purpose: MP3
        // decoders overshoot, and this keeps them from clipping (presets.c, abr_switch_map)
        let change = 10.0 * (energy(&d.samples) / energy(&orig)).log10() - 20.0 * 0.95f64.log10();
        assert!(
            change.abs() < 0.1,
            "{rate} Hz: energy moved by {change:.2} dB beyond LAME's 0.95"
        );
        // the tone is where it was: 440 Hz dominates its neighbours
        let mid = &d.samples[n / 4..n * 3 / 4];
        let at = |f: f64| amplitude_at(mid, f, rate);
        for f in [400.0, 430.0, 450.0, 480.0, 880.0] {
            assert!(at(f) < 0.05 * at(440.0), "{rate} Hz: energy at {f} Hz");
        }
        let err: Vec<f64> = orig
            .iter()
            .zip(&d.samples)
            .map(|(p, q)| 0.95 * p - q)
            .collect();
        let snr = 10.0 * (energy(&orig) / energy(&err)).log10();
        assert!(snr > 20.0, "{rate} Hz: SNR {snr:.1} dB");
    }
}

#[test]
fn mp3_id3_tag_reads_back() {
    use id3::TagLike;
    let meta = Metadata {
        title: Some("Episode 7: Ünïcode".into()),
        artist: Some("The Banter Crew".into()),
        chapters: vec![
            ChapterMark {
                title: "Cold open".into(),
                start_secs: 0.0,
                end_secs: 0.4,
            },
            ChapterMark {
                title: "Interview".into(),
                start_secs: 0.4,
                end_secs: 1.25,
            },
        ],
    };
    let x = sine(300.0, 0.3, 24_000, 30_000);
    let bytes = encode_file(OutputFormat::Mp3 { kbps: 64 }, 24_000, &meta, &x, 30_000);
    let tag = id3::Tag::read_from2(Cursor::new(&bytes)).unwrap();
    assert_eq!(tag.version(), id3::Version::Id3v24);
    assert_eq!(tag.title(), meta.title.as_deref());
    assert_eq!(tag.artist(), meta.artist.as_deref());
    let chapters: Vec<_> = tag.chapters().collect();
    assert_eq!(chapters.len(), 2);
    assert_eq!((chapters[1].start_time, chapters[1].end_time), (400, 1250));
    let title = chapters[1]
        .frames
        .iter()
        .find(|f| f.id() == "TIT2")
        .unwrap();
    assert_eq!(title.content().text(), Some("Interview"));
    let toc: Vec<_> = tag.tables_of_contents().collect();
    assert_eq!(toc.len(), 1);
    assert!(toc[0].top_level && toc[0].ordered);
    assert_eq!(
        toc[0].elements,
        vec![
            chapters[0].element_id.clone(),
            chapters[1].element_id.clone()
        ]
    );
    // and the audio after the tag still decodes, gaplessly
    assert_eq!(decode(bytes, true).samples.len(), x.len());
}

#[test]
fn bad_settings_are_errors() {
    let m = Metadata::default();
    let enc = |f, r| file_encoder(Cursor::new(Vec::new()), f, r, &m).err();
    assert!(matches!(
        enc(OutputFormat::Flac { bits: 20 }, 24_000),
        Some(AudioError::UnsupportedSetting { .. })
    ));
    assert!(matches!(
        enc(OutputFormat::Mp3 { kbps: 128 }, 22_000),
        Some(AudioError::UnsupportedRate { rate: 22_000, .. })
    ));
    assert!(matches!(
        enc(OutputFormat::Mp3 { kbps: 100 }, 24_000),
        Some(AudioError::UnsupportedSetting { .. })
    ));
    assert!(matches!(
        enc(OutputFormat::Mp3 { kbps: 320 }, 24_000),
        Some(AudioError::UnsupportedSetting { .. })
    ));
    assert!(matches!(
        enc(OutputFormat::Wav(SampleFormat::Pcm16), 0),
        Some(AudioError::UnsupportedRate { .. })
    ));
    assert!(enc(OutputFormat::Mp3 { kbps: 320 }, 48_000).is_none());
}

#[test]
fn formats_name_their_files() {
    let f = [
        (OutputFormat::Wav(SampleFormat::Pcm24), "wav", "audio/wav"),
        (OutputFormat::Flac { bits: 16 }, "flac", "audio/flac"),
        (OutputFormat::Mp3 { kbps: 128 }, "mp3", "audio/mpeg"),
    ];
    for (format, ext, mime) in f {
        assert_eq!((format.extension(), format.mime()), (ext, mime));
    }
    let e = AudioError::from(std::io::Error::other("disk full")).with_path("/tmp/ep.mp3");
    assert!(e.to_string().contains("/tmp/ep.mp3") && e.to_string().contains("disk full"));
}

mod opus;
mod stream;
