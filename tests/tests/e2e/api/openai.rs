//! The official `OpenAI` Python client against `banter serve` (tools/api-test/openai_client.py in
//! the venv that tools/api-test/setup.sh makes).

use super::http::Server;

/// The Python of the venv tools/api-test/setup.sh makes (the official clients), or `None`
/// (skipped) outside CI when it is missing; in CI a missing venv fails.
pub(super) fn api_test_python() -> Option<std::path::PathBuf> {
    let venv = std::env::var_os("BANTER_API_TEST_VENV").map_or_else(
        || {
            let cache = std::env::var_os("XDG_CACHE_HOME").map_or_else(
                || {
                    std::path::PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                        .join(".cache")
                },
                std::path::PathBuf::from,
            );
            cache.join("banter-api-test").join("venv")
        },
        std::path::PathBuf::from,
    );
    let python = venv.join("bin").join("python");
    if !python.is_file() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{} is missing: CI must run tools/api-test/setup.sh (scripts/test.sh does)",
            python.display()
        );
        eprintln!(
            "skipped: no API client venv at {} (run tools/api-test/setup.sh)",
            venv.display()
        );
        return None;
    }
    Some(python)
}

/// Runs `tools/api-test/SCRIPT URL TOKEN OUT` with `python` against `server`; its standard
/// output, after asserting it exited 0 (the failure shows its output and the server's log).
pub(super) fn run_client_script(
    python: &std::path::Path,
    script: &str,
    server: &Server,
    out: &std::path::Path,
) -> String {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tools/api-test")
        .join(script);
    let result = std::process::Command::new(python)
        .arg(&script)
        .arg(server.url())
        .arg(&server.token)
        .arg(out)
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", script.display()));
    let stdout = String::from_utf8_lossy(&result.stdout).into_owned();
    eprintln!("{stdout}");
    assert!(
        result.status.success(),
        "{} failed:\n{stdout}\n{}\nserver:\n{}",
        script.display(),
        String::from_utf8_lossy(&result.stderr),
        server.stderr()
    );
    stdout
}

#[test]
fn openai_python_client() {
    let Some(python) = api_test_python() else {
        return;
    };
    let Some(server) = Server::start(&[]) else {
        return;
    };
    let out = tempfile::tempdir().expect("out dir");
    let stdout = run_client_script(&python, "openai_client.py", &server, out.path());
    assert!(stdout.contains("all OpenAI client checks passed"));
    // What the client saved as `response_format="opus"` decodes to speech.
    let opus = std::fs::read(out.path().join("speech.opus")).expect("the client's opus file");
    let decoded = engine::audio::decode::decode_bytes(
        opus,
        std::path::Path::new("speech.opus"),
        &engine::audio::decode::DecodeOptions::default(),
    )
    .expect("the opus response decodes");
    assert!(
        decoded.duration_secs() > 1.0 && decoded.damaged.is_none(),
        "{:.2} s, {:?}",
        decoded.duration_secs(),
        decoded.damaged
    );
}
