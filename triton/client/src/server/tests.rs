//! The stream's rules against scripted streams, and a port with nothing listening; no Triton.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::stream;
use tonic::Status;

use super::*;
use crate::convert::tests::{chunk, error_response, final_response, job, response};

const NAME: &str = "triton://gpu-a:8001";

type Message = Result<ModelStreamInferResponse, Status>;

/// Runs `deliver` over `messages` (then silence), returning the chunks the sink got.
fn run(messages: Vec<Message>, keep: usize) -> (Vec<RemoteChunk>, Result<(), RemoteError>) {
    let inbound = stream::iter(messages).chain(stream::pending());
    let mut got = Vec::new();
    let result = runtime().expect("runtime").block_on(deliver(
        NAME,
        Box::pin(inbound),
        Duration::from_millis(200),
        &mut |c| {
            got.push(c);
            got.len() < keep
        },
    ));
    (got, result)
}

fn unavailable(result: Result<(), RemoteError>) -> String {
    match result {
        Err(RemoteError::Unavailable(text)) => text,
        other => panic!("expected Unavailable, got {other:?}"),
    }
}

#[test]
fn chunks_reach_the_sink_in_order_until_the_final_response() {
    let first = chunk(false, Some(vec![2, 5, 1]));
    let last = chunk(true, None);
    let (got, result) = run(
        vec![
            Ok(response(&first, Some(false))),
            Ok(response(&last, Some(false))),
            Ok(final_response()),
        ],
        usize::MAX,
    );
    result.expect("complete");
    assert_eq!(
        got,
        [
            RemoteChunk {
                samples: first.audio,
                durations: Some(vec![2, 5, 1]),
                end: false
            },
            RemoteChunk {
                samples: last.audio,
                durations: None,
                end: true
            }
        ]
    );
    // The last chunk may itself carry the final flag.
    let (got, result) = run(
        vec![Ok(response(&chunk(true, None), Some(true)))],
        usize::MAX,
    );
    result.expect("complete");
    assert_eq!(got.len(), 1);
}

#[test]
fn a_sink_that_wants_no_more_stops_the_segment() {
    let (got, result) = run(
        vec![
            Ok(response(&chunk(false, None), Some(false))),
            Ok(response(&chunk(false, None), Some(false))),
        ],
        1,
    );
    result.expect("stopping is not an error");
    assert_eq!(got.len(), 1);
}

#[test]
fn an_error_message_is_a_refusal() {
    let (got, result) = run(
        vec![Ok(error_response(
            "input `SPEED`: -1 is not a speaking rate",
        ))],
        usize::MAX,
    );
    assert!(got.is_empty());
    match result {
        Err(RemoteError::Refused(text)) => {
            assert_eq!(text, "input `SPEED`: -1 is not a speaking rate");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_stream_that_breaks_or_stalls_is_the_server_going_away() {
    // Ends without the final response.
    let inbound = stream::iter(vec![Ok(response(&chunk(false, None), Some(false)))]);
    let result = runtime().expect("runtime").block_on(deliver(
        NAME,
        inbound,
        Duration::from_secs(5),
        &mut |_| true,
    ));
    let text = unavailable(result);
    assert!(
        text.starts_with(NAME) && text.contains("before the final response"),
        "{text}"
    );
    // Goes silent.
    let started = Instant::now();
    let text = unavailable(
        run(
            vec![Ok(response(&chunk(false, None), Some(false)))],
            usize::MAX,
        )
        .1,
    );
    assert!(text.contains("sent nothing"), "{text}");
    assert!(started.elapsed() < Duration::from_secs(2));
    // Resets.
    let text = unavailable(
        run(
            vec![Err(Status::unavailable("connection reset"))],
            usize::MAX,
        )
        .1,
    );
    assert_eq!(text, format!("{NAME}: connection reset"));
    // Flags the end before the segment's last chunk.
    let text = unavailable(
        run(
            vec![
                Ok(response(&chunk(false, None), Some(false))),
                Ok(final_response()),
            ],
            usize::MAX,
        )
        .1,
    );
    assert!(text.contains("before the segment's last chunk"), "{text}");
    // Answers with another segment.
    let mut other = chunk(true, None);
    other.segment = 1;
    let text = unavailable(run(vec![Ok(response(&other, Some(true)))], usize::MAX).1);
    assert!(text.contains("segment 1"), "{text}");
}

#[test]
fn raw_streams_collect_chunks_and_refusals() {
    let inbound = stream::iter(vec![
        Ok(response(&chunk(false, None), Some(false))),
        Ok(error_response("the model failed")),
    ]);
    let got = runtime()
        .expect("runtime")
        .block_on(collect(NAME, inbound, Duration::from_secs(5)))
        .expect("collected");
    assert_eq!(
        got,
        [Ok(chunk(false, None)), Err("the model failed".to_owned())]
    );
}

/// A local port that was just free: connecting is refused at once.
fn closed_port() -> Endpoint {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    Endpoint::parse(&format!("triton://127.0.0.1:{port}")).expect("endpoint")
}

#[test]
fn nothing_listening_is_unavailable_at_once_and_names_the_server() {
    let endpoint = closed_port();
    let server = Arc::new(TritonServer::connect(&endpoint).expect("lazy connect"));
    assert_eq!(server.name(), endpoint.to_string());
    let started = Instant::now();
    // Several engine threads at once, on the one shared runtime.
    let threads: Vec<_> = (0..3)
        .map(|i| {
            let server = Arc::clone(&server);
            std::thread::Builder::new()
                .name(format!("engine-{i}"))
                .spawn(move || server.speak(&job(), &mut |_| true))
                .expect("spawn")
        })
        .collect();
    for t in threads {
        let text = unavailable(t.join().expect("thread"));
        assert!(
            text.starts_with(&endpoint.to_string()) && text.contains("refused"),
            "{text}"
        );
    }
    assert!(!server.ready());
    match server.stream_raw(Vec::new()) {
        Err(ClientError::Unavailable(text)) => assert!(text.contains(&endpoint.to_string())),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        server.server_ready(),
        Err(ClientError::Unavailable(_))
    ));
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
}
