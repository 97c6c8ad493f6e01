//! `POST /v1/dialogue`: a two-speaker script streams as SSE, with sentence and line events in
//! timeline order, the right speakers and voices, each sentence's words inside it, audio whose length is the last sentence's end
//! plus the tail, silence exactly where the timeline says, and script errors as 400s naming
//! `FILE:LINE:COLUMN`.

use std::time::Instant;

use serde_json::{json, Value};

use super::http::{base64_decode, parse_wav, pcm_samples, Server, Streaming};

const SCRIPT: &str = "Ann: Good morning, Ben. Did you sleep well?\n\
                      Ben: Not really. The neighbours had a party.\n";

/// Events of an SSE body: (name, data).
fn parse_events(body: &[u8]) -> Vec<(String, Value)> {
    let text = std::str::from_utf8(body).expect("utf-8 events");
    text.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let name = block
                .lines()
                .find_map(|l| l.strip_prefix("event: "))
                .expect("named event");
            let data = block
                .lines()
                .find_map(|l| l.strip_prefix("data: "))
                .expect("event data");
            (
                name.to_owned(),
                serde_json::from_str(data).expect("event JSON"),
            )
        })
        .collect()
}

fn open(server: &Server, body: &Value) -> Streaming {
    let auth = server.auth();
    Streaming::open(
        server.addr,
        "POST",
        "/v1/dialogue",
        &[
            ("authorization", &auth),
            ("content-type", "application/json"),
        ],
        body.to_string().as_bytes(),
    )
}

#[test]
fn api_dialogue_streams_events_in_order() {
    let Some(server) = Server::start(&[]) else {
        return;
    };
    let started = Instant::now();
    let mut s = open(
        &server,
        &json!({ "script": SCRIPT, "cast": { "Ann": "af_heart", "ben": "am_michael" } }),
    );
    assert_eq!(s.status, 200);
    assert!(s
        .headers
        .iter()
        .any(|(k, v)| k == "content-type" && v.starts_with("text/event-stream")));
    let first = s.next_chunk().expect("events").expect("some events");
    let first_at = started.elapsed();
    let (rest, complete) = s.read_to_end();
    let last_at = started.elapsed();
    assert!(complete, "dialogue ended early");
    assert!(
        last_at.as_secs_f64() > first_at.as_secs_f64() + 0.3,
        "events flow before the end: first at {first_at:?}, last at {last_at:?}"
    );
    let events = parse_events(&[first, rest].concat());
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "sentence", "audio", "sentence", "audio", "line", "sentence", "audio", "sentence",
            "audio", "line", "audio", "done"
        ],
        "event order"
    );
    let sentences: Vec<&Value> = events
        .iter()
        .filter(|(n, _)| n == "sentence")
        .map(|(_, d)| d)
        .collect();
    let expect = [
        (0, "Ann", "af_heart", "Good morning, Ben."),
        (0, "Ann", "af_heart", "Did you sleep well?"),
        (1, "Ben", "am_michael", "Not really."),
        (1, "Ben", "am_michael", "The neighbours had a party."),
    ];
    let mut prev_end = 0.0;
    for (s, (line, speaker, voice, text)) in sentences.iter().zip(expect) {
        assert_eq!(s["line"], line);
        assert_eq!(s["speaker"], speaker);
        assert_eq!(s["voice"], voice);
        assert_eq!(s["text"], text);
        let (start, end) = (
            s["start"].as_f64().expect("start"),
            s["end"].as_f64().expect("end"),
        );
        assert!(start >= prev_end && end > start + 0.3, "{s}");
        // Its words, as written, in order, inside the sentence, placed in the script.
        let words = s["words"].as_array().expect("words");
        let said: Vec<&str> = words
            .iter()
            .map(|w| w["word"].as_str().expect("word"))
            .collect();
        let written: Vec<&str> = text
            .split(' ')
            .map(|w| w.trim_matches(|c: char| c.is_ascii_punctuation()))
            .collect();
        assert_eq!(said, written);
        let mut at = start;
        for w in words {
            let (ws, we) = (
                w["start"].as_f64().expect("s"),
                w["end"].as_f64().expect("e"),
            );
            assert!(at <= ws && ws < we && we <= end, "{w} in {s}");
            at = we;
            assert_eq!(w["source_line"], line + 1);
        }
        prev_end = end;
    }
    assert_eq!(
        sentences[2]["words"][0]["source_column"], 6,
        "after `Ben: `"
    );
    let lines: Vec<&Value> = events
        .iter()
        .filter(|(n, _)| n == "line")
        .map(|(_, d)| d)
        .collect();
    assert_eq!(lines[0]["speaker"], "Ann");
    assert_eq!(lines[1]["speaker"], "Ben");
    let gap_start = lines[0]["end"].as_f64().expect("end");
    let gap_end = lines[1]["start"].as_f64().expect("start");
    assert!(
        (0.2..0.5).contains(&(gap_end - gap_start)),
        "turn gap {gap_start}..{gap_end}"
    );

    let pcm: Vec<u8> = events
        .iter()
        .filter(|(n, _)| n == "audio")
        .flat_map(|(_, d)| base64_decode(d["audio"].as_str().expect("audio")))
        .collect();
    let samples = pcm_samples(&pcm);
    let secs = samples.len() as f64 / 24_000.0;
    let done = &events.last().expect("done").1;
    assert_eq!(done["sentences"], 4);
    assert_eq!(done["lines"], 2);
    assert_eq!(done["samples"].as_u64(), Some(samples.len() as u64));
    assert!((done["duration"].as_f64().expect("duration") - secs).abs() < 1e-3);
    assert!(
        (secs - (prev_end + 0.5)).abs() < 0.01,
        "{secs:.3} s of audio; last sentence ends at {prev_end:.3} + 0.5 s tail"
    );
    let at = |t: f64| (t * 24_000.0).round() as usize;
    let gap = &samples[at(gap_start) + 1..at(gap_end) - 1];
    assert!(gap.iter().all(|&x| x == 0), "the turn gap is silence");
    let spoken = &samples[at(sentences[2]["start"].as_f64().expect("s"))..at(prev_end)];
    assert!(super::http::rms(spoken) > 0.02, "Ben's line is audible");

    // JSON turns and another format: the audio payloads together are one WAV file.
    let r = server.post_json(
        "/v1/dialogue",
        &json!({ "script": [{"speaker": "Ann", "text": "Hello."}], "response_format": "wav" }),
    );
    assert_eq!(r.status, 200);
    let events = parse_events(&r.body);
    let wav: Vec<u8> = events
        .iter()
        .filter(|(n, _)| n == "audio")
        .flat_map(|(_, d)| base64_decode(d["audio"].as_str().expect("audio")))
        .collect();
    let (rate, samples) = parse_wav(&wav);
    assert_eq!(rate, 24_000);
    assert!(samples.len() > 24_000 / 2);

    // Script mistakes: a 400 before streaming, naming the place.
    let bad = server.post_json(
        "/v1/dialogue",
        &json!({ "script": "# cast\nAnn: zz_nobody\n\nAnn: Hello.", "name": "ep.txt" }),
    );
    assert_eq!(bad.status, 400);
    let message = bad.json()["error"]["message"]
        .as_str()
        .expect("message")
        .to_owned();
    assert!(message.starts_with("ep.txt:2:"), "{message}");
    let no_token = super::http::request(server.addr, "POST", "/v1/dialogue", &[], b"{}");
    assert_eq!(no_token.status, 401);
}
