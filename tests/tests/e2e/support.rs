//! Shared fixtures: where the model store and the `banter` binary are, and how to skip politely.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use candle_core::Device;
use candle_nn::VarBuilder;
use engine::assets::ModelStore;

/// The committed goldens (`tests/fixtures/goldens`); they always exist.
pub fn goldens_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join("goldens")
}

/// The converted weights on the CPU, read once per test binary; `None` when skipped.
pub fn weights() -> Option<VarBuilder<'static>> {
    static WEIGHTS: OnceLock<VarBuilder<'static>> = OnceLock::new();
    let store = model_store()?;
    Some(
        WEIGHTS
            .get_or_init(|| {
                kokoro::weights::var_builder(&store.kokoro_weights(), &Device::Cpu)
                    .expect("read the converted weights")
            })
            .clone(),
    )
}

/// The fetched model store, or `None` (test skipped) when it is missing outside CI.
/// In CI (`CI` set) a missing model is a failure: the suite must not pass by skipping.
pub fn model_store() -> Option<ModelStore> {
    let store = ModelStore::open_default().expect("model store location");
    if store.is_ready() {
        return Some(store);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "model assets missing in {} (CI must fetch them first: `banter models fetch`)",
        store.root().display()
    );
    eprintln!("skipped: model not fetched ({})", store.root().display());
    None
}

/// The Piper test voice's `.onnx` (`banter models fetch --piper-test-voice`), or `None` (test
/// skipped) when it was not fetched outside CI; in CI a missing voice is a failure.
pub fn piper_test_voice() -> Option<PathBuf> {
    let store = ModelStore::open_default().expect("model store location");
    if store.piper_test_voice_ready() {
        return Some(store.piper_test_voice());
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "the Piper test voice is missing (CI must run `banter models fetch --piper-test-voice`)"
    );
    eprintln!("skipped: Piper test voice not fetched");
    None
}

/// The `banter` binary of this build profile (scripts/test.sh builds it before the tests).
pub fn banter_path() -> PathBuf {
    static CHECKED: OnceLock<()> = OnceLock::new();
    let exe = std::env::current_exe().expect("test executable path");
    // target/<profile>/deps/e2e-<hash> → target/<profile>/banter
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>");
    let bin = dir.join(format!("banter{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "{} is missing: run `cargo build --profile test -p app` first (scripts/test.sh does)",
        bin.display()
    );
    CHECKED.get_or_init(|| refuse_stale(&bin));
    bin
}

/// Panics when a source file of the crates in `banter` is newer than the binary. `cargo test -p
/// tests` rebuilds this test binary but not `banter`, so without this check the tests that run
/// `banter` silently test an older engine (it happened: a whole e2e run passed against a binary
/// that predated the change under test).
fn refuse_stale(bin: &Path) {
    fn newest(dir: &Path, newest_seen: &mut Option<(std::time::SystemTime, PathBuf)>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                newest(&path, newest_seen);
            } else if let Ok(modified) = meta.modified() {
                if newest_seen.as_ref().is_none_or(|(t, _)| modified > *t) {
                    *newest_seen = Some((modified, path));
                }
            }
        }
    }
    let Ok(built) = std::fs::metadata(bin).and_then(|m| m.modified()) else {
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut newest_seen = None;
    // Every crate linked into banter, the model and the parsers included.
    for krate in [
        "app",
        "engine",
        "engine/kokoro",
        "engine/script",
        "engine/vits",
        "triton/client",
        "triton/wire",
        "ui",
    ] {
        newest(&root.join(krate).join("src"), &mut newest_seen);
    }
    if let Some((modified, path)) = newest_seen {
        assert!(
            modified <= built,
            "{} is older than {}: run `cargo build --profile test -p app` first \
             (scripts/test.sh does)",
            bin.display(),
            path.display()
        );
    }
}

/// A library for this test binary's `banter` runs (`BANTER_LIBRARY`), so the tests never read
/// or write the user's own voices and projects, and find only the stock voices there.
pub fn scratch_library() -> PathBuf {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("scratch library dir"))
        .path()
        .join("library.sqlite")
}

/// `banter` as a command, with the scratch library.
pub fn banter_command() -> Command {
    let mut cmd = Command::new(banter_path());
    cmd.env("BANTER_LIBRARY", scratch_library());
    cmd
}

/// Runs `banter ARGS` with `stdin` and returns its output.
pub fn banter(args: &[&str], stdin: Option<&[u8]>) -> Output {
    use std::io::Write;
    let mut cmd = banter_command();
    cmd.args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    cmd.stdin(if stdin.is_some() {
        std::process::Stdio::piped()
    } else {
        std::process::Stdio::null()
    });
    let mut child = cmd.spawn().expect("spawn banter");
    if let Some(input) = stdin {
        let mut pipe = child.stdin.take().expect("stdin pipe");
        let input = input.to_vec();
        std::thread::Builder::new()
            .name("stdin-feeder".into())
            .spawn(move || {
                let _ = pipe.write_all(&input);
            })
            .expect("spawn stdin feeder");
    }
    child.wait_with_output().expect("wait for banter")
}

/// Reads a mono 16-bit or f32 WAV written by banter into f32 samples and its sample rate.
pub fn read_wav(path: &Path) -> (Vec<f32>, u32) {
    let b = std::fs::read(path).expect("read wav");
    assert_eq!(&b[0..4], b"RIFF");
    assert_eq!(&b[8..12], b"WAVE");
    let rate = u32::from_le_bytes([b[24], b[25], b[26], b[27]]);
    let bits = u16::from_le_bytes([b[34], b[35]]);
    let data = &b[44..];
    let samples = match bits {
        16 => data
            .chunks_exact(2)
            .map(|c| f32::from(i16::from_le_bytes([c[0], c[1]])) / 32767.0)
            .collect(),
        32 => data
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
        other => panic!("unexpected bits per sample {other}"),
    };
    (samples, rate)
}
