//! `POST /v1/dialogue`: a whole script in, its audio and its timeline out, as server-sent events.
//!
//! Request body (JSON):
//! - `script`: the script as text, in any format Banter imports (`Name: text`, Dia, podcastfy,
//!   Markdown, plays, JSON...), or JSON turns/an episode object given as JSON directly; a body
//!   that is a JSON array is read as turns (`[{"speaker", "text", "voice"?}]`);
//! - `format`: the script format, instead of detecting it (`banter script check` names);
//! - `cast`: `{speaker: voice}` overrides (stock names, blends, OpenAI names);
//! - `response_format`: the audio in the events, `pcm` (default), `wav`, `flac` or `mp3`; the
//!   concatenated `audio` payloads are one file of that format;
//! - `keep_stage_directions`, `name` (the file name used in error messages, `script`).
//!
//! Events: first an `event: warning` `{at, line, column, message}` for each thing the script
//! check says (a guess, a line left unspoken, a tag not followed; `x-banter-warnings` counts
//! them), then, in timeline order: `event: sentence` `{line, source_line, speaker, voice, text, start,
//! end, words}` (seconds on the output timeline, trimmed speech as in `banter render` captions;
//! `words`: `[{word, start, end, source_line, source_column}]`, each word of the sentence as
//! written, timed on the same timeline inside `start..end`, placed in the script file), then
//! `event: audio` `{audio: base64, start}` carrying the sentence (and the silence before it);
//! `event: line` `{line, source_line, speaker, voice, start, end}` after a line's last sentence;
//! finally `event: done` `{lines, sentences, duration, samples, response_format}`, or
//! `event: error` `{error: {...}}` if the engine fails mid-way. Script mistakes are found before
//! anything streams and are a 400 JSON error whose message starts with `NAME:LINE:COLUMN:`.
//!
//! Flow control is TCP's: SSE has no acknowledgements, so a client that reads slowly blocks the
//! body, the driver stops taking audio and the scheduler's high watermark stops the model for
//! it (see `server::dialogue`). A client that closes the connection cancels the rest.

use std::collections::BTreeMap;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue};
use axum::response::Response;
use engine::render::{plan_episode, LinePlan, RenderError};
use engine::script::{Episode, ParseOptions, ScriptFormat, VoiceSource};
use tokio::sync::mpsc;

use super::speech::{backend_error, job_slot, read_body, resolve_voice};
use crate::server::backend::{BackendError, DialogueEvent, DialogueJob};
use crate::server::errors::ApiError;
use crate::server::format::{encoder_for, AudioFormat};
use crate::server::sse_dialogue::DialogueBody;
use crate::server::{AppState, JobSlot};

#[derive(Debug, Default, serde::Deserialize)]
struct DialogueRequest {
    script: Option<serde_json::Value>,
    #[serde(default)]
    format: Option<String>,
    #[serde(default)]
    cast: BTreeMap<String, String>,
    #[serde(default)]
    response_format: Option<String>,
    #[serde(default)]
    keep_stage_directions: bool,
    #[serde(default)]
    name: Option<String>,
}

/// A validated dialogue request: the parsed episode and the output format.
pub struct DialogueParams {
    pub episode: Episode,
    pub format: AudioFormat,
}

impl DialogueParams {
    /// Parses the body and the script, applies the cast, and checks every voice with
    /// `is_voice`.
    pub fn parse(body: &[u8], is_voice: &dyn Fn(&str) -> bool) -> Result<Self, ApiError> {
        let value: serde_json::Value = serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request("invalid_json", format!("request body: {e}")))?;
        let request = if value.is_array() {
            DialogueRequest {
                script: Some(value),
                ..DialogueRequest::default()
            }
        } else {
            serde_json::from_value(value)
                .map_err(|e| ApiError::bad_request("invalid_json", format!("request body: {e}")))?
        };
        let (text, json) = match request.script {
            Some(serde_json::Value::String(text)) => (text, false),
            Some(v @ (serde_json::Value::Array(_) | serde_json::Value::Object(_))) => {
                let text = serde_json::to_string_pretty(&v)
                    .map_err(|e| ApiError::bad_request("invalid_json", format!("script: {e}")))?;
                (text, true)
            }
            _ => {
                return Err(ApiError::invalid(
                    "script",
                    "missing_script",
                    "give `script`: the script's text, or JSON turns \
                     [{\"speaker\": \"Alice\", \"text\": \"Hello!\"}]",
                ))
            }
        };
        let format = match request.format.as_deref() {
            Some(name) => Some(name.parse::<ScriptFormat>().map_err(|e| {
                ApiError::invalid("format", "invalid_script_format", e.to_string())
            })?),
            None => json.then_some(ScriptFormat::Json),
        };
        let options = ParseOptions {
            format,
            keep_stage_directions: request.keep_stage_directions,
            ..ParseOptions::default()
        };
        let name = request.name.as_deref().unwrap_or("script");
        let mut episode = Episode::parse_bytes(name, text.as_bytes(), &options)
            .map_err(|e| ApiError::invalid("script", "invalid_script", e.to_string()))?;
        // A cue names a file on this machine: the API never reads a path a request names, so
        // a script with cues is refused rather than voiced without its sound.
        if let Some((_, cue)) = episode.sounds().next() {
            return Err(ApiError::invalid(
                "script",
                "sound_cues_not_accepted",
                format!(
                    "{}: sound cues ([sound: …], [bed: …]) are not played over the API, which never opens files a request names; remove them, or render the episode with `banter render`",
                    episode.locate(cue.position)
                ),
            ));
        }
        for (speaker, voice) in &request.cast {
            recast(&mut episode, speaker, voice)?;
        }
        episode
            .validate_voices(is_voice)
            .map_err(|e| ApiError::invalid("script", "unknown_voice", e.to_string()))?;
        let format = match request.response_format.as_deref() {
            None => AudioFormat::Pcm,
            Some(name) => AudioFormat::parse(name)?,
        };
        encoder_for(format)?; // refuse aac before any work
        Ok(Self { episode, format })
    }
}

/// Gives `speaker` the voice `voice` (OpenAI names mapped, as in speech requests).
fn recast(episode: &mut Episode, speaker: &str, voice: &str) -> Result<(), ApiError> {
    let voice = resolve_voice(voice)?;
    let Some(found) = episode.cast.get(speaker).map(|m| m.name.clone()) else {
        let names: Vec<&str> = episode
            .cast
            .members
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        return Err(ApiError::invalid(
            "cast",
            "unknown_speaker",
            format!(
                "cast: the script has no speaker \"{speaker}\"; its speakers are: {}",
                names.join(", ")
            ),
        ));
    };
    for member in &mut episode.cast.members {
        if member.name == found {
            voice.clone_into(&mut member.voice);
            member.source = VoiceSource::Automatic;
            member.guess = None;
        }
    }
    Ok(())
}

/// The script's warnings as the API sends them: where (`at`, `NAME:LINE:COLUMN`, and `line`
/// and `column`) and what.
pub(super) fn warnings_json(episode: &Episode) -> Vec<serde_json::Value> {
    episode
        .warnings
        .iter()
        .map(|w| {
            serde_json::json!({
                "at": episode.locate(w.position),
                "line": w.position.line,
                "column": w.position.column,
                "message": w.message,
            })
        })
        .collect()
}

/// Plans every line (normalisation and phonemes: CPU work, off the async threads).
pub(super) async fn plan(episode: Episode) -> Result<(Vec<LinePlan>, Option<f32>), ApiError> {
    let gap = episode.settings.gap_secs;
    let planned = tokio::task::spawn_blocking(move || plan_episode(&episode))
        .await
        .map_err(|e| {
            tracing::error!("dialogue planning stopped: {e}");
            ApiError::internal("planning the script failed; the server log has details")
        })?;
    let lines = planned.map_err(|e| match e {
        e if e.is_input_error() => ApiError::invalid("script", "invalid_script", e.to_string()),
        RenderError::Synth(e) => backend_error(crate::server::backend::synth_error(&e)),
        other => {
            tracing::error!("dialogue planning failed: {other}");
            ApiError::internal("planning the script failed; the server log has details")
        }
    })?;
    if lines.iter().all(LinePlan::is_silent) {
        return Err(ApiError::invalid(
            "script",
            "nothing_to_say",
            RenderError::NothingToSay.to_string(),
        ));
    }
    Ok((lines, gap))
}

/// Plans `episode`, queues it with the driver and waits for its first event (a failure before
/// any audio is a proper JSON error): the events, that first one, and the job's queue slot.
pub(super) async fn start(
    state: &AppState,
    episode: Episode,
) -> Result<(mpsc::Receiver<DialogueEvent>, DialogueEvent, JobSlot), ApiError> {
    let (lines, episode_gap) = plan(episode).await?;
    let slot = job_slot(state)?;
    let waiting = state.metrics.queue_depth.enter();
    let mut events = state
        .backend
        .start_dialogue(DialogueJob { lines, episode_gap })
        .map_err(backend_error)?;
    let first = events.recv().await;
    drop(waiting);
    match first {
        Some(DialogueEvent::Failed(e)) => Err(backend_error(e)),
        None => Err(backend_error(BackendError::Stopped)),
        Some(event) => Ok((events, event, slot)),
    }
}

pub async fn dialogue(
    State(state): State<AppState>,
    request: Request,
) -> Result<Response, ApiError> {
    let (body, busy) = read_body(&state, request).await?;
    let voices = state.backend.voices();
    let is_voice = |name: &str| voices.iter().any(|v| v.name == name);
    let params = DialogueParams::parse(&body, &is_voice)?;
    let warnings = warnings_json(&params.episode);
    let (events, first, slot) = start(&state, params.episode).await?;
    let encoder = encoder_for(params.format)?;
    let stream = DialogueBody::new(
        state.clone(),
        events,
        first,
        encoder,
        params.format,
        (slot, busy),
    )
    .with_warnings(&warnings);
    let mut response = Response::new(Body::from_stream(stream));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert("x-banter-warnings", HeaderValue::from(warnings.len()));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &serde_json::Value) -> Result<DialogueParams, ApiError> {
        let known = |n: &str| n.starts_with("af_") || n.starts_with("am_");
        DialogueParams::parse(json.to_string().as_bytes(), &known)
    }

    #[test]
    fn scripts_turns_and_cast() {
        let p = parse(&serde_json::json!({
            "script": "Ann: Hello there.\nBen: Hi, Ann.",
            "cast": {"ann": "nova", "Ben": "am_echo"},
        }))
        .expect("valid");
        assert_eq!(p.format, AudioFormat::Pcm);
        let voices: Vec<(&str, &str)> = p
            .episode
            .cast
            .members
            .iter()
            .map(|m| (m.name.as_str(), m.voice.as_str()))
            .collect();
        assert_eq!(voices, [("Ann", "af_nova"), ("Ben", "am_echo")]);
        let turns = serde_json::json!([
            {"speaker": "A", "text": "One."},
            {"speaker": "B", "text": "Two."}
        ]);
        let p = parse(&turns).expect("turns");
        assert_eq!(p.episode.lines.len(), 2);
        let p = parse(&serde_json::json!({"script": turns, "response_format": "mp3"}))
            .expect("turns in script");
        assert_eq!(p.episode.format, ScriptFormat::Json);
        assert_eq!(p.format, AudioFormat::MP3);
    }

    #[test]
    fn the_scripts_warnings_are_sent_with_where() {
        let p = parse(&serde_json::json!({
            "script": "Ann: Hello.\nBen: It is <emphasis>big</emphasis>.",
            "name": "ep.txt",
        }))
        .expect("valid");
        let warnings = warnings_json(&p.episode);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(warnings[0]["at"], "ep.txt:2:12");
        assert_eq!(warnings[0]["line"], 2);
        assert!(warnings[0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("`<emphasis>` is not followed")));
    }

    #[test]
    fn mistakes_are_400s_that_say_where() {
        let code = |json: serde_json::Value| parse(&json).err().map_or("ok", |e| e.code);
        assert_eq!(code(serde_json::json!({"format": "dia"})), "missing_script");
        assert_eq!(
            code(serde_json::json!({"script": "A: hi", "format": "nope"})),
            "invalid_script_format"
        );
        assert_eq!(
            code(serde_json::json!({"script": "A: hi", "cast": {"Zed": "af_sky"}})),
            "unknown_speaker"
        );
        assert_eq!(
            code(serde_json::json!({"script": "A: hi", "response_format": "aac"})),
            "unsupported_response_format"
        );
        let cue = parse(&serde_json::json!({"script": "A: hi\n[sound: /etc/passwd.wav]\n"}))
            .err()
            .expect("a cue");
        assert_eq!(cue.code, "sound_cues_not_accepted");
        assert!(cue.message.starts_with("script:2:1:"), "{}", cue.message);
        let bad = parse(&serde_json::json!({
            "script": "# cast\nA: zz_nobody\n\nA: hello",
            "name": "ep.txt",
        }))
        .err()
        .expect("unknown voice");
        assert_eq!(bad.status.as_u16(), 400);
        assert!(bad.message.starts_with("ep.txt:2:"), "{}", bad.message);
        let empty = parse(&serde_json::json!({"script": "   \n"}))
            .err()
            .expect("empty");
        assert!(
            empty.message.starts_with("script:1:1:"),
            "{}",
            empty.message
        );
    }
}
