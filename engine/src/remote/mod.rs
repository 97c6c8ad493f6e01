//! Rendering on other machines: the engine handle backed by servers instead of the local model
//! thread ([`Engine::remote`](crate::Engine::remote)).
//!
//! Voices and segments are resolved here, on the caller's machine, exactly as for a local
//! render; each segment then travels with its voice table to a [`SegmentServer`]. The
//! dispatcher spreads a stream's segments over every server that is up, hands the listener
//! the audio in order, and moves the segments of a server that goes away to the others,
//! telling the user which server failed.

mod server;

pub use server::{RemoteChunk, RemoteError, RemoteJob, SegmentServer};
mod dispatch;

use std::sync::Arc;

use crate::scheduler::{FeedSink, Mode, SchedulerError, StreamFeed, StreamHandle};
use crate::speech::{Segment, SpeechRequest, SynthError};
use crate::voice::VoiceTable;

pub use dispatch::{Dispatcher, PROBE_EVERY};

/// Segments each server is given at once unless the user says otherwise: enough for its own
/// scheduler to interleave a listener's stream with a render's, few enough that a failed
/// server's segments are quickly redone.
pub const DEFAULT_SLOTS: usize = 4;

impl Dispatcher {
    /// Queues `segments` spoken with `table` at the request's speed; `whole` decodes each
    /// segment whole and exact (renders), else in windows (listeners).
    pub(crate) fn submit(
        &self,
        segments: Vec<Segment>,
        table: &VoiceTable,
        request: &SpeechRequest,
        mode: Mode,
        whole: bool,
    ) -> Result<StreamHandle, SchedulerError> {
        let (feed, handle) = self.open_feed(table, request, mode, whole);
        feed.push(segments)?;
        Ok(handle)
    }

    /// A stream whose segments arrive over time ([`crate::Engine::open`]).
    pub(crate) fn open_feed(
        &self,
        table: &VoiceTable,
        request: &SpeechRequest,
        mode: Mode,
        whole: bool,
    ) -> (StreamFeed, StreamHandle) {
        let (rx, stream) = self.open();
        let handle = StreamHandle::new(rx, Arc::clone(&stream) as _);
        let feed = RemoteFeed {
            stream,
            style: Arc::from(table.values()),
            speed: request.speed,
            whole,
            mode,
        };
        (StreamFeed::new(Box::new(feed)), handle)
    }
}

/// A stream's producer end on the dispatcher: segments become jobs with the voice's table.
struct RemoteFeed {
    stream: Arc<dispatch::Stream>,
    style: Arc<[f32]>,
    speed: f32,
    whole: bool,
    mode: Mode,
}

impl FeedSink for RemoteFeed {
    fn push(&self, segments: Vec<Segment>) -> Result<(), SchedulerError> {
        let jobs = segments
            .into_iter()
            .map(|s| RemoteJob {
                phonemes: s.phonemes,
                style: Arc::clone(&self.style),
                speed: self.speed,
                whole: self.whole,
            })
            .collect();
        self.stream.push(jobs, self.mode)
    }

    fn pending(&self) -> usize {
        self.stream.pending()
    }
}

impl Drop for RemoteFeed {
    fn drop(&mut self) {
        self.stream.close();
    }
}

/// A Piper voice's model stays on this machine: a remote engine speaks Kokoro voices.
pub(crate) fn piper_refused(voice: &str) -> SynthError {
    SynthError::Remote {
        server: "remote engine".into(),
        message: format!(
            "`{voice}` is a Piper voice, whose model file stays on this machine; a remote engine \
             speaks Kokoro voices (render this line without --engine)"
        ),
    }
}

#[cfg(test)]
mod tests;
