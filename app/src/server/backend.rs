//! What the HTTP layer needs from a speech engine, as a small trait, and today's implementation:
//! one [`Synthesizer`] on one named worker thread, one job at a time.
//!
//! The trait is the seam where the engine's streaming scheduler plugs in later: the routes only
//! see [`SpeechBackend::start`], which queues a job and returns a bounded receiver of
//! [`AudioEvent`]s. Bounded, so a slow client slows its own job (backpressure) instead of piling
//! audio up in memory; and dropping the receiver is how the HTTP side says "the client left":
//! the backend must stop that job at its next chunk.
//!
//! The contract of the receiver: zero or more `Chunk`s, then exactly one `Done` or `Failed`. A
//! channel that closes without either means the backend gave the job up (the HTTP side then
//! aborts the response instead of passing truncated audio off as complete).

use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::Duration;

use engine::synth::{SpeechRequest, SynthError, Synthesizer, SPEED_RANGE};
use engine::voice::{StockVoice, VoiceSpec};
use tokio::sync::mpsc;

/// Audio chunks that may wait in a job's channel before the worker blocks.
const CHUNKS_IN_FLIGHT: usize = 2;
/// A client that reads nothing for this long loses its job, so it cannot hold the model forever.
const STALL_LIMIT: Duration = Duration::from_mins(1);

/// One request for speech, already validated by the HTTP layer (voice names resolved, speed in
/// the engine's range).
#[derive(Debug, Clone)]
pub struct SpeechJob {
    pub text: String,
    /// A stock voice or a blend (`af_bella:0.7+af_sky:0.3`).
    pub voice: String,
    pub speed: f32,
}

/// What a job's receiver yields: see the module docs for the contract.
#[derive(Debug)]
pub enum AudioEvent {
    /// 24 kHz mono samples, in order.
    Chunk(Vec<f32>),
    /// Everything has been said.
    Done,
    /// The job failed; nothing more follows.
    Failed(BackendError),
}

/// Why a job could not start or did not finish.
#[derive(Debug, Clone, thiserror::Error)]
pub enum BackendError {
    /// The caller's input was wrong (unknown voice, nothing speakable...): a 400.
    #[error("{message}")]
    Input {
        field: &'static str,
        message: String,
    },
    /// The queue is full: a 429.
    #[error("{queued} jobs are already queued")]
    Busy { queued: usize },
    /// The engine is gone (its thread stopped): a 503.
    #[error("the speech engine has stopped")]
    Stopped,
    /// The model failed: a 500; the message is for the log.
    #[error("{0}")]
    Internal(String),
}

/// A speech engine the HTTP layer can drive.
pub trait SpeechBackend: Send + Sync + 'static {
    /// Queues `job`; returns its audio as a bounded stream (see [`AudioEvent`]).
    fn start(&self, job: SpeechJob) -> Result<mpsc::Receiver<AudioEvent>, BackendError>;
    /// The stock voices, sorted by name.
    fn voices(&self) -> Vec<StockVoice>;
}

/// [`SpeechBackend`] over one [`Synthesizer`]: jobs run one after the other on a named thread.
pub struct SynthBackend {
    jobs: SyncSender<Queued>,
    voices: Vec<StockVoice>,
    queue_cap: usize,
}

struct Queued {
    job: SpeechJob,
    request: SpeechRequest,
    reply: mpsc::Sender<AudioEvent>,
}

impl SynthBackend {
    /// Starts the worker thread; at most `queue_cap` jobs wait behind the running one.
    /// `runtime` lets the worker wait for a slow client with a time limit.
    pub fn spawn(
        synth: Synthesizer,
        queue_cap: usize,
        runtime: tokio::runtime::Handle,
    ) -> std::io::Result<Self> {
        let voices = synth.stock_voices();
        let (jobs, queue) = sync_channel::<Queued>(queue_cap);
        let synth = Arc::new(synth);
        std::thread::Builder::new()
            .name("speech-worker".into())
            .spawn(move || {
                for queued in queue {
                    if queued.reply.is_closed() {
                        continue; // the client left while the job was waiting
                    }
                    run_job(&synth, &runtime, &queued);
                }
            })?;
        Ok(Self {
            jobs,
            voices,
            queue_cap,
        })
    }
}

impl SpeechBackend for SynthBackend {
    fn start(&self, job: SpeechJob) -> Result<mpsc::Receiver<AudioEvent>, BackendError> {
        let request = SpeechRequest::new(&job.voice, job.speed).map_err(|e| input_error(&e))?;
        check_voices(&request.voice, &self.voices)?;
        if !(SPEED_RANGE.0..=SPEED_RANGE.1).contains(&job.speed) {
            return Err(BackendError::Input {
                field: "speed",
                message: format!(
                    "speed {} is outside {}–{}",
                    job.speed, SPEED_RANGE.0, SPEED_RANGE.1
                ),
            });
        }
        let (reply, receiver) = mpsc::channel(CHUNKS_IN_FLIGHT);
        match self.jobs.try_send(Queued {
            job,
            request,
            reply,
        }) {
            Ok(()) => Ok(receiver),
            Err(TrySendError::Full(_)) => Err(BackendError::Busy {
                queued: self.queue_cap,
            }),
            Err(TrySendError::Disconnected(_)) => Err(BackendError::Stopped),
        }
    }

    fn voices(&self) -> Vec<StockVoice> {
        self.voices.clone()
    }
}

/// Runs one job to its end, or until the client drops its receiver or stops reading.
fn run_job(synth: &Synthesizer, runtime: &tokio::runtime::Handle, queued: &Queued) {
    let send = |event: AudioEvent| -> bool {
        runtime.block_on(async {
            matches!(
                tokio::time::timeout(STALL_LIMIT, queued.reply.send(event)).await,
                Ok(Ok(()))
            )
        })
    };
    let mut stream = match synth.stream(&queued.job.text, &queued.request) {
        Ok(stream) => stream,
        Err(e) => {
            send(AudioEvent::Failed(synth_error(&e)));
            return;
        }
    };
    loop {
        match stream.next_chunk() {
            Ok(Some(chunk)) => {
                if !send(AudioEvent::Chunk(chunk.samples)) {
                    tracing::debug!("speech job stopped: the client left or stopped reading");
                    return;
                }
            }
            Ok(None) => {
                send(AudioEvent::Done);
                return;
            }
            Err(e) => {
                send(AudioEvent::Failed(synth_error(&e)));
                return;
            }
        }
    }
}

fn check_voices(spec: &VoiceSpec, voices: &[StockVoice]) -> Result<(), BackendError> {
    for term in &spec.terms {
        if !voices.iter().any(|v| v.name == term.voice) {
            return Err(BackendError::Input {
                field: "voice",
                message: format!(
                    "unknown voice `{}`; GET /v1/voices lists them (or use alloy, ash, ballad, \
                     coral, echo, fable, onyx, nova, sage, shimmer, verse)",
                    term.voice
                ),
            });
        }
    }
    Ok(())
}

fn input_error(e: &SynthError) -> BackendError {
    let field = match e {
        SynthError::Voice(_) => "voice",
        SynthError::Speed { .. } => "speed",
        _ => "input",
    };
    BackendError::Input {
        field,
        message: e.to_string(),
    }
}

fn synth_error(e: &SynthError) -> BackendError {
    if e.is_input_error() {
        input_error(e)
    } else {
        BackendError::Internal(e.to_string())
    }
}
