//! Phoneme characters to samples, through the frames the model gave each token.
//!
//! A sentence is one Kokoro pass, or several when it is longer than the model takes; each pass
//! is a piece of the sentence's phoneme string, its tokens are its vocabulary symbols between two
//! pads, and its audio is `600 ×` its frames, the passes' audio following one another. A word
//! starts where its first symbol's frames start and ends where its last symbol's end. Times are
//! counted in half frames, as the reference pipeline does, so that a space between two words is
//! split between them (a listener hears no edge inside the short gap); the pause at punctuation
//! belongs to neither word.
//!
//! The sound of a token starts about three frames (75 ms) before its predicted place: the
//! decoder's convolutions reach ahead. The reference pipeline starts its count three frames into
//! the first pad for that reason (`max(0, pred_dur[0] - 3)`), and an independent forced
//! alignment agrees (pocketsphinx's HMM aligner put Banter's unshifted word starts 72 ms late,
//! ends 79 ms late, with a spread of ±25 ms). So every time in a pass is moved
//! [`LEAD_FRAMES`] earlier, never before the pass's own start.

use std::ops::Range;

use crate::phonemes::Vocab;

use super::map::is_punctuation;
use super::SAMPLES_PER_FRAME;

/// How far ahead of its predicted frames a token is heard (see the module docs).
pub const LEAD_FRAMES: u32 = 3;

/// One Kokoro pass of a sentence.
#[derive(Debug, Clone, Copy)]
pub struct Pass<'a> {
    /// Its phonemes: a piece of the sentence's phoneme string.
    pub phonemes: &'a str,
    /// The frames the model gave its tokens, the two pads included.
    pub durations: &'a [u32],
}

/// A pass placed in the sentence: where its characters start, and the half-frame time at
/// the start of each of its characters (and after the last).
struct Placed {
    first_char: usize,
    chars: usize,
    /// `edges[p]`: half frames from the start of the sentence's audio to character `p`.
    edges: Vec<u64>,
    /// Half frames of the token at character `p` (0 for symbols the vocabulary drops).
    own: Vec<u64>,
}

/// Where each word (a character range of `sentence`, the phoneme string of the whole sentence)
/// is spoken in the sentence's untrimmed audio, in samples at 24 kHz from its first sample.
#[must_use]
pub fn word_samples(
    sentence: &str,
    words: &[Range<usize>],
    passes: &[Pass<'_>],
) -> Vec<Range<u64>> {
    let chars: Vec<char> = sentence.chars().collect();
    let placed = place_passes(sentence, passes);
    words
        .iter()
        .map(|w| time_word(&chars, &placed, w))
        .collect()
}

/// One word's samples among placed passes.
fn time_word(chars: &[char], placed: &[Placed], w: &Range<usize>) -> Range<u64> {
    let (Some(first), Some(last)) = (
        pass_at(placed, w.start),
        pass_at(placed, w.end.saturating_sub(1).max(w.start)),
    ) else {
        return 0..0;
    };
    let mut start = first.edge(w.start);
    let mut end = last.edge(w.end).max(start);
    if !w.is_empty() {
        // Half of a space shared with a neighbouring word.
        if w.start >= 2
            && chars.get(w.start - 1) == Some(&' ')
            && chars.get(w.start - 2).is_some_and(|&c| !is_punctuation(c))
        {
            start = start.saturating_sub(first.own_at(w.start - 1) / 2);
        }
        if chars.get(w.end) == Some(&' ')
            && chars.get(w.end + 1).is_some_and(|&c| !is_punctuation(c))
        {
            end += last.own_at(w.end) / 2;
        }
    }
    start * SAMPLES_PER_FRAME / 2..end * SAMPLES_PER_FRAME / 2
}

impl Placed {
    /// Half frames at character `c` of the sentence (clamped to this pass).
    fn edge(&self, c: usize) -> u64 {
        let p = c.saturating_sub(self.first_char).min(self.chars);
        self.edges[p]
    }

    /// Half frames of the token at character `c` of the sentence (0 outside this pass).
    fn own_at(&self, c: usize) -> u64 {
        c.checked_sub(self.first_char)
            .and_then(|p| self.own.get(p))
            .copied()
            .unwrap_or(0)
    }
}

/// The pass holding character `c` (the last one that starts at or before it).
fn pass_at(placed: &[Placed], c: usize) -> Option<&Placed> {
    placed
        .iter()
        .rev()
        .find(|p| p.first_char <= c)
        .or(placed.first())
}

/// Where each pass starts in `sentence` (characters): found in order, each after the last.
#[must_use]
pub fn pass_offsets(sentence: &str, passes: &[&str]) -> Vec<usize> {
    let mut out = Vec::with_capacity(passes.len());
    let mut cursor = 0usize; // bytes into `sentence`
    for pass in passes {
        let at = sentence[cursor..].find(pass).map_or(cursor, |i| cursor + i);
        out.push(sentence[..at].chars().count());
        cursor = (at + pass.len()).min(sentence.len());
    }
    out
}

fn place_passes(sentence: &str, passes: &[Pass<'_>]) -> Vec<Placed> {
    let texts: Vec<&str> = passes.iter().map(|p| p.phonemes).collect();
    let offsets = pass_offsets(sentence, &texts);
    let mut audio = 0u64; // half frames before this pass
    passes
        .iter()
        .zip(offsets)
        .map(|(pass, first_char)| {
            let placed = place_pass(pass, first_char, audio);
            audio += 2 * pass.durations.iter().map(|&f| u64::from(f)).sum::<u64>();
            placed
        })
        .collect()
}

/// One pass whose characters start at `first_char` of the sentence and whose audio starts
/// `audio` half frames into it.
fn place_pass(pass: &Pass<'_>, first_char: usize, audio: u64) -> Placed {
    let vocab = Vocab::kokoro();
    let d = pass.durations;
    let frames = |k: usize| u64::from(d.get(k).copied().unwrap_or(0));
    let mut edges = Vec::with_capacity(pass.phonemes.len() + 1);
    let mut own = Vec::with_capacity(pass.phonemes.len());
    // The first pad's frames come before the first symbol, less the decoder's lead.
    let lead = u64::from(LEAD_FRAMES).min(frames(0));
    let mut t = audio + 2 * (frames(0) - lead);
    let mut token = 1;
    for c in pass.phonemes.chars() {
        edges.push(t);
        if vocab.contains(c) {
            let f = 2 * frames(token);
            own.push(f);
            t += f;
            token += 1;
        } else {
            own.push(0);
        }
    }
    edges.push(t);
    Placed {
        first_char,
        chars: own.len(),
        edges,
        own,
    }
}

/// [`word_samples`] for the words of one pass placed at `first_char` of a sentence given as
/// its characters (a stream whose passes arrive one by one): samples from the start of that
/// pass's audio.
#[must_use]
pub fn pass_word_samples(
    sentence: &[char],
    words: &[Range<usize>],
    pass: &Pass<'_>,
    first_char: usize,
) -> Vec<Range<u64>> {
    let placed = [place_pass(pass, first_char, 0)];
    words
        .iter()
        .map(|w| time_word(sentence, &placed, w))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: u64 = SAMPLES_PER_FRAME;

    #[test]
    fn words_take_their_frames_and_share_the_space_between_them() {
        // "ab cd": pad 4, a 2, b 2, ' ' 2, c 3, d 1, pad 6.
        let d = [4, 2, 2, 2, 3, 1, 6];
        let w = word_samples(
            "ab cd",
            &[0..2, 3..5],
            &[Pass {
                phonemes: "ab cd",
                durations: &d,
            }],
        );
        // Everything three frames early (the decoder's lead).
        assert_eq!(w[0], F..(4 + 4 + 1 - 3) * F);
        assert_eq!(w[1], (4 + 4 + 1 - 3) * F..(4 + 4 + 2 + 4 - 3) * F);
    }

    #[test]
    fn a_pause_at_punctuation_belongs_to_neither_word() {
        // "a, b": pad 2, a 2, ',' 8, ' ' 2, b 2, pad 2.
        let d = [2, 2, 8, 2, 2, 2];
        let w = word_samples(
            "a, b",
            &[0..1, 3..4],
            &[Pass {
                phonemes: "a, b",
                durations: &d,
            }],
        );
        // A first pad of two frames: two frames early, never before the start.
        assert_eq!(w[0], 0..2 * F);
        assert_eq!(w[1], 12 * F..14 * F);
    }

    #[test]
    fn later_passes_start_after_the_earlier_ones_audio() {
        let d2 = [3, 2, 5];
        let w = word_samples(
            "a. b",
            &[0..1, 3..4],
            &[
                Pass {
                    phonemes: "a.",
                    durations: &[1, 2, 0, 1],
                },
                Pass {
                    phonemes: "b",
                    durations: &d2,
                },
            ],
        );
        assert_eq!(w[0], 0..2 * F);
        // First pass: 4 frames of audio; then pad 3, less the lead of 3.
        assert_eq!(w[1], 4 * F..(4 + 2) * F);
    }
}
