//! Counters for `GET /metrics`, in Prometheus' text format, written by hand: the set is small
//! and fixed, and a metrics crate would be a dependency for a dozen lines of formatting.
//!
//! The names are the HTTP layer's own (`banter_http_…`): the scheduler's figures
//! (`engine::scheduler::Metrics`, appended to the same page) count streams, not responses, and a
//! family named twice makes Prometheus reject the whole scrape.
//!
//! What is measured and why: requests by route and status (is anyone hitting errors?), speech
//! jobs waiting for their first audio (queue depth) and streams being sent (load), time to first
//! audio (the latency a voice assistant feels), audio bytes sent, and streams the client dropped
//! before the end (each one is work the backend should have stopped).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;

use super::AppState;

/// Upper bounds (seconds) of the time-to-first-audio histogram buckets.
const TTFA_BUCKETS: [f64; 10] = [0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0, 2.0, 5.0, 10.0];

#[derive(Debug, Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(String, u16), u64>>,
    pub queue_depth: Gauge,
    pub active_streams: Gauge,
    pub bytes_sent: AtomicU64,
    pub cancelled_streams: AtomicU64,
    pub rejected_busy: AtomicU64,
    ttfa: Mutex<Histogram>,
}

/// A level that goes up and down; [`Gauge::enter`] returns a guard that brings it back down.
#[derive(Debug, Default)]
pub struct Gauge(Arc<AtomicU64>);

impl Gauge {
    pub fn enter(&self) -> GaugeGuard {
        self.0.fetch_add(1, Ordering::Relaxed);
        GaugeGuard(Arc::clone(&self.0))
    }

    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

#[derive(Debug)]
pub struct GaugeGuard(Arc<AtomicU64>);

impl Drop for GaugeGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

#[derive(Debug, Default)]
struct Histogram {
    counts: [u64; TTFA_BUCKETS.len()],
    count: u64,
    sum: f64,
}

impl Metrics {
    pub fn record_request(&self, route: &str, status: u16) {
        if let Ok(mut map) = self.requests.lock() {
            *map.entry((route.to_owned(), status)).or_default() += 1;
        }
    }

    pub fn record_ttfa(&self, ttfa: Duration) {
        let seconds = ttfa.as_secs_f64();
        if let Ok(mut h) = self.ttfa.lock() {
            for (count, bound) in h.counts.iter_mut().zip(TTFA_BUCKETS) {
                if seconds <= bound {
                    *count += 1;
                }
            }
            h.count += 1;
            h.sum += seconds;
        }
    }

    /// The text exposition format (version 0.0.4).
    #[must_use]
    pub fn render(&self) -> String {
        let mut out = String::new();
        let mut line = |s: String| {
            out.push_str(&s);
            out.push('\n');
        };
        line("# HELP banter_http_requests_total HTTP requests by route and status.".into());
        line("# TYPE banter_http_requests_total counter".into());
        if let Ok(map) = self.requests.lock() {
            for ((route, status), n) in map.iter() {
                line(format!(
                    "banter_http_requests_total{{route=\"{route}\",status=\"{status}\"}} {n}"
                ));
            }
        }
        let gauges = [
            (
                "banter_speech_queue_depth",
                "Speech jobs accepted and waiting for their first audio.",
                self.queue_depth.get(),
            ),
            (
                "banter_http_active_responses",
                "Speech responses being sent.",
                self.active_streams.get(),
            ),
        ];
        for (name, help, value) in gauges {
            line(format!("# HELP {name} {help}"));
            line(format!("# TYPE {name} gauge"));
            line(format!("{name} {value}"));
        }
        let counters = [
            (
                "banter_audio_bytes_sent_total",
                "Audio body bytes handed to the HTTP layer.",
                &self.bytes_sent,
            ),
            (
                "banter_http_responses_cancelled_total",
                "Speech responses the client dropped before the end.",
                &self.cancelled_streams,
            ),
            (
                "banter_speech_rejected_busy_total",
                "Speech requests refused with 429 because the queue was full.",
                &self.rejected_busy,
            ),
        ];
        for (name, help, value) in counters {
            line(format!("# HELP {name} {help}"));
            line(format!("# TYPE {name} counter"));
            line(format!("{name} {}", value.load(Ordering::Relaxed)));
        }
        line("# HELP banter_http_ttfa_seconds Time from request to first audio.".into());
        line("# TYPE banter_http_ttfa_seconds histogram".into());
        if let Ok(h) = self.ttfa.lock() {
            for (count, bound) in h.counts.iter().zip(TTFA_BUCKETS) {
                line(format!(
                    "banter_http_ttfa_seconds_bucket{{le=\"{bound}\"}} {count}"
                ));
            }
            line(format!(
                "banter_http_ttfa_seconds_bucket{{le=\"+Inf\"}} {}",
                h.count
            ));
            let mut sum = String::new();
            let _ = write!(sum, "{}", h.sum);
            line(format!("banter_http_ttfa_seconds_sum {sum}"));
            line(format!("banter_http_ttfa_seconds_count {}", h.count));
        }
        out
    }
}

/// Middleware (outermost): counts every response by its route pattern (never the raw path, so
/// a scanner cannot grow the table) and status.
pub async fn count(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let started = Instant::now();
    let response = next.run(request).await;
    state
        .metrics
        .record_request(&route, response.status().as_u16());
    tracing::debug!(
        route,
        status = response.status().as_u16(),
        ms = started.elapsed().as_millis(),
        "request"
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_gauges_and_histogram() {
        let m = Metrics::default();
        m.record_request("/v1/audio/speech", 200);
        m.record_request("/v1/audio/speech", 200);
        m.record_request("/health", 200);
        m.record_ttfa(Duration::from_millis(300));
        m.cancelled_streams.fetch_add(1, Ordering::Relaxed);
        let guard = m.active_streams.enter();
        let text = m.render();
        assert!(text
            .contains("banter_http_requests_total{route=\"/v1/audio/speech\",status=\"200\"} 2"));
        assert!(text.contains("banter_http_active_responses 1"));
        assert!(text.contains("banter_http_responses_cancelled_total 1"));
        assert!(text.contains("banter_http_ttfa_seconds_bucket{le=\"0.2\"} 0"));
        assert!(text.contains("banter_http_ttfa_seconds_bucket{le=\"0.35\"} 1"));
        assert!(text.contains("banter_http_ttfa_seconds_count 1"));
        drop(guard);
        assert!(m.render().contains("banter_http_active_responses 0"));
    }
}
