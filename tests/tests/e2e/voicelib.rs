//! The voice library's uses through the `banter` binary: `voices match` (and its embedding
//! cache), bad reference clips, library voices in `say`, the cast check, the render cache
//! (unchanged and one-line-edited re-renders) and `render --check-voices`.
//!
//! Every test uses its own temporary library (`BANTER_LIBRARY`), so nothing leaks into the
//! user's, and probe embeddings are measured afresh: the candidate stock voices are limited
//! with `--among` and the blend search with `--renders` to keep the CPU time reasonable.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::Instant;

use crate::support::{banter_path, model_store, read_wav};

/// The binary under test: `BANTER_BIN` if set (a copy safe from concurrent builds into the
/// shared target folder), else this profile's `banter`.
pub(crate) fn banter_bin() -> PathBuf {
    std::env::var_os("BANTER_BIN").map_or_else(banter_path, PathBuf::from)
}

/// Runs `banter ARGS` against the library at `library`.
pub(crate) fn run(library: &Path, args: &[&str]) -> Output {
    Command::new(banter_bin())
        .args(args)
        .env("BANTER_LIBRARY", library)
        .stdin(Stdio::null())
        .output()
        .expect("run banter")
}

pub(crate) fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

pub(crate) fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stderr)
}

/// Writes a 16-bit PCM WAV with `channels` interleaved channels.
pub(crate) fn write_wav(
    path: &Path,
    rate: u32,
    channels: u16,
    frames: usize,
    mut sample: impl FnMut(usize, u16) -> f32,
) {
    let file = std::fs::File::create(path).expect("create wav");
    let mut w = BufWriter::new(file);
    let data = u32::try_from(frames * usize::from(channels) * 2).expect("fits a WAV");
    let block = channels * 2;
    w.write_all(b"RIFF").expect("test setup");
    w.write_all(&(36 + data).to_le_bytes()).expect("test setup");
    w.write_all(b"WAVEfmt ").expect("test setup");
    w.write_all(&16u32.to_le_bytes()).expect("test setup");
    w.write_all(&1u16.to_le_bytes()).expect("test setup");
    w.write_all(&channels.to_le_bytes()).expect("test setup");
    w.write_all(&rate.to_le_bytes()).expect("test setup");
    w.write_all(&(rate * u32::from(block)).to_le_bytes())
        .expect("test setup");
    w.write_all(&block.to_le_bytes()).expect("test setup");
    w.write_all(&16u16.to_le_bytes()).expect("test setup");
    w.write_all(b"data").expect("test setup");
    w.write_all(&data.to_le_bytes()).expect("test setup");
    for i in 0..frames {
        for c in 0..channels {
            let v = (sample(i, c).clamp(-1.0, 1.0) * 32767.0).round() as i16;
            w.write_all(&v.to_le_bytes()).expect("test setup");
        }
    }
    w.flush().expect("test setup");
}

/// About 12 s of `af_bella` reading something other than the probe passage, rendered once per
/// test binary (24 kHz mono WAV).
pub(crate) fn speech_clip() -> &'static Path {
    static CLIP: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, path) = CLIP.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("bella.wav");
        let out = run(
            &dir.path().join("lib.sqlite"),
            &[
                "say",
                "I have been working on this project for a few months now. Every morning \
                 I open the notes, read what I wrote the day before, and decide what to fix \
                 first. It is slow work, but I enjoy it.",
                "--voice",
                "af_bella",
                "-o",
                path.to_str().expect("utf-8 temp path"),
            ],
        );
        ok(&out);
        (dir, path)
    });
    path
}

#[test]
fn match_finds_the_source_voice_and_caches_the_clip_embedding() {
    if model_store().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let lib = dir.path().join("library.sqlite");
    let clip = speech_clip().to_str().expect("utf-8");
    let among = "af_bella,af_sky,am_michael,bf_emma";
    let started = Instant::now();
    let first = run(
        &lib,
        &[
            "voices",
            "match",
            "Bella-ish",
            clip,
            "--json",
            "--among",
            among,
            "--renders",
            "3",
        ],
    );
    let first_s = started.elapsed().as_secs_f64();
    ok(&first);
    let v: serde_json::Value = serde_json::from_slice(&first.stdout).expect("one JSON object");
    let keys: Vec<&str> = v
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        [
            "best_kokoro",
            "embedding_cache",
            "family",
            "nearest_piper",
            "nearest_stock",
            "piper",
            "recipe",
            "similarity",
            "skipped",
            "voice"
        ],
        "{v}"
    );
    assert_eq!(v["voice"], "Bella-ish");
    // A library without Piper voices: the match is Kokoro's, as it always was.
    assert_eq!(v["family"], "kokoro", "{v}");
    assert!(
        v["piper"].is_null() && v["skipped"] == serde_json::json!([]),
        "{v}"
    );
    assert_eq!(v["embedding_cache"], "miss");
    let similarity = v["similarity"].as_f64().expect("similarity");
    let nearest = v["nearest_stock"].as_array().expect("nearest_stock");
    assert_eq!(nearest[0][0], "af_bella", "{v}");
    assert!(similarity >= 0.8, "match similarity {similarity}: {v}");
    assert!(
        similarity >= nearest[0][1].as_f64().expect("float") - 1e-6,
        "the match is at least as close as the nearest stock voice: {v}"
    );
    let recipe = v["recipe"].as_str().expect("recipe");
    assert!(recipe.contains("af_bella"), "{recipe}");

    // The same clip again: its embedding comes from the library, and so does every probe.
    let started = Instant::now();
    let second = run(
        &lib,
        &[
            "voices",
            "match",
            "Bella-again",
            clip,
            "--json",
            "--among",
            among,
            "--renders",
            "3",
        ],
    );
    let second_s = started.elapsed().as_secs_f64();
    ok(&second);
    let v2: serde_json::Value = serde_json::from_slice(&second.stdout).expect("JSON");
    assert_eq!(v2["embedding_cache"], "hit");
    assert_eq!(v2["recipe"], v["recipe"]);
    assert!(
        second_s * 3.0 < first_s,
        "second match {second_s:.1} s vs first {first_s:.1} s"
    );

    // A duplicate name is refused before any work.
    let dup = run(
        &lib,
        &["voices", "match", "Bella-ish", clip, "--among", among],
    );
    assert_eq!(dup.status.code(), Some(2), "{}", text(&dup.stderr));
    assert!(text(&dup.stderr).contains("already exists"));

    // Listed with its kind; usable by name; removable once.
    let list = run(&lib, &["voices", "--json"]);
    ok(&list);
    let voices: serde_json::Value = serde_json::from_slice(&list.stdout).expect("JSON");
    let mine = voices
        .as_array()
        .expect("array")
        .iter()
        .find(|x| x["name"] == "Bella-ish")
        .expect("the matched voice is listed");
    assert_eq!(mine["kind"], "matched");
    assert_eq!(mine["recipe"], v["recipe"]);
    let wav = dir.path().join("say.wav");
    ok(&run(
        &lib,
        &[
            "say",
            "Hello from the library.",
            "--voice",
            "Bella-ish",
            "-o",
            wav.to_str().expect("test setup"),
        ],
    ));
    assert!(read_wav(&wav).0.len() > 12_000);
    ok(&run(&lib, &["voices", "rm", "Bella-ish"]));
    let again = run(&lib, &["voices", "rm", "Bella-ish"]);
    assert_eq!(again.status.code(), Some(2));
    let stock = run(&lib, &["voices", "rm", "af_bella"]);
    assert_eq!(stock.status.code(), Some(2));
    assert!(text(&stock.stderr).contains("stock voice"));
}

/// Runs `voices match` on a bad clip; it must exit 0 or 2 with a message, never crash.
fn match_bad(lib: &Path, clip: &Path) -> Output {
    let out = run(
        lib,
        &[
            "voices",
            "match",
            "x",
            clip.to_str().expect("utf-8"),
            "--json",
            "--dry-run",
            "--among",
            "af_bella",
            "--renders",
            "0",
        ],
    );
    let code = out.status.code();
    assert!(
        matches!(code, Some(0 | 2)),
        "{}: exit {code:?}: {}",
        clip.display(),
        text(&out.stderr)
    );
    if code == Some(2) {
        let stderr = text(&out.stderr);
        assert!(stderr.lines().any(|l| l.starts_with("error: ")), "{stderr}");
        assert!(!text(&out.stderr).contains("internal error"));
    }
    out
}

#[test]
fn bad_clips_give_a_clear_error_or_a_result() {
    if model_store().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let lib = dir.path().join("library.sqlite");
    let d = dir.path();

    let not_audio = d.join("notes.wav");
    std::fs::write(&not_audio, "these are my notes, not audio\n".repeat(50)).expect("test setup");
    let out = match_bad(&lib, &not_audio);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("not an audio file"),
        "{}",
        text(&out.stderr)
    );

    let silence = d.join("silence.wav");
    write_wav(&silence, 16_000, 1, 16_000 * 5, |_, _| 0.0);
    let out = match_bad(&lib, &silence);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("silence"),
        "{}",
        text(&out.stderr)
    );

    let (speech, rate) = read_wav(speech_clip());
    let short = d.join("short.wav");
    let n = rate as usize * 3 / 2;
    write_wav(&short, rate, 1, n, |i, _| speech[i + rate as usize]);
    let out = match_bad(&lib, &short);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("of speech"),
        "{}",
        text(&out.stderr)
    );

    // Eight channels of the speech (one per channel, scaled differently): a real result.
    let eight = d.join("eight.wav");
    write_wav(&eight, rate, 8, speech.len(), |i, c| {
        speech[i] * (0.3 + 0.1 * f32::from(c))
    });
    let out = match_bad(&lib, &eight);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(v["similarity"].as_f64().expect("test setup") > 0.8, "{v}");

    // 192 kHz (the speech repeated 8 times per sample): resampled, a real result.
    let hi = d.join("hi.wav");
    write_wav(&hi, 192_000, 1, speech.len() * 8, |i, _| speech[i / 8]);
    let out = match_bad(&lib, &hi);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(v["similarity"].as_f64().expect("test setup") > 0.8, "{v}");

    // A header promising more than the file holds: the part that is there is used.
    let cut = d.join("cut.wav");
    let bytes = std::fs::read(speech_clip()).expect("test setup");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).expect("test setup");
    let out = match_bad(&lib, &cut);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("damaged"),
        "{}",
        text(&out.stderr)
    );

    // One hour at 8 kHz: only the first minutes are embedded, and the output says so.
    let hour = d.join("hour.wav");
    let speech_8k: Vec<f32> = speech.iter().step_by(3).copied().collect();
    write_wav(&hour, 8_000, 1, 8_000 * 3600, |i, _| {
        speech_8k[i % speech_8k.len()]
    });
    let started = Instant::now();
    let out = match_bad(&lib, &hour);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("only its first 180 s"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        started.elapsed().as_secs() < 300,
        "an hour-long clip took {:?}",
        started.elapsed()
    );
}

const SCRIPT: &str = "\
Host: Welcome back to the show. Today we are talking about old trains.
Guest: Thanks for having me. I have loved trains since I was a child.
Host: Then let us start with the basics. What makes a steam engine work?
";

/// `render cache: H hits, M misses; model time X s, pass one Y s` from `banter render`.
fn cache_line(stderr: &str) -> (u64, u64, f64) {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("render cache: "))
        .unwrap_or_else(|| panic!("no render cache line in:\n{stderr}"));
    let nums: Vec<f64> = line
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter(|s| !s.is_empty() && *s != ".")
        .map(|s| s.parse().expect("number"))
        .collect();
    (nums[0] as u64, nums[1] as u64, nums[3])
}

#[test]
fn render_cache_renders_only_what_changed() {
    if model_store().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let lib = dir.path().join("library.sqlite");
    let script = dir.path().join("ep.txt");
    std::fs::write(&script, SCRIPT).expect("test setup");
    let out_wav = dir.path().join("ep.wav");
    let render = |extra: &[&str]| {
        let mut args = vec![
            "render",
            script.to_str().expect("test setup"),
            "-o",
            out_wav.to_str().expect("test setup"),
            "--cast",
            "Host=af_bella",
            "--cast",
            "Guest=am_michael",
        ];
        args.extend_from_slice(extra);
        let out = run(&lib, &args);
        ok(&out);
        out
    };
    let first = render(&[]);
    let (hits, misses, pass1) = cache_line(&text(&first.stderr));
    assert_eq!(hits, 0);
    assert!(misses >= 6, "{misses} sentences");
    let (a, _) = read_wav(&out_wav);

    let second = render(&["--check-voices"]);
    let stderr = text(&second.stderr);
    let (hits2, misses2, pass2) = cache_line(&stderr);
    assert_eq!((hits2, misses2), (misses, 0), "{stderr}");
    assert!(
        pass1 >= 20.0 * pass2,
        "unchanged re-render: pass one {pass2:.3} s vs {pass1:.3} s"
    );
    assert_eq!(read_wav(&out_wav).0, a, "cached audio is the same audio");
    assert!(
        stderr.contains("voice check: 3 of 3 lines scored"),
        "{stderr}"
    );
    assert!(stderr.contains("; 0 flagged"), "{stderr}");

    // Edit the guest's line (two sentences, one changed): only that sentence renders.
    std::fs::write(
        &script,
        SCRIPT.replace("since I was a child.", "since I was a small child."),
    )
    .expect("test setup");
    let third = render(&[]);
    let (hits3, misses3, _) = cache_line(&text(&third.stderr));
    assert_eq!((hits3, misses3), (misses - 1, 1), "{}", text(&third.stderr));

    // --no-cache renders everything and says nothing about a cache.
    let fourth = render(&["--no-cache"]);
    assert!(!text(&fourth.stderr).contains("render cache:"));

    // A blend saved in the library renders by name in a cast.
    ok(&run(
        &lib,
        &["voices", "blend", "warm", "af_bella:0.7+af_sky:0.3"],
    ));
    let by_name = render(&["--cast", "Host=warm"]);
    assert!(
        text(&by_name.stderr).contains("library voice warm = af_bella:0.7+af_sky:0.3"),
        "{}",
        text(&by_name.stderr)
    );
}

#[test]
fn cast_check_warns_about_voices_that_sound_alike() {
    if model_store().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let lib = dir.path().join("library.sqlite");
    let script = dir.path().join("ep.txt");
    std::fs::write(&script, SCRIPT).expect("test setup");
    let s = script.to_str().expect("test setup");
    let close = run(
        &lib,
        &[
            "script",
            "check",
            s,
            "--cast",
            "Host=af_bella",
            "--cast",
            "Guest=af_bella:0.9+af_sky:0.1",
        ],
    );
    let stderr = ok(&close);
    assert!(stderr.contains("sound alike"), "{stderr}");
    let apart = run(
        &lib,
        &[
            "script",
            "check",
            s,
            "--cast",
            "Host=af_bella",
            "--cast",
            "Guest=am_michael",
        ],
    );
    let stderr = ok(&apart);
    assert!(!stderr.contains("sound alike"), "{stderr}");
}
