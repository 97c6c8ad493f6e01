//! One scheduler owns the model and serves everyone: studio playback, exports, HTTP clients,
//! and background work (voice-matching probes, cast checks).
//!
//! A request is a stream of segments (sentence groups, one Kokoro pass each). A single named
//! thread loads the model and is the only one that ever runs it ([`Scheduler::start`] takes a
//! loader that runs on that thread, and the model type is not `Send`); before each segment it asks [`policy::pick`] which stream is most
//! urgent — a stream that has sent nothing yet, or whose listener is about to run out of audio —
//! so a new request's first (short) segment overtakes the later segments of streams that are
//! comfortably ahead, but never makes a playing stream run dry: the model thread keeps a running
//! estimate of what a segment costs, and the policy admits a new stream only when every started
//! one can still be served in time after it. Everything CPU-side that is not the model (text normalisation and
//! phonemes in [`crate::segments`], output encoding in the consumer) runs on the caller's
//! threads, concurrently with the model. Background streams run only when nothing interactive
//! is runnable, before exports.
//!
//! Each stream's audio goes through a bounded channel to a [`StreamHandle`]. Audio that the
//! consumer has not taken counts against the stream's high watermark: above it the stream is
//! not scheduled until the consumer drains it below the low watermark, so a slow reader never
//! grows memory and never holds the model. Dropping the handle (a client disconnecting, the
//! user pressing stop or editing the line) cancels the stream before the next scheduling step.
//!
//! Granularity: a scheduling step is a *piece* of work, never a whole segment. The first step
//! of a segment runs its encoder; each later one a piece of a generator pass (a stage's input,
//! a residual block, or the output: about a fifth of a window, see
//! Kokoro's `generator::pass`). An interactive stream's segments are decoded in short
//! windows (the family's [`Windowing`]; for Kokoro a quarter second first, then 0.5, 1 and 1.6 s),
//! and the piece that finishes a window sends its audio. So a new request waits for at most one
//! piece of someone else's work before its encoder runs, and its listener hears the first words
//! after the encoder plus one short window. Kokoro's decoder normalises every layer over what it
//! is given (instance-norm `AdaIN`), so windowed audio differs slightly from one pass (same
//! words and voice by the judge; see the issue notes); offline streams (exports) and
//! [`Scheduler::submit_whole`] decode whole segments, exactly, in pieces all the same.
//!
//! Batching: when the step picked is an encoder, the encoders of equally urgent streams (other
//! newcomers, or other streams about to run dry; exports with exports) may join it in one
//! padded pass ([`policy::encoder_mates`], [`SegmentModel::begin_batch`]), up to the model's
//! [`SegmentModel::batch_limit`]: 8 on CUDA, 1 on the CPU, where a batch costs about what its
//! members cost one by one (`banter bench batch`: 0.9–1.1×) and would only make the first
//! member wait for the others. Generator pieces are not batched on the CPU, where one window's
//! convolutions already fill the cores; where the model's [`SegmentModel::window_batch_limit`]
//! is above 1 (a launch-bound GPU), a step that starts a window takes the next windows of
//! other streams along ([`policy::window_mates`]: newcomers first, then those closest to
//! running dry, then the rest) and decodes them all in one pass
//! ([`SegmentModel::advance_windows`]).

mod config;
mod cost;
mod error;
mod events;
mod feed;
mod handle;
pub mod metrics;
mod model;
pub mod policy;
mod pool;
mod queue;
mod run;
mod state;

pub use config::SchedulerConfig;
pub use error::SchedulerError;
pub use events::{StreamEvent, TimedAudio};
pub(crate) use feed::FeedSink;
pub use feed::StreamFeed;
pub use handle::StreamHandle;
pub(crate) use handle::StreamTie;
pub use metrics::Metrics;
pub(crate) use model::{advance_each, BeginItem, SegmentJob, SegmentModel, Windowing};
pub use policy::{Mode, Policy};
pub(crate) use queue::Scheduler;

#[cfg(test)]
mod tests;
