//! [`SpeechBackend::open_follow`](super::backend::SpeechBackend::open_follow) over the engine: text still being written becomes one open
//! scheduler stream ([`Engine::open`]) that takes each piece's segments as it comes.
//!
//! Each piece is phonemized with its words mapped ([`Engine::segments_with_words`]) and noted
//! with the segment it starts at before its segments are pushed, so when a segment's first
//! chunk arrives (with the durations) the forwarder knows which piece and which of its words it
//! speaks, times them, and spreads the times over the piece's characters
//! ([`engine::follow::char_times`]) for the WebSocket's alignment messages.

use std::sync::{Arc, Mutex, PoisonError};

use engine::follow::{char_times, CharTime};
use engine::words::WordTrack;
use engine::SpeechRequest;
use engine::{Engine, Mode, SchedulerError, StreamEvent, StreamFeed, StreamHandle};
use tokio::sync::mpsc;

use super::backend::{synth_error, BackendError, FollowEvent, FollowInput};

/// Chunks that may wait between the forwarder and the socket.
const CHUNKS_IN_FLIGHT: usize = 2;

/// A piece of text and the segments that speak it.
struct Piece {
    text: String,
    /// The stream's segment number of the piece's first segment.
    first: usize,
    track: WordTrack,
}

type Pieces = Arc<Mutex<Vec<Piece>>>;

fn lock(pieces: &Pieces) -> std::sync::MutexGuard<'_, Vec<Piece>> {
    pieces.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(super) struct Input {
    engine: Engine,
    request: SpeechRequest,
    feed: StreamFeed,
    pieces: Pieces,
    segments: usize,
}

impl FollowInput for Input {
    fn push(&mut self, piece: &str) -> Result<(), BackendError> {
        let (segments, track) = match self.engine.segments_with_words(piece, &self.request) {
            Ok(made) => made,
            // Nothing to say in it (punctuation, an emoji): skip it, the stream goes on.
            Err(e) if e.is_input_error() && !piece.chars().any(char::is_alphanumeric) => {
                return Ok(())
            }
            Err(e) => return Err(synth_error(&e)),
        };
        if segments.is_empty() {
            return Ok(());
        }
        let n = segments.len();
        lock(&self.pieces).push(Piece {
            text: piece.to_owned(),
            first: self.segments,
            track,
        });
        self.segments += n;
        self.feed.push(segments).map_err(|e| match e {
            SchedulerError::Shutdown => BackendError::Stopped,
            SchedulerError::Ended => BackendError::Internal("the stream has ended".into()),
            SchedulerError::QueueFull { waiting } => BackendError::Busy { queued: waiting },
            SchedulerError::Synth(e) => synth_error(&e),
        })
    }

    fn pending(&self) -> usize {
        self.feed.pending()
    }
}

/// Opens the stream and starts its forwarder on `runtime`.
pub(super) fn open(
    engine: &Engine,
    request: SpeechRequest,
    runtime: &tokio::runtime::Handle,
) -> Result<(Input, mpsc::Receiver<FollowEvent>), BackendError> {
    let (feed, handle) = engine
        .open(request.clone(), Mode::Interactive)
        .map_err(|e| match e {
            SchedulerError::QueueFull { waiting } => BackendError::Busy { queued: waiting },
            SchedulerError::Shutdown | SchedulerError::Ended => BackendError::Stopped,
            SchedulerError::Synth(e) => synth_error(&e),
        })?;
    let pieces: Pieces = Arc::default();
    let (tx, rx) = mpsc::channel(CHUNKS_IN_FLIGHT);
    runtime.spawn(forward(handle, Arc::clone(&pieces), tx));
    Ok((
        Input {
            engine: engine.clone(),
            request,
            feed,
            pieces,
            segments: 0,
        },
        rx,
    ))
}

/// Passes the stream's audio on, with each segment's characters timed on its first chunk.
async fn forward(mut handle: StreamHandle, pieces: Pieces, tx: mpsc::Sender<FollowEvent>) {
    let mut sent: u64 = 0;
    loop {
        let event = match handle.next().await {
            Some(StreamEvent::Audio {
                samples,
                segment,
                segment_end,
                durations,
            }) => {
                let chars = durations
                    .map(|d| segment_chars(&lock(&pieces), segment, &d, sent))
                    .unwrap_or_default();
                sent += samples.len() as u64;
                FollowEvent::Chunk {
                    samples,
                    chars,
                    segment_end,
                }
            }
            Some(StreamEvent::Failed(e)) => FollowEvent::Failed(synth_error(&e)),
            None => FollowEvent::Done,
        };
        let last = !matches!(event, FollowEvent::Chunk { .. });
        if tx.send(event).await.is_err() || last {
            return;
        }
    }
}

/// The characters segment `segment` (of the stream) speaks, timed from its durations, its audio
/// starting `start` samples into the stream.
fn segment_chars(pieces: &[Piece], segment: usize, durations: &[u32], start: u64) -> Vec<CharTime> {
    let Some(piece) = pieces
        .iter()
        .rev()
        .find(|p| p.first <= segment)
        .filter(|p| segment - p.first < p.track.segment_count())
    else {
        return Vec::new();
    };
    let local = segment - piece.first;
    let span = piece.track.segment_span(local, piece.text.len());
    let text = &piece.text[span.clone()];
    let frames: u64 = durations.iter().map(|&d| u64::from(d)).sum();
    let end = start + frames * engine::words::SAMPLES_PER_FRAME;
    let rate = f64::from(engine::SAMPLE_RATE);
    let words: Vec<(std::ops::Range<usize>, u64, u64)> = piece
        .track
        .segment_words(local, durations, start)
        .into_iter()
        .zip(piece.track.segment_sources(local))
        .filter(|(_, src)| src.start >= span.start && src.end <= span.end)
        .map(|(w, src)| {
            let from = text[..src.start - span.start].chars().count();
            let len = piece.text[src].chars().count();
            (
                from..from + len,
                (w.start * rate).round() as u64,
                (w.end * rate).round() as u64,
            )
        })
        .collect();
    char_times(text, &words, start, end)
}
