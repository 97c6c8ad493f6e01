//! ElevenLabs-compatible text streaming: `GET /v1/text-to-speech/{voice_id}/stream-input` and
//! `/multi-stream-input`, WebSockets on which a client sends text as it is written (an LLM's
//! tokens) and hears it spoken while it is still arriving.
//!
//! Why ElevenLabs' protocol: voice-agent frameworks (pipecat, LiveKit Agents) and the
//! ElevenLabs SDKs already speak it and let the server URL be changed, so pointing them at
//! Banter gives them Kokoro locally with no code of ours on their side.
//!
//! Layout: [`protocol`] is the message shapes, [`session`] one socket's loop and limits,
//! [`context`] one stream of text and its audio, [`align`] cuts the audio into messages whose
//! character alignment covers exactly their audio, [`output`] the `output_format`s. Where the
//! text is cut into pieces to speak is the engine's ([`engine::follow::Chunker`]), and each
//! context is one open stream of the same scheduler every other request uses.
//!
//! Security is the HTTP API's: the Host and Origin checks run on the upgrade request (a web
//! page cannot open a socket to Banter unless its origin was allowed); the token may come as
//! the `xi-api-key` header, an `Authorization: Bearer` header, or, for clients that cannot set
//! headers (browsers), `xi_api_key` / `authorization` in the first message.

mod align;
mod context;
mod output;
mod protocol;
mod session;

pub(crate) use output::{ElevenLabsFormat, Encoder as ElevenLabsEncoder};

use std::collections::HashMap;

use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{ConnectInfo, FromRequestParts, Path, Request, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};

use super::errors::ApiError;
use super::listener::Connection;
use super::token::constant_time_eq;
use super::AppState;

/// The largest message accepted (bytes); larger ones close the socket with 1009.
pub const MAX_MESSAGE_BYTES: usize = 256 * 1024;
/// Contexts open at once on one multi-context socket (ElevenLabs allows 5).
pub const MAX_CONTEXTS: usize = 5;
/// Characters a context may have waiting (buffered or queued, not yet given to the model):
/// about two hours of speech; a client that sends far ahead of what it hears is refused.
pub const MAX_WAITING_CHARS: usize = 100_000;
/// Frames beyond this are refused by the WebSocket library itself (a 1009 without our message).
const FRAME_LIMIT: usize = 4 * 1024 * 1024;

/// The path prefix of both endpoints (the security guard lets their token come later).
pub const PATH_PREFIX: &str = "/v1/text-to-speech/";

/// Whether `path` is one of the streaming endpoints.
#[must_use]
pub fn is_stream_path(path: &str) -> bool {
    path.strip_prefix(PATH_PREFIX).is_some_and(|rest| {
        rest.ends_with("/stream-input") || rest.ends_with("/multi-stream-input")
    })
}

pub async fn stream_input(
    state: State<AppState>,
    voice: Path<String>,
    request: Request,
) -> Response {
    upgrade(state, voice, request, false).await
}

pub async fn multi_stream_input(
    state: State<AppState>,
    voice: Path<String>,
    request: Request,
) -> Response {
    upgrade(state, voice, request, true).await
}

async fn upgrade(
    State(state): State<AppState>,
    Path(voice): Path<String>,
    request: Request,
    multi: bool,
) -> Response {
    match prepare(&state, voice, request, multi).await {
        Ok(response) => response,
        Err(e) => e.into_response(),
    }
}

async fn prepare(
    state: &AppState,
    voice: String,
    request: Request,
    multi: bool,
) -> Result<Response, ApiError> {
    let (mut parts, _) = request.into_parts();
    let busy = parts
        .extensions
        .get::<ConnectInfo<Connection>>()
        .map(|c| c.0.busy());
    let authed = match header_token(&parts.headers) {
        Some(token) if constant_time_eq(token.as_bytes(), state.policy.token.as_bytes()) => true,
        Some(_) => return Err(ApiError::unauthorized()),
        None => false,
    };
    let pairs = query_pairs(&parts.uri);
    let query = protocol::Query::parse(&pairs)
        .map_err(|m| ApiError::invalid("query", "invalid_query", m))?;
    let format = output::ElevenLabsFormat::parse(&query.output_format)
        .map_err(|m| ApiError::invalid("output_format", "invalid_output_format", m))?;
    let ws = WebSocketUpgrade::from_request_parts(&mut parts, state)
        .await
        .map_err(|r| ApiError::bad_request("not_a_websocket", r.body_text()))?;
    // An ElevenLabs premade voice's id is spoken by a stock voice like it, said in a header.
    let stand_in = super::elevenlabs_voices::stand_in(&voice);
    let mut voice = stand_in.map_or(voice, |(stock, _)| stock.to_owned());
    let mut note = stand_in.map(|(stock, name)| super::elevenlabs_voices::note(stock, name));
    // `language_code`: the voice must speak it; a premade stand-in is swapped for one that does.
    if let Some(code) = pairs.get("language_code").filter(|c| !c.is_empty()) {
        // A voice that does not resolve is refused by the session, in the protocol's words.
        if let Ok(resolved) = super::routes::speech::resolve_voice(&voice) {
            let swap = super::elevenlabs_voices::swap_for_language(code, &resolved, stand_in)?;
            if let Some((stock, said)) = swap {
                note = Some(said);
                stock.clone_into(&mut voice);
            }
        }
    }
    let setup = session::Setup {
        voice,
        multi,
        format,
        query,
        authed,
        _busy: busy,
    };
    let state = state.clone();
    let mut response = ws
        .max_message_size(FRAME_LIMIT)
        .max_frame_size(FRAME_LIMIT)
        .on_upgrade(move |socket| session::run(socket, state, setup));
    if let Some(note) = note {
        if let Ok(value) = axum::http::HeaderValue::from_str(&note) {
            response.headers_mut().insert("x-banter-voice", value);
        }
    }
    Ok(response)
}

/// The token of the upgrade request: `xi-api-key`, or `Authorization: Bearer`.
fn header_token(headers: &HeaderMap) -> Option<String> {
    if let Some(key) = headers.get("xi-api-key").and_then(|v| v.to_str().ok()) {
        return Some(key.trim().to_owned());
    }
    let auth = headers.get("authorization")?.to_str().ok()?.trim();
    match auth.get(..7) {
        Some(scheme) if scheme.eq_ignore_ascii_case("bearer ") => Some(auth[7..].trim().to_owned()),
        _ => Some(auth.to_owned()),
    }
}

/// Percent-decoding of a query component (`+` is a space); `None` when malformed.
/// The query of `uri` as decoded pairs (a pair that does not decode is left out).
pub(crate) fn query_pairs(uri: &axum::http::Uri) -> HashMap<String, String> {
    uri.query()
        .map(|q| {
            q.split('&')
                .filter_map(|kv| {
                    let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                    Some((decode(k)?, decode(v)?))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_paths_and_query_decoding() {
        assert!(is_stream_path("/v1/text-to-speech/af_heart/stream-input"));
        assert!(is_stream_path(
            "/v1/text-to-speech/af_bella%3A0.7/multi-stream-input"
        ));
        assert!(!is_stream_path("/v1/text-to-speech/af_heart"));
        assert!(!is_stream_path("/v1/audio/speech"));
        assert_eq!(decode("a%2Bb+c").as_deref(), Some("a+b c"));
        assert_eq!(decode("%zz"), None);
    }
}
