//! `POST /v1/audio/speech`, OpenAI's contract: `model`, `input`, `voice`, `response_format`,
//! `speed`, `stream_format` (`instructions` is accepted and not followed: Kokoro takes no prompt;
//! `x-banter-ignored` says so).
//!
//! Decisions, each visible to clients:
//! - `voice`: a stock name (`af_heart`), a blend (`af_bella(2)+af_sky(1)`,
//!   `af_bella:0.7+af_sky:0.3`) or an OpenAI name, mapped by [`OPENAI_VOICES`] (also inside
//!   blends). `{"id": "..."}` objects are read the same way.
//! - `speed`: OpenAI's range 0.25–4.0 is accepted (outside it: 400); Kokoro speaks 0.5–2.0, so
//!   values beyond are clamped and the response says so in `x-banter-speed`.
//! - `input`: at most `--max-input-chars` characters (400 beyond, naming the limit).
//! - `stream_format: "sse"`: OpenAI's events, each `speech.audio.delta` with Banter's `words`
//!   beside `audio` (see `server::sse`); the same body to `/v1/audio/speech/timed` answers one
//!   JSON with the whole file and its words (see [`super::timed`]).
//! - The response always streams (chunked): audio leaves as each segment is decoded, whether
//!   the client reads it whole or as a stream. Headers wait for the first audio, so a request
//!   that fails before any audio (nothing speakable, say) still gets a proper JSON error.

use std::sync::atomic::Ordering;
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, FromRequest, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use engine::voice::VoiceSpec;
use tokio::sync::mpsc;

use super::MODEL_IDS;
use crate::server::backend::{AudioEvent, BackendError, SpeechJob};
use crate::server::body::AudioBody;
use crate::server::errors::ApiError;
use crate::server::format::{encoder_for, AudioFormat, ChunkEncoder};
use crate::server::input_language::{self, Heard};
use crate::server::listener::{BusyGuard, Connection};
use crate::server::{AppState, JobSlot};

/// OpenAI's voice names and the stock voice each one means: a like-sounding voice of the same
/// gender, reusing Kokoro's namesakes where they exist (alloy, echo, fable, nova, onyx).
pub const OPENAI_VOICES: [(&str, &str); 13] = [
    ("alloy", "af_alloy"),
    ("ash", "am_liam"),
    ("ballad", "bm_george"),
    ("cedar", "am_adam"),
    ("coral", "af_heart"),
    ("echo", "am_echo"),
    ("fable", "bm_fable"),
    ("marin", "af_kore"),
    ("onyx", "am_onyx"),
    ("nova", "af_nova"),
    ("sage", "af_sarah"),
    ("shimmer", "af_bella"),
    ("verse", "am_michael"),
];

/// OpenAI's accepted speed range; the engine's narrower one is applied by clamping.
const OPENAI_SPEED: (f32, f32) = (0.25, 4.0);

#[derive(Debug, serde::Deserialize)]
struct SpeechBody {
    model: String,
    input: String,
    voice: VoiceField,
    #[serde(default)]
    response_format: Option<String>,
    #[serde(default)]
    speed: Option<f32>,
    #[serde(default)]
    stream_format: Option<String>,
    /// Accepted for OpenAI compatibility; Kokoro takes no prompt, and `x-banter-ignored` says
    /// so when one was given.
    #[serde(default)]
    instructions: Option<String>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(untagged)]
enum VoiceField {
    Name(String),
    Object { id: String },
}

/// A validated request.
pub struct SpeechParams {
    pub job: SpeechJob,
    pub format: AudioFormat,
    pub encoder: Box<dyn ChunkEncoder>,
    pub sse: bool,
    /// Set when the requested speed was outside the engine's range.
    pub clamped_from: Option<f32>,
    pub input_chars: usize,
    /// `instructions` were given, and Kokoro cannot follow them.
    pub ignored_instructions: bool,
    /// What the input's language changed or could not (`x-banter-voice`, `x-banter-language`).
    pub language_notes: Vec<(&'static str, String)>,
}

impl SpeechParams {
    pub fn parse(body: &[u8], max_input_chars: usize) -> Result<Self, ApiError> {
        let body: SpeechBody = serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request("invalid_json", format!("request body: {e}")))?;
        if !MODEL_IDS.contains(&body.model.as_str()) {
            return Err(ApiError::invalid(
                "model",
                "model_not_found",
                format!(
                    "unknown model `{}`; use one of {}",
                    body.model,
                    MODEL_IDS.join(", ")
                ),
            ));
        }
        let input_chars = checked_input("input", &body.input, max_input_chars)?;
        let (VoiceField::Name(name) | VoiceField::Object { id: name }) = body.voice;
        let voice = resolve_voice(&name)?;
        let alias = OPENAI_VOICES
            .iter()
            .find(|(alias, _)| alias.eq_ignore_ascii_case(name.trim()))
            .map(|(alias, _)| *alias);
        let (voice, language_notes) = language_of_input(&body.input, voice, alias);
        let format = match body.response_format.as_deref() {
            None => AudioFormat::default_for_server(),
            Some(name) => AudioFormat::parse(name)?,
        };
        let encoder = encoder_for(format)?;
        let sse = match body.stream_format.as_deref() {
            None | Some("audio") => false,
            Some("sse") => true,
            Some(other) => {
                return Err(ApiError::invalid(
                    "stream_format",
                    "invalid_stream_format",
                    format!("unknown stream_format `{other}`; use audio or sse"),
                ))
            }
        };
        let requested = body.speed.unwrap_or(1.0);
        if !requested.is_finite() || !(OPENAI_SPEED.0..=OPENAI_SPEED.1).contains(&requested) {
            return Err(ApiError::invalid(
                "speed",
                "invalid_speed",
                format!(
                    "speed {requested} is outside {}–{}",
                    OPENAI_SPEED.0, OPENAI_SPEED.1
                ),
            ));
        }
        let (speed, clamped_from) = kokoro_speed(requested);
        let ignored_instructions = body
            .instructions
            .as_deref()
            .is_some_and(|i| !i.trim().is_empty());
        Ok(Self {
            job: SpeechJob {
                text: body.input,
                voice,
                speed,
                words: sse,
            },
            format,
            encoder,
            sse,
            clamped_from,
            input_chars,
            ignored_instructions,
            language_notes,
        })
    }
}

/// The voice to speak `input` with and the notes that say why: an OpenAI name (`alias`) is
/// answered in the input's language when that is another of Kokoro's (OpenAI's voices speak
/// any), and any voice that does not speak the input's language is kept and named.
fn language_of_input(
    input: &str,
    voice: String,
    alias: Option<&str>,
) -> (String, Vec<(&'static str, String)>) {
    match input_language::heard(input, &voice, alias.is_some()) {
        None => (voice, Vec::new()),
        Some(Heard::Swap { stock, language }) => {
            let alias = alias.unwrap_or_default();
            let note = format!("{stock} (for OpenAI's {alias}: the input is {language})");
            (stock.to_owned(), vec![("x-banter-voice", note)])
        }
        Some(Heard::Mismatch(note)) => (voice, vec![("x-banter-language", note)]),
    }
}

/// Adds each `(header, value)` note to the answer, a name given twice appearing twice (values
/// are ASCII by construction; one that is not is left out rather than failing the answer).
pub(crate) fn add_notes(response: &mut Response, notes: &[(&'static str, String)]) {
    for (name, value) in notes {
        if let Ok(value) = HeaderValue::from_str(value) {
            response.headers_mut().append(*name, value);
        }
    }
}

/// The character count of the text in request field `field`, or a 400 when it is empty or
/// longer than the server takes.
pub(crate) fn checked_input(
    field: &'static str,
    text: &str,
    max_input_chars: usize,
) -> Result<usize, ApiError> {
    let chars = text.chars().count();
    if text.trim().is_empty() {
        return Err(ApiError::invalid(
            field,
            "empty_input",
            format!("{field} is empty"),
        ));
    }
    if chars > max_input_chars {
        return Err(ApiError::invalid(
            field,
            "input_too_long",
            format!(
                "{field} is {chars} characters; this server takes at most {max_input_chars} \
                 (banter serve --max-input-chars)"
            ),
        ));
    }
    Ok(chars)
}

/// `requested` clamped to the speeds Kokoro speaks, and the request when it was outside them
/// (for [`speed_note`]).
pub(crate) fn kokoro_speed(requested: f32) -> (f32, Option<f32>) {
    let (low, high) = (*engine::SPEED_RANGE.start(), *engine::SPEED_RANGE.end());
    let outside = requested < low || requested > high;
    (requested.clamp(low, high), outside.then_some(requested))
}

/// The engine's spelling of `name`: OpenAI names mapped, blends normalised. A name that is no
/// voice spelling (`Ben (tuned)`) passes unchanged when the user's library has a voice so
/// called: the backend renders library voices by name.
pub fn resolve_voice(name: &str) -> Result<String, ApiError> {
    let mut spec = match VoiceSpec::parse(name) {
        Ok(spec) => spec,
        Err(e) => {
            let saved = engine::library::Library::open_default()
                .ok()
                .and_then(|lib| lib.get_voice(name).ok().flatten());
            return match saved {
                Some(v) => Ok(v.name),
                None => Err(ApiError::invalid("voice", "invalid_voice", e.to_string())),
            };
        }
    };
    for term in &mut spec.terms {
        let lower = term.voice.to_ascii_lowercase();
        if let Some((_, stock)) = OPENAI_VOICES.iter().find(|(alias, _)| *alias == lower) {
            (*stock).clone_into(&mut term.voice);
        }
    }
    Ok(spec.canonical())
}

pub async fn speech(State(state): State<AppState>, request: Request) -> Result<Response, ApiError> {
    let started = Instant::now();
    let (body, busy) = read_body(&state, request).await?;
    let params = SpeechParams::parse(&body, state.limits.max_input_chars)?;
    let content_type = if params.sse {
        "text/event-stream"
    } else {
        params.format.content_type()
    };
    let stream = Streamed {
        job: params.job,
        encoder: params.encoder,
        sse: params.sse,
        input_chars: params.input_chars,
        content_type,
    };
    let mut response = stream.respond(&state, busy, started).await?;
    add_notes(&mut response, &params.language_notes);
    if let Some(note) = params.clamped_from.and_then(speed_note) {
        response.headers_mut().insert("x-banter-speed", note);
    }
    if params.ignored_instructions {
        response.headers_mut().insert(
            "x-banter-ignored",
            HeaderValue::from_static(
                "instructions (Kokoro takes no prompt: the voice and speed set how it sounds)",
            ),
        );
    }
    Ok(response)
}

/// A speech job answered as a streamed body: OpenAI's route and ElevenLabs' HTTP ones.
pub(crate) struct Streamed {
    pub job: SpeechJob,
    pub encoder: Box<dyn ChunkEncoder>,
    pub sse: bool,
    pub input_chars: usize,
    pub content_type: &'static str,
}

impl Streamed {
    /// Queues the job and answers once its first audio is out (so a job that fails before any
    /// audio still gets a JSON error), then streams the rest as it is made.
    pub(crate) async fn respond(
        self,
        state: &AppState,
        busy: Option<BusyGuard>,
        started: Instant,
    ) -> Result<Response, ApiError> {
        let slot = job_slot(state)?;
        let waiting = state.metrics.queue_depth.enter();
        let mut events = start_job(state, self.job).await?;
        let first = events.recv().await;
        drop(waiting);
        let first = match first {
            Some(AudioEvent::Failed(e)) => return Err(backend_error(e)),
            None => return Err(backend_error(BackendError::Stopped)),
            Some(event) => event,
        };
        state.metrics.record_ttfa(started.elapsed());
        tracing::debug!(
            ttfa_ms = started.elapsed().as_millis(),
            content_type = self.content_type,
            "first audio"
        );
        let stream = AudioBody::new(
            state.clone(),
            events,
            first,
            self.encoder,
            self.sse,
            self.input_chars,
            (slot, busy),
        );
        let mut response = Response::new(Body::from_stream(stream));
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(self.content_type),
        );
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        Ok(response)
    }
}

/// Queues `job` with the backend. `start` phonemizes (CPU work, under espeak's process-wide
/// lock): off the async threads, as the dialogue route plans its script.
pub(crate) async fn start_job(
    state: &AppState,
    job: SpeechJob,
) -> Result<mpsc::Receiver<AudioEvent>, ApiError> {
    let shared = state.clone();
    let started_job = tokio::task::spawn_blocking(move || shared.backend.start(job))
        .await
        .map_err(|e| backend_error(BackendError::Internal(format!("starting speech: {e}"))))?;
    started_job.map_err(backend_error)
}

/// The `x-banter-speed` header for a speed `requested` outside Kokoro's range.
pub(crate) fn speed_note(requested: f32) -> Option<HeaderValue> {
    let (low, high) = (*engine::SPEED_RANGE.start(), *engine::SPEED_RANGE.end());
    let note = format!(
        // Header values are visible ASCII: a dash outside it made the header vanish.
        "{} (requested {requested}, Kokoro speaks {low} to {high})",
        requested.clamp(low, high)
    );
    HeaderValue::from_str(&note).ok()
}

/// The request body, read whole within the body limit (413 beyond it), and the connection's
/// busy guard, held while the answer streams so the idle timeout leaves the connection alone.
pub(crate) async fn read_body(
    state: &AppState,
    request: Request,
) -> Result<(Bytes, Option<BusyGuard>), ApiError> {
    let busy = request
        .extensions()
        .get::<ConnectInfo<Connection>>()
        .map(|c| c.0.busy());
    let body = Bytes::from_request(request, &())
        .await
        .map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::too_large(state.policy.body_limit)
            } else {
                ApiError::bad_request("unreadable_body", rejection.body_text())
            }
        })?;
    Ok((body, busy))
}

/// A place among the jobs running at once, or 429 with Retry-After when they are all taken.
pub(crate) fn job_slot(state: &AppState) -> Result<JobSlot, ApiError> {
    state.jobs.acquire(state.limits.max_jobs).ok_or_else(|| {
        state.metrics.rejected_busy.fetch_add(1, Ordering::Relaxed);
        let queued = state.limits.max_jobs;
        ApiError::busy(queued, retry_after(queued))
    })
}

pub(crate) fn retry_after(queued: usize) -> u32 {
    // About one short job per second leaves the queue; never tell a client to wait long.
    (queued / 8).clamp(1, 30) as u32
}

pub(crate) fn backend_error(e: BackendError) -> ApiError {
    match e {
        BackendError::Input { field, message } => {
            ApiError::invalid(field, "invalid_input", message)
        }
        BackendError::Busy { queued } => ApiError::busy(queued, retry_after(queued)),
        BackendError::Stopped => ApiError::unavailable("the speech engine has stopped"),
        BackendError::Internal(message) => {
            tracing::error!("speech failed: {message}");
            ApiError::internal("speech synthesis failed; the server log has details")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_speed_note_is_a_valid_header() {
        let note = speed_note(3.0).expect("a header value");
        assert_eq!(
            note.to_str().expect("visible ASCII"),
            "2 (requested 3, Kokoro speaks 0.5 to 2)"
        );
    }

    fn parse(json: &str) -> Result<SpeechParams, ApiError> {
        SpeechParams::parse(json.as_bytes(), 20)
    }

    fn code(json: &str) -> &'static str {
        parse(json).err().map_or("ok", |e| e.code)
    }

    #[test]
    fn openai_voices_map_inside_blends() {
        assert_eq!(resolve_voice("alloy").expect("voice"), "af_alloy");
        assert_eq!(resolve_voice("Nova").expect("voice"), "af_nova");
        assert_eq!(resolve_voice("af_sky").expect("voice"), "af_sky");
        assert_eq!(
            resolve_voice("af_bella(2)+echo(2)").expect("voice"),
            "af_bella:0.5+am_echo:0.5"
        );
        assert_eq!(
            resolve_voice("af_bella:0.7+af_sky:0.3").expect("voice"),
            "af_bella:0.7+af_sky:0.3"
        );
        assert!(resolve_voice("af_bella:+").is_err());
    }

    #[test]
    fn validation() {
        let ok = r#"{"model":"tts-1","input":"Hi","voice":"alloy"}"#;
        let p = parse(ok).expect("valid");
        assert_eq!(p.job.voice, "af_alloy");
        assert!((p.job.speed - 1.0).abs() < f32::EPSILON);
        assert!(!p.sse);
        assert_eq!(
            code(r#"{"model":"tts-2","input":"Hi","voice":"alloy"}"#),
            "model_not_found"
        );
        assert_eq!(
            code(r#"{"model":"kokoro","input":"  ","voice":"alloy"}"#),
            "empty_input"
        );
        assert_eq!(
            code(r#"{"model":"kokoro","input":"123456789012345678901","voice":"alloy"}"#),
            "input_too_long"
        );
        assert_eq!(
            code(r#"{"model":"kokoro","input":"12345678901234567890","voice":"alloy"}"#),
            "ok"
        );
        assert_eq!(
            code(r#"{"model":"kokoro","voice":"alloy"}"#),
            "invalid_json"
        );
        assert_eq!(code("not json"), "invalid_json");
        assert_eq!(
            code(r#"{"model":"kokoro","input":"Hi","voice":"alloy","response_format":"aac"}"#),
            "unsupported_response_format"
        );
        assert_eq!(
            code(r#"{"model":"kokoro","input":"Hi","voice":"alloy","stream_format":"ws"}"#),
            "invalid_stream_format"
        );
        assert_eq!(
            code(r#"{"model":"kokoro","input":"Hi","voice":"alloy","speed":4.5}"#),
            "invalid_speed"
        );
        assert_eq!(
            code(r#"{"model":"kokoro","input":"Hi","voice":"alloy","speed":0.2}"#),
            "invalid_speed"
        );
        assert_eq!(
            code(r#"{"model":"kokoro","input":"Hi","voice":{"id":"echo"}}"#),
            "ok"
        );
    }

    /// A backend that notes the thread `start` runs on and refuses every job as bad input.
    struct ThreadRecorder(std::sync::Arc<std::sync::Mutex<Option<std::thread::ThreadId>>>);

    impl crate::server::backend::SpeechBackend for ThreadRecorder {
        fn start(
            &self,
            _job: SpeechJob,
        ) -> Result<tokio::sync::mpsc::Receiver<AudioEvent>, BackendError> {
            *self.0.lock().expect("lock") = Some(std::thread::current().id());
            Err(BackendError::Input {
                field: "voice",
                message: "unknown voice".to_owned(),
            })
        }

        fn start_dialogue(
            &self,
            _job: crate::server::backend::DialogueJob,
        ) -> Result<tokio::sync::mpsc::Receiver<crate::server::backend::DialogueEvent>, BackendError>
        {
            Err(BackendError::Stopped)
        }

        fn voices(&self) -> Vec<engine::voice::StockVoice> {
            Vec::new()
        }
    }

    /// `start` phonemizes, CPU work under espeak's process-wide lock: it must not run on the
    /// thread that drives the async tasks (here the test's own, a current-thread runtime), and
    /// its errors still map as before.
    #[tokio::test(flavor = "current_thread")]
    async fn the_backend_starts_off_the_async_thread() {
        let ran_on = std::sync::Arc::default();
        let state = crate::server::Shared::for_tests(Box::new(ThreadRecorder(
            std::sync::Arc::clone(&ran_on),
        )));
        let request = Request::builder()
            .method("POST")
            .uri("/v1/audio/speech")
            .body(Body::from(
                r#"{"model":"kokoro","input":"Hi","voice":"alloy"}"#,
            ))
            .expect("request");
        let Err(e) = speech(State(state), request).await else {
            panic!("the backend refused the job, so must the route");
        };
        assert_eq!(
            (e.status, e.code, e.param),
            (StatusCode::BAD_REQUEST, "invalid_input", Some("voice"))
        );
        let ran_on = ran_on.lock().expect("lock").expect("start was called");
        assert_ne!(ran_on, std::thread::current().id());
    }

    #[test]
    fn speed_is_clamped_to_kokoro() {
        let p =
            parse(r#"{"model":"kokoro","input":"Hi","voice":"alloy","speed":4.0}"#).expect("ok");
        assert!((p.job.speed - 2.0).abs() < f32::EPSILON);
        assert_eq!(p.clamped_from, Some(4.0));
        let p = parse(r#"{"model":"kokoro","input":"Hi","voice":"alloy","speed":0.25,"stream_format":"sse","response_format":"pcm"}"#).expect("ok");
        assert!((p.job.speed - 0.5).abs() < f32::EPSILON);
        assert!(p.sse);
        assert_eq!(p.format, AudioFormat::Pcm);
    }

    #[test]
    fn instructions_are_accepted_and_said_to_be_ignored() {
        let with = r#"{"model":"gpt-4o-mini-tts","input":"Hi","voice":"coral","instructions":"Speak cheerfully."}"#;
        assert!(parse(with).expect("ok").ignored_instructions);
        let blank = r#"{"model":"tts-1","input":"Hi","voice":"coral","instructions":" "}"#;
        assert!(!parse(blank).expect("ok").ignored_instructions);
    }
}
