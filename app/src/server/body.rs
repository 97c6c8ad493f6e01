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
use super::sse::WordQueue;
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
    /// Timed words not yet sent (SSE only).
    words: WordQueue,
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
            words: WordQueue::default(),
            outcome: Outcome::Streaming,
            _active: active,
            _held: held,
        }
    }

    /// Bytes for one event (empty when nothing is to be sent for it).
    fn bytes_for(&mut self, event: AudioEvent) -> Result<Vec<u8>, StreamError> {
        let encoded = match event {
            AudioEvent::Chunk { samples, words } => {
                self.samples += samples.len();
                self.words.push(words);
                self.encoder
                    .encode(&samples)
                    .map(|bytes| self.frame(&bytes, false))
            }
            AudioEvent::Done => {
                self.outcome = Outcome::Completed;
                self.encoder.finish().map(|tail| {
                    let mut out = self.frame(&tail, true);
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

    /// `bytes` as the body sends them: as they are, or as an SSE delta with the words that
    /// start in the audio so far (at the `last`, every word left, even with no bytes).
    fn frame(&mut self, bytes: &[u8], last: bool) -> Vec<u8> {
        if !self.sse {
            return bytes.to_vec();
        }
        let words = if last {
            self.words.take_all()
        } else if bytes.is_empty() {
            Vec::new() // the encoder holds the audio back; so do the words
        } else {
            let end = self.samples as f64 / f64::from(engine::SAMPLE_RATE);
            self.words.take_until(end)
        };
        if bytes.is_empty() && words.is_empty() {
            return Vec::new();
        }
        sse::delta(bytes, &words)
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

#[cfg(test)]
mod tests {
    use std::future::poll_fn;

    use futures_core::Stream;

    use engine::words::TimedWord;

    use super::*;
    use crate::server::backend::{
        BackendError, DialogueEvent, DialogueJob, SpeechBackend, SpeechJob,
    };
    use crate::server::format::{encoder_for, AudioFormat};
    use crate::server::sse::tests::word;

    struct NoBackend;

    impl SpeechBackend for NoBackend {
        fn start(&self, _job: SpeechJob) -> Result<mpsc::Receiver<AudioEvent>, BackendError> {
            Err(BackendError::Stopped)
        }

        fn start_dialogue(
            &self,
            _job: DialogueJob,
        ) -> Result<mpsc::Receiver<DialogueEvent>, BackendError> {
            Err(BackendError::Stopped)
        }

        fn voices(&self) -> Vec<engine::voice::StockVoice> {
            Vec::new()
        }
    }

    fn chunk(secs: f64, words: Vec<TimedWord>) -> AudioEvent {
        AudioEvent::Chunk {
            samples: vec![0.1; (secs * 24_000.0).round() as usize],
            words,
        }
    }

    /// The SSE body hands each word to the delta whose audio holds its start: words come with
    /// their segment's first chunk but wait for the audio; every word is sent once, in order.
    #[tokio::test(flavor = "current_thread")]
    async fn sse_deltas_carry_the_words_that_start_in_them() {
        let state = crate::server::Shared::for_tests(Box::new(NoBackend));
        let slot = state.jobs.acquire(4).expect("a job slot");
        let (tx, rx) = mpsc::channel(8);
        let first = chunk(
            0.25,
            vec![
                word("One", 0.05, 0.3),
                word("two", 0.3, 0.7),
                word("three", 0.7, 1.1),
            ],
        );
        for event in [
            chunk(0.95, Vec::new()),
            chunk(
                0.8,
                vec![
                    word("four", 1.25, 1.6),
                    word("five", 1.6, 2.0),
                    word("six", 2.0, 2.0),
                ],
            ),
            AudioEvent::Done,
        ] {
            tx.send(event).await.expect("queued");
        }
        drop(tx);
        let encoder = encoder_for(AudioFormat::Pcm).expect("pcm");
        let mut body = AudioBody::new(state, rx, first, encoder, true, 5, (slot, None));
        let mut text = String::new();
        while let Some(bytes) = poll_fn(|cx| Pin::new(&mut body).poll_next(cx)).await {
            text.push_str(std::str::from_utf8(&bytes.expect("bytes")).expect("utf-8"));
        }
        let events: Vec<serde_json::Value> = text
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|l| serde_json::from_str(l).expect("JSON"))
            .collect();
        let (done, deltas) = events.split_last().expect("events");
        assert_eq!(done["type"], "speech.audio.done");
        let mut audio_end = 0.0;
        let mut said = Vec::new();
        for delta in deltas {
            let from = audio_end;
            // Chunks of whole multiples of 3 bytes: no base64 padding.
            let bytes = delta["audio"].as_str().expect("audio").len() * 3 / 4;
            audio_end += bytes as f64 / 2.0 / 24_000.0;
            for w in delta["words"].as_array().expect("words") {
                let start = w["start"].as_f64().expect("start");
                assert!(
                    from <= start && (start < audio_end || bytes == 0),
                    "{w} in a delta of {from}..{audio_end}"
                );
                said.push(w["word"].as_str().expect("word").to_owned());
            }
        }
        assert_eq!(said, ["One", "two", "three", "four", "five", "six"]);
        let counts: Vec<usize> = deltas
            .iter()
            .map(|d| d["words"].as_array().map_or(0, Vec::len))
            .collect();
        assert_eq!(counts, [1, 2, 2, 1], "the last word comes with the end");
    }
}
