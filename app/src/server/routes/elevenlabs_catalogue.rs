//! ElevenLabs' catalogue and account routes, answered for this one local engine:
//! `GET /v1/voices/{voice_id}`, `/v1/voices/{voice_id}/settings`, `/v1/voices/settings/default`,
//! `GET /v2/voices`, `GET /v1/user`, `/v1/user/subscription`, and `GET /v1/models` in
//! ElevenLabs' shape when the client sends `xi-api-key`.
//!
//! Why: ElevenLabs' SDKs and the integrations built on them (home automation, chat and no-code
//! front ends) check the key with `user.get()` or the subscription, list models, and look the
//! configured voice up before they speak. Each of those was a 404, so such a client stopped at
//! its set-up screen although the speech routes would have served it.
//!
//! Decisions, each visible to clients:
//! - A voice looked up by id is a Banter voice (stock, blend, OpenAI name, library voice) or one
//!   of ElevenLabs' premade ids; a premade one is answered under its own name with the stock
//!   voice that speaks for it in `description` and `labels.banter_voice`, never silently.
//!   Anything else is a 404 naming the id.
//! - Voice settings are ElevenLabs' defaults: Kokoro has no stability or similarity controls;
//!   only `speed` acts, per request.
//! - The account is this machine's: tier `banter-local`, no quota (`character_count` 0, a
//!   limit no episode reaches), no cloning slots; `xi_api_key` is never echoed.
//! - `GET /v1/models` answers OpenAI's `{object, data}` list unless `xi-api-key` is sent (an
//!   ElevenLabs client expects a bare array of `model_id`s). The ids listed are Kokoro's and the
//!   ElevenLabs ids clients default to; `description` says each is spoken by Kokoro-82M, and the
//!   speech routes accept any `model_id`.

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use engine::assets::manifest::KOKORO_V1;
use engine::phonemes::Language;
use engine::voice::{StockVoice, VoiceSpec};
use serde_json::{json, Value};

use super::speech::resolve_voice;
use crate::server::elevenlabs_voices;
use crate::server::errors::ApiError;
use crate::server::AppState;

/// ElevenLabs ids listed beside Kokoro's: the ones its SDK examples and integrations default to.
const ELEVENLABS_MODEL_IDS: [&str; 4] = [
    "eleven_multilingual_v2",
    "eleven_flash_v2_5",
    "eleven_turbo_v2_5",
    "eleven_v3",
];

/// Kokoro's languages as ElevenLabs lists a model's (`language_id`, `name`).
const LANGUAGES: [(&str, &str); 8] = [
    ("en", "English"),
    ("es", "Spanish"),
    ("fr", "French"),
    ("hi", "Hindi"),
    ("it", "Italian"),
    ("pt", "Portuguese"),
    ("ja", "Japanese"),
    ("zh", "Chinese"),
];

/// ElevenLabs' default voice settings; only `speed` changes how Banter speaks.
fn default_settings() -> Value {
    json!({
        "stability": 0.5,
        "similarity_boost": 0.75,
        "style": 0.0,
        "use_speaker_boost": true,
        "speed": 1.0,
    })
}

/// A stock voice as ElevenLabs lists one.
pub fn stock_voice(v: &StockVoice) -> Value {
    let described = serde_json::to_value(v).unwrap_or_default();
    let accent = match v.language {
        Language::EnUs => Some("american"),
        Language::EnGb => Some("british"),
        _ => None,
    };
    json!({
        "voice_id": v.name,
        "name": v.name,
        "category": "premade",
        "labels": {
            "language": described["language"],
            "gender": described["gender"],
            "accent": accent,
        },
    })
}

/// The voice a client asks for by id, as ElevenLabs describes one.
fn voice_object(voice_id: &str) -> Result<Value, ApiError> {
    if let Some((stock, name)) = elevenlabs_voices::stand_in(voice_id) {
        let mut voice = StockVoice::from_name(stock).map_or_else(|| json!({}), |v| stock_voice(&v));
        voice["voice_id"] = voice_id.into();
        voice["name"] = name.into();
        voice["labels"]["banter_voice"] = stock.into();
        voice["description"] =
            format!("ElevenLabs' {name}, spoken here by Banter's {stock}").into();
        voice["settings"] = default_settings();
        return Ok(voice);
    }
    let resolved = resolve_voice(voice_id).map_err(|_| voice_not_found(voice_id))?;
    if !exists(&resolved) {
        return Err(voice_not_found(voice_id));
    }
    let mut voice = if let Some(stock) = StockVoice::from_name(&resolved) {
        stock_voice(&stock)
    } else {
        let language = VoiceSpec::parse(&resolved).map(|s| s.language().to_string());
        json!({
            "voice_id": voice_id,
            "name": resolved,
            "category": "generated",
            "labels": { "language": language.ok() },
        })
    };
    voice["voice_id"] = voice_id.into();
    if resolved != voice_id {
        voice["labels"]["banter_voice"] = resolved.into();
    }
    voice["settings"] = default_settings();
    Ok(voice)
}

/// Whether every voice a (resolved) spec names is a stock voice or one in the library: a name
/// that merely parses is not a voice.
fn exists(resolved: &str) -> bool {
    let Ok(spec) = VoiceSpec::parse(resolved) else {
        return false;
    };
    let stock = KOKORO_V1.voices.names;
    let library = std::cell::OnceCell::new();
    spec.terms.iter().all(|term| {
        stock.contains(&term.voice.as_str())
            || library
                .get_or_init(|| engine::library::Library::open_default().ok())
                .as_ref()
                .is_some_and(|lib| lib.get_voice(&term.voice).ok().flatten().is_some())
    })
}

fn voice_not_found(voice_id: &str) -> ApiError {
    ApiError {
        status: StatusCode::NOT_FOUND,
        ..ApiError::invalid(
            "voice_id",
            "voice_not_found",
            format!(
                "no voice `{voice_id}`: use a Banter voice (GET /v1/voices) or one of \
                 ElevenLabs' premade voice ids"
            ),
        )
    }
}

/// `GET /v1/voices/{voice_id}`.
pub async fn voice(Path(voice_id): Path<String>) -> Result<Json<Value>, ApiError> {
    voice_object(&voice_id).map(Json)
}

/// `GET /v1/voices/{voice_id}/settings`: the defaults, for a voice that exists.
pub async fn voice_settings(Path(voice_id): Path<String>) -> Result<Json<Value>, ApiError> {
    voice_object(&voice_id)?;
    Ok(Json(default_settings()))
}

/// `GET /v1/voices/settings/default`.
pub async fn default_voice_settings() -> Json<Value> {
    Json(default_settings())
}

/// `GET /v2/voices`: the stock voices, or those `voice_ids` names (premade ids too), filtered by
/// `search` (in the id or name, or starting a label), `gender`, `accent`, `language` and
/// `category`; `page_size` at a time (ElevenLabs' default 10, at most 100), the next page named
/// by `next_page_token`. Its other filters describe voices Banter has none of and are ignored.
pub async fn search_voices(
    State(state): State<AppState>,
    Query(query): Query<Vec<(String, String)>>,
) -> Result<Json<Value>, ApiError> {
    let one = |key: &str| {
        query
            .iter()
            .find(|(k, v)| k == key && !v.is_empty())
            .map(|(_, v)| v.to_lowercase())
    };
    let ids: Vec<&str> = query
        .iter()
        .filter(|(k, _)| k == "voice_ids" || k == "voice_ids[]")
        .flat_map(|(_, v)| v.split(','))
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .collect();
    let listed: Vec<Value> = if ids.is_empty() {
        state.backend.voices().iter().map(stock_voice).collect()
    } else {
        ids.iter().filter_map(|id| voice_object(id).ok()).collect()
    };
    let label = |v: &Value, key: &str| v["labels"][key].as_str().map(str::to_lowercase);
    let search = one("search");
    let (gender, accent, language) = (one("gender"), one("accent"), one("language"));
    let category = one("category");
    let matching: Vec<Value> = listed
        .into_iter()
        .filter(|v| search.as_ref().is_none_or(|s| matches_search(v, s)))
        .filter(|v| {
            gender
                .as_ref()
                .is_none_or(|g| label(v, "gender").as_ref() == Some(g))
        })
        .filter(|v| {
            accent
                .as_ref()
                .is_none_or(|a| label(v, "accent").as_ref() == Some(a))
        })
        .filter(|v| {
            language
                .as_ref()
                .is_none_or(|l| label(v, "language").is_some_and(|have| have.starts_with(l)))
        })
        .filter(|v| {
            category
                .as_ref()
                .is_none_or(|c| v["category"].as_str() == Some(c.as_str()))
        })
        .collect();
    let page_size = one("page_size")
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(10)
        .clamp(1, 100);
    let start = match one("next_page_token") {
        None => 0,
        Some(token) => token.parse::<usize>().map_err(|_| {
            ApiError::invalid(
                "next_page_token",
                "invalid_page_token",
                format!("next_page_token `{token}` is not one this server gave"),
            )
        })?,
    };
    let end = (start + page_size).min(matching.len());
    let page = matching.get(start..end).unwrap_or_default().to_vec();
    let has_more = end < matching.len();
    Ok(Json(json!({
        "voices": page,
        "has_more": has_more,
        "total_count": matching.len(),
        "next_page_token": has_more.then(|| end.to_string()),
    })))
}

/// Whether a listed voice answers `needle` (lower case): in its id or name, or as the start of a
/// label ("british", "en" for "en-us"; "male" is not "female").
fn matches_search(voice: &Value, needle: &str) -> bool {
    let text = |v: &Value| v.as_str().map(str::to_lowercase);
    let named = ["voice_id", "name"]
        .iter()
        .filter_map(|k| text(&voice[*k]))
        .any(|s| s.contains(needle));
    let labelled = voice["labels"].as_object().is_some_and(|labels| {
        labels
            .values()
            .filter_map(text)
            .any(|s| s.starts_with(needle))
    });
    named || labelled
}

fn subscription() -> Value {
    json!({
        "tier": "banter-local",
        "character_count": 0,
        "character_limit": 1_000_000_000u64,
        "can_extend_character_limit": false,
        "allowed_to_extend_character_limit": false,
        "next_character_count_reset_unix": 0,
        "voice_limit": 0,
        "max_voice_add_edits": 0,
        "voice_add_edit_counter": 0,
        "professional_voice_limit": 0,
        "can_extend_voice_limit": false,
        "can_use_instant_voice_cloning": false,
        "can_use_professional_voice_cloning": false,
        "currency": "usd",
        "status": "active",
        "billing_period": "monthly_period",
    })
}

/// `GET /v1/user/subscription`.
pub async fn user_subscription() -> Json<Value> {
    Json(subscription())
}

/// `GET /v1/user`.
pub async fn user() -> Json<Value> {
    Json(json!({
        "user_id": "banter-local",
        "first_name": "Banter",
        "subscription": subscription(),
        "is_new_user": false,
        "can_use_delayed_payment_methods": false,
        "is_onboarding_completed": true,
        "is_onboarding_checklist_completed": true,
        "created_at": 0,
    }))
}

/// `GET /v1/models` for an ElevenLabs client: a bare array of models.
pub fn elevenlabs_models(headers: &HeaderMap) -> Option<Response> {
    headers.get("xi-api-key")?;
    let languages: Vec<Value> = LANGUAGES
        .iter()
        .map(|(id, name)| json!({ "language_id": id, "name": name }))
        .collect();
    let model = |id: &str, name: &str, description: &str| {
        json!({
            "model_id": id,
            "name": name,
            "description": description,
            "can_do_text_to_speech": true,
            "can_do_voice_conversion": false,
            "can_be_finetuned": false,
            "can_use_style": false,
            "can_use_speaker_boost": false,
            "serves_pro_voices": false,
            "requires_alpha_access": false,
            "languages": languages,
        })
    };
    let mut models = vec![model("kokoro", "Kokoro-82M", "Banter's own model")];
    models.extend(ELEVENLABS_MODEL_IDS.iter().map(|id| {
        model(
            id,
            id,
            "accepted for ElevenLabs clients; Banter speaks Kokoro-82M for it",
        )
    }));
    Some(Json(Value::Array(models)).into_response())
}
