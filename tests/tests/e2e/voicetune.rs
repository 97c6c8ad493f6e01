//! `banter voices tune` through the binary: a tuned voice is saved with its kind, speaks by
//! name and goes with its entries; bad clips, a taken name and a cancelled tuning each get a
//! clear message and leave the library as it was.
//!
//! Kept lean for CI: the clip is a Kokoro voice (`af_bella`) and the starting blend is limited
//! to two male stock voices (`--among`), so the search has somewhere to go within a few
//! candidates; the figures that matter (other speakers, minutes of search) are
//! `banter bench tune`'s.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::{model_store, read_wav};
use crate::voicelib::{banter_bin, ok, run, speech_clip, text, write_wav};

/// Voice names in the library at `lib`.
fn voices(lib: &Path) -> Vec<(String, String)> {
    let out = run(lib, &["voices", "--json"]);
    ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| {
            (
                x["name"].as_str().unwrap_or_default().to_owned(),
                x["kind"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn library_ok(lib: &Path) {
    let out = run(lib, &["library", "check", "--json", "--no-vacuum"]);
    ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["ok"], true, "{v}");
}

#[test]
fn a_tuned_voice_is_saved_speaks_by_name_and_goes_with_its_entries() {
    if model_store().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let lib = dir.path().join("library.sqlite");
    let clip = speech_clip().to_str().expect("utf-8");
    let out = run(
        &lib,
        &[
            "voices",
            "tune",
            "Bella-tuned",
            clip,
            "--among",
            "am_michael,am_adam",
            "--renders",
            "1",
            "--candidates",
            "16",
            "--json",
        ],
    );
    let stderr = text(&out.stderr);
    assert!(stderr.contains("permission"), "{stderr}");
    match out.status.code() {
        Some(0) => {}
        Some(2) => {
            // Refused honestly (not closer, or unstable): nothing saved.
            assert!(stderr.contains("not kept"), "{stderr}");
            assert!(!voices(&lib).iter().any(|(n, _)| n == "Bella-tuned"));
            library_ok(&lib);
            return;
        }
        code => panic!("exit {code:?}: {stderr}"),
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["kind"], "tuned");
    let before = v["similarity_before"].as_f64().expect("before");
    let after = v["similarity_after"].as_f64().expect("after");
    assert!(after > before, "{v}");
    assert!(v["stability"].as_f64().expect("stability") >= 0.9, "{v}");
    assert_eq!(v["candidates"], 16);
    assert!(
        voices(&lib).contains(&("Bella-tuned".to_owned(), "tuned".to_owned())),
        "listed with its kind"
    );
    library_ok(&lib);

    let wav = dir.path().join("say.wav");
    ok(&run(
        &lib,
        &[
            "say",
            "Hello from a tuned voice.",
            "--voice",
            "Bella-tuned",
            "-o",
            wav.to_str().expect("utf-8"),
        ],
    ));
    assert!(read_wav(&wav).0.len() > 12_000);

    ok(&run(&lib, &["voices", "rm", "Bella-tuned"]));
    assert!(!voices(&lib).iter().any(|(n, _)| n == "Bella-tuned"));
    library_ok(&lib);
}

#[test]
fn bad_clips_a_taken_name_and_a_cancelled_tuning_change_nothing() {
    if model_store().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let lib = dir.path().join("library.sqlite");
    let d = dir.path();
    let tune = |name: &str, clip: &Path| {
        run(
            &lib,
            &[
                "voices",
                "tune",
                name,
                clip.to_str().expect("utf-8"),
                "--among",
                "am_michael",
                "--renders",
                "0",
                "--candidates",
                "2",
            ],
        )
    };
    let refused = |out: &std::process::Output, says: &str| {
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(says), "expected {says:?} in: {stderr}");
    };
    ok(&run(&lib, &["voices", "blend", "Taken", "af_bella"]));
    let before = voices(&lib);

    refused(&tune("Taken", speech_clip()), "already exists");

    let silence = d.join("silence.wav");
    write_wav(&silence, 16_000, 1, 16_000 * 5, |_, _| 0.0);
    refused(&tune("x", &silence), "silence");

    let (speech, rate) = read_wav(speech_clip());
    let short = d.join("short.wav");
    write_wav(&short, rate, 1, rate as usize * 2, |i, _| {
        speech[i + rate as usize]
    });
    refused(&tune("x", &short), "tuning needs at least 3 s");

    // Two speakers: af_bella's 12 s, then am_michael's.
    let other = d.join("michael.wav");
    ok(&run(
        &lib,
        &[
            "say",
            "Good evening. The storm has passed, and the roads along the coast are open \
             again, though the ferries will not sail before the morning tide.",
            "--voice",
            "am_michael",
            "-o",
            other.to_str().expect("utf-8"),
        ],
    ));
    let (michael, _) = read_wav(&other);
    let both = d.join("both.wav");
    write_wav(&both, rate, 1, speech.len() + michael.len(), |i, _| {
        if i < speech.len() {
            speech[i]
        } else {
            michael[i - speech.len()]
        }
    });
    refused(&tune("x", &both), "different speaker");
    assert_eq!(voices(&lib), before);

    // Ctrl-C once the search runs: exit 130, nothing saved.
    let mut child = Command::new(banter_bin())
        .args([
            "voices",
            "tune",
            "Cancelled",
            speech_clip().to_str().expect("utf-8"),
            "--among",
            "am_michael",
            "--renders",
            "0",
        ])
        .env("BANTER_LIBRARY", &lib)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn banter");
    let stderr = child.stderr.take().expect("piped");
    let mut seen = String::new();
    for line in BufReader::new(stderr).lines() {
        let line = line.expect("stderr");
        seen.push_str(&line);
        seen.push('\n');
        if line.contains("searching") {
            let interrupted = Command::new("kill")
                .args(["-INT", &child.id().to_string()])
                .status()
                .expect("kill");
            assert!(interrupted.success());
        }
    }
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(130), "{seen}");
    assert!(seen.contains("nothing was saved"), "{seen}");
    assert_eq!(voices(&lib), before);
    library_ok(&lib);
}
