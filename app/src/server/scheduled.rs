//! [`SpeechBackend`] over the [`Engine`]: the one the studio and exports share.
//!
//! Each job becomes an interactive scheduler stream; a small task forwards its audio into the
//! bounded channel the HTTP side reads. When the client reads slowly the forwarder waits, the
//! stream's unread audio rises past the scheduler's high watermark and the model turns to other
//! streams; when the client leaves, the channel closes, the forwarder drops the stream handle,
//! and the scheduler drops the stream's remaining segments before its next step. Dialogues
//! (`POST /v1/dialogue`) go through the same scheduler: see [`super::dialogue`].

use engine::voice::StockVoice;
use engine::words::WordTrack;
use engine::{Engine, Mode, SchedulerError, StreamEvent, StreamHandle};
use engine::{SpeechRequest, SPEED_RANGE};
use tokio::sync::mpsc;

use super::backend::{check_voices, input_error, library_request, synth_error};
use super::backend::{AudioEvent, BackendError, SpeechBackend, SpeechJob};
use super::backend::{FollowEvent, FollowInput, FollowJob};
use super::dialogue::{self, DialogueEvent, DialogueJob};

/// Chunks (segments) that may wait between the forwarder and the HTTP body.
const CHUNKS_IN_FLIGHT: usize = 2;

pub struct SchedulerBackend {
    engine: Engine,
    voices: Vec<StockVoice>,
    runtime: tokio::runtime::Handle,
}

/// A 400 for a speed outside Kokoro's range (the HTTP layer clamps OpenAI's wider one first).
fn check_speed(speed: f32) -> Result<(), BackendError> {
    if SPEED_RANGE.contains(&speed) {
        return Ok(());
    }
    Err(BackendError::Input {
        field: "speed",
        message: format!(
            "speed {speed} is outside {}–{}",
            SPEED_RANGE.start(),
            SPEED_RANGE.end()
        ),
    })
}

impl SchedulerBackend {
    #[must_use]
    pub fn new(engine: Engine, runtime: tokio::runtime::Handle) -> Self {
        Self {
            voices: engine.stock_voices(),
            engine,
            runtime,
        }
    }
}

impl SchedulerBackend {
    /// The request for `voice`: a library voice (blend, matched or tuned, by name) first,
    /// then a stock voice or blend with OpenAI's names mapped; the speed in Kokoro's range.
    fn request_for(&self, voice: &str, speed: f32) -> Result<SpeechRequest, BackendError> {
        check_speed(speed)?;
        if let Some(request) = library_request(&self.engine, &self.voices, voice, speed) {
            return Ok(request);
        }
        let name =
            super::routes::speech::resolve_voice(voice).map_err(|e| BackendError::Input {
                field: "voice",
                message: e.message,
            })?;
        let request = SpeechRequest::new(&name, speed).map_err(|e| input_error(&e))?;
        check_voices(&request.voice, &self.voices)?;
        Ok(request)
    }
}

impl SpeechBackend for SchedulerBackend {
    fn start(&self, job: SpeechJob) -> Result<mpsc::Receiver<AudioEvent>, BackendError> {
        let request = self.request_for(&job.voice, job.speed)?;
        // Phonemes (and the words, when asked) are made here, on the request's thread, while
        // the model works on others.
        let (segments, track) = if job.words {
            let (segments, track) = self
                .engine
                .segments_with_words(&job.text, &request)
                .map_err(|e| synth_error(&e))?;
            (segments, Some(track))
        } else {
            let segments = self
                .engine
                .segments(&job.text, &request)
                .map_err(|e| synth_error(&e))?;
            (segments, None)
        };
        let handle = self
            .engine
            .submit(segments, request, Mode::Interactive)
            .map_err(|e| match e {
                SchedulerError::QueueFull { waiting } => BackendError::Busy { queued: waiting },
                SchedulerError::Shutdown | SchedulerError::Ended => BackendError::Stopped,
                SchedulerError::Synth(e) => synth_error(&e),
            })?;
        let (tx, rx) = mpsc::channel(CHUNKS_IN_FLIGHT);
        self.runtime.spawn(forward(handle, track, tx));
        Ok(rx)
    }

    fn open_follow(
        &self,
        job: FollowJob,
    ) -> Result<(Box<dyn FollowInput>, mpsc::Receiver<FollowEvent>), BackendError> {
        let request = self.request_for(&job.voice, job.speed)?;
        let (input, rx) = super::scheduled_follow::open(&self.engine, request, &self.runtime)?;
        Ok((Box::new(input), rx))
    }

    fn start_dialogue(
        &self,
        job: DialogueJob,
    ) -> Result<mpsc::Receiver<DialogueEvent>, BackendError> {
        dialogue::start(&self.engine, &self.runtime, job)
    }

    fn voices(&self) -> Vec<StockVoice> {
        self.voices.clone()
    }

    fn metrics_text(&self) -> String {
        self.engine.metrics().prometheus()
    }
}

/// Passes the stream's audio on; with a `track`, times each segment's words when its first
/// chunk (the one with the durations) comes, from the samples sent before it.
async fn forward(mut handle: StreamHandle, track: Option<WordTrack>, tx: mpsc::Sender<AudioEvent>) {
    let mut sent: u64 = 0;
    loop {
        let event = match handle.next().await {
            Some(StreamEvent::Audio {
                samples,
                segment,
                durations,
                ..
            }) => {
                let words = match (&track, durations) {
                    (Some(track), Some(durations)) => {
                        track.segment_words(segment, &durations, sent)
                    }
                    _ => Vec::new(),
                };
                sent += samples.len() as u64;
                AudioEvent::Chunk { samples, words }
            }
            Some(StreamEvent::Failed(e)) => AudioEvent::Failed(synth_error(&e)),
            None => AudioEvent::Done,
        };
        let last = !matches!(event, AudioEvent::Chunk { .. });
        if tx.send(event).await.is_err() || last {
            return; // the client left (dropping `handle` cancels the stream), or all was said
        }
    }
}
