//! Unmodified ElevenLabs clients against `banter serve`: the SDK's HTTP calls
//! (tools/api-test/elevenlabs_client.py: convert, stream, convert with timestamps (whole and
//! streamed), voices, a premade ElevenLabs voice id, a wrong key, an unknown voice id) and the text-streaming sockets:
//! tools/api-test/ws_clients.py drives pipecat's `ElevenLabsTTSService` (multi-stream-input,
//! LLM tokens one by one, an interruption, sentence mode with a blend) and raw sockets
//! (single context, flush + close, keep-alives, invalid JSON, reused ids, formats, binary
//! frames, a 1 MB message, wrong tokens), in the venv tools/api-test/setup.sh makes.

use super::http::{pcm_samples, rms, Server};
use super::openai::{api_test_python, run_client_script};

#[test]
fn elevenlabs_websocket_clients() {
    let Some(python) = api_test_python() else {
        return;
    };
    let Some(server) = Server::start(&[]) else {
        return;
    };
    let out = tempfile::tempdir().expect("out dir");
    let stdout = run_client_script(&python, "ws_clients.py", &server, out.path());
    assert!(stdout.contains("all WebSocket client checks passed"));
    // The single-context reply as the client saved it: seconds of speech, not silence.
    let pcm = std::fs::read(out.path().join("single.pcm")).expect("the client's audio");
    let samples = pcm_samples(&pcm);
    let secs = samples.len() as f64 / 24_000.0;
    assert!((5.0..30.0).contains(&secs), "{secs:.2} s");
    assert!(rms(&samples) > 0.01, "silent");
}

#[test]
fn elevenlabs_sdk_http_calls() {
    let Some(python) = api_test_python() else {
        return;
    };
    let Some(server) = Server::start(&[]) else {
        return;
    };
    let out = tempfile::tempdir().expect("out dir");
    let stdout = run_client_script(&python, "elevenlabs_client.py", &server, out.path());
    assert!(stdout.contains("all ElevenLabs client checks passed"));
    // What the SDK's `convert` saved decodes as seconds of MP3 speech.
    let mp3 = std::fs::read(out.path().join("convert.mp3")).expect("the client's mp3");
    let decoded = engine::audio::decode::decode_bytes(
        mp3,
        std::path::Path::new("convert.mp3"),
        &engine::audio::decode::DecodeOptions::default(),
    )
    .expect("the mp3 decodes");
    assert!(
        (2.0..12.0).contains(&decoded.duration_secs()) && decoded.damaged.is_none(),
        "{:.2} s, {:?}",
        decoded.duration_secs(),
        decoded.damaged
    );
}
