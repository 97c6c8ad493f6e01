//! FLAC, MP3 and Opus responses: each streams (bytes before the end), decodes as any client's
//! decoder would, at 24 kHz, to the length of the same request's raw PCM; and a request that
//! names no format gets MP3, as `OpenAI`'s API gives.

use std::path::Path;
use std::time::Instant;

use engine::audio::decode::{decode_bytes, DecodeOptions};

use super::http::Server;
use super::{long_text, speech, TWO_SENTENCES};

#[test]
fn api_speaks_flac_mp3_and_opus() {
    let Some(server) = Server::start(&[]) else {
        return;
    };
    let pcm = server.post_json("/v1/audio/speech", &speech(TWO_SENTENCES, "pcm"));
    assert_eq!(pcm.status, 200);
    let pcm_secs = pcm.body.len() as f64 / 48_000.0;
    for (format, mime) in [
        ("flac", "audio/flac"),
        ("mp3", "audio/mpeg"),
        ("opus", "audio/ogg"),
    ] {
        let r = server.post_json("/v1/audio/speech", &speech(TWO_SENTENCES, format));
        assert_eq!(r.status, 200, "{format}");
        assert_eq!(r.header("content-type"), Some(mime));
        let name = format!("speech.{format}");
        let at_24k = DecodeOptions {
            target_rate: Some(24_000),
            max_secs: None,
        };
        let decoded = decode_bytes(r.body, Path::new(&name), &at_24k)
            .unwrap_or_else(|e| panic!("{format} does not decode: {e}"));
        assert_eq!(decoded.sample_rate, 24_000, "{format}");
        assert!(decoded.damaged.is_none(), "{format}: {:?}", decoded.damaged);
        let secs = decoded.duration_secs();
        // MP3 adds the encoder's delay and pads to whole 576-sample frames.
        assert!(
            (secs - pcm_secs).abs() < 0.1,
            "{format}: {secs:.3} s decoded, pcm is {pcm_secs:.3} s"
        );
        let peak = decoded.samples.iter().fold(0f32, |m, s| m.max(s.abs()));
        assert!(peak > 0.05, "{format}: silent");
    }

    // Bytes flow before the end: a long text's first piece comes well before its last.
    for format in ["flac", "mp3", "opus"] {
        let started = Instant::now();
        let mut s = server.open_speech(&speech(&long_text(), format));
        assert_eq!(s.status, 200, "{format}");
        let first = s.next_chunk().expect("bytes").expect("some bytes");
        let first_at = started.elapsed();
        let (rest, complete) = s.read_to_end();
        let last_at = started.elapsed();
        assert!(complete, "{format}: ended early");
        assert!(
            first.len() * 3 < first.len() + rest.len(),
            "{format}: the first piece is most of it"
        );
        assert!(
            last_at.as_secs_f64() > first_at.as_secs_f64() + 0.3,
            "{format}: first at {first_at:?}, last at {last_at:?}"
        );
        let name = format!("long.{format}");
        let decoded = decode_bytes(
            [first, rest].concat(),
            Path::new(&name),
            &DecodeOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{format}: {e}"));
        assert!(
            decoded.duration_secs() > 15.0,
            "{format}: {:.2} s",
            decoded.duration_secs()
        );
    }

    // No response_format: MP3, OpenAI's default.
    let plain = server.post_json(
        "/v1/audio/speech",
        &serde_json::json!({ "model": "tts-1", "voice": "alloy", "input": "Hello." }),
    );
    assert_eq!(plain.status, 200);
    assert_eq!(plain.header("content-type"), Some("audio/mpeg"));
    decode_bytes(
        plain.body,
        Path::new("plain.mp3"),
        &DecodeOptions::default(),
    )
    .expect("mp3");
}
