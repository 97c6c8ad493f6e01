//! What the backend reads from the model's `config.pbtxt`, which Triton hands over as JSON
//! (`TRITONBACKEND_ModelConfig`): where the model store is, which precision the products run
//! at, and that the model is decoupled (a stream of responses per request, which is the only
//! way this backend answers; a non-decoupled model would fail at its first request, so it
//! fails at load instead).

use std::path::PathBuf;

use serde_json::Value;

use crate::Failure;

/// The `parameters` key naming the Banter model store (a directory `banter models fetch`
/// filled).
pub const MODEL_STORE: &str = "model_store";
/// The `parameters` key for the products' precision (`BANTER_PRECISION`'s values).
pub const PRECISION: &str = "precision";
/// Values `precision` may take (those `engine::Precision` reads from `BANTER_PRECISION`).
pub const PRECISIONS: [&str; 7] = engine::Precision::NAMES;

/// The model's settings, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelConfig {
    /// The store's directory; `None`: the default store, as `banter` finds it.
    pub model_store: Option<PathBuf>,
    pub precision: Option<String>,
}

impl ModelConfig {
    /// Reads Triton's JSON form of the model configuration.
    pub fn from_json(json: &str) -> Result<Self, Failure> {
        let config: Value = serde_json::from_str(json)
            .map_err(|e| Failure::internal(format!("the model configuration is not JSON: {e}")))?;
        let decoupled = config
            .pointer("/model_transaction_policy/decoupled")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if !decoupled {
            return Err(Failure::invalid(
                "model `banter` streams several responses per request: set \
                 `model_transaction_policy { decoupled: true }` in its config.pbtxt \
                 (`banter triton repo` writes one)",
            ));
        }
        let model_store = parameter(&config, MODEL_STORE)?.map(PathBuf::from);
        let precision = parameter(&config, PRECISION)?
            .map(|p| p.trim().to_ascii_lowercase())
            .filter(|p| !p.is_empty());
        if let Some(p) = &precision {
            if !PRECISIONS.contains(&p.as_str()) {
                return Err(Failure::invalid(format!(
                    "parameter `{PRECISION}`: `{p}` is not one of {}",
                    PRECISIONS.join(", ")
                )));
            }
        }
        Ok(Self {
            model_store,
            precision,
        })
    }
}

/// `parameters { key: "<key>" value { string_value: "…" } }`, absent or empty as `None`.
fn parameter(config: &Value, key: &str) -> Result<Option<String>, Failure> {
    let Some(entry) = config.get("parameters").and_then(|p| p.get(key)) else {
        return Ok(None);
    };
    let value = entry
        .get("string_value")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            Failure::invalid(format!(
                "parameter `{key}` needs a `string_value`, it has {entry}"
            ))
        })?;
    Ok((!value.trim().is_empty()).then(|| value.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(extra: &str) -> String {
        format!(
            r#"{{"name":"banter","backend":"banter","max_batch_size":0,
               "model_transaction_policy":{{"decoupled":true}}{extra}}}"#
        )
    }

    #[test]
    fn reads_the_store_and_precision() {
        let json = config(
            r#","parameters":{"model_store":{"string_value":"/srv/banter/models"},
                 "precision":{"string_value":" F32 "}}"#,
        );
        let c = ModelConfig::from_json(&json).unwrap();
        assert_eq!(c.model_store, Some(PathBuf::from("/srv/banter/models")));
        assert_eq!(c.precision.as_deref(), Some("f32"));
    }

    #[test]
    fn absent_or_empty_parameters_mean_the_defaults() {
        let c = ModelConfig::from_json(&config("")).unwrap();
        assert_eq!(
            c,
            ModelConfig {
                model_store: None,
                precision: None
            }
        );
        let json = config(r#","parameters":{"model_store":{"string_value":""}}"#);
        assert_eq!(ModelConfig::from_json(&json).unwrap().model_store, None);
    }

    #[test]
    fn refuses_what_would_fail_later() {
        let plain = r#"{"name":"banter","parameters":{}}"#;
        let e = ModelConfig::from_json(plain).unwrap_err();
        assert!(e.message.contains("decoupled"), "{e}");
        let json = config(r#","parameters":{"precision":{"string_value":"fp8"}}"#);
        let e = ModelConfig::from_json(&json).unwrap_err();
        assert!(
            e.message.contains("`precision`") && e.message.contains("fp8"),
            "{e}"
        );
        let json = config(r#","parameters":{"model_store":{"int64_value":3}}"#);
        let e = ModelConfig::from_json(&json).unwrap_err();
        assert!(e.message.contains("`model_store`"), "{e}");
    }
}
