//! The one model interface: what the scheduler needs from a model family, and all it knows of
//! one. A family turns a segment into a decoder session ([`SegmentModel::begin`], several in
//! one encoder pass where that pays: [`SegmentModel::begin_batch`] up to
//! [`SegmentModel::batch_limit`]); a session yields the segment's audio window by window, one
//! short piece of work per scheduling step ([`SegmentJob::advance`]), says what its next piece
//! costs, and hands over the model's durations for word timing
//! ([`SegmentJob::take_durations`]). [`Windowing`] says how the family streams. Where a batch
//! pays, one step may decode the next windows of several streams in one pass
//! ([`SegmentModel::window_batch_limit`], [`SegmentModel::advance_windows`]).
//!
//! Kokoro implements it (`crate::synth`); the scheduler's tests implement a second, fake family
//! that proves no Kokoro type is needed to schedule. A new family (Piper, a remote server)
//! implements these two traits and nothing in the scheduler changes.

use std::sync::Arc;

use crate::speech::{Segment, SpeechRequest, SynthError};

/// What the scheduler needs from a model: a job that yields a segment's audio chunk by chunk.
/// The model lives on the model thread alone (no `Send` bound: it is made there by the loader
/// given to [`Scheduler::start`](super::Scheduler::start)); its jobs are `Send` only so the shared queue can hold them.
pub(crate) trait SegmentModel {
    /// The device the model runs on.
    fn device(&self) -> candle_core::Device {
        candle_core::Device::Cpu
    }
    /// Starts `segment`: runs everything before its generator (the encoder). With a
    /// `first_window` (decoder frames) the job yields the audio in windows, that one first and
    /// then growing ones (first audio early, approximate); without, in one chunk, exactly as
    /// the reference computes it.
    fn begin(
        &self,
        segment: &Segment,
        request: &SpeechRequest,
        first_window: Option<usize>,
    ) -> Result<Box<dyn SegmentJob>, SynthError>;
    /// [`Self::begin`] for several segments in one pass where the model can; one result per
    /// item, in order. The default begins them one by one.
    fn begin_batch(&self, items: &[BeginItem<'_>]) -> Vec<Result<Box<dyn SegmentJob>, SynthError>> {
        items
            .iter()
            .map(|(segment, request, first)| self.begin(segment, request, *first))
            .collect()
    }
    /// How many segments' encoders one pass should batch: more than 1 only where a batch
    /// costs clearly less than its members one by one.
    fn batch_limit(&self) -> usize {
        1
    }
    /// How many streams' next windows one step should decode in one batched pass
    /// ([`Self::advance_windows`]): more than 1 only where a batch costs clearly less than its
    /// members one by one (a launch-bound GPU). 1, the default, keeps every step one piece of
    /// one stream's pass.
    fn window_batch_limit(&self) -> usize {
        1
    }
    /// Decodes the next window of each of `jobs` (each at the start of one, see
    /// [`SegmentJob::window_bucket`]) to its audio, in one pass where the family can; one
    /// result per job, in order. The default runs the jobs one after another.
    fn advance_windows(
        &self,
        jobs: &mut [Box<dyn SegmentJob>],
    ) -> Vec<Result<Option<Vec<f32>>, SynthError>> {
        advance_each(jobs)
    }
    /// How this family streams a segment to a listener who is waiting.
    fn windowing(&self) -> Windowing;
}

/// Runs each job's pieces up to its next audio (or its end), one job after another.
pub(crate) fn advance_each(
    jobs: &mut [Box<dyn SegmentJob>],
) -> Vec<Result<Option<Vec<f32>>, SynthError>> {
    jobs.iter_mut()
        .map(|job| loop {
            match job.advance() {
                Ok(None) if !job.is_done() => {}
                other => break other,
            }
        })
        .collect()
}

/// How a family cuts a segment into windows when a listener waits, in its decoder frames: what
/// the scheduler needs to give each segment its first window and to price the first audio.
/// The family decides the numbers; the scheduler only applies the rule that a stream's first
/// segment, where the listener waits, gets the short window and later ones (whose listener has
/// earlier audio in hand) the longer one. By place, never by timing, so a request always gives
/// the same audio however busy the server is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Windowing {
    /// The first window of a stream's first segment (or of the first after it ran dry).
    pub first: usize,
    /// The first window of its later segments.
    pub later_first: usize,
    /// Frames of context decoded with a window beyond its own (part of its cost).
    pub context: usize,
}

impl Windowing {
    /// The first window of the segment `index` places after the stream (re)started.
    #[must_use]
    pub fn first_window(self, index: usize) -> usize {
        if index == 0 {
            self.first
        } else {
            self.later_first
        }
    }
}

/// A segment to begin, its request, and its first window (see [`SegmentModel::begin`]).
pub(crate) type BeginItem<'a> = (&'a Segment, &'a SpeechRequest, Option<usize>);

/// A segment being decoded: one scheduling step runs one piece of work, and some pieces finish
/// a chunk of audio.
pub(crate) trait SegmentJob: Send {
    /// Runs the next piece of work: the 24 kHz audio of a chunk when this piece finished one,
    /// `None` when the chunk needs more pieces.
    fn advance(&mut self) -> Result<Option<Vec<f32>>, SynthError>;
    /// True when every chunk has been produced.
    fn is_done(&self) -> bool;
    /// The work of the next piece, in decoder frames (to learn what a frame costs).
    fn next_step_frames(&self) -> f64;
    /// The work left before the next chunk's audio, in decoder frames (for deadlines).
    fn frames_to_audio(&self) -> f64;
    /// Decoder frames in the whole segment (to learn how long segments are).
    fn frames(&self) -> usize;
    /// The frames per token the encoder predicted (pads included), the first time it is
    /// asked; `None` after, or for a model that does not say.
    fn take_durations(&mut self) -> Option<Arc<[u32]>> {
        None
    }
    /// When the next step starts a window that may share a batched pass
    /// ([`SegmentModel::advance_windows`]): the length that window is padded to there (in the
    /// family's own units, comparable between its jobs). `None` in the middle of a window,
    /// when done, or for a family that does not batch windows.
    fn window_bucket(&self) -> Option<usize> {
        None
    }
    /// The job as [`Any`](std::any::Any), for its family's
    /// [`SegmentModel::advance_windows`] to find its own type; `None` where it needs not.
    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        None
    }
}
