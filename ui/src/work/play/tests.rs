//! Playback's walk without a model: the mix that reaches the play buffer holds each cue's sound
//! where the export's timeline places it, and speech waits for a sound alone on its line.

use std::f32::consts::TAU;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use engine::audio::{write_wav_file, SampleFormat};
use engine::render::{mix, plan_episode, SentenceAudio, SoundMark};
use engine::script::{Episode, ParseOptions};
use engine::SAMPLE_RATE;

use super::walk::Walk;
use super::PlayEvent;

const SR: usize = SAMPLE_RATE as usize;

/// What a walk sent, gathered.
#[derive(Default)]
struct Walked {
    speech: Vec<f32>,
    heard: Vec<f32>,
    lane: Vec<f32>,
    cues: Vec<(SoundMark, Option<u64>)>,
    starts: Vec<(usize, usize)>,
}

/// Walks `script` (its cue files in `dir`) from `from`, every sentence a second of a quiet
/// 200 Hz hum.
fn walk(script: &str, dir: &Path, from: usize) -> Walked {
    let episode = Episode::parse("ep.txt", script, &ParseOptions::default()).expect("parses");
    let mut plans = plan_episode(&episode).expect("plans");
    let files = mix::resolve(&mut plans, &episode, dir, &mut Vec::new()).expect("resolves");
    let cancel = AtomicBool::new(false);
    let walk = Walk {
        plans: &plans,
        episode: &episode,
        files: &files,
        from,
        open: &mix::open_file,
        cancel: &cancel,
    };
    let hum: Vec<f32> = (0..SR)
        .map(|k| 0.1 * (TAU * 200.0 * k as f32 / SR as f32).sin())
        .collect();
    let mut out = Walked::default();
    walk.run(
        &mut |_| {
            Ok(Some(Arc::new(SentenceAudio {
                samples: hum.clone(),
                durations: Vec::new(),
            })))
        },
        &mut |event| match event {
            PlayEvent::Speech(s) => out.speech.extend(s),
            PlayEvent::Mixed { heard, cues } => {
                out.heard.extend(heard);
                out.lane.extend(cues);
            }
            PlayEvent::Cues(c) => out.cues.extend(c),
            PlayEvent::LineStart { line, at, .. } => out.starts.push((line, at)),
            _ => {}
        },
    )
    .expect("walks");
    out
}

/// The power of `x` at `hz` (Goertzel), per sample.
fn power_at(x: &[f32], hz: f32) -> f32 {
    let w = TAU * hz / SR as f32;
    let (mut s1, mut s2) = (0.0f32, 0.0f32);
    for &v in x {
        let s = v + 2.0 * w.cos() * s1 - s2;
        s2 = s1;
        s1 = s;
    }
    (s1 * s1 + s2 * s2 - 2.0 * w.cos() * s1 * s2) / (x.len() as f32).powi(2)
}

fn tone(dir: &Path, name: &str, secs: f32, hz: f32) {
    let rate = 44_100u32;
    let samples: Vec<f32> = (0..(secs * rate as f32) as usize)
        .map(|k| 0.5 * (TAU * hz * k as f32 / rate as f32).sin())
        .collect();
    write_wav_file(&dir.join(name), &samples, rate, SampleFormat::Pcm16).expect("wav");
}

#[test]
fn the_heard_mix_holds_a_tone_cue_at_its_place_and_speech_waits_for_it() {
    let dir = tempfile::tempdir().expect("dir");
    tone(dir.path(), "beep.wav", 0.5, 1000.0);
    let out = walk(
        "Ann: Hello there.\n[sound: beep.wav]\nBen: Hi.\n",
        dir.path(),
        0,
    );
    let [(mark, Some(len))] = out.cues.as_slice() else {
        panic!("one sound with its length: {:?}", out.cues);
    };
    let (at, len) = (
        usize::try_from(mark.at).expect("fits"),
        usize::try_from(*len).expect("fits"),
    );
    assert_eq!(len, SR / 2, "measured at the episode's rate");
    let ben = out
        .starts
        .iter()
        .find(|(l, _)| *l == 1)
        .expect("Ben's line")
        .1;
    assert!(
        ben >= at + len,
        "speech waits for the sound: {ben} < {at} + {len}"
    );
    assert!(
        out.heard.len() >= out.speech.len(),
        "everything placed is heard"
    );
    // The tone is in what is heard while it plays, and only then.
    let beep = &out.heard[at + SR / 10..at + len - SR / 10];
    let before = &out.heard[at - SR / 2..at - SR / 10];
    assert!(power_at(beep, 1000.0) > 0.05, "{}", power_at(beep, 1000.0));
    assert!(
        power_at(before, 1000.0) < 1e-4,
        "{}",
        power_at(before, 1000.0)
    );
    // What is heard is the speech plus the lane's beds and sounds, sample for sample.
    for (k, h) in out.heard.iter().enumerate() {
        let s = out.speech.get(k).copied().unwrap_or(0.0);
        assert!((h - (s + out.lane[k])).abs() < 1e-6, "sample {k}");
    }
}

#[test]
fn playing_from_a_line_under_a_bed_hears_the_bed_and_no_cues_pass_speech_through() {
    let dir = tempfile::tempdir().expect("dir");
    tone(dir.path(), "music.wav", 1.0, 440.0);
    let script = "[bed: music.wav volume=0dB]\nAnn: One.\nBen: Two.\n";
    let out = walk(script, dir.path(), 2);
    assert_eq!(out.cues.len(), 1, "the bed carried to the start");
    assert!(power_at(&out.lane[..SR], 440.0) > 0.001, "the bed sounds");
    // Without cues, what is heard is the speech, as it was placed.
    let out = walk("Ann: One.\nBen: Two.\n", dir.path(), 0);
    assert_eq!(out.heard, out.speech);
    assert!(out.lane.is_empty() && out.cues.is_empty());
}
