//! ElevenLabs' text to dialogue: `POST /v1/text-to-dialogue` and `/v1/text-to-dialogue/stream`
//! (the same answer: the audio streams as it is made either way), `…/with-timestamps` (one
//! JSON: the audio, every character of the inputs timed, and a voice segment per spoken input)
//! and `…/stream/with-timestamps` (the two at once, as JSON lines).
//!
//! Why: this is ElevenLabs' route for what Banter is for, several voices in one conversation,
//! and its SDKs (`text_to_dialogue.convert`, `.stream`) send it `inputs`, one `{text,
//! voice_id}` per turn. Each is a turn of a JSON script rendered through the same dialogue
//! driver as `POST /v1/dialogue`: one timeline, the script's pauses between turns, one
//! loudness, and the scheduler's streaming for the first audio.
//!
//! Decisions, each visible to clients:
//! - `voice_id`: as on the speech routes (a Banter voice, or an ElevenLabs premade id answered
//!   by a stock voice like it, named in `x-banter-voice`, several joined by `; `).
//! - `language_code` applies to every input as on the speech routes; without it each input's
//!   language is heard (`x-banter-voice`, `x-banter-language`).
//! - The text is read as a script turn: v3's audio tags (`[laughs]`, `[whispers]`) are
//!   directions, not spoken; a turn with nothing to say is a 400 naming `inputs[N]`. The
//!   inputs together take at most `--max-input-chars` characters. What the script check says
//!   (an SSML tag not followed, a line in another language than its voice) comes back as
//!   `x-banter-warning` headers, one each, naming the input.
//! - `model_id`, `settings`, `seed` and the rest are accepted and ignored, as unknown fields
//!   are. Query: `output_format` as on the speech routes (default `mp3_44100_128`).
//! - Timestamps: the characters are the inputs' texts concatenated as sent (tags included),
//!   each word found in its input in order, as written, and timed from the model's durations
//!   (`server::timestamped_dialogue`); `…/stream/with-timestamps` sends them as the audio is
//!   made, a JSON line per piece with the characters that start in it, and each input's voice
//!   segment once its audio has gone.

use std::collections::HashMap;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue};
use axum::response::Response;
use engine::script::{Episode, ParseOptions, ScriptError, ScriptFormat};

use tokio::sync::mpsc;

use super::dialogue::start as start_dialogue;
use super::elevenlabs::{choose_for_language, resolve_voice_id, Chosen, DEFAULT_FORMAT};
use super::speech::{add_notes, backend_error, checked_input, read_body};
use super::timed::json_answer;
use crate::server::backend::{BackendError, DialogueEvent};
use crate::server::errors::ApiError;
use crate::server::listener::BusyGuard;
use crate::server::sse_dialogue::DialogueBody;
use crate::server::timestamped::TimestampedBody;
use crate::server::timestamped_dialogue::{timestamps, DialogueLines};
use crate::server::ws::{query_pairs, ElevenLabsEncoder, ElevenLabsFormat};
use crate::server::{sse, AppState, JobSlot};

#[derive(Debug, serde::Deserialize)]
struct DialogueRequest {
    inputs: Vec<DialogueInput>,
    #[serde(default)]
    language_code: Option<String>,
}

#[derive(Debug, serde::Deserialize)]
struct DialogueInput {
    text: String,
    voice_id: String,
}

/// A validated request: the episode its inputs make, the format, and the notes for the answer.
struct Parsed {
    episode: Episode,
    format: ElevenLabsFormat,
    notes: Vec<(&'static str, String)>,
    /// Each input's text and voice id as the client sent them (for the timestamps' answer).
    inputs: Vec<(String, String)>,
}

fn parse(
    query: &HashMap<String, String>,
    body: &[u8],
    max_input_chars: usize,
    is_voice: &dyn Fn(&str) -> bool,
) -> Result<Parsed, ApiError> {
    let request: DialogueRequest = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request("invalid_json", format!("request body: {e}")))?;
    if request.inputs.is_empty() {
        return Err(ApiError::invalid(
            "inputs",
            "empty_input",
            "inputs is empty: give one {\"text\", \"voice_id\"} per turn",
        ));
    }
    let all: String = request.inputs.iter().map(|i| i.text.as_str()).collect();
    checked_input("inputs", &all, max_input_chars)?;
    let format_name = query
        .get("output_format")
        .map_or(DEFAULT_FORMAT, String::as_str);
    let format = ElevenLabsFormat::parse(format_name)
        .map_err(|m| ApiError::invalid("output_format", "invalid_output_format", m))?;
    // One speaker per (voice id, voice spoken): the same id keeps one voice unless the
    // language of an input asked for another.
    let mut speakers: Vec<(String, String, String)> = Vec::new();
    let (mut voice_notes, mut language_notes) = (Vec::new(), Vec::new());
    let mut turns = Vec::with_capacity(request.inputs.len());
    for (index, input) in request.inputs.iter().enumerate() {
        let at = |e: ApiError| ApiError {
            message: format!("inputs[{index}]: {}", e.message),
            ..e
        };
        if input.text.trim().is_empty() {
            return Err(ApiError::invalid(
                "inputs",
                "empty_input",
                format!("inputs[{index}].text is empty"),
            ));
        }
        let (voice, stand_in) = resolve_voice_id(&input.voice_id, "inputs").map_err(at)?;
        let Chosen {
            voice,
            voice_note,
            language_note,
        } = choose_for_language(
            &input.text,
            request.language_code.as_deref(),
            voice,
            stand_in,
        )
        .map_err(at)?;
        for (notes, note) in [
            (&mut voice_notes, voice_note),
            (&mut language_notes, language_note),
        ] {
            if let Some(note) = note.filter(|n| !notes.contains(n)) {
                notes.push(note);
            }
        }
        let label = stand_in.map_or(input.voice_id.as_str(), |(_, name)| name);
        let known = speakers
            .iter()
            .find(|(id, v, _)| *id == input.voice_id && *v == voice);
        let speaker = if let Some((_, _, name)) = known {
            name.clone()
        } else {
            let taken = speakers.iter().any(|(_, _, name)| name == label);
            let name = if taken {
                format!("{label} ({voice})")
            } else {
                label.to_owned()
            };
            speakers.push((input.voice_id.clone(), voice.clone(), name.clone()));
            name
        };
        turns.push(serde_json::json!({"speaker": speaker, "text": input.text, "voice": voice}));
    }
    // One turn a line, after the opening `[`: a mistake's line number names its input.
    let script = format!(
        "[\n{}\n]\n",
        turns
            .iter()
            .map(serde_json::Value::to_string)
            .collect::<Vec<_>>()
            .join(",\n")
    );
    let options = ParseOptions {
        format: Some(ScriptFormat::Json),
        ..ParseOptions::default()
    };
    let episode = Episode::parse_bytes("inputs", script.as_bytes(), &options)
        .map_err(|e| input_error(&e, turns.len()))?;
    episode
        .validate_voices(is_voice)
        .map_err(|e| input_error(&e, turns.len()))?;
    let mut notes = Vec::new();
    // The script check's warnings, each naming its input: a header each (at most a few).
    for w in episode.warnings.iter().take(MAX_WARNING_HEADERS) {
        let at = w
            .position
            .line
            .checked_sub(2)
            .filter(|&i| i < turns.len())
            .map_or_else(|| "inputs".to_owned(), |i| format!("inputs[{i}]"));
        notes.push(("x-banter-warning", ascii(&format!("{at}: {}", w.message))));
    }
    if !voice_notes.is_empty() {
        notes.push(("x-banter-voice", voice_notes.join("; ")));
    }
    if !language_notes.is_empty() {
        notes.push(("x-banter-language", language_notes.join("; ")));
    }
    let inputs = request
        .inputs
        .into_iter()
        .map(|i| (i.text, i.voice_id))
        .collect();
    Ok(Parsed {
        episode,
        format,
        notes,
        inputs,
    })
}

/// At most this many `x-banter-warning` headers on one answer.
const MAX_WARNING_HEADERS: usize = 8;

/// `message` as a header value can carry it: typographic punctuation as its ASCII kin, any
/// other character beyond ASCII as `?`.
fn ascii(message: &str) -> String {
    message
        .chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' => '\'',
            '\u{201C}' | '\u{201D}' => '"',
            '\u{2013}' | '\u{2014}' => '-',
            '\u{2026}' => '.',
            c if c == ' ' || c.is_ascii_graphic() => c,
            _ => '?',
        })
        .collect()
}

/// A script mistake in the JSON the inputs made, as a 400 naming the input at fault.
fn input_error(e: &ScriptError, inputs: usize) -> ApiError {
    let what = e.kind.to_string();
    let message = match e.line.checked_sub(2).filter(|&i| i < inputs) {
        Some(index) => format!("inputs[{index}]: {what}"),
        None => format!("inputs: {what}"),
    };
    ApiError::invalid("inputs", "invalid_input", message)
}

/// A dialogue request read, planned and started: its parse, the driver's events with the first
/// one already received, and what it holds while it runs.
struct Started {
    format: ElevenLabsFormat,
    notes: Vec<(&'static str, String)>,
    inputs: Vec<(String, String)>,
    encoder: ElevenLabsEncoder,
    events: mpsc::Receiver<DialogueEvent>,
    first: DialogueEvent,
    held: (JobSlot, Option<BusyGuard>),
}

async fn start(state: &AppState, request: Request) -> Result<Started, ApiError> {
    let query = query_pairs(request.uri());
    let (body, busy) = read_body(state, request).await?;
    let voices = state.backend.voices();
    let is_voice = |name: &str| voices.iter().any(|v| v.name == name);
    let Parsed {
        episode,
        format,
        notes,
        inputs,
    } = parse(&query, &body, state.limits.max_input_chars, &is_voice)?;
    let encoder = ElevenLabsEncoder::new(format)
        .map_err(|m| ApiError::invalid("output_format", "invalid_output_format", m))?;
    let (events, first, slot) = start_dialogue(state, episode).await?;
    Ok(Started {
        format,
        notes,
        inputs,
        encoder,
        events,
        first,
        held: (slot, busy),
    })
}

/// `POST /v1/text-to-dialogue` and `…/stream`.
pub async fn text_to_dialogue(
    State(state): State<AppState>,
    request: Request,
) -> Result<Response, ApiError> {
    let started = start(&state, request).await?;
    let content_type = started.format.content_type();
    let stream = DialogueBody::audio_only(
        state.clone(),
        started.events,
        started.first,
        Box::new(started.encoder),
        started.held,
    );
    Ok(streamed(
        Body::from_stream(stream),
        content_type,
        &started.notes,
    ))
}

/// `POST /v1/text-to-dialogue/with-timestamps`: one JSON, `audio_base64`, the characters of the
/// inputs' texts (concatenated, as sent) with their times, and `voice_segments`, one per
/// spoken input.
pub async fn with_timestamps(
    State(state): State<AppState>,
    request: Request,
) -> Result<Response, ApiError> {
    let Started {
        notes,
        inputs,
        mut encoder,
        mut events,
        first,
        held: _held,
        ..
    } = start(&state, request).await?;
    let mut audio = Vec::new();
    let mut samples = 0usize;
    let mut marks = Vec::new();
    let mut next = Some(first);
    loop {
        let event = match next.take() {
            Some(event) => event,
            None => events
                .recv()
                .await
                .ok_or_else(|| backend_error(BackendError::Stopped))?,
        };
        let encoded = match event {
            DialogueEvent::Sentence { .. } => continue,
            DialogueEvent::Line(mark) => {
                marks.push(mark);
                continue;
            }
            DialogueEvent::Audio { samples: s, .. } => {
                samples += s.len();
                encoder.encode(&s)
            }
            DialogueEvent::Done { .. } => {
                let tail = encoder.finish().map_err(encoding_error)?;
                audio.extend(tail);
                break;
            }
            DialogueEvent::Failed(e) => return Err(backend_error(e)),
        };
        audio.extend(encoded.map_err(encoding_error)?);
    }
    let (alignment, voice_segments) = timestamps(inputs, &marks, samples);
    let answer = serde_json::json!({
        "audio_base64": sse::base64(&audio),
        "alignment": alignment,
        "normalized_alignment": alignment,
        "voice_segments": voice_segments,
    });
    let mut response = json_answer(&state, &answer, audio.len(), None);
    add_notes(&mut response, &notes);
    Ok(response)
}

/// `POST /v1/text-to-dialogue/stream/with-timestamps`: a JSON line per piece of audio as it is
/// made, with the characters that start in it and the voice segments of the inputs whose audio
/// ended (`server::timestamped_dialogue`).
pub async fn stream_with_timestamps(
    State(state): State<AppState>,
    request: Request,
) -> Result<Response, ApiError> {
    let started = start(&state, request).await?;
    let lines = DialogueLines::new(started.encoder, started.inputs);
    let body = TimestampedBody::new(
        state.clone(),
        started.events,
        started.first,
        lines,
        started.held,
    );
    Ok(streamed(
        Body::from_stream(body),
        "application/x-ndjson",
        &started.notes,
    ))
}

/// A body streamed as it is made: its type, never cached, and the request's notes.
fn streamed(body: Body, content_type: &'static str, notes: &[(&'static str, String)]) -> Response {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    add_notes(&mut response, notes);
    response
}

fn encoding_error(e: impl std::fmt::Display) -> ApiError {
    tracing::error!("text to dialogue: encoding: {e}");
    ApiError::internal("encoding the audio failed; the server log has details")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_json(json: &serde_json::Value) -> Result<Parsed, ApiError> {
        let known = |n: &str| n.starts_with("af_") || n.starts_with("am_");
        parse(&HashMap::new(), json.to_string().as_bytes(), 4096, &known)
    }

    #[test]
    fn inputs_are_turns_one_speaker_per_voice() {
        let p = parse_json(&serde_json::json!({
            "inputs": [
                {"text": "Welcome back to the show.", "voice_id": "21m00Tcm4TlvDq8ikWAM"},
                {"text": "[laughs] Glad to be here.", "voice_id": "am_michael"},
                {"text": "Let's begin.", "voice_id": "21m00Tcm4TlvDq8ikWAM"}
            ],
            "model_id": "eleven_v3",
            "settings": {"stability": 0.5}
        }))
        .expect("valid");
        let cast: Vec<(&str, &str)> = p
            .episode
            .cast
            .members
            .iter()
            .map(|m| (m.name.as_str(), m.voice.as_str()))
            .collect();
        assert_eq!(cast, [("Rachel", "af_heart"), ("am_michael", "am_michael")]);
        assert_eq!(p.episode.lines.len(), 3);
        // v3's audio tag is a direction, not speech.
        assert_eq!(
            p.episode.spoken_text(&p.episode.lines[1]),
            "Glad to be here."
        );
        assert_eq!(p.format, ElevenLabsFormat::parse(DEFAULT_FORMAT).unwrap());
        assert_eq!(
            p.notes,
            [(
                "x-banter-voice",
                "af_heart (for ElevenLabs' Rachel)".to_owned()
            )]
        );
        // What the script check says comes back naming the input, in ASCII.
        let p = parse_json(&serde_json::json!({"inputs": [
            {"text": "Hi.", "voice_id": "af_heart"},
            {"text": "It’s <emphasis>big</emphasis>.", "voice_id": "am_adam"}
        ]}))
        .expect("valid");
        let warnings: Vec<&str> = p
            .notes
            .iter()
            .filter(|(name, _)| *name == "x-banter-warning")
            .map(|(_, v)| v.as_str())
            .collect();
        assert_eq!(warnings.len(), 1, "{:?}", p.notes);
        assert!(
            warnings[0].starts_with("inputs[1]: the SSML tag `<emphasis>`"),
            "{}",
            warnings[0]
        );
        assert!(warnings[0].is_ascii());
    }

    #[test]
    fn mistakes_name_the_input() {
        let message = |json: serde_json::Value| parse_json(&json).err().map(|e| e.message);
        assert_eq!(
            message(serde_json::json!({"inputs": []})).as_deref(),
            Some("inputs is empty: give one {\"text\", \"voice_id\"} per turn")
        );
        let m = message(serde_json::json!({"inputs": [
            {"text": "Hi.", "voice_id": "af_heart"},
            {"text": " ", "voice_id": "af_heart"}
        ]}))
        .expect("refused");
        assert_eq!(m, "inputs[1].text is empty");
        let m = message(serde_json::json!({"inputs": [
            {"text": "Hi.", "voice_id": "af_heart"},
            {"text": "Hello.", "voice_id": "aBcDeFgHiJkLmNoPqRsT"}
        ]}))
        .expect("refused");
        assert!(m.starts_with("inputs[1]: "), "{m}");
        let m = message(serde_json::json!({"inputs": [
            {"text": "Hi.", "voice_id": "af_heart"},
            {"text": "Hello.", "voice_id": "zz_nobody"}
        ]}))
        .expect("refused");
        assert!(
            m.starts_with("inputs[1]: ") && m.contains("zz_nobody"),
            "{m}"
        );
        let too_long = "x".repeat(3000);
        let m = message(serde_json::json!({"inputs": [
            {"text": too_long, "voice_id": "af_heart"},
            {"text": too_long, "voice_id": "am_adam"}
        ]}))
        .expect("refused");
        assert!(m.contains("6000 characters"), "{m}");
    }
}
