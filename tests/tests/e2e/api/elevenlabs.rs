//! Unmodified ElevenLabs clients against `banter serve`'s text-streaming sockets:
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
