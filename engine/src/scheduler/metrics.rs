//! What the scheduler is doing, as numbers: counters, gauges and latency histograms, readable as
//! a struct (the studio's status panel) or as Prometheus text (`GET /metrics`).
//!
//! Everything is atomics or a short mutex, so recording never slows the model loop.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Upper bounds (seconds) of the latency histogram buckets.
pub const LATENCY_BUCKETS: [f64; 12] = [
    0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 2.0, 5.0, 10.0, 30.0,
];

/// A cumulative histogram in the Prometheus style.
#[derive(Debug, Default)]
pub struct Histogram {
    inner: Mutex<HistogramData>,
}

#[derive(Debug, Default, Clone, PartialEq)]
pub struct HistogramData {
    /// Count per bucket of [`LATENCY_BUCKETS`] (not cumulative), plus one for +Inf.
    pub buckets: Vec<u64>,
    pub sum: f64,
    pub count: u64,
}

impl HistogramData {
    /// The value below which `q` (0–1) of the observations fall, at bucket resolution.
    #[must_use]
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        let target = (q * self.count as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= target {
                return Some(LATENCY_BUCKETS.get(i).copied().unwrap_or(f64::INFINITY));
            }
        }
        None
    }
}

impl Histogram {
    pub fn observe(&self, secs: f64) {
        let mut h = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if h.buckets.is_empty() {
            h.buckets = vec![0; LATENCY_BUCKETS.len() + 1];
        }
        let i = LATENCY_BUCKETS
            .iter()
            .position(|&b| secs <= b)
            .unwrap_or(LATENCY_BUCKETS.len());
        h.buckets[i] += 1;
        h.sum += secs;
        h.count += 1;
    }

    #[must_use]
    pub fn snapshot(&self) -> HistogramData {
        let h = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut d = h.clone();
        if d.buckets.is_empty() {
            d.buckets = vec![0; LATENCY_BUCKETS.len() + 1];
        }
        d
    }
}

/// The scheduler's live figures.
#[derive(Debug, Default)]
pub struct Metrics {
    pub submitted: AtomicU64,
    pub completed: AtomicU64,
    pub cancelled: AtomicU64,
    pub failed: AtomicU64,
    pub rejected: AtomicU64,
    /// Chunks that reached a listener after the audio before them had run out.
    pub underruns: AtomicU64,
    pub segments: AtomicU64,
    /// Segments served from a cache instead of the model.
    pub cache_hits: AtomicU64,
    /// Microseconds of audio produced, and of model time spent producing it.
    pub audio_us: AtomicU64,
    pub busy_us: AtomicU64,
    /// Streams waiting for their first segment / running / total audio buffered (µs).
    pub queued: AtomicU64,
    pub active: AtomicU64,
    pub buffered_us: AtomicU64,
    /// Time to first audio per stream (submission to first chunk ready).
    pub ttfa: Histogram,
    /// Model time per scheduling step (an encoder, or a piece of a generator pass).
    pub step_latency: Histogram,
    /// Time a stream waited between becoming runnable and its next step.
    pub queue_wait: Histogram,
    /// Segments per scheduling step: more than 1 when encoders ran as one batch (the model's
    /// `batch_limit`, 1 on the CPU). Same buckets as the latencies, read as counts.
    pub batch_size: Histogram,
}

impl Metrics {
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }

    /// Audio produced per second of model time so far.
    #[must_use]
    pub fn xrt(&self) -> f64 {
        let busy = Self::get(&self.busy_us);
        if busy == 0 {
            return 0.0;
        }
        Self::get(&self.audio_us) as f64 / busy as f64
    }

    /// The figures in the Prometheus text exposition format, names prefixed `banter_`.
    #[must_use]
    pub fn prometheus(&self) -> String {
        let mut out = String::new();
        let counters = [
            (
                "streams_submitted_total",
                "Streams submitted",
                &self.submitted,
            ),
            (
                "streams_completed_total",
                "Streams finished",
                &self.completed,
            ),
            (
                "streams_cancelled_total",
                "Streams cancelled (disconnect, stop, edit)",
                &self.cancelled,
            ),
            ("streams_failed_total", "Streams that failed", &self.failed),
            (
                "streams_rejected_total",
                "Streams refused because the queue was full",
                &self.rejected,
            ),
            (
                "underruns_total",
                "Chunks delivered after the listener ran out of audio",
                &self.underruns,
            ),
            ("segments_total", "Segments rendered", &self.segments),
            (
                "cache_hits_total",
                "Segments served from the render cache",
                &self.cache_hits,
            ),
        ];
        for (name, help, c) in counters {
            let _ = writeln!(
                out,
                "# HELP banter_{name} {help}\n# TYPE banter_{name} counter\nbanter_{name} {}",
                Self::get(c)
            );
        }
        let secs = |c: &AtomicU64| Self::get(c) as f64 / 1e6;
        let gauges = [
            (
                "audio_seconds_total",
                "Seconds of audio produced",
                secs(&self.audio_us),
                "counter",
            ),
            (
                "model_busy_seconds_total",
                "Seconds the model spent rendering",
                secs(&self.busy_us),
                "counter",
            ),
            (
                "queue_depth",
                "Streams waiting for their first audio",
                Self::get(&self.queued) as f64,
                "gauge",
            ),
            (
                "active_streams",
                "Streams being rendered",
                Self::get(&self.active) as f64,
                "gauge",
            ),
            (
                "buffered_audio_seconds",
                "Audio rendered but not yet taken by listeners",
                secs(&self.buffered_us),
                "gauge",
            ),
        ];
        for (name, help, v, kind) in gauges {
            let _ = writeln!(
                out,
                "# HELP banter_{name} {help}\n# TYPE banter_{name} {kind}\nbanter_{name} {v}"
            );
        }
        let histograms = [
            ("ttfa_seconds", "Time to first audio", &self.ttfa),
            (
                "step_seconds",
                "Model time per scheduling step",
                &self.step_latency,
            ),
            (
                "queue_wait_seconds",
                "Time a runnable segment waited",
                &self.queue_wait,
            ),
            ("batch_size", "Segments per forward pass", &self.batch_size),
        ];
        for (name, help, h) in histograms {
            let d = h.snapshot();
            let _ = writeln!(
                out,
                "# HELP banter_{name} {help}\n# TYPE banter_{name} histogram"
            );
            let mut cumulative = 0;
            for (i, n) in d.buckets.iter().enumerate() {
                cumulative += n;
                let le = LATENCY_BUCKETS
                    .get(i)
                    .map_or_else(|| "+Inf".to_owned(), ToString::to_string);
                let _ = writeln!(out, "banter_{name}_bucket{{le=\"{le}\"}} {cumulative}");
            }
            let _ = writeln!(
                out,
                "banter_{name}_sum {}\nbanter_{name}_count {}",
                d.sum, d.count
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_quantiles_and_text() {
        let m = Metrics::default();
        for v in [0.01, 0.04, 0.15, 0.15, 0.9, 40.0] {
            m.ttfa.observe(v);
        }
        let d = m.ttfa.snapshot();
        assert_eq!(d.count, 6);
        assert_eq!(d.quantile(0.5), Some(0.2));
        assert_eq!(d.quantile(1.0), Some(f64::INFINITY));
        Metrics::add(&m.cancelled, 2);
        let text = m.prometheus();
        assert!(text.contains("banter_streams_cancelled_total 2\n"));
        assert!(text.contains("banter_ttfa_seconds_bucket{le=\"+Inf\"} 6\n"));
        assert!(text.contains("banter_ttfa_seconds_count 6\n"));
    }
}
