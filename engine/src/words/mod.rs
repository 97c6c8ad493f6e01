//! When every word is spoken, from the model's own durations.
//!
//! Kokoro's duration predictor gives every phoneme token a whole number of 25 ms frames (600
//! samples at 24 kHz) and the decoder speaks exactly those frames, so the durations *are* the
//! alignment: no second model listens to the audio and guesses. What this module adds is the
//! bookkeeping between the author's text and those tokens:
//!
//! 1. [`map`], at planning time on the caller's thread: the text is read as the normaliser reads
//!    it (`$4.1 billion` is one stretch of the author's text said as five words), phonemized
//!    exactly as the audio is, and espeak's phoneme words are matched to the said words (espeak
//!    joins or splits a few words, so a small dynamic programme matches them by length, see
//!    [`align`]). The result is one [`WordSpan`] per word the author wrote: its spelling, where
//!    it is in the text, and which phoneme characters say it. Punctuation and spaces belong to
//!    no word.
//! 2. [`timing`], once the model has spoken: phoneme characters → token positions in each of
//!    the sentence's passes → frames → samples in the sentence's untrimmed audio, counted in
//!    half frames as the reference pipeline does (a space between two words is split between
//!    them; a pause at punctuation belongs to neither), three frames early as the decoder
//!    speaks them.
//! 3. [`refine`](mod@refine), where the whole audio is at hand (episodes, playback, dialogue): edges that
//!    meet silence move to where the sound is, since the durations are loose there. A stream
//!    times its words before their audio exists, so it keeps the model's times.
//!
//! Placing those samples in a file (the trim before a sentence, the gaps the timeline inserts,
//! the output sample rate) is [`crate::render::Timeline`]'s job, as it is for sentences; a
//! stream of segments (the speech API) is timed by [`WordTrack`].

mod align;
mod map;
mod refine;
mod timing;
mod track;

#[cfg(test)]
mod tests;

use std::ops::Range;

use serde::Serialize;

pub use map::{phonemize_words, phonemize_words_with, speakable_with_map};
pub use refine::refine;
pub use timing::{word_samples, Pass};
pub use track::WordTrack;

/// A word the author wrote and the phonemes that say it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WordSpan {
    /// As written (`$4.1 billion`, `GPU`, `Nguyen` even where a lexicon respells it).
    pub text: String,
    /// Byte range of it in the text that was mapped.
    pub source: Range<usize>,
    /// Character range of its phonemes in the phoneme string, stress marks included and the
    /// punctuation around them not. Empty (at the place it would be) when espeak said nothing
    /// for the word.
    pub phonemes: Range<usize>,
}

/// A word on the final timeline: seconds from the start of the file, and where the author
/// wrote it. The shape of the markers JSON, the API's `words` and the studio's highlight.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimedWord {
    pub word: String,
    pub start: f64,
    pub end: f64,
    /// 1-based line and column (in characters) of the word in the script file, or in the
    /// request's text for the API.
    pub source_line: usize,
    pub source_column: usize,
}

/// Samples per duration frame at 24 kHz (the decoder turns one frame into 600 samples).
pub const SAMPLES_PER_FRAME: u64 = 600;
