//! The body of ElevenLabs' `POST /v1/text-to-speech/{voice_id}/stream/with-timestamps`: one
//! JSON object per line, each with the next piece of audio (base64) and the characters of the
//! text that start in the audio sent so far.
//!
//! Why a follow stream ([`FollowEvent`]) and not the speech route's [`AudioEvent`]s: its
//! chunks carry each segment's characters already timed, tiling the segment
//! ([`engine::follow::char_times`]), as the WebSocket's alignment uses them; words alone leave
//! the spaces and punctuation between two segments untimed until the next one is made.
//!
//! Times are seconds from the response's first sample, not from the line's: the clients that
//! read this route (the ElevenLabs SDKs, pipecat's `ElevenLabsHttpTTSService`) take a word's
//! time as its first character's start as sent, and the utterance's length as the latest end.
//! A character goes out with the first line whose audio reaches its start; a segment's last
//! chunk (and the end) takes every character of its segment still held, so each character of
//! the text is sent once, in order, never ahead of its audio. The MP3 encoder holds a few
//! milliseconds back: characters go by the samples given to it, which is what the times count.
//!
//! [`AudioEvent`]: super::backend::AudioEvent

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};

use axum::body::Bytes;
use engine::follow::CharTime;
use engine::SAMPLE_RATE;
use tokio::sync::mpsc;

use super::backend::FollowEvent;
use super::body::StreamError;
use super::listener::BusyGuard;
use super::metrics::GaugeGuard;
use super::ws::ElevenLabsEncoder;
use super::{sse, AppState, JobSlot};

/// Characters waiting for their audio, and how much audio has gone.
#[derive(Debug, Default)]
pub(crate) struct Chars {
    held: VecDeque<CharTime>,
    /// Samples given to the encoder so far.
    pub(crate) samples: u64,
}

impl Chars {
    /// Takes a chunk's `samples` and (on a segment's first chunk) its characters; returns the
    /// characters to send with it: those starting in the audio so far, or all held at a
    /// segment's end.
    pub(crate) fn chunk(
        &mut self,
        samples: usize,
        chars: Vec<CharTime>,
        segment_end: bool,
    ) -> Vec<CharTime> {
        self.samples += samples as u64;
        self.held.extend(chars);
        let take = if segment_end {
            self.held.len()
        } else {
            self.held
                .iter()
                .take_while(|c| c.start < self.samples)
                .count()
        };
        self.held.drain(..take).collect()
    }

    /// Holds `chars` (timed ahead of their audio) until the audio reaches them.
    pub(crate) fn hold(&mut self, chars: Vec<CharTime>) {
        self.held.extend(chars);
    }

    /// Whatever is still held, at the end of the stream.
    pub(crate) fn finish(&mut self) -> Vec<CharTime> {
        self.held.drain(..).collect()
    }
}

/// One line's JSON: the audio, and the characters' alignment (`null` when none start in it).
pub(crate) fn line_json(audio: &[u8], chars: &[CharTime]) -> serde_json::Value {
    let secs = |s: u64| (s as f64 / f64::from(SAMPLE_RATE) * 1000.0).round() / 1000.0;
    let alignment = (!chars.is_empty()).then(|| {
        serde_json::json!({
            "characters": chars.iter().map(|c| c.ch.to_string()).collect::<Vec<_>>(),
            "character_start_times_seconds": chars.iter().map(|c| secs(c.start)).collect::<Vec<_>>(),
            "character_end_times_seconds": chars.iter().map(|c| secs(c.end)).collect::<Vec<_>>(),
        })
    });
    serde_json::json!({
        "audio_base64": sse::base64(audio),
        // Banter's reading of numbers is not exposed character by character.
        "normalized_alignment": alignment,
        "alignment": alignment,
    })
}

/// `value` as one line of the body.
pub(crate) fn to_line(value: &serde_json::Value) -> Vec<u8> {
    let mut out = value.to_string().into_bytes();
    out.push(b'\n');
    out
}

/// One line: the audio, and the characters' alignment (`null` when none start in it).
fn line(audio: &[u8], chars: &[CharTime]) -> Vec<u8> {
    to_line(&line_json(audio, chars))
}

/// What an event became: a line to send (possibly empty: nothing to say), and whether it was
/// the last.
pub(crate) struct Step {
    pub bytes: Vec<u8>,
    pub last: bool,
}

/// Turns a route's events into the body's lines: the follow stream's for speech
/// ([`FollowLines`]), the dialogue driver's for text to dialogue
/// (`server::timestamped_dialogue`).
pub(crate) trait Lines: Send + Unpin + 'static {
    type Event: Send + Unpin + 'static;
    /// The line for `event`; an error (the job failed, or encoding did) cuts the body off.
    fn step(&mut self, event: Self::Event) -> Result<Step, String>;
    /// Samples sent so far (for the log when the client leaves).
    fn samples(&self) -> u64;
}

/// The follow stream's chunks as lines.
pub(crate) struct FollowLines {
    encoder: ElevenLabsEncoder,
    chars: Chars,
}

impl FollowLines {
    pub fn new(encoder: ElevenLabsEncoder) -> Self {
        Self {
            encoder,
            chars: Chars::default(),
        }
    }
}

impl Lines for FollowLines {
    type Event = FollowEvent;

    fn step(&mut self, event: FollowEvent) -> Result<Step, String> {
        let (audio, chars, last) = match event {
            FollowEvent::Chunk {
                samples,
                chars,
                segment_end,
            } => {
                let chars = self.chars.chunk(samples.len(), chars, segment_end);
                (self.encoder.encode(&samples), chars, false)
            }
            FollowEvent::Done => (self.encoder.finish(), self.chars.finish(), true),
            FollowEvent::Failed(e) => return Err(e.to_string()),
        };
        let audio = audio.map_err(|e| format!("encoding: {e}"))?;
        let bytes = if audio.is_empty() && chars.is_empty() {
            Vec::new()
        } else {
            line(&audio, &chars)
        };
        Ok(Step { bytes, last })
    }

    fn samples(&self) -> u64 {
        self.chars.samples
    }
}

pub(crate) struct TimestampedBody<L: Lines> {
    state: AppState,
    events: mpsc::Receiver<L::Event>,
    pending: Option<L::Event>,
    lines: L,
    /// `None` while streaming; whether it completed once it stopped.
    completed: Option<bool>,
    _active: GaugeGuard,
    _held: (JobSlot, Option<BusyGuard>),
}

impl<L: Lines> TimestampedBody<L> {
    /// `first` is the event the handler already received (it waits for it before answering).
    pub fn new(
        state: AppState,
        events: mpsc::Receiver<L::Event>,
        first: L::Event,
        lines: L,
        held: (JobSlot, Option<BusyGuard>),
    ) -> Self {
        let active = state.metrics.active_streams.enter();
        Self {
            state,
            events,
            pending: Some(first),
            lines,
            completed: None,
            _active: active,
            _held: held,
        }
    }

    /// The line for one event (empty when it has neither audio nor characters).
    fn bytes_for(&mut self, event: L::Event) -> Result<Vec<u8>, StreamError> {
        match self.lines.step(event) {
            Ok(Step { bytes, last }) => {
                if last {
                    self.completed = Some(true);
                }
                Ok(bytes)
            }
            Err(why) => Err(self.fail(&why)),
        }
    }

    /// A failure mid-stream cuts the body off, so the client sees it incomplete.
    fn fail(&mut self, why: &str) -> StreamError {
        self.completed = Some(false);
        tracing::error!("speech failed mid-stream: {why}");
        StreamError::new(why)
    }
}

impl<L: Lines> futures_core::Stream for TimestampedBody<L> {
    type Item = Result<Bytes, StreamError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if this.completed.is_some() {
                return Poll::Ready(None);
            }
            let event = match this.pending.take() {
                Some(event) => event,
                None => match this.events.poll_recv(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Some(event)) => event,
                    Poll::Ready(None) => {
                        let e = this.fail("the engine gave the job up");
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

impl<L: Lines> Drop for TimestampedBody<L> {
    fn drop(&mut self) {
        if self.completed.is_none() {
            self.state
                .metrics
                .cancelled_streams
                .fetch_add(1, Ordering::Relaxed);
            tracing::debug!(
                samples = self.lines.samples(),
                "client left mid-stream; job cancelled"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timed(text: &str, from: u64, step: u64) -> Vec<CharTime> {
        text.chars()
            .zip(0..)
            .map(|(ch, i)| CharTime {
                ch,
                start: from + i * step,
                end: from + (i + 1) * step,
            })
            .collect()
    }

    #[test]
    fn each_character_goes_once_in_order_never_before_its_audio() {
        let mut chars = Chars::default();
        // Segment one: "Hi. " over samples 0..400 in two chunks; segment two: "Yo." 400..700.
        let first = chars.chunk(250, timed("Hi. ", 0, 100), false);
        assert_eq!(
            first.iter().map(|c| c.ch).collect::<String>(),
            "Hi.",
            "the space starts at 300, past the 250 samples sent"
        );
        assert!(first.iter().all(|c| c.start < 250));
        let rest = chars.chunk(150, Vec::new(), true);
        assert_eq!(rest.iter().map(|c| c.ch).collect::<String>(), " ");
        assert!(chars.chunk(100, timed("Yo.", 400, 100), false).len() == 1);
        assert!(chars.chunk(0, Vec::new(), false).is_empty(), "no new audio");
        let end = chars.finish();
        assert_eq!(end.iter().map(|c| c.ch).collect::<String>(), "o.");
    }

    #[test]
    fn a_line_is_one_json_object_with_absolute_times() {
        let chars = timed("ab", 24_000, 12_000);
        let bytes = line(&[1, 2, 3], &chars);
        assert_eq!(bytes.last(), Some(&b'\n'));
        assert!(!bytes[..bytes.len() - 1].contains(&b'\n'), "one line");
        let v: serde_json::Value = serde_json::from_slice(&bytes).expect("JSON");
        assert_eq!(v["audio_base64"], "AQID");
        assert_eq!(v["alignment"]["characters"], serde_json::json!(["a", "b"]));
        assert_eq!(
            v["alignment"]["character_start_times_seconds"],
            serde_json::json!([1.0, 1.5])
        );
        assert_eq!(
            v["alignment"]["character_end_times_seconds"],
            serde_json::json!([1.5, 2.0])
        );
        assert_eq!(v["normalized_alignment"], v["alignment"]);
        let bare: serde_json::Value = serde_json::from_slice(&line(&[0], &[])).expect("JSON");
        assert!(bare["alignment"].is_null());
    }
}
