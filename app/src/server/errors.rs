//! The API's one error type. Every failure a client can see becomes OpenAI's error body,
//! `{"error": {"message", "type", "param", "code"}}`, so OpenAI client libraries raise their usual
//! exceptions with our message in them. Internal details are logged, never sent.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;

/// An error as the client sees it: status, OpenAI-style type and code, a human message.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{status}: {message}")]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    /// OpenAI's `type`: `invalid_request_error`, `authentication_error`, `server_error`...
    pub kind: &'static str,
    /// A stable machine-readable code: `invalid_api_key`, `input_too_long`...
    pub code: &'static str,
    /// The request field at fault, when there is one.
    pub param: Option<&'static str>,
    /// Seconds for a `Retry-After` header (429 only).
    pub retry_after: Option<u32>,
}

impl ApiError {
    fn new(status: StatusCode, kind: &'static str, code: &'static str, message: String) -> Self {
        Self {
            status,
            message,
            kind,
            code,
            param: None,
            retry_after: None,
        }
    }

    /// 400: the request body is wrong in field `param`.
    pub fn invalid(param: &'static str, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            param: Some(param),
            ..Self::new(
                StatusCode::BAD_REQUEST,
                "invalid_request_error",
                code,
                message.into(),
            )
        }
    }

    /// 400 without a single field to blame (malformed JSON, wrong content type).
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            code,
            message.into(),
        )
    }

    pub fn unauthorized() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "authentication_error",
            "invalid_api_key",
            "missing or wrong API token: send `Authorization: Bearer TOKEN` or \
             `xi-api-key: TOKEN` (`banter serve --show-token` prints it)"
                .into(),
        )
    }

    pub fn forbidden(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "permission_error",
            code,
            message.into(),
        )
    }

    /// 421: the `Host` header names something other than this loopback server (DNS rebinding).
    pub fn misdirected(host: &str) -> Self {
        Self::new(
            StatusCode::MISDIRECTED_REQUEST,
            "invalid_request_error",
            "host_not_allowed",
            format!(
                "Host `{host}` is not this server; use localhost, 127.0.0.1 or [::1] \
                 (requests for other names are refused to stop DNS rebinding)"
            ),
        )
    }

    pub fn too_large(limit: usize) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "invalid_request_error",
            "body_too_large",
            format!("the request body is larger than {limit} bytes"),
        )
    }

    /// 429 with `Retry-After`: too many speech jobs are queued.
    pub fn busy(queued: usize, retry_after: u32) -> Self {
        Self {
            retry_after: Some(retry_after),
            ..Self::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limit_error",
                "queue_full",
                format!("{queued} speech jobs are already waiting; retry in {retry_after} s"),
            )
        }
    }

    pub fn not_found(path: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "invalid_request_error",
            "not_found",
            format!("no route {path}; see GET /v1/models, GET /v1/voices, POST /v1/audio/speech"),
        )
    }

    /// 500. `message` must not leak internals; log them where the error is made.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            "internal_error",
            message.into(),
        )
    }

    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "server_error",
            "unavailable",
            message.into(),
        )
    }

    /// The JSON body, also used inside SSE `error` events.
    #[must_use]
    pub fn body(&self) -> serde_json::Value {
        serde_json::json!({
            "error": {
                "message": self.message,
                "type": self.kind,
                "param": self.param,
                "code": self.code,
            }
        })
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, Json(self.body())).into_response();
        if let Some(seconds) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"banter\""),
            );
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_has_openai_shape() {
        let body = ApiError::invalid("input", "input_too_long", "too long").body();
        assert_eq!(body["error"]["message"], "too long");
        assert_eq!(body["error"]["type"], "invalid_request_error");
        assert_eq!(body["error"]["param"], "input");
        assert_eq!(body["error"]["code"], "input_too_long");
    }

    #[test]
    fn busy_sets_retry_after() {
        let response = ApiError::busy(64, 2).into_response();
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(response.headers()[header::RETRY_AFTER], "2");
    }
}
