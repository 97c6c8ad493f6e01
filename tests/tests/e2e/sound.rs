//! `banter render` with sound cues: a generated music bed and two sounds under a two-line
//! script. What a listener and an editor check: the bed ducks by its depth under speech, a
//! sound cued at a word starts at that word, the mix meets the loudness target and the
//! true-peak ceiling, the stems add up to the mix, and the markers list every cue.

use std::f32::consts::TAU;
use std::path::Path;

use engine::audio::{write_wav_file, LoudnessMeter, SampleFormat};
use serde_json::Value;

use crate::support::{banter, model_store, read_wav};

/// A stereo-free tone (`hz`, amplitude `amp`) of `secs` at `rate`, written as 16-bit WAV.
fn tone(path: &Path, secs: f32, rate: u32, hz: f32, amp: f32) {
    let n = (secs * rate as f32) as usize;
    let samples: Vec<f32> = (0..n)
        .map(|k| amp * (TAU * hz * k as f32 / rate as f32).sin())
        .collect();
    write_wav_file(path, &samples, rate, SampleFormat::Pcm16).expect("write a tone");
}

fn rms_db(x: &[f32]) -> f64 {
    let power = x.iter().map(|s| f64::from(*s).powi(2)).sum::<f64>() / x.len().max(1) as f64;
    10.0 * power.max(1e-20).log10()
}

#[test]
fn a_bed_and_sounds_are_mixed_ducked_placed_and_stemmed() {
    if model_store().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("sounds")).expect("sounds dir");
    // A 3 s bed (looped under a longer episode), a 1 s sting, a 60 ms click.
    tone(&dir.path().join("sounds/bed.wav"), 3.0, 44_100, 220.0, 0.5);
    tone(
        &dir.path().join("sounds/sting.wav"),
        1.0,
        48_000,
        880.0,
        0.5,
    );
    tone(
        &dir.path().join("sounds/click.wav"),
        0.06,
        24_000,
        2000.0,
        0.8,
    );
    let script = dir.path().join("ep.txt");
    std::fs::write(
        &script,
        "[bed: sounds/bed.wav volume=-6dB fade=200ms duck=12dB]\n[sound: sounds/sting.wav]\nAnn: Welcome to the show, everyone.\nBen: Glad [sound: sounds/click.wav] to be here.\n",
    )
    .expect("script");
    let out = banter(
        &[
            "render",
            &script.to_string_lossy(),
            "--stems",
            "--captions",
            "srt",
        ],
        None,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let path = |name: &str| dir.path().join(name);
    let (mix, rate) = read_wav(&path("ep.wav"));
    assert_eq!(rate, 24_000);
    let at = |secs: f64| ((secs * f64::from(rate)) as usize).min(mix.len());

    // One master: the whole mix at the loudness target and under the ceiling.
    let mut meter = LoudnessMeter::new(rate).expect("meter");
    meter.add(&mix).expect("meter");
    let lufs = meter.integrated_lufs().expect("not silent");
    assert!((lufs + 16.0).abs() <= 0.5, "{lufs:.2} LUFS");
    assert!(
        meter.true_peak_dbtp() <= -0.9,
        "{:.2} dBTP",
        meter.true_peak_dbtp()
    );

    // Stems add up to the mix (16-bit rounding: one step per stem).
    let stems: Vec<Vec<f32>> = ["ann", "ben", "music", "sfx"]
        .iter()
        .map(|s| read_wav(&path(&format!("ep.{s}.wav"))).0)
        .collect();
    let worst = (0..mix.len())
        .map(|i| (stems.iter().map(|s| s[i]).sum::<f32>() - mix[i]).abs())
        .fold(0.0f32, f32::max);
    assert!(
        worst <= 4.5 / 32767.0,
        "stems differ from the mix by {worst}"
    );

    // The markers list each cue; captions hold only the speech.
    let markers: Value =
        serde_json::from_slice(&std::fs::read(path("ep.chapters.json")).expect("markers"))
            .expect("markers JSON");
    let sounds = markers["sounds"].as_array().expect("sounds");
    let kinds: Vec<(&str, &str)> = sounds
        .iter()
        .map(|s| (s["kind"].as_str().unwrap(), s["file"].as_str().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("bed", "sounds/bed.wav"),
            ("sound", "sounds/sting.wav"),
            ("sound", "sounds/click.wav")
        ]
    );
    let srt = std::fs::read_to_string(path("ep.srt")).expect("srt");
    assert_eq!(srt.matches(" --> ").count(), 2, "{srt}");
    assert!(!srt.contains("sound"), "{srt}");

    // Speech waits for the sting alone on its line.
    let lines = markers["lines"].as_array().expect("lines");
    let first_word = lines[0]["words"][0]["start"].as_f64().unwrap();
    assert!(
        (1.0..1.2).contains(&first_word),
        "speech starts at {first_word:.3}"
    );

    // The click lands on "to" (within 10 ms of the word's start), in the file.
    let to = lines[1]["words"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["word"] == "to")
        .expect("the word")["start"]
        .as_f64()
        .unwrap();
    assert!((sounds[2]["start"].as_f64().unwrap() - to).abs() < 1e-3);
    let sfx = &stems[3];
    let onset = (at(to - 0.2)..sfx.len())
        .find(|&i| sfx[i].abs() > 0.01)
        .expect("the click sounds") as f64
        / f64::from(rate);
    assert!(
        (onset - to).abs() <= 0.010,
        "click at {onset:.4}, word at {to:.4}"
    );

    // The bed ducks by its depth: its level under Ann against the pause before her.
    let music = &stems[2];
    let gap = rms_db(&music[at(0.35)..at(0.9)]);
    let ann = &lines[0];
    let under = rms_db(&music[at(first_word + 0.1)..at(ann["end"].as_f64().unwrap() - 0.1)]);
    assert!(
        ((gap - under) - 12.0).abs() <= 1.5,
        "ducked {:.2} dB (gap {gap:.1}, under speech {under:.1})",
        gap - under
    );
}

#[test]
fn a_missing_sound_file_is_an_error_at_its_cue() {
    if model_store().is_none() {
        return; // the voices load before the cues are checked
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("ep.txt");
    std::fs::write(&script, "Ann: Hello.\n  [sound: nowhere.wav]\nBen: Hi.\n").expect("script");
    let out = banter(&["render", &script.to_string_lossy()], None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("ep.txt:2:3: cannot play `nowhere.wav`"),
        "{stderr}"
    );
    assert!(!dir.path().join("ep.wav").exists());
}
