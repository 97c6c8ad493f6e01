//! `banter serve` as clients see it: the guard (token, Host, Origin, body and queue limits,
//! loopback only, idle connections), the audio (WAV, PCM, SSE decode to plausible speech),
//! FLAC and MP3, streaming (audio before synthesis ends, 32 at once, disconnects cancel),
//! whole scripts as dialogue events, the official `OpenAI` Python client against it, and
//! pipecat's ElevenLabs WebSocket service against the text-streaming sockets.

mod batching;
mod dialogue;
mod elevenlabs;
mod formats;
mod http;
mod openai;
mod streaming;

use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::time::{Duration, Instant};

use serde_json::json;

use http::{base64_decode, parse_wav, pcm_samples, request, rms, Server};

const TWO_SENTENCES: &str =
    "The quick brown fox jumps over the lazy dog. Then it runs back into the forest.";

fn long_text() -> String {
    (1..=10)
        .map(|i| format!("This is sentence number {i} of a longer text, read at an even pace."))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The JSON of every `data:` line of an SSE body.
fn sse_events(body: Vec<u8>) -> Vec<serde_json::Value> {
    String::from_utf8(body)
        .expect("utf-8 events")
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|l| serde_json::from_str(l).expect("event JSON"))
        .collect()
}

fn speech(input: &str, format: &str) -> serde_json::Value {
    json!({ "model": "tts-1", "voice": "alloy", "input": input, "response_format": format })
}

#[test]
fn api_refuses_what_it_should() {
    let Some(server) = Server::start(&["--idle-timeout", "2", "--max-queue", "1"]) else {
        return;
    };
    let addr = server.addr;
    let auth = server.auth();

    let health = request(addr, "GET", "/health", &[], b"");
    assert_eq!(health.status, 200);
    assert_eq!(health.json()["status"], "ok");

    let no_token = request(addr, "GET", "/v1/models", &[], b"");
    assert_eq!(no_token.status, 401);
    assert_eq!(no_token.json()["error"]["code"], "invalid_api_key");
    let wrong = request(
        addr,
        "GET",
        "/v1/models",
        &[("authorization", "Bearer 00")],
        b"",
    );
    assert_eq!(wrong.status, 401);
    let speech_no_token = request(addr, "POST", "/v1/audio/speech", &[], b"{}");
    assert_eq!(speech_no_token.status, 401);
    let models = server.get("/v1/models");
    assert_eq!(models.status, 200);
    assert!(models.json()["data"]
        .as_array()
        .expect("list")
        .iter()
        .any(|m| m["id"] == "tts-1"));

    for foreign in ["evil.example", "evil.example:80", "localhost.evil.example"] {
        let r = request(addr, "GET", "/health", &[("host", foreign)], b"");
        assert_eq!(r.status, 421, "Host {foreign}");
        assert_eq!(r.json()["error"]["code"], "host_not_allowed");
        let r = request(
            addr,
            "GET",
            "/v1/models",
            &[("host", foreign), ("authorization", &auth)],
            b"",
        );
        assert_eq!(r.status, 421, "Host {foreign} with the token");
    }
    let localhost = format!("localhost:{}", addr.port());
    assert_eq!(
        request(
            addr,
            "GET",
            "/v1/models",
            &[("host", &localhost), ("authorization", &auth)],
            b""
        )
        .status,
        200
    );

    let cross = request(
        addr,
        "GET",
        "/v1/models",
        &[("authorization", &auth), ("origin", "http://evil.example")],
        b"",
    );
    assert_eq!(cross.status, 403);
    assert_eq!(cross.json()["error"]["code"], "origin_not_allowed");
    let preflight = request(
        addr,
        "OPTIONS",
        "/v1/audio/speech",
        &[
            ("origin", "http://evil.example"),
            ("access-control-request-method", "POST"),
        ],
        b"",
    );
    assert_eq!(preflight.status, 403);
    assert!(preflight.header("access-control-allow-origin").is_none());

    // A declared 2 MiB body is refused before it is sent.
    let mut big = http::Streaming::open(
        addr,
        "POST",
        "/v1/audio/speech",
        &[("authorization", &auth), ("content-length", "2097152")],
        b"",
    );
    assert_eq!(big.status, 413);
    let (body, _) = big.read_to_end();
    let error: serde_json::Value = serde_json::from_slice(&body).expect("JSON error");
    assert_eq!(error["error"]["code"], "body_too_large");

    let too_long = server.post_json("/v1/audio/speech", &speech(&"a".repeat(4097), "wav"));
    assert_eq!(too_long.status, 400);
    assert_eq!(too_long.json()["error"]["param"], "input");
    let bad_voice = server.post_json(
        "/v1/audio/speech",
        &json!({"model": "kokoro", "input": "Hi", "voice": "zz_nobody"}),
    );
    assert_eq!(bad_voice.status, 400);
    assert_eq!(bad_voice.json()["error"]["param"], "voice");
    let aac = server.post_json("/v1/audio/speech", &speech("Hi", "aac"));
    assert_eq!(aac.status, 400);
    assert!(aac.json()["error"]["message"]
        .as_str()
        .expect("message")
        .contains("aac"));

    // --max-queue 1: a second job while one streams is refused with Retry-After.
    let mut first = server.open_speech(&speech(&long_text(), "pcm"));
    assert_eq!(first.status, 200);
    let second = server.post_json("/v1/audio/speech", &speech("Hi", "pcm"));
    assert_eq!(second.status, 429);
    assert!(second
        .header("retry-after")
        .is_some_and(|s| s.parse::<u32>().is_ok()));
    assert!(first.next_chunk().expect("audio").is_some());
    drop(first);

    // Only loopback listens: 127.0.0.2 is the same interface but not the bound address.
    let refused = |ip: std::net::IpAddr| {
        TcpStream::connect_timeout(&SocketAddr::new(ip, addr.port()), Duration::from_secs(2))
            .is_err()
    };
    assert!(refused([127, 0, 0, 2].into()), "bound beyond 127.0.0.1");
    if let Some(ip) = outbound_ip() {
        assert!(refused(ip), "reachable on the network address {ip}");
    }
    if std::net::TcpListener::bind("[::1]:0").is_ok() {
        let v6 = SocketAddr::new(std::net::Ipv6Addr::LOCALHOST.into(), addr.port());
        let r = request(
            v6,
            "GET",
            "/health",
            &[("host", &format!("[::1]:{}", addr.port()))],
            b"",
        );
        assert_eq!(r.status, 200, "::1 serves too");
    }

    // An idle connection (nothing sent) is closed after --idle-timeout.
    let idle = TcpStream::connect(addr).expect("connect");
    idle.set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    let started = Instant::now();
    let mut buf = [0u8; 1];
    let n = std::io::Read::read(&mut &idle, &mut buf).unwrap_or(0);
    assert_eq!(n, 0, "the server sent bytes to a silent client");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "idle connection kept {:?}",
        started.elapsed()
    );

    // A head trickled a byte at a time does not hold the socket: it is closed after the idle
    // limit like a silent one, however steadily the bytes come.
    let trickle = TcpStream::connect(addr).expect("connect");
    trickle
        .set_read_timeout(Some(Duration::from_millis(50)))
        .expect("timeout");
    let started = Instant::now();
    let closed_after = loop {
        let wrote = std::io::Write::write(&mut &trickle, b"X");
        let mut buf = [0u8; 64];
        let read = std::io::Read::read(&mut &trickle, &mut buf);
        if wrote.is_err() || matches!(read, Ok(0)) || started.elapsed() > Duration::from_secs(15) {
            break started.elapsed();
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(
        closed_after < Duration::from_secs(10),
        "a trickling head kept its socket {closed_after:?}"
    );

    // A crowd of sockets that never send a request cannot lock the owner out: the oldest are
    // closed to make room, and /health still answers at once.
    let crowd: Vec<TcpStream> = (0..100)
        .map(|_| TcpStream::connect(addr).expect("connect"))
        .collect();
    let started = Instant::now();
    let health = request(addr, "GET", "/health", &[], b"");
    assert_eq!(health.status, 200);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "/health took {:?} beside 100 silent sockets",
        started.elapsed()
    );
    drop(crowd);

    // The token file is private and --show-token prints the same token.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let path = server.config.path().join("api-token");
        let mode = std::fs::metadata(&path)
            .expect("token file")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let shown = crate::support::banter_command()
        .args(["serve", "--show-token"])
        .env("BANTER_CONFIG_DIR", server.config.path())
        .output()
        .expect("banter serve --show-token");
    assert_eq!(String::from_utf8_lossy(&shown.stdout).trim(), server.token);
}

/// Every word of SSE `deltas`, checking each starts inside its delta's audio (s16le pcm).
fn delta_words(deltas: &[serde_json::Value]) -> Vec<serde_json::Value> {
    let mut words = Vec::new();
    let mut end = 0.0;
    for delta in deltas {
        let from = end;
        let bytes = base64_decode(delta["audio"].as_str().expect("audio")).len();
        end += bytes as f64 / 48_000.0;
        for w in delta["words"].as_array().expect("every delta has words") {
            let start = w["start"].as_f64().expect("start");
            assert!(
                from <= start && (start < end || bytes == 0),
                "{w} in a delta of {from:.3}..{end:.3} s"
            );
            words.push(w.clone());
        }
    }
    words
}

/// `words` are `expect`, in order, each once, not overlapping, inside `secs` of audio.
fn check_words(words: &[serde_json::Value], expect: &[&str], secs: f64) {
    let said: Vec<&str> = words
        .iter()
        .map(|w| w["word"].as_str().expect("word"))
        .collect();
    assert_eq!(said, expect);
    let times: Vec<(f64, f64)> = words
        .iter()
        .map(|w| {
            let t = |k: &str| w[k].as_f64().expect("time");
            (t("start"), t("end"))
        })
        .collect();
    assert!(
        times.iter().all(|&(s, e)| 0.0 <= s && s < e && e <= secs),
        "{times:?} in {secs:.3} s"
    );
    assert!(
        times.windows(2).all(|p| p[0].1 <= p[1].0),
        "overlapping words: {times:?}"
    );
}

/// The address this machine would use to reach the network (no packet is sent).
fn outbound_ip() -> Option<std::net::IpAddr> {
    let socket = UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("192.0.2.1:9").ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

#[test]
fn api_speaks_wav_pcm_and_sse() {
    let Some(server) = Server::start(&[]) else {
        return;
    };
    // Warm the voice table so the timing below is the model's, not the first file read.
    assert_eq!(
        server
            .post_json("/v1/audio/speech", &speech("Hi.", "pcm"))
            .status,
        200
    );

    let started = Instant::now();
    let mut wav = server.open_speech(&speech(TWO_SENTENCES, "wav"));
    assert_eq!(wav.status, 200);
    assert_eq!(
        wav.headers
            .iter()
            .find(|(k, _)| k == "content-type")
            .map(|(_, v)| v.as_str()),
        Some("audio/wav")
    );
    let first = wav.next_chunk().expect("first audio").expect("some audio");
    let ttfa = started.elapsed();
    let (rest, complete) = wav.read_to_end();
    let total = started.elapsed();
    assert!(complete, "wav response ended early");
    let bytes = [first, rest].concat();
    let (rate, samples) = parse_wav(&bytes);
    assert_eq!(rate, 24_000);
    let seconds = samples.len() as f64 / 24_000.0;
    assert!(
        (2.5..12.0).contains(&seconds),
        "{seconds:.2} s for two sentences"
    );
    assert!(rms(&samples) > 0.01, "silent");
    eprintln!("api: two sentences as wav: first audio after {:.3} s, all {seconds:.2} s of audio after {:.3} s", ttfa.as_secs_f64(), total.as_secs_f64());

    let pcm = server.post_json("/v1/audio/speech", &speech(TWO_SENTENCES, "pcm"));
    assert_eq!(pcm.status, 200);
    assert_eq!(
        pcm_samples(&pcm.body),
        samples,
        "pcm is the wav's samples without the header"
    );

    let mut body = speech(TWO_SENTENCES, "pcm");
    body["stream_format"] = "sse".into();
    let sse = server.post_json("/v1/audio/speech", &body);
    assert_eq!(sse.status, 200);
    assert!(sse
        .header("content-type")
        .is_some_and(|t| t.starts_with("text/event-stream")));
    let events = sse_events(sse.body);
    let (done, deltas) = events.split_last().expect("events");
    assert_eq!(done["type"], "speech.audio.done");
    assert!(done["usage"]["total_tokens"]
        .as_u64()
        .is_some_and(|n| n > 0));
    let audio: Vec<u8> = deltas
        .iter()
        .inspect(|e| assert_eq!(e["type"], "speech.audio.delta"))
        .flat_map(|e| base64_decode(e["audio"].as_str().expect("audio")))
        .collect();
    assert_eq!(audio, pcm.body, "SSE carries the same audio as pcm");
    let words = delta_words(deltas);
    check_words(
        &words,
        &[
            "The", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog", "Then", "it",
            "runs", "back", "into", "the", "forest",
        ],
        samples.len() as f64 / 24_000.0,
    );

    // A number read as several words is one word, as written; the timed endpoint answers the
    // same audio (a WAV with its real sizes) and the same words in one JSON.
    let money = "It costs $4.1 billion today.";
    let mut body = speech(money, "pcm");
    body["stream_format"] = "sse".into();
    let sse = server.post_json("/v1/audio/speech", &body);
    assert_eq!(sse.status, 200);
    let events = sse_events(sse.body);
    let deltas = &events[..events.len() - 1];
    let streamed: Vec<u8> = deltas
        .iter()
        .flat_map(|e| base64_decode(e["audio"].as_str().expect("audio")))
        .collect();
    let words = delta_words(deltas);
    let secs = streamed.len() as f64 / 48_000.0;
    check_words(&words, &["It", "costs", "$4.1 billion", "today"], secs);
    assert_eq!(
        (
            words[2]["source_line"].as_u64(),
            words[2]["source_column"].as_u64()
        ),
        (Some(1), Some(10))
    );
    let timed = server.post_json("/v1/audio/speech/timed", &speech(money, "wav"));
    assert_eq!(
        timed.status,
        200,
        "{}",
        String::from_utf8_lossy(&timed.body)
    );
    assert_eq!(timed.header("content-type"), Some("application/json"));
    let timed = timed.json();
    assert_eq!(timed["format"], "wav");
    assert_eq!(timed["sample_rate"], 24_000);
    let wav = base64_decode(timed["audio"].as_str().expect("audio"));
    assert_eq!(
        u32::from_le_bytes([wav[40], wav[41], wav[42], wav[43]]) as usize,
        wav.len() - 44,
        "a whole WAV says its data size"
    );
    let (_, samples) = parse_wav(&wav);
    assert_eq!(
        samples,
        pcm_samples(&streamed),
        "timed audio is the streamed audio"
    );
    let duration = timed["duration"].as_f64().expect("duration");
    assert!((duration - secs).abs() < 1e-6, "{duration} vs {secs}");
    assert_eq!(
        timed["words"].as_array().expect("words"),
        &words,
        "the same words, the same times"
    );

    let mut slow = speech(TWO_SENTENCES, "pcm");
    slow["speed"] = 4.0.into();
    slow["voice"] = "af_bella(2)+af_sky(1)".into();
    let fast = server.post_json("/v1/audio/speech", &slow);
    assert_eq!(fast.status, 200);
    assert!(
        fast.header("x-banter-speed")
            .is_some_and(|v| v.starts_with('2')),
        "speed clamp is reported"
    );
    assert!(
        fast.body.len() < pcm.body.len() * 3 / 4,
        "speed 2 is shorter"
    );
}
