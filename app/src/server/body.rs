//! The body of a speech response: a stream that pulls audio events from the backend, encodes
//! each chunk and hands the bytes to hyper as they come.
//!
//! Dropping it (hyper does when the client goes away) drops the backend's receiver, which stops
//! the job at its next chunk, and counts a cancelled stream unless the end had been reached.
//! It also holds the job's queue slot and the connection's busy mark until the last byte.

use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};

use axum::body::Bytes;
use tokio::sync::mpsc;

use super::backend::AudioEvent;
use super::errors::ApiError;
use super::format::ChunkEncoder;
use super::listener::BusyGuard;
use super::metrics::GaugeGuard;
use super::{sse, AppState, JobSlot};

#[derive(Debug, thiserror::Error)]
#[error("the speech stream ended early: {0}")]
pub struct StreamError(String);

impl StreamError {
    pub fn new(why: impl Into<String>) -> Self {
        Self(why.into())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Streaming,
    Completed,
    Failed,
}

pub struct AudioBody {
    state: AppState,
    events: mpsc::Receiver<AudioEvent>,
    pending: Option<AudioEvent>,
    encoder: Box<dyn ChunkEncoder>,
    sse: bool,
    input_chars: usize,
    samples: usize,
    outcome: Outcome,
    _active: GaugeGuard,
    _held: (JobSlot, Option<BusyGuard>),
}

impl AudioBody {
    /// `first` is the event the handler already received (it waits for it before answering).
    pub fn new(
        state: AppState,
        events: mpsc::Receiver<AudioEvent>,
        first: AudioEvent,
        encoder: Box<dyn ChunkEncoder>,
        sse: bool,
        input_chars: usize,
        held: (JobSlot, Option<BusyGuard>),
    ) -> Self {
        let active = state.metrics.active_streams.enter();
        Self {
            state,
            events,
            pending: Some(first),
            encoder,
            sse,
            input_chars,
            samples: 0,
            outcome: Outcome::Streaming,
            _active: active,
            _held: held,
        }
    }

    /// Bytes for one event (empty when nothing is to be sent for it).
    fn bytes_for(&mut self, event: AudioEvent) -> Result<Vec<u8>, StreamError> {
        let encoded = match event {
            AudioEvent::Chunk(samples) => {
                self.samples += samples.len();
                self.encoder
                    .encode(&samples)
                    .map(|bytes| self.frame(&bytes))
            }
            AudioEvent::Done => {
                self.outcome = Outcome::Completed;
                self.encoder.finish().map(|tail| {
                    let mut out = self.frame(&tail);
                    if self.sse {
                        out.extend_from_slice(&sse::done(self.input_chars, self.samples));
                    }
                    out
                })
            }
            AudioEvent::Failed(e) => return self.fail(&e.to_string()),
        };
        encoded.or_else(|e| self.fail(&format!("encoding: {e}")))
    }

    /// Ends the stream after a failure: an SSE client still reads an `error` event (the status
    /// line is sent); a plain body is cut off so the client sees it incomplete.
    fn fail(&mut self, why: &str) -> Result<Vec<u8>, StreamError> {
        self.outcome = Outcome::Failed;
        tracing::error!("speech failed mid-stream: {why}");
        if self.sse {
            let error = ApiError::internal("speech synthesis failed mid-stream");
            Ok(sse::error(&error.body()))
        } else {
            Err(StreamError(why.to_owned()))
        }
    }

    fn frame(&self, bytes: &[u8]) -> Vec<u8> {
        if self.sse && !bytes.is_empty() {
            sse::delta(bytes)
        } else {
            bytes.to_vec()
        }
    }
}

impl futures_core::Stream for AudioBody {
    type Item = Result<Bytes, StreamError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if this.outcome != Outcome::Streaming {
                return Poll::Ready(None);
            }
            let event = match this.pending.take() {
                Some(event) => event,
                None => match this.events.poll_recv(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Some(event)) => event,
                    Poll::Ready(None) => {
                        this.outcome = Outcome::Failed;
                        tracing::warn!("the backend gave a speech job up before its end");
                        let e = StreamError("the engine gave the job up".into());
                        return Poll::Ready(Some(Err(e)));
                    }
                },
            };
            match this.bytes_for(event) {
                Ok(bytes) if bytes.is_empty() => {}
                Ok(bytes) => {
                    this.state
                        .metrics
                        .bytes_sent
                        .fetch_add(bytes.len() as u64, Ordering::Relaxed);
                    return Poll::Ready(Some(Ok(Bytes::from(bytes))));
                }
                Err(e) => return Poll::Ready(Some(Err(e))),
            }
        }
    }
}

impl Drop for AudioBody {
    fn drop(&mut self) {
        if self.outcome == Outcome::Streaming {
            self.state
                .metrics
                .cancelled_streams
                .fetch_add(1, Ordering::Relaxed);
            tracing::debug!(
                samples = self.samples,
                "client left mid-stream; job cancelled"
            );
        }
    }
}
