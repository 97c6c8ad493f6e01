//! `stream_format: "sse"`: the audio as server-sent events, in OpenAI's event shapes:
//! `data: {"type":"speech.audio.delta","audio":"<base64>"}` for each piece, then one
//! `data: {"type":"speech.audio.done","usage":{...}}`. The base64 encoder is twenty lines here
//! rather than a dependency.

/// One `speech.audio.delta` event carrying `bytes` (already in the response format).
#[must_use]
pub fn delta(bytes: &[u8]) -> Vec<u8> {
    let event = serde_json::json!({ "type": "speech.audio.delta", "audio": base64(bytes) });
    frame(&event)
}

/// The closing `speech.audio.done` event. Kokoro has no tokens: `input_tokens` counts input
/// characters and `output_tokens` counts 20 ms frames of audio, so clients that sum usage get
/// numbers that grow with the work done.
#[must_use]
pub fn done(input_chars: usize, samples: usize) -> Vec<u8> {
    let frames = samples.div_ceil(480);
    let event = serde_json::json!({
        "type": "speech.audio.done",
        "usage": {
            "input_tokens": input_chars,
            "output_tokens": frames,
            "total_tokens": input_chars + frames,
        }
    });
    frame(&event)
}

/// An `error` event for a failure after the stream started (the status line is already sent).
#[must_use]
pub fn error(body: &serde_json::Value) -> Vec<u8> {
    let mut event = body.clone();
    if let Some(map) = event.as_object_mut() {
        map.insert("type".into(), "error".into());
    }
    frame(&event)
}

fn frame(event: &serde_json::Value) -> Vec<u8> {
    format!("data: {event}\n\n").into_bytes()
}

/// Standard base64 with padding (RFC 4648 §4).
#[must_use]
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let b = [
            group[0],
            group.get(1).copied().unwrap_or(0),
            group.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= group.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, encoded) in cases {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
        assert_eq!(base64(&[0xFF, 0xFE, 0xFD]), "//79");
    }

    #[test]
    fn events_are_framed_json() {
        let d = String::from_utf8(delta(b"foo")).expect("utf-8");
        assert!(d.starts_with("data: ") && d.ends_with("\n\n"));
        let v: serde_json::Value = serde_json::from_str(d[6..].trim()).expect("json");
        assert_eq!(v["type"], "speech.audio.delta");
        assert_eq!(v["audio"], "Zm9v");
        let e = String::from_utf8(done(10, 24_000)).expect("utf-8");
        let v: serde_json::Value = serde_json::from_str(e[6..].trim()).expect("json");
        assert_eq!(v["type"], "speech.audio.done");
        assert_eq!(v["usage"]["output_tokens"], 50);
        assert_eq!(v["usage"]["total_tokens"], 60);
    }
}
