//! The guard in front of every route: checks that run before any handler, cheapest first.
//!
//! 1. `Host` must name this machine's loopback (`localhost`, `127.0.0.1`, `[::1]`, any port):
//!    a web page that rebinds its own DNS name to 127.0.0.1 still sends its name as `Host`, so
//!    this stops DNS rebinding even though the browser thinks it is same-origin.
//! 2. A browser's cross-origin request carries `Origin` (or `Sec-Fetch-Site`): refused unless
//!    the origin was allowed with `--allow-origin`; CORS preflights are answered only for those.
//! 3. Every route but `/health` needs `Authorization: Bearer TOKEN` (constant-time compare);
//!    the streaming WebSockets take it as a header or in their first message (see `ws`).
//! 4. A declared body larger than the cap is refused before it is read (bodies without a
//!    length are capped while reading, by axum's `DefaultBodyLimit`).

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::errors::ApiError;
use super::token::constant_time_eq;
use super::AppState;

/// Routes anyone on the machine may call without the token.
const PUBLIC_PATHS: [&str; 1] = ["/health"];

/// What the guard checks against; part of the server's configuration.
#[derive(Debug, Clone)]
pub struct Policy {
    pub token: String,
    /// Exact origins (`http://localhost:3000`) whose pages may call the API.
    pub allowed_origins: Vec<String>,
    /// Extra `Host` names accepted besides the loopback ones (the `--listen` address).
    pub extra_hosts: Vec<String>,
    /// Any IP literal is accepted as `Host` (when listening on all interfaces).
    pub any_ip_host: bool,
    pub body_limit: usize,
}

pub async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    match check(&state.policy, &request) {
        Ok(Some(preflight)) => preflight,
        Ok(None) => {
            let origin = request.headers().get(header::ORIGIN).cloned();
            let mut response = next.run(request).await;
            if let Some(origin) = origin {
                add_cors(response.headers_mut(), origin);
            }
            response
        }
        Err(e) => e.into_response(),
    }
}

/// `Ok(Some(response))` answers a CORS preflight; `Ok(None)` lets the request through.
fn check(policy: &Policy, request: &Request) -> Result<Option<Response>, ApiError> {
    let headers = request.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| {
            request
                .uri()
                .authority()
                .map(axum::http::uri::Authority::as_str)
        })
        .unwrap_or("");
    if !host_allowed(policy, host) {
        return Err(ApiError::misdirected(host));
    }
    let origin = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok());
    match origin {
        Some(origin) if !policy.allowed_origins.iter().any(|a| a == origin) => {
            return Err(ApiError::forbidden(
                "origin_not_allowed",
                format!(
                    "requests from web pages at `{origin}` are refused; start the server with \
                     `--allow-origin {origin}` to allow them"
                ),
            ));
        }
        Some(_) => {}
        None => {
            // Browsers that omit Origin (simple no-cors loads) still say where they came from.
            let site = headers
                .get("sec-fetch-site")
                .and_then(|s| s.to_str().ok())
                .unwrap_or("none");
            if matches!(site, "cross-site" | "same-site") {
                return Err(ApiError::forbidden(
                    "cross_site",
                    "cross-site browser requests are refused",
                ));
            }
        }
    }
    if request.method() == Method::OPTIONS {
        if let Some(origin) = headers.get(header::ORIGIN) {
            return Ok(Some(preflight(origin.clone())));
        }
    }
    // The streaming sockets check their own token: as `xi-api-key`, a bearer header, or in
    // the first message (browsers cannot set headers on a WebSocket).
    let path = request.uri().path();
    let checks_own_token = super::ws::is_stream_path(path);
    if !PUBLIC_PATHS.contains(&path) && !checks_own_token && !authorized(headers, &policy.token) {
        return Err(ApiError::unauthorized());
    }
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > policy.body_limit as u64) {
        return Err(ApiError::too_large(policy.body_limit));
    }
    Ok(None)
}

/// `Authorization: Bearer TOKEN`, or `xi-api-key: TOKEN` (how ElevenLabs' clients send it).
fn authorized(headers: &HeaderMap, token: &str) -> bool {
    if let Some(key) = headers.get("xi-api-key") {
        return constant_time_eq(key.as_bytes().trim_ascii(), token.as_bytes());
    }
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return false;
    };
    let value = value.as_bytes();
    let scheme = b"bearer ";
    if value.len() < scheme.len() || !value[..scheme.len()].eq_ignore_ascii_case(scheme) {
        return false;
    }
    constant_time_eq(value[scheme.len()..].trim_ascii(), token.as_bytes())
}

/// True when `host` (a `Host` header: name or address, maybe a port) names this server.
#[must_use]
pub fn host_allowed(policy: &Policy, host: &str) -> bool {
    let name = strip_port(host).to_ascii_lowercase();
    let name = name.strip_suffix('.').unwrap_or(&name);
    if matches!(name, "localhost" | "127.0.0.1" | "[::1]") {
        return true;
    }
    if policy
        .extra_hosts
        .iter()
        .any(|h| h.eq_ignore_ascii_case(name))
    {
        return true;
    }
    policy.any_ip_host
        && name
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok()
}

fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        // [v6]:port
        return host.find(']').map_or(host, |end| &host[..=end]);
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    }
}

fn preflight(origin: HeaderValue) -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    let headers = response.headers_mut();
    add_cors(headers, origin);
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, OPTIONS"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("authorization, content-type"),
    );
    headers.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("600"),
    );
    response
}

/// Only called for an origin the policy allows.
fn add_cors(headers: &mut HeaderMap, origin: HeaderValue) {
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    headers.insert(header::VARY, HeaderValue::from_static("Origin"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;

    fn policy() -> Policy {
        Policy {
            token: "secret".into(),
            allowed_origins: vec!["http://localhost:3000".into()],
            extra_hosts: vec![],
            any_ip_host: false,
            body_limit: 100,
        }
    }

    fn request(method: Method, path: &str, headers: &[(&str, &str)]) -> Request {
        let mut builder = Request::builder().method(method).uri(path);
        for (k, v) in headers {
            builder = builder.header(*k, *v);
        }
        builder.body(Body::empty()).expect("request")
    }

    fn status(result: Result<Option<Response>, ApiError>) -> u16 {
        match result {
            Ok(Some(r)) => r.status().as_u16(),
            Ok(None) => 200,
            Err(e) => e.status.as_u16(),
        }
    }

    #[test]
    fn hosts() {
        let p = policy();
        for ok in [
            "localhost",
            "localhost:8717",
            "LOCALHOST.",
            "127.0.0.1:1",
            "[::1]:8717",
            "[::1]",
        ] {
            assert!(host_allowed(&p, ok), "{ok}");
        }
        for bad in [
            "",
            "evil.example",
            "evil.example:8717",
            "localhost.evil.example",
            "127.0.0.2",
            "[::2]:1",
            "10.0.0.1",
        ] {
            assert!(!host_allowed(&p, bad), "{bad}");
        }
        let all = Policy {
            any_ip_host: true,
            ..policy()
        };
        assert!(host_allowed(&all, "10.0.0.1:80"));
        assert!(host_allowed(&all, "[fe80::1]:80"));
        assert!(!host_allowed(&all, "evil.example"));
    }

    #[test]
    fn checks_in_order() {
        let p = policy();
        let auth = ("authorization", "Bearer secret");
        let host = ("host", "localhost:1");
        let get = |path, headers: &[(&str, &str)]| {
            status(check(&p, &request(Method::GET, path, headers)))
        };
        assert_eq!(get("/v1/models", &[host, auth]), 200);
        assert_eq!(
            get("/v1/models", &[host, ("authorization", "bearer  secret ")]),
            200
        );
        assert_eq!(get("/v1/models", &[host]), 401);
        assert_eq!(
            get("/v1/models", &[host, ("authorization", "Bearer secreT")]),
            401
        );
        assert_eq!(
            get("/v1/models", &[host, ("authorization", "Basic secret")]),
            401
        );
        assert_eq!(get("/health", &[host]), 200);
        assert_eq!(get("/health", &[("host", "evil.example"), auth]), 421);
        assert_eq!(
            get(
                "/v1/models",
                &[host, auth, ("origin", "http://evil.example")]
            ),
            403
        );
        assert_eq!(get("/v1/models", &[host, auth, ("origin", "null")]), 403);
        assert_eq!(
            get(
                "/v1/models",
                &[host, auth, ("sec-fetch-site", "cross-site")]
            ),
            403
        );
        assert_eq!(
            get(
                "/v1/models",
                &[host, auth, ("sec-fetch-site", "same-origin")]
            ),
            200
        );
        assert_eq!(
            get(
                "/v1/models",
                &[host, auth, ("origin", "http://localhost:3000")]
            ),
            200
        );
        assert_eq!(
            get("/v1/models", &[host, auth, ("content-length", "101")]),
            413
        );
        assert_eq!(
            get("/v1/models", &[host, auth, ("content-length", "100")]),
            200
        );
    }

    #[test]
    fn preflight_only_for_allowed_origins() {
        let p = policy();
        let allowed = check(
            &p,
            &request(
                Method::OPTIONS,
                "/v1/audio/speech",
                &[("host", "localhost"), ("origin", "http://localhost:3000")],
            ),
        );
        let Ok(Some(response)) = allowed else {
            panic!("expected a preflight answer");
        };
        assert_eq!(response.status(), StatusCode::NO_CONTENT);
        assert_eq!(
            response.headers()[header::ACCESS_CONTROL_ALLOW_ORIGIN],
            "http://localhost:3000"
        );
        let refused = check(
            &p,
            &request(
                Method::OPTIONS,
                "/v1/audio/speech",
                &[("host", "localhost"), ("origin", "http://other:3000")],
            ),
        );
        assert_eq!(status(refused), 403);
    }
}
