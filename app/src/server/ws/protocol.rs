//! ElevenLabs' text-streaming messages: what clients send, what the server answers, and the
//! query parameters of the socket's URL. Field names follow ElevenLabs' published shapes;
//! fields Banter has no use for (`stability`, `pronunciation_dictionary_locators`, …) are
//! accepted and ignored, as unknown fields are.

use serde::Deserialize;

/// Close codes (RFC 6455 §7.4.1) the server ends a socket with.
pub mod close {
    /// Everything was said (single context), or the client asked (`close_socket`).
    pub const NORMAL: u16 = 1000;
    /// A binary frame: the protocol is JSON text.
    pub const UNSUPPORTED: u16 = 1003;
    /// A text frame that is not UTF-8.
    pub const INVALID_DATA: u16 = 1007;
    /// Wrong or missing token, or a limit broken (contexts, buffered text, inactivity).
    pub const POLICY: u16 = 1008;
    /// A message over the size limit.
    pub const TOO_BIG: u16 = 1009;
    /// The engine failed or stopped.
    pub const INTERNAL: u16 = 1011;
    /// The speech queue is full: try again shortly.
    pub const TRY_LATER: u16 = 1013;
}

/// Any client message; which fields are set says what it is. `try_trigger_generation` is
/// accepted and has nothing to do: Banter starts speaking as soon as the text can be cut
/// ([`engine::follow::Chunker`]).
#[derive(Debug, Default, Deserialize)]
pub struct ClientMessage {
    pub text: Option<String>,
    pub voice_settings: Option<VoiceSettings>,
    pub generation_config: Option<GenerationConfig>,
    pub flush: Option<bool>,
    pub xi_api_key: Option<String>,
    pub authorization: Option<String>,
    pub context_id: Option<String>,
    pub close_context: Option<bool>,
    pub close_socket: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
pub struct VoiceSettings {
    /// Honoured (clamped to Kokoro's range); ElevenLabs' 0.7–1.2 lies inside it.
    pub speed: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
pub struct GenerationConfig {
    pub chunk_length_schedule: Option<Vec<f64>>,
}

impl ClientMessage {
    /// Parses one text frame; the error says what is wrong with it.
    pub fn parse(frame: &str) -> Result<Self, String> {
        serde_json::from_str(frame).map_err(|e| format!("not a valid message: {e}"))
    }

    /// The token the message carries (`xi_api_key`, or `authorization: "Bearer …"`).
    #[must_use]
    pub fn token(&self) -> Option<&str> {
        if let Some(key) = &self.xi_api_key {
            return Some(key.trim());
        }
        let auth = self.authorization.as_deref()?.trim();
        Some(match auth.get(..7) {
            Some(scheme) if scheme.eq_ignore_ascii_case("bearer ") => auth[7..].trim(),
            _ => auth,
        })
    }
}

/// Character alignment of one audio message: times in ms from the start of its audio.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Alignment {
    pub chars: Vec<char>,
    pub starts_ms: Vec<u64>,
    pub durations_ms: Vec<u64>,
}

impl Alignment {
    fn json(&self) -> serde_json::Value {
        let chars: Vec<String> = self.chars.iter().map(char::to_string).collect();
        // Both spellings of the durations: ElevenLabs' documents say `charDurationsMs`, its
        // servers and some clients `charsDurationsMs`.
        serde_json::json!({
            "chars": chars,
            "charStartTimesMs": self.starts_ms,
            "charDurationsMs": self.durations_ms,
            "charsDurationsMs": self.durations_ms,
        })
    }
}

/// An audio message. `alignment` is also sent as `normalizedAlignment`: Banter aligns the text
/// as written (its reading of numbers and abbreviations is not exposed character by character).
#[must_use]
pub fn audio(b64: &str, alignment: Option<&Alignment>, context: Option<&str>) -> String {
    let alignment = alignment.map(Alignment::json);
    let mut msg = serde_json::json!({
        "audio": b64,
        "isFinal": false,
        "normalizedAlignment": alignment,
        "alignment": alignment,
    });
    with_context(&mut msg, context);
    msg.to_string()
}

/// The last message of a context (or of the single-context socket).
#[must_use]
pub fn final_message(context: Option<&str>) -> String {
    let mut msg = serde_json::json!({
        "audio": null,
        "isFinal": true,
        "normalizedAlignment": null,
        "alignment": null,
    });
    with_context(&mut msg, context);
    msg.to_string()
}

/// An error, in ElevenLabs' shape (`message`, `error`, `code`).
#[must_use]
pub fn error(code: &str, message: &str, close_code: Option<u16>, context: Option<&str>) -> String {
    let mut msg = serde_json::json!({
        "message": message,
        "error": code,
        "code": close_code,
    });
    with_context(&mut msg, context);
    msg.to_string()
}

fn with_context(msg: &mut serde_json::Value, context: Option<&str>) {
    if let (Some(map), Some(id)) = (msg.as_object_mut(), context) {
        map.insert("contextId".into(), id.into());
        map.insert("context_id".into(), id.into());
    }
}

/// The socket URL's query: `output_format`, `inactivity_timeout`, `auto_mode` (and
/// `language_code`, checked against the voice before the upgrade); the rest (`model_id`,
/// `sync_alignment`, `enable_ssml_parsing`, …) is accepted and ignored.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub output_format: String,
    pub inactivity_secs: u64,
    pub auto_mode: bool,
}

/// ElevenLabs' default inactivity timeout, and the most it allows.
pub const INACTIVITY_DEFAULT: u64 = 20;
pub const INACTIVITY_MAX: u64 = 180;

impl Query {
    pub fn parse(pairs: &std::collections::HashMap<String, String>) -> Result<Self, String> {
        let inactivity_secs = match pairs.get("inactivity_timeout") {
            None => INACTIVITY_DEFAULT,
            Some(v) => match v.parse::<u64>() {
                Ok(n) if (1..=INACTIVITY_MAX).contains(&n) => n,
                _ => {
                    return Err(format!(
                        "inactivity_timeout `{v}` is not a whole number of seconds from 1 to \
                         {INACTIVITY_MAX}"
                    ))
                }
            },
        };
        let auto_mode = match pairs.get("auto_mode").map(|v| v.to_ascii_lowercase()) {
            None => false,
            Some(v) if v == "true" || v == "1" => true,
            Some(v) if v == "false" || v == "0" => false,
            Some(v) => return Err(format!("auto_mode `{v}` is not true or false")),
        };
        Ok(Self {
            output_format: pairs
                .get("output_format")
                .cloned()
                .unwrap_or_else(|| "mp3_44100_128".into()),
            inactivity_secs,
            auto_mode,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_parse_with_unknown_fields_and_nulls() {
        let m = ClientMessage::parse(
            r#"{"text":" ","voice_settings":{"speed":1.1,"stability":null,"style":0.3},
               "generation_config":{"chunk_length_schedule":[50]},"xi_api_key":"k",
               "pronunciation_dictionary_locators":[],"whatever":{"x":1}}"#,
        )
        .expect("parses");
        assert_eq!(m.text.as_deref(), Some(" "));
        assert_eq!(m.voice_settings.as_ref().and_then(|v| v.speed), Some(1.1));
        assert_eq!(m.token(), Some("k"));
        let m = ClientMessage::parse(r#"{"authorization":"Bearer  abc "}"#).expect("parses");
        assert_eq!(m.token(), Some("abc"));
        let e = ClientMessage::parse(r#"{"text": 5}"#).expect_err("a number is not text");
        assert!(e.contains("text") || e.contains("string"), "{e}");
        assert!(ClientMessage::parse("{not json").is_err());
    }

    #[test]
    fn server_messages_have_both_spellings() {
        let a = Alignment {
            chars: vec!['H', 'i'],
            starts_ms: vec![0, 40],
            durations_ms: vec![40, 60],
        };
        let v: serde_json::Value =
            serde_json::from_str(&audio("AAA=", Some(&a), Some("c1"))).expect("json");
        assert_eq!(v["contextId"], "c1");
        assert_eq!(v["context_id"], "c1");
        assert_eq!(v["alignment"]["chars"], serde_json::json!(["H", "i"]));
        assert_eq!(
            v["alignment"]["charsDurationsMs"],
            v["alignment"]["charDurationsMs"]
        );
        assert_eq!(v["normalizedAlignment"], v["alignment"]);
        let f: serde_json::Value = serde_json::from_str(&final_message(None)).expect("json");
        assert_eq!(f["isFinal"], true);
        assert!(f.get("contextId").is_none());
    }

    #[test]
    fn query_defaults_and_limits() {
        let q = |pairs: &[(&str, &str)]| {
            Query::parse(
                &pairs
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            )
        };
        let d = q(&[("model_id", "eleven_flash_v2_5")]).expect("defaults");
        assert_eq!(
            (d.output_format.as_str(), d.inactivity_secs, d.auto_mode),
            ("mp3_44100_128", 20, false)
        );
        assert!(q(&[("auto_mode", "true")]).expect("ok").auto_mode);
        assert!(q(&[("inactivity_timeout", "0")]).is_err());
        assert!(q(&[("inactivity_timeout", "181")]).is_err());
        assert!(q(&[("auto_mode", "maybe")]).is_err());
    }
}
