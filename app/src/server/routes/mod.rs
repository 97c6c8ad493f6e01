//! The routes and the small ones' handlers: `/health`, `/metrics`, `/v1/models`, `/v1/voices`
//! (`OpenAI`-style `data` and, for ElevenLabs' clients, `voices` with `voice_id`s). Speech, timed
//! speech, dialogue and ElevenLabs' HTTP speech and dialogue, the ones that do work, live in
//! [`speech`], [`timed`], [`dialogue`], [`elevenlabs`] and [`elevenlabs_dialogue`].

pub mod dialogue;
pub mod elevenlabs;
pub mod elevenlabs_catalogue;
pub mod elevenlabs_dialogue;
pub mod speech;
pub mod timed;

use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, HeaderMap, Uri};
use axum::middleware::{from_fn, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};

use super::errors::ApiError;
use super::listener::mark_busy;
use super::{metrics, security, AppState};

/// Model ids accepted in `model`: Banter's own and OpenAI's TTS names (all mean Kokoro).
pub const MODEL_IDS: [&str; 4] = ["kokoro", "tts-1", "tts-1-hd", "gpt-4o-mini-tts"];

/// The whole API. Layers run outside-in: request counting, then the security guard, then the
/// in-flight marker that keeps busy connections from being idle-closed.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/health", get(health))
        .route("/metrics", get(render_metrics))
        .route("/v1/models", get(models))
        .route("/v1/models/{model_id}", get(model))
        .route("/v1/voices", get(voices))
        .route("/v1/voices/{voice_id}", get(elevenlabs_catalogue::voice))
        .route(
            "/v1/voices/{voice_id}/settings",
            get(elevenlabs_catalogue::voice_settings),
        )
        .route(
            "/v1/voices/settings/default",
            get(elevenlabs_catalogue::default_voice_settings),
        )
        .route("/v2/voices", get(elevenlabs_catalogue::search_voices))
        .route("/v1/user", get(elevenlabs_catalogue::user))
        .route(
            "/v1/user/subscription",
            get(elevenlabs_catalogue::user_subscription),
        )
        .route("/v1/audio/speech", post(speech::speech))
        .route("/v1/audio/speech/timed", post(timed::timed))
        .route("/v1/dialogue", post(dialogue::dialogue))
        .route("/v1/text-to-speech/{voice_id}", post(elevenlabs::speech))
        .route(
            "/v1/text-to-speech/{voice_id}/stream",
            post(elevenlabs::speech),
        )
        .route(
            "/v1/text-to-speech/{voice_id}/with-timestamps",
            post(elevenlabs::with_timestamps),
        )
        .route(
            "/v1/text-to-speech/{voice_id}/stream/with-timestamps",
            post(elevenlabs::stream_with_timestamps),
        )
        .route(
            "/v1/text-to-dialogue",
            post(elevenlabs_dialogue::text_to_dialogue),
        )
        .route(
            "/v1/text-to-dialogue/stream",
            post(elevenlabs_dialogue::text_to_dialogue),
        )
        .route(
            "/v1/text-to-dialogue/with-timestamps",
            post(elevenlabs_dialogue::with_timestamps),
        )
        .route(
            "/v1/text-to-dialogue/stream/with-timestamps",
            post(elevenlabs_dialogue::stream_with_timestamps),
        )
        .route(
            "/v1/text-to-speech/{voice_id}/stream-input",
            get(super::ws::stream_input),
        )
        .route(
            "/v1/text-to-speech/{voice_id}/multi-stream-input",
            get(super::ws::multi_stream_input),
        )
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(state.policy.body_limit))
        .layer(from_fn(mark_busy))
        .layer(from_fn_with_state(state.clone(), security::guard))
        .layer(from_fn_with_state(state.clone(), metrics::count))
        .with_state(state)
}

async fn health() -> impl IntoResponse {
    Json(serde_json::json!({ "status": "ok", "version": env!("CARGO_PKG_VERSION") }))
}

async fn render_metrics(State(state): State<AppState>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render() + &state.backend.metrics_text(),
    )
}

async fn models(headers: HeaderMap) -> Response {
    if let Some(models) = elevenlabs_catalogue::elevenlabs_models(&headers) {
        return models;
    }
    let data: Vec<_> = MODEL_IDS
        .iter()
        .map(|id| {
            serde_json::json!({ "id": id, "object": "model", "created": 0, "owned_by": "banter" })
        })
        .collect();
    Json(serde_json::json!({ "object": "list", "data": data })).into_response()
}

/// `GET /v1/models/{id}` (OpenAI's `models.retrieve`, which some clients check a model with).
async fn model(axum::extract::Path(id): axum::extract::Path<String>) -> Result<Response, ApiError> {
    if !MODEL_IDS.contains(&id.as_str()) {
        return Err(ApiError {
            status: axum::http::StatusCode::NOT_FOUND,
            ..ApiError::invalid(
                "model",
                "model_not_found",
                format!("no model `{id}`; this server has {}", MODEL_IDS.join(", ")),
            )
        });
    }
    let model =
        serde_json::json!({ "id": id, "object": "model", "created": 0, "owned_by": "banter" });
    Ok(Json(model).into_response())
}

async fn voices(State(state): State<AppState>) -> impl IntoResponse {
    let aliases: serde_json::Map<String, serde_json::Value> = speech::OPENAI_VOICES
        .iter()
        .map(|(alias, stock)| ((*alias).to_owned(), (*stock).into()))
        .collect();
    let stock = state.backend.voices();
    // ElevenLabs' clients list voices from the same path, as `voices` with `voice_id`s.
    let eleven: Vec<_> = stock
        .iter()
        .map(elevenlabs_catalogue::stock_voice)
        .collect();
    Json(serde_json::json!({
        "object": "list",
        "data": stock,
        "aliases": aliases,
        "voices": eleven,
    }))
}

async fn not_found(uri: Uri) -> ApiError {
    ApiError::not_found(uri.path())
}
