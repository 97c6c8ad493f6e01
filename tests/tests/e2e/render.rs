//! `banter render` end to end: every bundled example becomes an episode whose captions, loudness,
//! line order and casting are checked against the script; other formats, stems and Ctrl-C.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use engine::audio::decode::{decode_bytes, DecodeOptions};
use engine::audio::LoudnessMeter;
use engine::voice::VoiceSpec;
use serde_json::Value;

use crate::support::{banter, model_store, read_wav};

fn examples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/examples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("assets/examples")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(files.len() >= 7, "examples missing in {}", dir.display());
    files
}

/// An SRT cue: start, end, speaker, text.
#[derive(Debug)]
struct Cue {
    start: f64,
    end: f64,
    speaker: String,
    text: String,
}

fn parse_srt(srt: &str) -> Vec<Cue> {
    fn ts(s: &str) -> f64 {
        let (hms, ms) = s.trim().split_once(',').expect("SRT time has a comma");
        let parts: Vec<f64> = hms.split(':').map(|p| p.parse().expect("time")).collect();
        parts[0] * 3600.0 + parts[1] * 60.0 + parts[2] + ms.parse::<f64>().expect("ms") / 1000.0
    }
    srt.split("\n\n")
        .filter(|b| !b.trim().is_empty())
        .map(|block| {
            let mut lines = block.lines();
            lines.next().expect("cue number");
            let (a, b) = lines
                .next()
                .expect("cue times")
                .split_once(" --> ")
                .expect("arrow");
            let body = lines.collect::<Vec<_>>().join(" ");
            let (speaker, text) = body.split_once(": ").expect("SPEAKER: text");
            Cue {
                start: ts(a),
                end: ts(b),
                speaker: speaker.to_owned(),
                text: text.to_owned(),
            }
        })
        .collect()
}

/// Letters and digits only, lower case: what must survive from script to captions.
fn letters(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

fn dedup(v: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in v {
        if out.last() != Some(&s) {
            out.push(s);
        }
    }
    out
}

fn loudness(samples: &[f32], rate: u32) -> (f64, f64) {
    let mut m = LoudnessMeter::new(rate).expect("meter");
    m.add(samples).expect("meter add");
    (m.integrated_lufs().expect("not silent"), m.true_peak_dbtp())
}

fn check_report(script: &Path) -> Value {
    let out = banter(
        &["script", "check", "--json", &script.to_string_lossy()],
        None,
    );
    assert!(
        out.status.success(),
        "script check {}: {}",
        script.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("check JSON")
}

#[test]
fn every_example_renders_with_true_captions_loudness_order_and_voices() {
    if model_store().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    for script in examples() {
        let name = script
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        let out_wav = dir.path().join(format!("{name}.wav"));
        let started = std::time::Instant::now();
        let out = banter(
            &[
                "render",
                &script.to_string_lossy(),
                "-o",
                &out_wav.to_string_lossy(),
            ],
            None,
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "render {name}: {stderr}");
        let (samples, rate) = read_wav(&out_wav);
        assert_eq!(rate, 24_000);
        let duration = samples.len() as f64 / f64::from(rate);
        eprintln!(
            "{name}: {duration:.1} s of audio in {:.1} s",
            started.elapsed().as_secs_f64()
        );

        // Captions cover the speech, in order, without overlaps, inside the audio.
        let srt = std::fs::read_to_string(out_wav.with_extension("srt")).expect("captions");
        let cues = parse_srt(&srt);
        assert!(!cues.is_empty(), "{name}: no cues");
        for pair in cues.windows(2) {
            assert!(
                pair[0].start < pair[0].end,
                "{name}: empty cue {:?}",
                pair[0]
            );
            assert!(pair[0].end <= pair[1].start, "{name}: overlap {pair:?}");
        }
        let last = cues.last().expect("cue");
        assert!(last.end <= duration + 1e-3, "{name}: cue past the end");
        assert!(
            duration - last.end < 1.0,
            "{name}: {:.2} s after the last cue",
            duration - last.end
        );
        assert!(
            cues[0].start < 1.0,
            "{name}: first cue at {:.2}",
            cues[0].start
        );
        // Every cue holds sound, and the gaps between cues are quiet.
        for cue in &cues {
            let a = (cue.start * 24_000.0) as usize;
            let b = ((cue.end * 24_000.0) as usize).min(samples.len());
            let peak = samples[a..b].iter().fold(0.0f32, |m, s| m.max(s.abs()));
            assert!(peak > 0.05, "{name}: silent cue {cue:?}");
        }

        // Loudness within ±1 LU of −16 LUFS, true peak at most −1 dBTP (+ 16-bit rounding).
        let (lufs, peak) = loudness(&samples, rate);
        assert!((lufs + 16.0).abs() <= 1.0, "{name}: {lufs:.2} LUFS");
        assert!(peak <= -0.9, "{name}: true peak {peak:.2} dBTP");

        // Every spoken line is in the captions, in order, by its speaker.
        let report = check_report(&script);
        let lines = report["lines"].as_array().expect("lines");
        let spoken: Vec<&Value> = lines
            .iter()
            .filter(|l| !letters(l["text"].as_str().unwrap_or("")).is_empty())
            .collect();
        let script_words: String = spoken
            .iter()
            .map(|l| letters(l["text"].as_str().unwrap_or("")))
            .collect();
        let caption_words: String = cues.iter().map(|c| letters(&c.text)).collect();
        assert_eq!(
            caption_words, script_words,
            "{name}: captions differ from the script"
        );
        let script_speakers = dedup(
            spoken
                .iter()
                .map(|l| l["speaker"].as_str().unwrap_or("").to_owned())
                .collect(),
        );
        let caption_speakers = dedup(cues.iter().map(|c| c.speaker.clone()).collect());
        assert_eq!(caption_speakers, script_speakers, "{name}: speaker order");

        // Each line was rendered in its speaker's cast voice.
        let markers: Value = serde_json::from_slice(
            &std::fs::read(dir.path().join(format!("{name}.chapters.json"))).expect("markers"),
        )
        .expect("markers JSON");
        let cast = report["cast"].as_object().expect("cast");
        let rendered = markers["lines"].as_array().expect("marker lines");
        assert_eq!(rendered.len(), spoken.len(), "{name}: rendered lines");
        // Every written word of every line is timed once, in order, without overlap, inside
        // its line, and inside the audio.
        for (line, script_line) in rendered.iter().zip(&spoken) {
            let words = line["words"].as_array().expect("words");
            let (start, end) = (
                line["start"].as_f64().unwrap(),
                line["end"].as_f64().unwrap(),
            );
            let mut last_end = start;
            for w in words {
                let (a, b) = (w["start"].as_f64().unwrap(), w["end"].as_f64().unwrap());
                assert!(
                    last_end <= a + 1e-9 && a <= b && b <= end + 1e-9,
                    "{name}: {w} after {last_end:.3} in {start:.3}..{end:.3}"
                );
                assert!(w["source_line"].as_u64().unwrap() >= 1, "{name}: {w}");
                last_end = b;
            }
            let said: String = words
                .iter()
                .map(|w| letters(w["word"].as_str().unwrap_or("")))
                .collect();
            assert_eq!(
                said,
                letters(script_line["text"].as_str().unwrap_or("")),
                "{name}: the words do not cover line {}",
                line["line"]
            );
            assert!(end <= duration + 1e-3, "{name}: line past the end");
        }
        for line in rendered {
            let speaker = line["speaker"].as_str().expect("speaker");
            let want = VoiceSpec::parse(cast[speaker].as_str().expect("voice")).expect("spec");
            assert_eq!(
                line["voice"].as_str(),
                Some(want.canonical().as_str()),
                "{name}"
            );
        }
        if name == "episode.md" {
            let chapters = markers["chapters"].as_array().expect("chapters");
            assert!(chapters.len() >= 2, "{name}: headings should make chapters");
            assert!(chapters[0]["start"].as_f64() == Some(0.0));
        }
    }
}

#[test]
fn flac_mp3_resampling_stems_and_vtt() {
    if model_store().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("short.md");
    std::fs::write(
        &script,
        "# Part one\n\n**Ann:** Hello there, this is part one.\n\n**Ben:** And I answer it.\n\n# Part two\n\n**Ann:** Goodbye [pause:0.3s] for now.\n",
    )
    .expect("write script");
    let flac = dir.path().join("short.flac");
    let out = banter(
        &[
            "render",
            &script.to_string_lossy(),
            "-o",
            &flac.to_string_lossy(),
            "--rate",
            "48000",
            "--sample-format",
            "s24",
            "--stems",
            "--captions",
            "words",
        ],
        None,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&flac).expect("flac");
    assert_eq!(&bytes[..4], b"fLaC");
    // STREAMINFO: sample rate is the top 20 bits at byte 18 of the file.
    let rate =
        (u32::from(bytes[18]) << 12) | (u32::from(bytes[19]) << 4) | (u32::from(bytes[20]) >> 4);
    assert_eq!(rate, 48_000);
    for stem in ["short.ann.flac", "short.ben.flac", "short.srt", "short.vtt"] {
        assert!(dir.path().join(stem).is_file(), "{stem} missing");
    }
    // Word captions: each word's start marked inside the sentence's cue, a phrase SRT.
    let vtt = std::fs::read_to_string(dir.path().join("short.vtt")).expect("vtt");
    assert!(
        vtt.starts_with("WEBVTT\n\n") && vtt.contains("<v Ben>") && vtt.contains(">answer"),
        "{vtt}"
    );
    let marks = vtt.matches("<00:00:").count();
    assert!(marks >= 10, "{marks} word marks in {vtt}");
    let srt = std::fs::read_to_string(dir.path().join("short.srt")).expect("srt");
    let phrases: Vec<(String, String)> = srt
        .split("\n\n")
        .filter_map(|block| {
            let (a, b) = block.lines().nth(1)?.split_once(" --> ")?;
            Some((a.to_owned(), b.to_owned()))
        })
        .collect();
    // `HH:MM:SS,mmm` compares as text.
    assert!(phrases.len() >= 4, "{srt}");
    assert!(
        phrases
            .windows(2)
            .all(|p| p[0].1 <= p[1].0 && p[0].0 < p[0].1),
        "{srt}"
    );

    let mp3 = dir.path().join("short.mp3");
    let out = banter(
        &[
            "render",
            &script.to_string_lossy(),
            "-o",
            &mp3.to_string_lossy(),
            "--title",
            "Short",
        ],
        None,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&mp3).expect("mp3");
    assert_eq!(&bytes[..3], b"ID3", "ID3v2 tag first");
    let has = |needle: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
    assert!(has(b"CHAP") && has(b"CTOC") && has(b"TIT2") && has(b"Part two"));

    // Opus by extension: Ogg pages, chapters as comments, and it decodes to the MP3's length.
    let opus = dir.path().join("short.opus");
    let out = banter(
        &[
            "render",
            &script.to_string_lossy(),
            "-o",
            &opus.to_string_lossy(),
        ],
        None,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ogg = std::fs::read(&opus).expect("opus");
    let has = |needle: &[u8]| ogg.windows(needle.len()).any(|w| w == needle);
    assert!(ogg.starts_with(b"OggS") && has(b"OpusHead") && has(b"CHAPTER001NAME=Part two"));
    let at_24k = DecodeOptions {
        target_rate: Some(24_000),
        max_secs: None,
    };
    let decoded = decode_bytes(ogg, Path::new("short.opus"), &at_24k).expect("decodes");
    let reference = decode_bytes(bytes, Path::new("short.mp3"), &at_24k).expect("mp3 decodes");
    assert!(
        (decoded.duration_secs() - reference.duration_secs()).abs() < 0.1,
        "opus {:.2} s, mp3 {:.2} s",
        decoded.duration_secs(),
        reference.duration_secs()
    );
    let bad = banter(
        &[
            "render",
            &script.to_string_lossy(),
            "-o",
            &opus.to_string_lossy(),
            "--rate",
            "44100",
        ],
        None,
    );
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("44100"));
}

#[test]
fn ctrl_c_or_kill_leaves_the_previous_file_and_no_temporaries() {
    if model_store().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("long.txt");
    let mut text = String::new();
    for i in 0..40 {
        writeln!(
            text,
            "A: This is sentence number {i}, and it goes on for a while."
        )
        .expect("write");
        text.push_str("B: Indeed it does.\n");
    }
    std::fs::write(&script, text).expect("script");
    let target = dir.path().join("long.wav");
    // Ctrl-C, then `kill` (SIGTERM, as `timeout` sends): the same clean stop.
    for signal in ["-INT", "-TERM"] {
        std::fs::write(&target, b"OLD").expect("old file");
        let mut child = crate::support::banter_command()
            .args([
                "render",
                &script.to_string_lossy(),
                "-o",
                &target.to_string_lossy(),
            ])
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        // Wait until rendering is under way (the draft exists), then interrupt.
        let deadline = std::time::Instant::now() + std::time::Duration::from_mins(1);
        while !has_temporaries(dir.path()) {
            assert!(std::time::Instant::now() < deadline, "render never started");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let status = std::process::Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success());
        let status = child.wait().expect("wait");
        assert_eq!(status.code(), Some(130));
        assert_eq!(std::fs::read(&target).expect("target"), b"OLD");
        assert!(
            !has_temporaries(dir.path()),
            "temporaries left behind after {signal}"
        );
    }
}

fn has_temporaries(dir: &Path) -> bool {
    std::fs::read_dir(dir).expect("dir").any(|e| {
        e.expect("entry")
            .file_name()
            .to_string_lossy()
            .starts_with(".banter")
    })
}

#[test]
fn bad_scripts_fail_with_file_line_column() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases: [(&str, &[u8], &[&str], &str); 4] = [
        ("empty.txt", b"", &[], "empty.txt:1:1:"),
        ("ws.txt", b"  \n\t\n", &[], "ws.txt:1:1:"),
        (
            "voice.txt",
            b"# cast\nAnn: af_nobody\n\nAnn: Hi.\n",
            &[],
            "voice.txt:2:",
        ),
        (
            "cast.txt",
            b"Ann: Hi.\nBen: Yo.\n",
            &["--cast", "Zed=af_heart"],
            "Zed",
        ),
    ];
    for (file, bytes, extra, needle) in cases {
        let path = dir.path().join(file);
        std::fs::write(&path, bytes).expect("write");
        let path = path.to_string_lossy().into_owned();
        let mut args = vec!["render", path.as_str()];
        args.extend_from_slice(extra);
        let out = banter(&args, None);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{file}: {stderr}");
        assert!(stderr.contains(needle), "{file}: {stderr}");
        assert!(!Path::new(&path).with_extension("wav").exists());
    }
}
