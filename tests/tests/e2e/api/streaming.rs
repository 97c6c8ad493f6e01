//! Streaming under load: audio before synthesis ends, 32 clients at once with every byte
//! accounted for, and a client that hangs up mid-stream cancelling its job.

use std::time::{Duration, Instant};

use super::http::{parse_wav, pcm_samples, Server};
use super::{long_text, speech};

#[test]
fn api_streams_concurrently_and_notices_disconnects() {
    let Some(server) = Server::start(&[]) else {
        return;
    };
    // Audio flows before synthesis ends: the first bytes come well before the last.
    let started = Instant::now();
    let mut stream = server.open_speech(&speech(&long_text(), "pcm"));
    assert_eq!(stream.status, 200);
    let first = stream.next_chunk().expect("audio").expect("some audio");
    let first_at = started.elapsed();
    let (rest, complete) = stream.read_to_end();
    let last_at = started.elapsed();
    assert!(complete);
    assert!(
        first.len() < first.len() + rest.len() / 2,
        "the first piece is not most of it"
    );
    assert!(
        last_at > first_at + Duration::from_millis(300),
        "first at {first_at:?}, last at {last_at:?}"
    );
    eprintln!(
        "api: long text: first audio after {:.3} s, last after {:.3} s",
        first_at.as_secs_f64(),
        last_at.as_secs_f64()
    );

    // 32 clients at once: all complete, and every byte the server counted arrived.
    let sent_before = server.metric("banter_audio_bytes_sent_total");
    let started = Instant::now();
    let received: Vec<usize> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..32)
            .map(|i| {
                let server = &server;
                scope.spawn(move || {
                    let text = format!("Client number {i} says hello.");
                    let mut s =
                        server.open_speech(&speech(&text, if i % 2 == 0 { "pcm" } else { "wav" }));
                    assert_eq!(s.status, 200, "client {i}");
                    let (body, complete) = s.read_to_end();
                    assert!(complete, "client {i}: stream ended early");
                    let samples = if i % 2 == 0 {
                        pcm_samples(&body)
                    } else {
                        parse_wav(&body).1
                    };
                    assert!(
                        samples.len() > 24_000 / 2,
                        "client {i}: {} samples",
                        samples.len()
                    );
                    body.len()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("client thread"))
            .collect()
    });
    let elapsed = started.elapsed();
    let sent = server.metric("banter_audio_bytes_sent_total") - sent_before;
    assert_eq!(
        received.iter().sum::<usize>() as u64,
        sent,
        "bytes received vs sent"
    );
    eprintln!(
        "api: 32 concurrent requests done in {:.2} s ({} bytes)",
        elapsed.as_secs_f64(),
        sent
    );

    // A client that hangs up mid-stream is counted, and the server goes on serving.
    let cancelled_before = server.metric("banter_http_responses_cancelled_total");
    let mut stream = server.open_speech(&speech(&long_text(), "pcm"));
    assert!(stream.next_chunk().expect("audio").is_some());
    drop(stream);
    let deadline = Instant::now() + Duration::from_mins(2);
    while server.metric("banter_http_responses_cancelled_total") <= cancelled_before {
        assert!(
            Instant::now() < deadline,
            "cancelled counter never moved; stderr:\n{}",
            server.stderr()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(server.metric("banter_http_active_responses"), 0);
    // The whole page, HTTP and scheduler figures together, reads in Prometheus' own parsers
    // (a family named twice once made the scrape fail).
    if let Some(python) = super::openai::api_test_python() {
        metrics_parse(&python, &server);
    }
    assert_eq!(
        server
            .post_json("/v1/audio/speech", &speech("Still here.", "pcm"))
            .status,
        200
    );
}

/// Runs tools/api-test/metrics_check.py over the server's `/metrics` page.
fn metrics_parse(python: &std::path::Path, server: &Server) {
    use std::io::Write as _;
    let page = server.get("/metrics").body;
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools/api-test/metrics_check.py");
    let mut child = std::process::Command::new(python)
        .arg(&script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run metrics_check.py");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&page)
        .expect("write the page");
    let out = child.wait_with_output().expect("wait for metrics_check.py");
    assert!(
        out.status.success(),
        "/metrics does not parse: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&page)
    );
}
