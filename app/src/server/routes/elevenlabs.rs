//! ElevenLabs' HTTP text to speech, beside its WebSocket one (`server::ws`):
//! `POST /v1/text-to-speech/{voice_id}` and `/{voice_id}/stream` (the same answer: the audio
//! streams as it is made either way), `/{voice_id}/with-timestamps` (one JSON: the whole
//! file in base64 and when each character of `text` is spoken) and
//! `/{voice_id}/stream/with-timestamps` (the two at once: a JSON line per piece of audio as it
//! is made, with the characters that start in it; see `server::timestamped`).
//!
//! Why: most ElevenLabs integrations (its SDKs' `convert` and `stream`, home-automation and
//! chat front ends) speak through these routes, not the socket; with the base URL changed and
//! the API token as key they get Kokoro locally.
//!
//! Decisions, each visible to clients:
//! - `{voice_id}`: any Banter voice (stock, blend, OpenAI name, library voice), or one of
//!   ElevenLabs' premade voice ids, spoken by a stock voice like it and named in
//!   `x-banter-voice` (`server::elevenlabs_voices`). Other ElevenLabs ids name voices Banter
//!   does not have: a 400 that says what to use.
//! - Body: `text` (at most `--max-input-chars`), `voice_settings.speed` (clamped to Kokoro's
//!   0.5–2.0; `x-banter-speed` says when), `language_code` (the voice must speak it: a premade
//!   voice's stand-in is swapped for a stock voice that does, said in `x-banter-voice`; a voice
//!   the client chose that does not is a 400, as is a language Kokoro does not speak);
//!   `model_id`, `stability`, `seed`, `previous_text` and the rest are accepted and ignored, as
//!   unknown fields are.
//! - Query: `output_format` (the socket's list, default `mp3_44100_128`); others ignored.
//! - Alignment: `characters` is `text` one character each; times in seconds from the file's
//!   first sample, from the model's word durations spread over each word's characters
//!   (`engine::follow::char_times`), from the first word to the end with no gap (the silence
//!   before the first word belongs to no character). `normalized_alignment`
//!   repeats it: Banter's reading of numbers is not exposed character by character.
//! - Auth is the API's (`xi-api-key` or `Authorization: Bearer`); errors are its JSON.

use std::collections::HashMap;
use std::time::Instant;

use axum::extract::{Path, Request, State};
use axum::response::Response;
use engine::words::TimedWord;
use engine::SAMPLE_RATE;

use axum::body::Body as HttpBody;
use axum::http::{header, HeaderValue};

use super::speech::{
    backend_error, checked_input, job_slot, kokoro_speed, read_body, resolve_voice, speed_note,
    Streamed,
};
use super::timed::{collect, json_answer, Collected};
use crate::server::backend::{BackendError, FollowEvent, FollowJob, SpeechJob};
use crate::server::elevenlabs_voices;
use crate::server::errors::ApiError;
use crate::server::input_language::{self, Heard};
use crate::server::listener::BusyGuard;
use crate::server::timestamped::{FollowLines, TimestampedBody};
use crate::server::ws::{query_pairs, ElevenLabsEncoder, ElevenLabsFormat};
use crate::server::{sse, AppState};

/// ElevenLabs' default `output_format`.
pub(crate) const DEFAULT_FORMAT: &str = "mp3_44100_128";

#[derive(Debug, serde::Deserialize)]
struct Body {
    text: String,
    #[serde(default)]
    voice_settings: Option<VoiceSettings>,
    #[serde(default)]
    language_code: Option<String>,
}

#[derive(Debug, Default, serde::Deserialize)]
struct VoiceSettings {
    #[serde(default)]
    speed: Option<f32>,
}

/// A validated request.
struct Parsed {
    job: SpeechJob,
    text: String,
    format: ElevenLabsFormat,
    input_chars: usize,
    clamped_from: Option<f32>,
    /// `x-banter-voice`, when an ElevenLabs voice id was answered with a stock voice.
    voice_note: Option<String>,
    /// `x-banter-language`, when the voice does not speak the text's language.
    language_note: Option<String>,
}

fn parse(
    voice: &str,
    query: &HashMap<String, String>,
    body: &[u8],
    max_input_chars: usize,
) -> Result<Parsed, ApiError> {
    let body: Body = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request("invalid_json", format!("request body: {e}")))?;
    let input_chars = checked_input("text", &body.text, max_input_chars)?;
    let format_name = query
        .get("output_format")
        .map_or(DEFAULT_FORMAT, String::as_str);
    let format = ElevenLabsFormat::parse(format_name)
        .map_err(|m| ApiError::invalid("output_format", "invalid_output_format", m))?;
    let (voice, stand_in) = resolve_voice_id(voice, "voice_id")?;
    let Chosen {
        voice,
        voice_note,
        language_note,
    } = choose_for_language(&body.text, body.language_code.as_deref(), voice, stand_in)?;
    let requested = body.voice_settings.unwrap_or_default().speed.unwrap_or(1.0);
    if !requested.is_finite() || requested <= 0.0 {
        return Err(ApiError::invalid(
            "voice_settings.speed",
            "invalid_speed",
            format!("speed {requested} is not a positive number"),
        ));
    }
    let (speed, clamped_from) = kokoro_speed(requested);
    Ok(Parsed {
        job: SpeechJob {
            text: body.text.clone(),
            voice,
            speed,
            words: false,
        },
        text: body.text,
        format,
        input_chars,
        clamped_from,
        voice_note,
        language_note,
    })
}

/// The stock voice spoken for an ElevenLabs premade id, and the premade voice's name.
pub(crate) type StandIn = (&'static str, &'static str);

/// A voice id as ElevenLabs' routes take it, in the engine's spelling, with the premade voice
/// it stands in for (an ElevenLabs premade id is answered with a stock voice like it). `field`
/// names the request's field in the error.
pub(crate) fn resolve_voice_id(
    voice: &str,
    field: &'static str,
) -> Result<(String, Option<StandIn>), ApiError> {
    let stand_in = elevenlabs_voices::stand_in(voice);
    let resolved = resolve_voice(stand_in.map_or(voice, |(stock, _)| stock)).map_err(|e| {
        ApiError::invalid(
            field,
            "invalid_voice",
            format!(
                "{}; Banter speaks its own voices (GET /v1/voices lists them): a stock name such \
                 as af_heart, a blend, an OpenAI name, a library voice or one of ElevenLabs' \
                 premade voice ids, not other ElevenLabs ids",
                e.message
            ),
        )
    })?;
    Ok((resolved, stand_in))
}

/// The voice that speaks a text, and the notes that say what was chosen for the client.
pub(crate) struct Chosen {
    pub voice: String,
    /// `x-banter-voice`: the stock voice spoken for a premade id.
    pub voice_note: Option<String>,
    /// `x-banter-language`: the voice does not speak the text's language.
    pub language_note: Option<String>,
}

/// What `language_code` asks of `voice` (a premade stand-in swapped for a stock voice that
/// speaks it; a voice the client chose that does not is a 400), or without one, as
/// ElevenLabs' multilingual models do, what the text's own language asks.
pub(crate) fn choose_for_language(
    text: &str,
    language_code: Option<&str>,
    voice: String,
    stand_in: Option<(&'static str, &'static str)>,
) -> Result<Chosen, ApiError> {
    let voice_note = stand_in.map(|(stock, name)| elevenlabs_voices::note(stock, name));
    let mut chosen = Chosen {
        voice,
        voice_note,
        language_note: None,
    };
    match language_code.filter(|c| !c.is_empty()) {
        None => match input_language::heard(text, &chosen.voice, stand_in.is_some()) {
            None => {}
            Some(Heard::Swap { stock, language }) => {
                let name = stand_in.map_or("", |(_, name)| name);
                let note = elevenlabs_voices::note(stock, name);
                stock.clone_into(&mut chosen.voice);
                chosen.voice_note = Some(format!("{note}: the text is {language}"));
            }
            Some(Heard::Mismatch(note)) => chosen.language_note = Some(note),
        },
        Some(code) => {
            if let Some((stock, note)) =
                elevenlabs_voices::swap_for_language(code, &chosen.voice, stand_in)?
            {
                stock.clone_into(&mut chosen.voice);
                chosen.voice_note = Some(note);
            }
        }
    }
    Ok(chosen)
}

/// The request to `voice`, read and checked, and the connection's busy mark.
async fn read(
    state: &AppState,
    voice: &str,
    request: Request,
) -> Result<(Parsed, Option<BusyGuard>), ApiError> {
    let query = query_pairs(request.uri());
    let (body, busy) = read_body(state, request).await?;
    let parsed = parse(voice, &query, &body, state.limits.max_input_chars)?;
    Ok((parsed, busy))
}

/// `POST /v1/text-to-speech/{voice_id}` and `…/stream`: the audio, streamed as it is made.
pub async fn speech(
    State(state): State<AppState>,
    Path(voice): Path<String>,
    request: Request,
) -> Result<Response, ApiError> {
    let started = Instant::now();
    let (parsed, busy) = read(&state, &voice, request).await?;
    let stream = Streamed {
        job: parsed.job,
        encoder: Box::new(encoder(parsed.format)?),
        sse: false,
        input_chars: parsed.input_chars,
        content_type: parsed.format.content_type(),
    };
    let mut response = stream.respond(&state, busy, started).await?;
    note_guesses(
        &mut response,
        (
            parsed.voice_note.as_deref(),
            parsed.language_note.as_deref(),
        ),
        parsed.clamped_from,
    );
    Ok(response)
}

/// The answer's notes on what Banter chose for the client: the stock voice spoken for an
/// ElevenLabs voice id (`x-banter-voice`), a voice that does not speak the text's language
/// (`x-banter-language`) and a clamped speed (`x-banter-speed`).
fn note_guesses(
    response: &mut Response,
    (voice, language): (Option<&str>, Option<&str>),
    clamped_from: Option<f32>,
) {
    let headers = response.headers_mut();
    if let Some(note) = voice.and_then(|v| HeaderValue::from_str(v).ok()) {
        headers.insert("x-banter-voice", note);
    }
    if let Some(note) = language.and_then(|v| HeaderValue::from_str(v).ok()) {
        headers.insert("x-banter-language", note);
    }
    if let Some(note) = clamped_from.and_then(speed_note) {
        headers.insert("x-banter-speed", note);
    }
}

/// `POST /v1/text-to-speech/{voice_id}/with-timestamps`: the whole file and its characters'
/// times, in one JSON.
pub async fn with_timestamps(
    State(state): State<AppState>,
    Path(voice): Path<String>,
    request: Request,
) -> Result<Response, ApiError> {
    let started = Instant::now();
    let (mut parsed, _busy) = read(&state, &voice, request).await?;
    parsed.job.words = true;
    let mut encoder = encoder(parsed.format)?;
    let Collected {
        audio,
        words,
        samples,
    } = collect(&state, parsed.job, &mut encoder, started).await?;
    let alignment = alignment(&parsed.text, &words, samples);
    let answer = serde_json::json!({
        "audio_base64": sse::base64(&audio),
        "alignment": alignment,
        "normalized_alignment": alignment,
    });
    let mut response = json_answer(&state, &answer, audio.len(), parsed.clamped_from);
    note_guesses(
        &mut response,
        (
            parsed.voice_note.as_deref(),
            parsed.language_note.as_deref(),
        ),
        None,
    );
    Ok(response)
}

/// `POST /v1/text-to-speech/{voice_id}/stream/with-timestamps`: a JSON line per piece of audio,
/// as it is made, with the characters that start in it (times from the response's first
/// sample). The text is spoken as one follow stream, the WebSocket's, whose chunks carry each
/// segment's characters timed.
pub async fn stream_with_timestamps(
    State(state): State<AppState>,
    Path(voice): Path<String>,
    request: Request,
) -> Result<Response, ApiError> {
    let started = Instant::now();
    let (parsed, busy) = read(&state, &voice, request).await?;
    let slot = job_slot(&state)?;
    let encoder = encoder(parsed.format)?;
    let waiting = state.metrics.queue_depth.enter();
    let job = FollowJob {
        voice: parsed.job.voice,
        speed: parsed.job.speed,
    };
    let (shared, text) = (state.clone(), parsed.text);
    // Phonemizing is CPU work under espeak's lock: off the async threads. Dropping the input
    // once the whole text is in says the text is complete.
    let opened = tokio::task::spawn_blocking(move || {
        let (mut input, events) = shared.backend.open_follow(job)?;
        input.push(&text)?;
        Ok::<_, BackendError>(events)
    })
    .await
    .map_err(|e| backend_error(BackendError::Internal(format!("starting speech: {e}"))))?;
    let mut events = opened.map_err(backend_error)?;
    let first = events.recv().await;
    drop(waiting);
    let first = match first {
        Some(FollowEvent::Failed(e)) => return Err(backend_error(e)),
        None => return Err(backend_error(BackendError::Stopped)),
        Some(FollowEvent::Done) => {
            return Err(ApiError::invalid(
                "text",
                "invalid_input",
                "`text` has nothing to speak: no letters or digits".to_owned(),
            ))
        }
        Some(event) => event,
    };
    state.metrics.record_ttfa(started.elapsed());
    let body = TimestampedBody::new(
        state.clone(),
        events,
        first,
        FollowLines::new(encoder),
        (slot, busy),
    );
    let mut response = Response::new(HttpBody::from_stream(body));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/x-ndjson"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    note_guesses(
        &mut response,
        (
            parsed.voice_note.as_deref(),
            parsed.language_note.as_deref(),
        ),
        parsed.clamped_from,
    );
    Ok(response)
}

fn encoder(format: ElevenLabsFormat) -> Result<ElevenLabsEncoder, ApiError> {
    ElevenLabsEncoder::new(format)
        .map_err(|m| ApiError::invalid("output_format", "invalid_output_format", m))
}

/// ElevenLabs' character alignment of `text` over `samples` of audio: each character of the
/// text once, in order, tiling the audio (see the module docs).
fn alignment(text: &str, words: &[TimedWord], samples: usize) -> serde_json::Value {
    // Character offset of each line's start: words say where they are as line and column.
    let mut line_starts = vec![0usize];
    for (i, c) in text.chars().enumerate() {
        if c == '\n' {
            line_starts.push(i + 1);
        }
    }
    let at_sample = |secs: f64| (secs.max(0.0) * f64::from(SAMPLE_RATE)).round() as u64;
    let spans: Vec<_> = words
        .iter()
        .filter_map(|w| {
            let line = *line_starts.get(w.source_line.checked_sub(1)?)?;
            let at = line + w.source_column.checked_sub(1)?;
            let len = w.word.chars().count();
            Some((at..at + len, at_sample(w.start), at_sample(w.end)))
        })
        .collect();
    alignment_json(&engine::follow::char_times(text, &spans, 0, samples as u64))
}

/// ElevenLabs' `alignment` object for timed characters: `characters` one each, their start and
/// end in seconds (to the millisecond) from the file's first sample.
pub(crate) fn alignment_json(times: &[engine::follow::CharTime]) -> serde_json::Value {
    let secs = |s: u64| (s as f64 / f64::from(SAMPLE_RATE) * 1000.0).round() / 1000.0;
    serde_json::json!({
        "characters": times.iter().map(|t| t.ch.to_string()).collect::<Vec<_>>(),
        "character_start_times_seconds": times.iter().map(|t| secs(t.start)).collect::<Vec<_>>(),
        "character_end_times_seconds": times.iter().map(|t| secs(t.end)).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn code(voice: &str, q: &[(&str, &str)], body: &str) -> &'static str {
        parse(voice, &query(q), body.as_bytes(), 20)
            .err()
            .map_or("ok", |e| e.code)
    }

    #[test]
    fn requests_are_read_as_elevenlabs_sends_them() {
        let sdk = r#"{"text":"Hello there.","model_id":"eleven_multilingual_v2",
            "voice_settings":{"stability":0.5,"similarity_boost":0.75,"speed":1.1},
            "seed":null,"previous_text":null,"apply_text_normalization":"auto"}"#;
        let p = parse("af_heart", &query(&[]), sdk.as_bytes(), 20).expect("the SDK's body");
        assert_eq!(
            p.format,
            ElevenLabsFormat::Mp3 {
                rate: 44_100,
                kbps: 128
            }
        );
        assert!((p.job.speed - 1.1).abs() < 1e-6);
        assert_eq!(p.job.voice, "af_heart");
        let p = parse(
            "nova",
            &query(&[("output_format", "pcm_16000")]),
            br#"{"text":"Hi"}"#,
            20,
        )
        .expect("an OpenAI name and raw PCM");
        assert_eq!(
            (p.job.voice.as_str(), p.format),
            ("af_nova", ElevenLabsFormat::Pcm(16_000))
        );
        let p = parse(
            "af_heart",
            &query(&[]),
            br#"{"text":"Hi","voice_settings":{"speed":3}}"#,
            20,
        )
        .expect("a fast speed is clamped");
        assert_eq!(p.clamped_from, Some(3.0));
        let p = parse("21m00Tcm4TlvDq8ikWAM", &query(&[]), br#"{"text":"Hi"}"#, 20)
            .expect("ElevenLabs' Rachel");
        assert_eq!(p.job.voice, "af_heart");
        assert_eq!(
            p.voice_note.as_deref(),
            Some("af_heart (for ElevenLabs' Rachel)")
        );
        assert!(parse("af_heart", &query(&[]), br#"{"text":"Hi"}"#, 20)
            .expect("a stock voice")
            .voice_note
            .is_none());
        assert_eq!(code("af_heart", &[], r#"{"text":"  "}"#), "empty_input");
        assert_eq!(
            code("af_heart", &[], r#"{"text":"this is more than twenty"}"#),
            "input_too_long"
        );
        assert_eq!(
            code(
                "af_heart",
                &[("output_format", "mp3_8000_8")],
                r#"{"text":"Hi"}"#
            ),
            "invalid_output_format"
        );
        assert_eq!(code("af_heart+", &[], r#"{"text":"Hi"}"#), "invalid_voice");
        assert_eq!(code("af_heart", &[], r#"{"words":"Hi"}"#), "invalid_json");
    }

    #[test]
    fn a_language_code_swaps_a_premade_voice_and_refuses_a_chosen_one() {
        let french = br#"{"text":"Bonjour.","language_code":"fr"}"#;
        let p = parse("21m00Tcm4TlvDq8ikWAM", &query(&[]), french, 20).expect("Rachel in French");
        assert_eq!(p.job.voice, "ff_siwis");
        assert_eq!(
            p.voice_note.as_deref(),
            Some("ff_siwis (for ElevenLabs' Rachel) in fr")
        );
        let e = parse("af_heart", &query(&[]), french, 20)
            .err()
            .expect("refused");
        assert_eq!(e.status, axum::http::StatusCode::BAD_REQUEST);
        let english = br#"{"text":"Hi.","language_code":"en"}"#;
        let p = parse("af_heart", &query(&[]), english, 20).expect("English");
        assert_eq!((p.job.voice.as_str(), p.voice_note), ("af_heart", None));
    }

    #[test]
    fn every_character_is_aligned_once_tiling_the_audio() {
        let text = "Hi, you.\nBye";
        let word = |word: &str, start, end, line, column| TimedWord {
            word: word.to_owned(),
            start,
            end,
            source_line: line,
            source_column: column,
        };
        let words = [
            word("Hi", 0.1, 0.3, 1, 1),
            word("you", 0.5, 0.8, 1, 5),
            word("Bye", 1.2, 1.5, 2, 1),
        ];
        let a = alignment(text, &words, 24_000 * 2);
        let chars: Vec<&str> = a["characters"]
            .as_array()
            .expect("characters")
            .iter()
            .filter_map(|c| c.as_str())
            .collect();
        assert_eq!(chars.concat(), text);
        let starts = a["character_start_times_seconds"]
            .as_array()
            .expect("starts");
        let ends = a["character_end_times_seconds"].as_array().expect("ends");
        // Milliseconds: the times are rounded to them.
        let at = |v: &serde_json::Value| (v.as_f64().expect("a number") * 1000.0).round() as i64;
        assert_eq!(
            at(&starts[0]),
            100,
            "the first character starts with its word"
        );
        assert_eq!(at(&starts[4]), 500, "`you` starts with its word");
        assert_eq!(at(&starts[9]), 1200, "`Bye`, on line 2, too");
        assert_eq!(
            at(&ends[ends.len() - 1]),
            2000,
            "the last character ends with the audio"
        );
        for k in 1..starts.len() {
            assert_eq!(
                at(&starts[k]),
                at(&ends[k - 1]),
                "no gap before character {k}"
            );
        }
    }
}
