//! The sentence source of playback: the model as a pressing stream, stopped when the listener
//! stops.
//!
//! Why it is a [`SentenceSource`] like the export's: wrapped in the render cache
//! ([`super::cache::Cached`]), what the studio plays is stored under the same keys the export
//! looks up, so exporting right after listening renders nothing twice. Both decode whole
//! segments (playback trims and queues whole sentences, so windows would buy no earlier audio),
//! so the samples are the same. A stopped sentence is [`RenderError::Cancelled`], never a short
//! one, so the cache never keeps half a sentence.

use crate::speech::SpeechRequest;
use crate::{Engine, Mode};

use super::{RenderError, SentenceAudio, SentenceSource};

/// One sentence at a time for someone listening ([`Mode::Interactive`]), until `stop` says so.
pub struct ForListener<F> {
    stop: F,
}

impl<F: Fn() -> bool + Sync> ForListener<F> {
    /// A source that gives up (dropping its stream, which the scheduler then cancels) once
    /// `stop` returns true.
    pub fn new(stop: F) -> Self {
        Self { stop }
    }
}

impl<F: Fn() -> bool + Sync> SentenceSource for ForListener<F> {
    fn sentence(
        &self,
        engine: &Engine,
        phonemes: &str,
        request: &SpeechRequest,
    ) -> Result<SentenceAudio, RenderError> {
        if (self.stop)() {
            return Err(RenderError::Cancelled);
        }
        let segments = engine.sentence_segments(phonemes);
        let handle = engine.submit_whole(segments, request.clone(), Mode::Interactive)?;
        let audio = handle.collect_timed_unless(&self.stop)?;
        if (self.stop)() {
            return Err(RenderError::Cancelled);
        }
        Ok(audio)
    }
}
