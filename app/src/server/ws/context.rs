//! One context: text in (cut by a [`Chunker`]), one open engine stream, messages out.
//!
//! Three parts, so that none waits on another: the session's reader cuts the text as it
//! comes and queues the pieces (never blocking, so a `close_context` is seen at once); a feeder
//! task phonemizes the pieces in order and pushes them into the stream, keeping only a few
//! segments queued in the engine ahead of the model, so a cancelled context leaves little
//! behind; an output task turns the stream's audio into messages ([`super::align`]), and
//! waits on the socket's writer, which waits on the client: a client that stops reading stops
//! the output task, whose stream then rises past the scheduler's high watermark and stops
//! being scheduled (backpressure, never an unbounded buffer).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use engine::follow::{ChunkConfig, Chunker};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::super::backend::{BackendError, FollowEvent, FollowInput};
use super::super::sse::base64;
use super::align::Aligner;
use super::output::{ElevenLabsFormat, Encoder};
use super::protocol;

/// Segments the feeder lets wait in the engine ahead of the model.
const MAX_PENDING_SEGMENTS: usize = 4;

/// What the session's writer sends.
#[derive(Debug)]
pub enum Outgoing {
    Text(String),
    Close(u16, String),
}

/// A context that finished (its final message sent), or failed.
#[derive(Debug)]
pub struct Finished {
    pub id: String,
    /// The close code the failure calls for (the session decides).
    pub failure: Option<(u16, String)>,
}

pub struct Context {
    /// The id as the client's messages name it (`None` on the single-context endpoint).
    wire_id: Option<String>,
    chunker: Chunker,
    pieces: Option<mpsc::UnboundedSender<String>>,
    /// Characters queued for the feeder and not yet pushed.
    queued: Arc<AtomicUsize>,
    feeder: JoinHandle<()>,
    output: JoinHandle<()>,
    /// Text was flushed since the last text: `close_context` lets that audio finish.
    pub flushed: bool,
    /// Some text arrived (a second init for this id is a reuse).
    pub has_text: bool,
    /// Input ended (`{"text": ""}`, `close_context`, `close_socket`).
    pub ended: bool,
}

/// Everything a context is started with.
pub struct Start {
    pub id: String,
    pub wire_id: Option<String>,
    pub input: Box<dyn FollowInput>,
    pub events: mpsc::Receiver<FollowEvent>,
    pub config: ChunkConfig,
    pub format: ElevenLabsFormat,
    pub out: mpsc::Sender<Outgoing>,
    pub finished: mpsc::UnboundedSender<Finished>,
    /// Milliseconds since `epoch` of the last audio sent (the inactivity timer's).
    pub last_audio: Arc<AtomicU64>,
    pub epoch: Instant,
}

impl Context {
    pub fn start(s: Start) -> Result<Self, String> {
        let encoder = Encoder::new(s.format)?;
        let (pieces_tx, pieces_rx) = mpsc::unbounded_channel();
        let queued = Arc::new(AtomicUsize::new(0));
        let feeder = tokio::spawn(feed(
            s.input,
            pieces_rx,
            Arc::clone(&queued),
            s.out.clone(),
            s.wire_id.clone(),
        ));
        let output = tokio::spawn(output(Output {
            events: s.events,
            out: s.out,
            encoder,
            id: s.id.clone(),
            wire_id: s.wire_id.clone(),
            finished: s.finished,
            last_audio: s.last_audio,
            epoch: s.epoch,
        }));
        Ok(Self {
            wire_id: s.wire_id,
            chunker: Chunker::new(s.config),
            pieces: Some(pieces_tx),
            queued,
            feeder,
            output,
            flushed: false,
            has_text: false,
            ended: false,
        })
    }

    /// Adds text (and flushes, when asked); returns the characters now waiting.
    pub fn text(&mut self, text: &str, flush: bool) -> usize {
        if !text.is_empty() {
            self.has_text = true;
            self.flushed = false;
        }
        let mut ready = self.chunker.push(text);
        if flush {
            ready.extend(self.chunker.flush());
            self.flushed = true;
        }
        for piece in ready {
            self.queue(piece);
        }
        self.waiting()
    }

    /// Characters buffered or queued and not yet in the engine.
    pub fn waiting(&self) -> usize {
        self.chunker.buffered_chars() + self.queued.load(Ordering::Relaxed)
    }

    fn queue(&mut self, piece: String) {
        if let Some(tx) = &self.pieces {
            self.queued
                .fetch_add(piece.chars().count(), Ordering::Relaxed);
            let _ = tx.send(piece);
        }
    }

    /// The input is complete: what is buffered is spoken, then the final message.
    pub fn finish_input(&mut self) {
        if let Some(rest) = self.chunker.flush() {
            self.queue(rest);
        }
        self.pieces = None; // the feeder ends after the queued pieces; the stream then ends
        self.ended = true;
    }

    /// Stops at once: nothing more is spoken; the final message goes out now.
    pub async fn cancel(mut self, out: &mpsc::Sender<Outgoing>) {
        self.pieces = None;
        self.feeder.abort();
        self.output.abort();
        // Dropping the output task dropped the stream's receiver: the scheduler drops the
        // stream's remaining work before its next step.
        let _ = out
            .send(Outgoing::Text(protocol::final_message(
                self.wire_id.as_deref(),
            )))
            .await;
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        if self.pieces.is_some() {
            // Dropped without an end (the socket went away): stop everything.
            self.feeder.abort();
            self.output.abort();
        }
    }
}

/// Pushes the pieces into the stream in order, a few segments ahead of the model.
async fn feed(
    mut input: Box<dyn FollowInput>,
    mut pieces: mpsc::UnboundedReceiver<String>,
    queued: Arc<AtomicUsize>,
    out: mpsc::Sender<Outgoing>,
    wire_id: Option<String>,
) {
    while let Some(piece) = pieces.recv().await {
        while input.pending() >= MAX_PENDING_SEGMENTS {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let n = piece.chars().count();
        let pushed = tokio::task::spawn_blocking(move || {
            let result = input.push(&piece);
            (input, result)
        })
        .await;
        queued.fetch_sub(n, Ordering::Relaxed);
        let Ok((back, result)) = pushed else {
            return;
        };
        input = back;
        if let Err(e) = result {
            let (code, message) = describe(&e);
            let _ = out
                .send(Outgoing::Text(protocol::error(
                    code,
                    &message,
                    None,
                    wire_id.as_deref(),
                )))
                .await;
            if !matches!(e, BackendError::Input { .. }) {
                return; // dropping `input` ends the stream after what was pushed
            }
        }
    }
}

fn describe(e: &BackendError) -> (&'static str, String) {
    match e {
        BackendError::Input { message, .. } => ("invalid_text", message.clone()),
        BackendError::Busy { queued } => (
            "queue_full",
            format!("{queued} speech jobs are already waiting"),
        ),
        BackendError::Stopped => ("unavailable", "the speech engine has stopped".into()),
        BackendError::Internal(m) => {
            tracing::error!("streaming speech failed: {m}");
            (
                "internal_error",
                "speech synthesis failed; the server log has details".into(),
            )
        }
    }
}

struct Output {
    events: mpsc::Receiver<FollowEvent>,
    out: mpsc::Sender<Outgoing>,
    encoder: Encoder,
    id: String,
    wire_id: Option<String>,
    finished: mpsc::UnboundedSender<Finished>,
    last_audio: Arc<AtomicU64>,
    epoch: Instant,
}

/// The stream's audio as messages, then the final message.
async fn output(mut o: Output) {
    let mut aligner = Aligner::default();
    let failure = loop {
        let (piece, done) = match o.events.recv().await {
            Some(FollowEvent::Chunk {
                samples,
                chars,
                segment_end,
            }) => (aligner.chunk(&samples, chars, segment_end), false),
            Some(FollowEvent::Done) => (aligner.finish(), true),
            Some(FollowEvent::Failed(e)) => {
                let (code, message) = describe(&e);
                let close = match e {
                    BackendError::Busy { .. } => super::protocol::close::TRY_LATER,
                    BackendError::Input { .. } => super::protocol::close::POLICY,
                    _ => super::protocol::close::INTERNAL,
                };
                let _ = o
                    .out
                    .send(Outgoing::Text(protocol::error(
                        code,
                        &message,
                        Some(close),
                        o.wire_id.as_deref(),
                    )))
                    .await;
                break Some((close, message));
            }
            None => {
                break Some((
                    super::protocol::close::INTERNAL,
                    "the speech stream stopped".to_owned(),
                ))
            }
        };
        let mut bytes = Vec::new();
        let mut alignment = None;
        if let Some(piece) = piece {
            match o.encoder.encode(&piece.samples) {
                Ok(b) => bytes = b,
                Err(e) => tracing::error!("encoding streamed audio: {e}"),
            }
            alignment = piece.alignment;
        }
        if done {
            bytes.extend(o.encoder.finish().unwrap_or_default());
        }
        if !bytes.is_empty() || alignment.is_some() {
            let msg = protocol::audio(&base64(&bytes), alignment.as_ref(), o.wire_id.as_deref());
            if o.out.send(Outgoing::Text(msg)).await.is_err() {
                return;
            }
            let ms = o.epoch.elapsed().as_millis() as u64;
            o.last_audio.store(ms, Ordering::Relaxed);
        }
        if done {
            let _ = o
                .out
                .send(Outgoing::Text(protocol::final_message(
                    o.wire_id.as_deref(),
                )))
                .await;
            break None;
        }
    };
    let _ = o.finished.send(Finished { id: o.id, failure });
}
