//! The body of a `POST /v1/dialogue` response: the driver's [`DialogueEvent`]s as named
//! server-sent events (`warning`, `sentence`, `audio`, `line`, `done`, `error`; see
//! `routes::dialogue`);
//! or, for ElevenLabs' text to dialogue, the audio alone ([`DialogueBody::audio_only`]), whose
//! failure mid-way can only cut the body short.
//! The JSON of each event is written out here field by field rather than derived from the
//! engine's types, so the API's shape changes only when this file does: a sentence carries its
//! cue's `words`; a line does not repeat them (its words are its sentences' words).
//!
//! Like the speech body, dropping it (the client left) drops the driver's receiver, which
//! cancels the dialogue's scheduler streams, and it holds the job's queue slot and the
//! connection's busy mark until the last byte.

use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};

use axum::body::Bytes;
use serde_json::json;
use tokio::sync::mpsc;

use super::backend::DialogueEvent;
use super::body::StreamError;
use super::errors::ApiError;
use super::format::{AudioFormat, ChunkEncoder};
use super::listener::BusyGuard;
use super::metrics::GaugeGuard;
use super::{sse, AppState, JobSlot};

/// One named event.
#[must_use]
pub fn event(name: &str, data: &serde_json::Value) -> Vec<u8> {
    format!("event: {name}\ndata: {data}\n\n").into_bytes()
}

pub struct DialogueBody {
    state: AppState,
    /// Bytes sent before the first event: the script's `warning` events.
    preface: Option<Vec<u8>>,
    events: mpsc::Receiver<DialogueEvent>,
    pending: Option<DialogueEvent>,
    encoder: Box<dyn ChunkEncoder>,
    format: AudioFormat,
    samples: usize,
    finished: bool,
    /// Events around the audio (`false`: the encoded audio is the body).
    sse: bool,
    _active: GaugeGuard,
    _held: (JobSlot, Option<BusyGuard>),
}

impl DialogueBody {
    /// `first` is the event the handler already received.
    pub fn new(
        state: AppState,
        events: mpsc::Receiver<DialogueEvent>,
        first: DialogueEvent,
        encoder: Box<dyn ChunkEncoder>,
        format: AudioFormat,
        held: (JobSlot, Option<BusyGuard>),
    ) -> Self {
        let active = state.metrics.active_streams.enter();
        Self {
            state,
            preface: None,
            events,
            pending: Some(first),
            encoder,
            format,
            samples: 0,
            finished: false,
            sse: true,
            _active: active,
            _held: held,
        }
    }

    /// Sends `warnings` (`{at, line, column, message}` each, the script's own) as `warning`
    /// events before anything else: what Banter guessed or left out is never silent.
    #[must_use]
    pub fn with_warnings(mut self, warnings: &[serde_json::Value]) -> Self {
        let bytes: Vec<u8> = warnings.iter().flat_map(|w| event("warning", w)).collect();
        self.preface = (!bytes.is_empty()).then_some(bytes);
        self
    }

    /// The same dialogue whose body is the encoded audio alone.
    pub fn audio_only(
        state: AppState,
        events: mpsc::Receiver<DialogueEvent>,
        first: DialogueEvent,
        encoder: Box<dyn ChunkEncoder>,
        held: (JobSlot, Option<BusyGuard>),
    ) -> Self {
        let mut body = Self::new(state, events, first, encoder, AudioFormat::Pcm, held);
        body.sse = false;
        body
    }

    /// The bytes for `e` without events around them.
    fn raw_bytes_for(&mut self, e: DialogueEvent) -> Result<Vec<u8>, StreamError> {
        let encoded = match e {
            DialogueEvent::Sentence { .. } | DialogueEvent::Line(_) => return Ok(Vec::new()),
            DialogueEvent::Audio { samples, .. } => {
                self.samples += samples.len();
                self.encoder.encode(&samples)
            }
            DialogueEvent::Done { .. } => {
                self.finished = true;
                self.encoder.finish()
            }
            DialogueEvent::Failed(e) => {
                self.finished = true;
                tracing::error!("dialogue failed mid-stream: {e}");
                return Err(StreamError::new("speech synthesis failed mid-stream"));
            }
        };
        encoded.map_err(|e| {
            self.finished = true;
            tracing::error!("dialogue failed mid-stream: encoding: {e}");
            StreamError::new("encoding failed mid-stream")
        })
    }

    fn audio(bytes: &[u8], start: f64) -> Vec<u8> {
        if bytes.is_empty() {
            return Vec::new();
        }
        event(
            "audio",
            &json!({ "audio": sse::base64(bytes), "start": start }),
        )
    }

    fn bytes_for(&mut self, e: DialogueEvent) -> Vec<u8> {
        match e {
            DialogueEvent::Sentence { cue: m, voice } => event(
                "sentence",
                &json!({
                    "line": m.line, "source_line": m.source_line, "speaker": m.speaker,
                    "voice": voice, "text": m.text, "start": m.start, "end": m.end,
                    "words": m.words,
                }),
            ),
            DialogueEvent::Line(m) => event(
                "line",
                &json!({
                    "line": m.line, "source_line": m.source_line, "speaker": m.speaker,
                    "voice": m.voice, "start": m.start, "end": m.end,
                }),
            ),
            DialogueEvent::Audio { samples, start } => {
                self.samples += samples.len();
                match self.encoder.encode(&samples) {
                    Ok(bytes) => Self::audio(&bytes, start),
                    Err(e) => self.fail(&format!("encoding: {e}")),
                }
            }
            DialogueEvent::Done {
                lines,
                sentences,
                duration,
            } => {
                self.finished = true;
                let end = self.samples as f64 / f64::from(engine::SAMPLE_RATE);
                let mut out = match self.encoder.finish() {
                    Ok(tail) => Self::audio(&tail, end),
                    Err(e) => return self.fail(&format!("encoding: {e}")),
                };
                out.extend(event(
                    "done",
                    &json!({
                        "lines": lines, "sentences": sentences, "duration": duration,
                        "samples": self.samples, "response_format": self.format.name(),
                    }),
                ));
                out
            }
            DialogueEvent::Failed(e) => self.fail(&e.to_string()),
        }
    }

    fn fail(&mut self, why: &str) -> Vec<u8> {
        self.finished = true;
        tracing::error!("dialogue failed mid-stream: {why}");
        let error = ApiError::internal("speech synthesis failed mid-stream");
        event("error", &error.body())
    }
}

impl futures_core::Stream for DialogueBody {
    type Item = Result<Bytes, StreamError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if let Some(bytes) = this.preface.take() {
            this.state
                .metrics
                .bytes_sent
                .fetch_add(bytes.len() as u64, Ordering::Relaxed);
            return Poll::Ready(Some(Ok(Bytes::from(bytes))));
        }
        loop {
            if this.finished {
                return Poll::Ready(None);
            }
            let event = match this.pending.take() {
                Some(event) => event,
                None => match this.events.poll_recv(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Some(event)) => event,
                    Poll::Ready(None) => {
                        this.finished = true;
                        tracing::warn!("the backend gave a dialogue up before its end");
                        let e = StreamError::new("the engine gave the dialogue up");
                        return Poll::Ready(Some(Err(e)));
                    }
                },
            };
            let bytes = if this.sse {
                this.bytes_for(event)
            } else {
                match this.raw_bytes_for(event) {
                    Ok(bytes) => bytes,
                    Err(e) => return Poll::Ready(Some(Err(e))),
                }
            };
            if !bytes.is_empty() {
                this.state
                    .metrics
                    .bytes_sent
                    .fetch_add(bytes.len() as u64, Ordering::Relaxed);
                return Poll::Ready(Some(Ok(Bytes::from(bytes))));
            }
        }
    }
}

impl Drop for DialogueBody {
    fn drop(&mut self) {
        if !self.finished {
            self.state
                .metrics
                .cancelled_streams
                .fetch_add(1, Ordering::Relaxed);
            tracing::debug!(
                samples = self.samples,
                "client left mid-dialogue; cancelled"
            );
        }
    }
}
