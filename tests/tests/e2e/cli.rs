//! The `banter` CLI as a user runs it: good input makes a WAV, bad input exits 2 with one line.

use crate::support::{banter, model_store, read_wav};

fn assert_bad_input(args: &[&str], stdin: Option<&[u8]>, needle: &str) {
    let out = banter(args, stdin);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "args {args:?}: expected exit 2, stderr: {stderr}"
    );
    assert!(
        stderr.contains(needle),
        "args {args:?}: stderr should mention {needle:?}: {stderr}"
    );
    let error_lines = stderr.lines().filter(|l| l.starts_with("error")).count();
    assert_eq!(error_lines, 1, "one-line reason expected: {stderr}");
}

#[test]
fn bad_input_is_exit_2_with_a_reason() {
    if model_store().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("x.wav");
    let out = out.to_str().expect("utf-8 path");
    assert_bad_input(&["say", "", "-o", out], None, "empty");
    assert_bad_input(&["say", "  \n\t ", "-o", out], None, "empty");
    assert_bad_input(&["say", "-", "-o", out], Some(b"   "), "empty");
    assert_bad_input(
        &["say", "Hello", "--voice", "zz_nobody", "-o", out],
        None,
        "af_heart",
    );
    assert_bad_input(
        &["say", "Hello", "--voice", "af_bella:+", "-o", out],
        None,
        "blend",
    );
    assert_bad_input(
        &["say", "Hello", "--voice", "af_bella(2", "-o", out],
        None,
        "blend",
    );
    assert_bad_input(&["say", "Hello", "--speed", "3", "-o", out], None, "speed");
    assert_bad_input(
        &["say", "Hello", "--speed", "0.1", "-o", out],
        None,
        "speed",
    );
    assert_bad_input(
        &["say", "Hello", "--device", "tpu", "-o", out],
        None,
        "device",
    );
    assert_bad_input(&["say", "🙂🙂🙂 ✨", "-o", out], None, "nothing to say");
    assert_bad_input(&["say", "!!! ... ???", "-o", out], None, "nothing to say");
    assert_bad_input(
        &["say", "Hello", "--speed", "fast", "-o", out],
        None,
        "speed",
    );
    assert!(
        !std::path::Path::new(out).exists(),
        "a failed run must not leave the target file"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).expect("read dir").count(),
        0,
        "no temp files left behind"
    );
}

#[test]
fn say_writes_a_24khz_wav_that_is_not_silent() {
    if model_store().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("hello.wav");
    let out = banter(
        &[
            "say",
            "Hello there! This is Banter.",
            "--voice",
            "am_michael",
            "-o",
            path.to_str().expect("utf-8"),
        ],
        None,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (samples, rate) = read_wav(&path);
    assert_eq!(rate, 24_000);
    let seconds = samples.len() as f32 / 24_000.0;
    assert!(
        (1.0..6.0).contains(&seconds),
        "{seconds} s for a short sentence"
    );
    let rms = (samples.iter().map(|s| s * s).sum::<f32>() / samples.len() as f32).sqrt();
    assert!(rms > 0.01, "rms {rms}: audio is (nearly) silent");
    assert_eq!(
        std::fs::read_dir(dir.path()).expect("read dir").count(),
        1,
        "only the wav, no temp file"
    );
}

#[test]
fn say_reads_stdin_and_blends_voices() {
    if model_store().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("blend.wav");
    let out = banter(
        &[
            "say",
            "-",
            "--voice",
            "af_bella(2)+bf_emma(1)",
            "--speed",
            "1.2",
            "-o",
            path.to_str().expect("utf-8"),
        ],
        Some("Reading from standard input.\nSecond line.".as_bytes()),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (samples, _) = read_wav(&path);
    assert!(samples.len() > 24_000);
}

#[test]
fn voices_lists_54_with_language_and_gender() {
    if model_store().is_none() {
        return;
    }
    let out = banter(&["voices", "--json"], None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let list = v.as_array().expect("array");
    assert_eq!(list.len(), 54);
    let heart = list
        .iter()
        .find(|x| x["name"] == "af_heart")
        .expect("af_heart listed");
    assert_eq!(heart["gender"], "female");
    let table = banter(&["voices"], None);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("bm_george") && l.contains("male")),
        "{text}"
    );
}
