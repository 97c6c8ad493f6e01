//! The client against a real tritonserver serving model `banter` (triton/backend), when
//! `BANTER_TRITON=triton://host:port` names one; without it each test returns at once, so the
//! suite needs no server. Run by hand after `banter triton repo` and starting tritonserver:
//!
//! ```text
//! BANTER_TRITON=triton://localhost:8001 cargo test -p triton-client --test live -- --nocapture
//! ```

use std::sync::Arc;
use std::time::Instant;

use engine::remote::{RemoteChunk, RemoteError, RemoteJob, SegmentServer};
use triton_client::{Endpoint, TritonServer};
use triton_wire::protocol::{self, Request, Voice, Words};

const PHONEMES: &str = "ðɪs ɪz ə tˈɛst ʌv ðə tɹˈaɪtən klˈaɪənt.";

fn server() -> Option<TritonServer> {
    let url = std::env::var("BANTER_TRITON").ok()?;
    let endpoint = Endpoint::parse(&url).expect("BANTER_TRITON is triton://host:port");
    Some(TritonServer::connect(&endpoint).expect("client"))
}

/// Any table of the right shape speaks (these tests check the transport, not the voice).
fn job(whole: bool) -> RemoteJob {
    RemoteJob {
        phonemes: PHONEMES.to_owned(),
        style: Arc::from(vec![0.05f32; protocol::STYLE_ROWS * protocol::STYLE_DIM]),
        speed: 1.0,
        whole,
    }
}

fn speak(server: &TritonServer, job: &RemoteJob) -> Result<Vec<RemoteChunk>, RemoteError> {
    let mut chunks = Vec::new();
    server.speak(job, &mut |c| {
        chunks.push(c);
        true
    })?;
    Ok(chunks)
}

fn check_segment(chunks: &[RemoteChunk]) {
    assert!(!chunks.is_empty());
    assert!(chunks[0].durations.as_ref().is_some_and(|d| !d.is_empty()));
    assert!(chunks[1..].iter().all(|c| c.durations.is_none()));
    assert!(chunks.last().is_some_and(|c| c.end));
    assert!(chunks[..chunks.len() - 1].iter().all(|c| !c.end));
    assert!(chunks.iter().map(|c| c.samples.len()).sum::<usize>() > 24_000);
}

#[test]
fn ready_and_speaking() {
    let Some(server) = server() else { return };
    assert_eq!(server.server_ready(), Ok(true));
    assert_eq!(server.model_ready(), Ok(true));
    assert!(server.ready());
    for whole in [false, true] {
        let started = Instant::now();
        let chunks = speak(&server, &job(whole)).expect("spoken");
        eprintln!(
            "whole {whole}: {} chunks, {} samples in {:?}",
            chunks.len(),
            chunks.iter().map(|c| c.samples.len()).sum::<usize>(),
            started.elapsed()
        );
        check_segment(&chunks);
    }
    // A listener that leaves after the first chunk: the call ends at once, the server is fine.
    let mut got = 0;
    server
        .speak(&job(false), &mut |_| {
            got += 1;
            false
        })
        .expect("stopping is not an error");
    assert_eq!(got, 1);
    assert!(server.ready());
}

#[test]
fn several_threads_share_one_server() {
    let Some(server) = server() else { return };
    let server = Arc::new(server);
    let threads: Vec<_> = (0..3)
        .map(|i| {
            let server = Arc::clone(&server);
            std::thread::Builder::new()
                .name(format!("engine-{i}"))
                .spawn(move || speak(&server, &job(i % 2 == 0)))
                .expect("spawn")
        })
        .collect();
    for t in threads {
        check_segment(&t.join().expect("thread").expect("spoken"));
    }
}

#[test]
fn refusals_name_the_field() {
    let Some(server) = server() else { return };
    let mut bad = job(true);
    bad.speed = -1.0;
    match speak(&server, &bad) {
        Err(RemoteError::Refused(text)) => {
            eprintln!("refused: {text}");
            assert!(text.contains("SPEED"), "{text}");
        }
        other => panic!("{other:?}"),
    }
    // No voice at all, sent raw.
    let mut tensors = Request {
        words: Words::Phonemes(vec![PHONEMES.to_owned()]),
        voice: Voice::Named("af_heart".to_owned()),
        speed: 1.0,
        sample_rate: 24_000,
        whole: true,
    }
    .to_tensors();
    tensors.retain(|t| t.name != protocol::input::VOICE);
    let answers = server.stream_raw(tensors).expect("answered");
    eprintln!("raw: {answers:?}");
    assert!(matches!(answers.as_slice(), [Err(text)] if text.contains("VOICE")));
    // The server is still fine.
    assert!(server.ready());
}
