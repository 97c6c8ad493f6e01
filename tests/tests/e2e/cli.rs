//! The `banter` CLI as a user runs it: good input makes a WAV, bad input exits 2 with one line.

use std::time::Duration;

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
    // What a SIGKILLed render left an hour ago (PID above the kernel's limit: surely gone), and
    // a file of the user's that only looks hidden: the first is swept, the second kept.
    let leftover = dir.path().join(".banter-4194305-render-x1.raw");
    let notes = dir.path().join(".notes");
    for f in [&leftover, &notes] {
        std::fs::write(f, b"x").expect("write");
        std::fs::File::options()
            .write(true)
            .open(f)
            .and_then(|h| h.set_modified(std::time::SystemTime::now() - Duration::from_hours(1)))
            .expect("age");
    }
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
    assert!(!leftover.exists(), "a killed process's draft is swept");
    assert!(
        notes.exists(),
        "a file not named like Banter's temporaries is kept"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("removed 1 temporary file"),
        "the sweep says so: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).expect("read dir").count(),
        2,
        "the wav and the user's file, no temp file"
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

/// `say --follow -` speaks the first clause while standard input is still open: audio reaches
/// standard output (a WAV stream) before the rest of the text is even written, and the whole
/// text is spoken once input ends. Empty input is exit 2, as for `say -`.
#[test]
fn say_follow_speaks_text_while_it_arrives() {
    use std::io::{Read, Write};
    if model_store().is_none() {
        return;
    }
    let mut child = crate::support::banter_command()
        .args(["say", "--follow", "-", "-o", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn banter");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::sync_channel::<usize>(1024);
    let reader = std::thread::Builder::new()
        .name("follow-stdout".into())
        .spawn(move || {
            let mut all = Vec::new();
            let mut buf = [0u8; 8192];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                all.extend_from_slice(&buf[..n]);
                let _ = tx.try_send(all.len());
            }
            all
        })
        .expect("spawn reader");
    stdin.write_all(b"Hello there, ").expect("write");
    stdin.flush().expect("flush");
    // The first clause alone: audio (past the 44-byte header) while stdin stays open.
    let deadline = std::time::Instant::now() + std::time::Duration::from_mins(2);
    let mut got = 0;
    while got <= 44 + 2400 {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        got = rx
            .recv_timeout(left)
            .expect("audio before the rest of the text");
    }
    stdin
        .write_all(b"this second part arrives later. Goodbye.")
        .expect("write");
    drop(stdin);
    let status = child.wait().expect("wait");
    let all = reader.join().expect("reader");
    assert!(status.success());
    assert_eq!(&all[..4], b"RIFF");
    let secs = (all.len() - 44) as f64 / 48_000.0;
    assert!((2.0..12.0).contains(&secs), "{secs:.2} s");
    assert_bad_input(
        &["say", "--follow", "-", "-o", "-"],
        Some(b"  \n "),
        "nothing to say",
    );
    assert_bad_input(&["say", "--follow", "Hello", "-o", "-"], None, "--follow");
}

/// The packed-weights cache (`kokoro::cpu_kernels::cache`): the first start writes it, the next reads
/// it, and the audio is the same to the bit as a start without it; a damaged file is reported,
/// replaced and never run.
#[test]
fn packed_weights_cache_changes_nothing_but_the_start() {
    #[cfg(target_arch = "x86_64")]
    let packs = kokoro::cpu_kernels::bf16::supported();
    #[cfg(not(target_arch = "x86_64"))]
    let packs = false;
    if model_store().is_none() || !packs {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = dir.path().join("cache");
    let say = |name: &str, cache_dir: &std::path::Path| {
        let wav = dir.path().join(name);
        let out = crate::support::banter_command()
            .args(["say", "Every start after the first reads its panels back."])
            .arg("-o")
            .arg(&wav)
            .env("BANTER_CACHE_DIR", cache_dir)
            .env("BANTER_LOG", "engine=debug,kokoro=debug")
            .env_remove("BANTER_PRECISION")
            .output()
            .expect("run banter say");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{stderr}");
        (std::fs::read(&wav).expect("wav"), stderr)
    };
    let (written, log) = say("a.wav", &cache);
    assert!(
        log.contains("Written("),
        "first start writes the cache: {log}"
    );
    let (read, log) = say("b.wav", &cache);
    assert!(log.contains("Read("), "second start reads it: {log}");
    let (none, _) = say("c.wav", std::path::Path::new(""));
    assert!(
        written == none && read == none,
        "the cache changed the audio"
    );

    let file = std::fs::read_dir(&cache)
        .expect("cache dir")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "packed"))
        .expect("a .packed file");
    let mut bytes = std::fs::read(&file).expect("cache file");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    std::fs::write(&file, &bytes).expect("damage the cache");
    let (after, log) = say("d.wav", &cache);
    assert!(
        log.contains("unreadable") && log.contains("Written("),
        "a damaged cache is reported and rebuilt: {log}"
    );
    assert!(after == none, "a damaged cache changed the audio");
}

/// `-o` never destroys what it names: the script itself (by any name) is refused before any
/// work, a folder or a missing folder too, and a device or FIFO is written to, not replaced.
#[test]
fn an_output_that_would_destroy_the_script_or_a_device_is_refused_or_streamed() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("same.txt");
    let text = "Ann: Hello there.\nBen: Hi, Ann.\n";
    std::fs::write(&script, text).expect("write script");
    let s = script.to_str().expect("utf-8 path");
    assert_bad_input(&["render", s, "-o", s], None, "is the input");
    let link = dir.path().join("other-name.wav");
    std::fs::hard_link(&script, &link).expect("hard link");
    let l = link.to_str().expect("utf-8 path");
    assert_bad_input(&["render", s, "-o", l], None, "is the input");
    let d = dir.path().to_str().expect("utf-8 path");
    assert_bad_input(&["render", s, "-o", d], None, "is a folder");
    assert_bad_input(&["say", "Hello", "-o", d], None, "is a folder");
    let missing = dir.path().join("no/such/out.wav");
    let m = missing.to_str().expect("utf-8 path");
    assert_bad_input(&["say", "Hello", "-o", m], None, "does not exist");
    assert_eq!(std::fs::read_to_string(&script).expect("script"), text);

    if model_store().is_none() {
        return;
    }
    // A FIFO gets the audio through the pipe; it is still a FIFO afterwards.
    let fifo = dir.path().join("pipe.wav");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::Builder::new()
            .name("fifo-reader".into())
            .spawn(move || std::fs::read(fifo).expect("read the fifo"))
            .expect("spawn the fifo reader")
    };
    let f = fifo.to_str().expect("utf-8 path");
    let out = banter(&["render", s, "-o", f], None);
    if !out.status.success() {
        // Unblock the reader (it waits for a writer) before failing.
        let _ = std::fs::OpenOptions::new().write(true).open(&fifo);
        panic!("{}", String::from_utf8_lossy(&out.stderr));
    }
    let wav = reader.join().expect("reader thread");
    assert!(
        wav.len() > 44 && &wav[0..4] == b"RIFF",
        "a WAV came through"
    );
    assert!(std::fs::metadata(&fifo)
        .expect("fifo")
        .file_type()
        .is_fifo());
    // /dev/null stays the device.
    let out = banter(&["say", "Hi.", "-o", "/dev/null"], None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::metadata("/dev/null")
        .expect("/dev/null")
        .file_type()
        .is_char_device());
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| !n.starts_with('.')),
        "no temporaries left: {names:?}"
    );
}

/// Four bytes of NaN in the weights (same size, so the cheap check cannot see them): `models
/// status` names the damaged tensor, and `say` fails as an internal error naming the weights
/// file instead of writing silence with exit status 0.
#[test]
fn damaged_weights_are_found_and_never_speak_silence() {
    let Some(store) = model_store() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let models = dir.path().join("models");
    std::fs::create_dir(&models).expect("mkdir");
    let weights = store.kokoro_weights();
    for entry in std::fs::read_dir(store.root()).expect("store") {
        let entry = entry.expect("entry");
        let to = models.join(entry.file_name());
        if entry.path() == weights {
            std::fs::copy(entry.path(), &to).expect("copy the weights");
        } else {
            std::os::unix::fs::symlink(entry.path(), &to).expect("link");
        }
    }
    let damaged = models.join(weights.file_name().expect("weights name"));
    let mut bytes = std::fs::read(&damaged).expect("read");
    let header_len = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")) as usize;
    let header: serde_json::Value =
        serde_json::from_slice(&bytes[8..8 + header_len]).expect("header");
    let start = header["decoder.generator.conv_post.bias"]["data_offsets"][0]
        .as_u64()
        .expect("offset") as usize;
    let at = 8 + header_len + start;
    bytes[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    std::fs::write(&damaged, &bytes).expect("write");
    drop(bytes);

    let run = |args: &[&str]| {
        crate::support::banter_command()
            .args(args)
            .env("BANTER_MODEL_DIR", &models)
            .env("BANTER_CACHE_DIR", "")
            .output()
            .expect("run banter")
    };
    let status = run(&["models", "status"]);
    let stderr = String::from_utf8_lossy(&status.stderr);
    assert_eq!(status.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("decoder.generator.conv_post.bias") && stderr.contains("checksum"),
        "{stderr}"
    );
    let wav = dir.path().join("hi.wav");
    let say = run(&["say", "Hello there.", "-o", wav.to_str().expect("utf-8")]);
    let stderr = String::from_utf8_lossy(&say.stderr);
    assert_eq!(say.status.code(), Some(1), "an internal error: {stderr}");
    assert!(
        stderr.contains("damaged") && stderr.contains(&*damaged.to_string_lossy()),
        "{stderr}"
    );
    assert!(!wav.exists(), "no file is written");
}
