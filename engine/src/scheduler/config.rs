//! The scheduler's tuning knobs: queue bounds, watermarks and windows, set once at start.

use std::time::Duration;

use super::policy::Policy;

/// Tuning knobs; the defaults suit a desktop.
#[derive(Debug, Clone, Copy)]
pub struct SchedulerConfig {
    pub policy: Policy,
    /// Safety margin: a new stream is admitted only if every started stream still gets its
    /// next chunk this long before its listener runs dry (the cost estimate is an average; 0.3 s
    /// let bursts of arrivals make playing streams stutter in the load benchmark).
    pub margin: Duration,
    /// Unread audio (seconds) above which a stream stops being scheduled...
    pub high_watermark: f64,
    /// ...until it drains below this.
    pub low_watermark: f64,
    /// Streams waiting for their first audio beyond which new ones are refused.
    pub max_queue: usize,
    /// Decode interactive streams in windows (the model's [`Windowing`](super::Windowing)): first audio after the
    /// encoder and a quarter second of generator, at the price of audio that differs slightly
    /// from one pass. Offline streams (exports) always decode whole segments, exactly. Either
    /// way a step is one piece of a pass, so a long segment never holds the model.
    pub windowed: bool,
    /// At most this many segments' encoders in one pass (streams equally urgent, see
    /// [`policy::encoder_mates`](super::policy::encoder_mates)); the model's own [`SegmentModel::batch_limit`](super::SegmentModel::batch_limit) caps it
    /// further (1 on the CPU, where a batch saves little and delays its first member).
    pub max_batch: usize,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        Self {
            policy: Policy::Pressing,
            margin: Duration::from_millis(500),
            high_watermark: 20.0,
            low_watermark: 8.0,
            max_queue: 64,
            windowed: true,
            max_batch: 8,
        }
    }
}
