//! `stream_format: "sse"`: the audio as server-sent events, in OpenAI's event shapes:
//! `data: {"type":"speech.audio.delta","audio":"<base64>","words":[...]}` for each piece, then
//! one `data: {"type":"speech.audio.done","usage":{...}}`. The base64 encoder is twenty lines
//! here rather than a dependency.
//!
//! `words` is Banter's addition (OpenAI's clients ignore fields they do not know): the words
//! that start in the audio of the stream up to the end of this delta, each once, timed in
//! seconds from the stream's first sample ([`WordQueue`] decides which delta takes which word).

use std::collections::VecDeque;

use engine::words::TimedWord;

/// One `speech.audio.delta` event carrying `bytes` (already in the response format) and the
/// words that start in it.
#[must_use]
pub fn delta(bytes: &[u8], words: &[TimedWord]) -> Vec<u8> {
    let event = serde_json::json!({
        "type": "speech.audio.delta",
        "audio": base64(bytes),
        "words": words,
    });
    frame(&event)
}

/// A stream's timed words waiting for the delta whose audio reaches their start.
///
/// The model times a segment's words when the segment's first chunk comes, but a later word of
/// the segment is only spoken in a later chunk; a client that highlights words as the deltas
/// arrive should get each word with the audio that holds its start, not before. The queue keeps
/// the words in order and hands out, for each delta, those that start before the end of the
/// audio encoded so far (for `pcm` and `wav`, exactly the audio sent; the compressed encoders
/// may hold back a few milliseconds of it). Whatever is left at the end goes with the last
/// delta, so every word is sent exactly once.
#[derive(Debug, Default)]
pub struct WordQueue {
    pending: VecDeque<TimedWord>,
}

impl WordQueue {
    /// Words timed for a segment that has just started (in order, after those queued).
    pub fn push(&mut self, words: Vec<TimedWord>) {
        self.pending.extend(words);
    }

    /// The words that start before `end` seconds, in order.
    pub fn take_until(&mut self, end: f64) -> Vec<TimedWord> {
        let n = self.pending.iter().take_while(|w| w.start < end).count();
        self.pending.drain(..n).collect()
    }

    /// Every word still queued (the stream has ended).
    pub fn take_all(&mut self) -> Vec<TimedWord> {
        self.pending.drain(..).collect()
    }
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
pub(crate) mod tests {
    use super::*;

    /// A word on line 1, column 1 (the body's tests use it too).
    pub(crate) fn word(text: &str, start: f64, end: f64) -> TimedWord {
        TimedWord {
            word: text.to_owned(),
            start,
            end,
            source_line: 1,
            source_column: 1,
        }
    }

    /// Segments whose words come with their first chunk, cut into chunks that end mid-word and
    /// between words: each delta takes exactly the words that start before its end and after
    /// the previous delta's, in order, and the end flushes the rest.
    #[test]
    fn each_word_goes_with_the_delta_that_holds_its_start() {
        let mut queue = WordQueue::default();
        // Segment 0 (0–1.2 s) in chunks ending at 0.25 and 1.2 s; segment 1 (1.2–2.0 s) in
        // one chunk; a last word at the very end (said as nothing) and one past it.
        let seg0 = vec![
            word("One", 0.05, 0.3),
            word("two", 0.3, 0.7),
            word("three", 0.7, 1.1),
        ];
        let seg1 = vec![
            word("four", 1.25, 1.6),
            word("five", 1.6, 2.0),
            word("six", 2.0, 2.0),
        ];
        let mut deltas = Vec::new();
        queue.push(seg0);
        deltas.push((0.25, queue.take_until(0.25)));
        deltas.push((1.2, queue.take_until(1.2)));
        queue.push(seg1);
        deltas.push((2.0, queue.take_until(2.0)));
        deltas.push((2.0, queue.take_all()));
        let said: Vec<Vec<&str>> = deltas
            .iter()
            .map(|(_, ws)| ws.iter().map(|w| w.word.as_str()).collect())
            .collect();
        assert_eq!(
            said,
            [
                vec!["One"],
                vec!["two", "three"],
                vec!["four", "five"],
                vec!["six"]
            ]
        );
        let mut from = 0.0;
        for (end, ws) in &deltas[..3] {
            assert!(ws.iter().all(|w| (from..*end).contains(&w.start)), "{ws:?}");
            from = *end;
        }
        assert!(queue.take_all().is_empty() && queue.take_until(9.0).is_empty());
    }

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
        let d = String::from_utf8(delta(b"foo", &[word("Hi", 0.1, 0.4)])).expect("utf-8");
        assert!(d.starts_with("data: ") && d.ends_with("\n\n"));
        let v: serde_json::Value = serde_json::from_str(d[6..].trim()).expect("json");
        assert_eq!(v["type"], "speech.audio.delta");
        assert_eq!(v["audio"], "Zm9v");
        assert_eq!(
            v["words"],
            serde_json::json!([{"word": "Hi", "start": 0.1, "end": 0.4,
                                "source_line": 1, "source_column": 1}])
        );
        let e = String::from_utf8(done(10, 24_000)).expect("utf-8");
        let v: serde_json::Value = serde_json::from_str(e[6..].trim()).expect("json");
        assert_eq!(v["type"], "speech.audio.done");
        assert_eq!(v["usage"]["output_tokens"], 50);
        assert_eq!(v["usage"]["total_tokens"], 60);
    }
}
