//! The mix, without a model: ducking measured on a test tone, a long bed streamed block by
//! block, sounds placed and faded, cue spans, and stems that add up to the mix.

use std::cell::{Cell, RefCell};
use std::f32::consts::TAU;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::bed::{BedAction, BedEvent, Beds};
use super::duck::Ducker;
use super::sfx::{SoundEvent, Sounds};
use super::*;
use crate::audio::decode::{decode_file, DecodeOptions};
use crate::audio::{Metadata, OutputFormat, SampleFormat};
use crate::render::master::{self, MasterSpec, Part, Stem, Tracks};
use crate::script::{Position, SoundCue};

const RATE: u64 = SAMPLE_RATE as u64;

/// A 440 Hz tone of amplitude 0.5, `len` samples long, that remembers how it was read.
struct Tone {
    at: u64,
    len: u64,
    reads: Rc<Reads>,
}

#[derive(Default)]
struct Reads {
    largest: Cell<usize>,
    total: Cell<u64>,
}

impl ClipSource for Tone {
    fn read(&mut self, out: &mut Vec<f32>, max: usize) -> Result<usize, DecodeError> {
        let n = max.min(usize::try_from(self.len - self.at).unwrap_or(usize::MAX));
        out.extend((0..n as u64).map(|k| {
            let t = (self.at + k) as f32 / SAMPLE_RATE as f32;
            0.5 * (TAU * 440.0 * t).sin()
        }));
        self.at += n as u64;
        self.reads.largest.set(self.reads.largest.get().max(max));
        self.reads.total.set(self.reads.total.get() + n as u64);
        Ok(n)
    }
}

fn rms_db(x: &[f32]) -> f64 {
    let power = x.iter().map(|s| f64::from(*s).powi(2)).sum::<f64>() / x.len() as f64;
    10.0 * power.log10()
}

fn secs(s: f64) -> u64 {
    (s * RATE as f64) as u64
}

fn bed(at: u64, duck_db: f32, fade: u64) -> BedEvent {
    BedEvent {
        at,
        action: BedAction::Start {
            path: PathBuf::from("bed.wav"),
            gain: 1.0,
            fade,
            duck_db,
        },
    }
}

fn render_beds(
    events: Vec<BedEvent>,
    speech: &[Range<u64>],
    total: u64,
    reads: &Rc<Reads>,
) -> Vec<f32> {
    let reads = Rc::clone(reads);
    let open = move |_: &Path, looping: bool| -> Result<Box<dyn ClipSource>, RenderError> {
        assert!(looping, "a bed loops");
        Ok(Box::new(Tone {
            at: 0,
            // Ninety minutes of music.
            len: 90 * 60 * RATE,
            reads: Rc::clone(&reads),
        }))
    };
    let mut beds = Beds::new(events, Ducker::new(speech, SAMPLE_RATE), total, &open);
    let mut out = vec![0.0; usize::try_from(total).expect("fits")];
    for (k, block) in out.chunks_mut(BLOCK).enumerate() {
        beds.fill((k * BLOCK) as u64, block).expect("fills");
    }
    out
}

#[test]
fn a_bed_ducks_by_its_depth_under_speech_and_rises_in_the_gaps() {
    let speech = [secs(2.0)..secs(5.0), secs(9.0)..secs(12.0)];
    for depth in [6.0f32, 12.0, 20.0] {
        let out = render_beds(
            vec![bed(0, depth, secs(0.5))],
            &speech,
            secs(14.0),
            &Rc::default(),
        );
        let under = rms_db(&out[secs(2.5) as usize..secs(4.5) as usize]);
        let gap = rms_db(&out[secs(6.5) as usize..secs(8.5) as usize]);
        let before = rms_db(&out[secs(0.8) as usize..secs(1.8) as usize]);
        let measured = gap - under;
        assert!(
            (measured - f64::from(depth)).abs() < 0.1,
            "asked {depth} dB, measured {measured:.2} dB"
        );
        // The tone's own level (0.5 peak: −9.03 dBFS RMS) in the gaps.
        assert!(
            (gap + 9.03).abs() < 0.05 && (before + 9.03).abs() < 0.05,
            "{gap:.2} {before:.2}"
        );
    }
}

#[test]
fn a_long_bed_is_read_a_block_at_a_time_and_only_as_far_as_the_episode() {
    let reads = Rc::new(Reads::default());
    let total = 10 * 60 * RATE;
    let out = render_beds(vec![bed(secs(1.0), 12.0, secs(2.0))], &[], total, &reads);
    assert!(
        reads.largest.get() <= BLOCK,
        "asked {} samples at once",
        reads.largest.get()
    );
    // Trimmed: ten minutes less the second before it starts, not the file's ninety.
    assert_eq!(reads.total.get(), total - RATE);
    assert!(out[..RATE as usize].iter().all(|&s| s == 0.0));
    // Faded out with the episode: the last sample is silent, a second earlier is not.
    assert!(out[out.len() - 1].abs() < 1e-3);
    assert!(rms_db(&out[out.len() - 3 * RATE as usize..out.len() - 2 * RATE as usize]) > -10.0);
}

#[test]
fn a_new_bed_crossfades_and_off_fades_out() {
    let reads = Rc::new(Reads::default());
    let events = vec![
        bed(0, 0.0, secs(1.0)),
        bed(secs(4.0), 0.0, secs(1.0)),
        BedEvent {
            at: secs(8.0),
            action: BedAction::Off { fade: secs(2.0) },
        },
    ];
    let out = render_beds(events, &[], secs(12.0), &reads);
    let level = |a: f64, b: f64| rms_db(&out[secs(a) as usize..secs(b) as usize]);
    assert!(level(2.0, 3.5) > -9.2, "the first bed");
    assert!(level(5.5, 7.5) > -9.2, "the second bed");
    assert!(level(10.05, 12.0) < -100.0, "off after its fade");
    assert!(level(8.5, 9.5) < -9.5 && level(8.5, 9.5) > -40.0, "fading");
    // Both tones start at their own sample 0: during the crossfade two tones of the same
    // frequency overlap, and every sample is finite and bounded.
    assert!(out.iter().all(|s| s.is_finite() && s.abs() <= 1.0));
}

#[test]
fn sounds_play_from_their_sample_with_short_fades_and_overlap() {
    let reads = Rc::new(Reads::default());
    let opened = Cell::new(0);
    let open = |_: &Path, looping: bool| -> Result<Box<dyn ClipSource>, RenderError> {
        assert!(!looping, "a sound plays once");
        opened.set(opened.get() + 1);
        Ok(Box::new(Tone {
            at: 0,
            len: RATE,
            reads: Rc::clone(&reads),
        }))
    };
    let event = |at: u64| SoundEvent {
        at,
        path: PathBuf::from("a.wav"),
        len: RATE,
        gain: 0.5,
        fade: 240,
    };
    let mut sounds = Sounds::new(vec![event(secs(1.5)), event(secs(1.0))], &open);
    assert_eq!(sounds.end(), secs(2.5));
    let mut out = vec![0.0f32; secs(3.0) as usize];
    for (k, block) in out.chunks_mut(1000).enumerate() {
        sounds.fill(k as u64 * 1000, block).expect("fills");
    }
    assert_eq!(opened.get(), 2);
    let one = secs(1.0) as usize;
    assert!(
        out[..one].iter().all(|&s| s == 0.0),
        "nothing before the first"
    );
    assert!(out[one].abs() < 0.01, "faded in, no click");
    // Past its fade, the first sound alone is the tone at half its level.
    let k = 1000;
    let want = 0.25 * (TAU * 440.0 * k as f32 / SAMPLE_RATE as f32).sin();
    assert!(
        (out[one + k] - want).abs() < 1e-5,
        "{} vs {want}",
        out[one + k]
    );
    assert!(
        out[secs(2.5) as usize..].iter().all(|&s| s == 0.0),
        "both done"
    );
    assert!(
        out[secs(2.5) as usize - 1].abs() < 0.01,
        "the second faded out, no click"
    );
}

fn mark(action: CueAction, at: u64, line: usize) -> SoundMark {
    SoundMark {
        cue: SoundCue {
            action,
            position: Position::new(line + 1, 1),
            alone: true,
        },
        at,
        line,
    }
}

#[test]
fn spans_say_where_each_cue_sounds() {
    let bed = |file: &str| CueAction::Bed {
        file: file.into(),
        volume_db: -15.0,
        fade_secs: 2.0,
        duck_db: 12.0,
    };
    let marks = [
        mark(bed("a.mp3"), 0, 0),
        mark(bed("b.mp3"), secs(10.0), 3),
        mark(CueAction::BedOff { fade_secs: 1.0 }, secs(20.0), 5),
        mark(bed("a.mp3"), secs(30.0), 7),
    ];
    let spans = spans(&marks, &SoundFiles::default(), secs(40.0));
    let got: Vec<(&str, f64, f64)> = spans.iter().map(|s| (s.kind, s.start, s.end)).collect();
    assert_eq!(
        got,
        [
            ("bed", 0.0, 12.0),
            ("bed", 10.0, 21.0),
            ("bed_off", 20.0, 21.0),
            ("bed", 30.0, 40.0)
        ]
    );
    assert_eq!(spans[1].file.as_deref(), Some("b.mp3"));
    assert_eq!(spans[1].source_line, 4);
}

fn write_raw(dir: &Path, name: &str, samples: &[f32]) -> PathBuf {
    let path = dir.join(name);
    let bytes: Vec<u8> = samples.iter().flat_map(|s| s.to_le_bytes()).collect();
    std::fs::write(&path, bytes).expect("raw");
    path
}

fn read(path: &Path) -> Vec<f32> {
    decode_file(path, &DecodeOptions::default())
        .expect("decodes")
        .samples
}

#[test]
fn stems_add_up_to_the_mix_through_resampling_and_the_limiter() {
    let dir = tempfile::tempdir().expect("dir");
    let n = secs(3.0) as usize;
    let tone = |f: f32, a: f32, k: usize| a * (TAU * f * k as f32 / SAMPLE_RATE as f32).sin();
    // Loud enough that the limiter works hard where the three overlap.
    let speech: Vec<f32> = (0..n).map(|k| tone(220.0, 0.6, k)).collect();
    let music: Vec<f32> = (0..n - 5000).map(|k| tone(330.0, 0.4, k)).collect();
    let sfx: Vec<f32> = (0..n + 3000)
        .map(|k| if k > n / 2 { tone(1000.0, 0.5, k) } else { 0.0 })
        .collect();
    let tracks = Tracks {
        speech: &write_raw(dir.path(), "s.raw", &speech),
        music: Some(&write_raw(dir.path(), "m.raw", &music)),
        sfx: Some(&write_raw(dir.path(), "x.raw", &sfx)),
    };
    let meta = Metadata::default();
    for rate in [24_000, 48_000] {
        let spec = MasterSpec {
            format: OutputFormat::Wav(SampleFormat::Float32),
            sample_rate: rate,
            gain: 1.2,
            ceiling_dbtp: -1.0,
            meta: &meta,
        };
        let mix = dir.path().join(format!("mix{rate}.wav"));
        let paths: Vec<PathBuf> = ["ann", "ben", "music", "sfx"]
            .iter()
            .map(|s| dir.path().join(format!("mix{rate}.{s}.wav")))
            .collect();
        let half = n as u64 / 2;
        let parts = [
            Part::Speech(std::iter::once(0..half).collect()),
            Part::Speech(std::iter::once(half..n as u64).collect()),
            Part::Music,
            Part::Sfx,
        ];
        let stems: Vec<Stem<'_>> = parts
            .into_iter()
            .zip(&paths)
            .map(|(part, dest)| Stem { part, dest })
            .collect();
        let measured = master::master(tracks, &spec, Some(&mix), &stems, &AtomicBool::new(false))
            .expect("masters");
        assert!(
            measured.true_peak_dbtp <= -0.9,
            "{}",
            measured.true_peak_dbtp
        );
        let mix = read(&mix);
        assert_eq!(mix.len() as u64, (n as u64 + 3000) * u64::from(rate) / RATE);
        let stems: Vec<Vec<f32>> = paths.iter().map(|p| read(p)).collect();
        let mut worst = 0.0f32;
        for (i, m) in mix.iter().enumerate() {
            let sum: f32 = stems.iter().map(|s| s[i]).sum();
            worst = worst.max((sum - m).abs());
        }
        assert!(
            worst < 1e-5,
            "{rate} Hz: stems differ from the mix by {worst}"
        );
        // And the limiter did work: the sum of the raw tracks would have clipped.
        assert!(mix.iter().fold(0.0f32, |a, s| a.max(s.abs())) < 0.9);
    }
}

/// Opening a bed through [`open_file`] loops the real decoder (the streaming reader's own
/// tests cover the blocks).
#[test]
fn files_open_at_the_models_rate() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("t.wav");
    let tone: Vec<f32> = (0..4410).map(|k| (k as f32 * 0.01).sin() * 0.3).collect();
    crate::audio::write_wav_file(&path, &tone, 44_100, SampleFormat::Pcm16).expect("wav");
    let mut clip = open_file(&path, true).expect("opens");
    let mut out = Vec::new();
    let seen = RefCell::new(0usize);
    for _ in 0..10 {
        *seen.borrow_mut() += clip.read(&mut out, 2400).expect("reads");
    }
    assert_eq!(*seen.borrow(), 24_000, "0.1 s looped ten times at 24 kHz");
}
