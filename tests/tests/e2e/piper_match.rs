//! Piper voices as candidates of `banter voices match`: a clip spoken by the Piper voice `joe`
//! is matched among joe and two stock voices; joe is offered, scored and ranks first, and
//! saving the match saves another name for joe (the families never blend). A Piper voice whose
//! model file was replaced or removed is skipped with a warning naming the file, and the
//! others are still compared; the replaced one is never scored from the probe embedding of the
//! file it had before.
//!
//! Lean on purpose (CI is slow): one short clip, three candidates, one blend render; the second
//! match reads every probe from the library.

use std::path::{Path, PathBuf};

use crate::support::{banter_command, model_store, piper_test_voice as joe};

/// `banter ARGS` against `library`, expecting success; returns (stdout, stderr).
fn run(library: &Path, args: &[&str]) -> (String, String) {
    let out = banter_command()
        .env("BANTER_LIBRARY", library)
        .args(args)
        .output()
        .expect("run banter");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "banter {args:?} failed:\n{stdout}\n{stderr}"
    );
    (stdout, stderr)
}

/// A copy of the voice's pair in `dir` as `NAME.onnx` (+ `.onnx.json`).
fn copy_voice(voice: &Path, dir: &Path, name: &str) -> PathBuf {
    let onnx = dir.join(format!("{name}.onnx"));
    std::fs::copy(voice, &onnx).expect("copy the model");
    let mut json = voice.as_os_str().to_owned();
    json.push(".json");
    std::fs::copy(&json, dir.join(format!("{name}.onnx.json"))).expect("copy the config");
    onnx
}

#[test]
fn a_piper_voice_is_a_match_candidate_and_wins_its_own_clip() {
    let (Some(voice), Some(_store)) = (joe(), model_store()) else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let library = dir.path().join("library.sqlite");
    let path = |p: &Path| p.to_str().expect("utf-8 path").to_owned();
    run(&library, &["voices", "add", "joe", &path(&voice)]);
    // Two copies of the model file, added now and broken after the first match.
    let changed = copy_voice(&voice, dir.path(), "changed");
    let gone = copy_voice(&voice, dir.path(), "gone");
    run(&library, &["voices", "add", "changed", &path(&changed)]);
    run(&library, &["voices", "add", "gone", &path(&gone)]);

    let clip = dir.path().join("joe.wav");
    run(
        &library,
        &[
            "say",
            "--voice",
            "joe",
            "-o",
            &path(&clip),
            "Thanks for calling. I will read you the weather for the weekend: sunny on \
             Saturday, a little rain on Sunday morning, and clear skies by the evening.",
        ],
    );

    let among = "joe,af_heart,am_michael";
    let (stdout, stderr) = run(
        &library,
        &[
            "voices",
            "match",
            "joe-twin",
            &path(&clip),
            "--json",
            "--among",
            among,
            "--renders",
            "1",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
    eprintln!("{stderr}\n{v}");
    assert!(
        stderr.contains("measured Piper voice joe"),
        "joe is offered and probed: {stderr}"
    );
    let piper = v["nearest_piper"].as_array().expect("nearest_piper");
    assert_eq!(piper.len(), 1, "{v}");
    assert_eq!(piper[0]["name"], "joe");
    assert_eq!(piper[0]["language"], "en_US");
    let joe_sim = piper[0]["similarity"].as_f64().expect("joe scored");
    let kokoro_sim = v["best_kokoro"][1].as_f64().expect("best Kokoro scored");
    println!(
        "joe's own clip: joe {joe_sim:.3}, best Kokoro voice or blend {} {kokoro_sim:.3}",
        v["best_kokoro"][0]
    );
    assert!(joe_sim > kokoro_sim + 0.1, "{v}");
    assert_eq!(v["family"], "piper", "{v}");
    assert_eq!(v["piper"]["name"], "joe");
    assert!((v["similarity"].as_f64().expect("similarity") - joe_sim).abs() < 1e-6);
    assert!(
        v["recipe"]
            .as_str()
            .is_some_and(|r| r.starts_with("piper/")),
        "{v}"
    );
    // Only stock voices were blended.
    assert!(
        !v["best_kokoro"][0]
            .as_str()
            .expect("recipe")
            .contains("piper"),
        "{v}"
    );
    // The saved match is joe under another name: it speaks, as a Piper voice.
    let (listed, _) = run(&library, &["voices", "--json"]);
    let listed: serde_json::Value = serde_json::from_str(&listed).expect("JSON list");
    let twin = listed
        .as_array()
        .expect("a list")
        .iter()
        .find(|x| x["name"] == "joe-twin")
        .expect("joe-twin saved");
    assert_eq!(twin["kind"], "piper", "{twin}");
    assert_eq!(twin["piper"]["model"], path(&voice).as_str());

    // One copy replaced by another file of the same size, the other removed: both are
    // skipped with a warning naming the file, and the rest are compared as before.
    let mut bytes = std::fs::read(&changed).expect("read the copy");
    let last = bytes.len() - 1;
    bytes[last] ^= 0x5a;
    std::fs::write(&changed, bytes).expect("replace the copy");
    std::fs::remove_file(&gone).expect("remove the copy");
    let (stdout, stderr) = run(
        &library,
        &[
            "voices",
            "match",
            "unused",
            &path(&clip),
            "--among",
            "changed,gone,joe,af_heart",
            "--renders",
            "0",
            "--dry-run",
        ],
    );
    eprintln!("{stdout}\n{stderr}");
    for (name, file) in [("changed", &changed), ("gone", &gone)] {
        let warning = format!(
            "warning: Piper voice `{name}` was not compared ({})",
            file.display()
        );
        assert!(stderr.contains(&warning), "{warning}:\n{stderr}");
    }
    assert!(stderr.contains("sha256 differs"), "{stderr}");
    assert!(
        stdout.starts_with("unused = joe (Piper voice, en_US)"),
        "{stdout}"
    );
}
