//! Word edges at pauses, from the audio itself.
//!
//! The model's durations place every boundary between two sounding phonemes well, but where a
//! word meets silence they are loose: Kokoro often stretches the last phoneme before a comma or
//! a pause it chose itself and lets the sound die inside it, and at slow speeds the first word
//! of a sentence can begin a little before its predicted frames. The word-timing benchmark
//! (`tools/bench/word_timing.py`) measured ends before a mid-line pause 150–350 ms late. So,
//! once the audio exists, each word's end is pulled back to where its sound ends and a word
//! that starts after silence is moved to where its sound starts; between two sounding words
//! nothing moves. "Sound" is 10 ms frames within 40 dB of the sentence's loudest frame.

use std::ops::Range;

/// 10 ms at 24 kHz.
const FRAME: usize = 240;
/// Frames quieter than this fraction of the loudest (−40 dB) are silence.
const QUIET: f32 = 0.01;
/// Kept beyond the last (or before the first) sounding frame.
const MARGIN: u64 = 240;
/// How far before its predicted start a word's sound may be found.
const REACH_BACK: u64 = 2400;

/// Moves the edges of `words` (sample ranges of `audio`, in order, not overlapping) to the
/// sound at pauses; see the module docs. Words stay in order and never overlap.
pub fn refine(words: &mut [Range<u64>], audio: &[f32]) {
    let rms: Vec<f32> = audio
        .chunks(FRAME)
        .map(|c| (c.iter().map(|x| x * x).sum::<f32>() / c.len() as f32).sqrt())
        .collect();
    let peak = rms.iter().copied().fold(0.0f32, f32::max);
    if peak <= 0.0 {
        return;
    }
    let loud = |f: usize| rms.get(f).is_some_and(|&r| r >= peak * QUIET);
    let frame_of = |s: u64| usize::try_from(s).unwrap_or(usize::MAX) / FRAME;
    let mut prev_end = 0u64;
    for word in words.iter_mut() {
        let w = word.clone();
        if w.is_empty() {
            prev_end = prev_end.max(w.end);
            continue;
        }
        let (first, last) = (frame_of(w.start), frame_of(w.end.saturating_sub(1)));
        // Silence at the start of the word: start where the sound does.
        let mut start = match (first..=last).find(|&f| loud(f)) {
            Some(f) if f > first => ((f * FRAME) as u64).saturating_sub(MARGIN).max(w.start),
            Some(_) => w.start,
            None => continue, // no sound at all: leave the model's times
        };
        // Sound just before the word after a silence: start where it does.
        if start == w.start && first > 0 && loud(first - 1) {
            let floor = prev_end.max(w.start.saturating_sub(REACH_BACK));
            let mut f = first;
            while f > frame_of(floor) && loud(f - 1) {
                f -= 1;
            }
            let onset = (f * FRAME) as u64;
            // Only where silence precedes it (a neighbour's sound is the neighbour's).
            if f > frame_of(floor) || floor == 0 {
                start = onset.saturating_sub(MARGIN).max(floor);
            }
        }
        // Silence at the end of the word: end where the sound does.
        let end = match (first..=last).rev().find(|&f| loud(f)) {
            Some(f) if f < last => (((f + 1) * FRAME) as u64 + MARGIN).min(w.end),
            _ => w.end,
        };
        *word = start..end.max(start);
        prev_end = word.end;
    }
}

#[cfg(test)]
// One word's range in a list is what these tests mean.
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use super::*;

    /// Silence, then sound in `spans` (samples), at 0.5.
    fn audio(len: usize, spans: &[Range<usize>]) -> Vec<f32> {
        let mut a = vec![0.0f32; len];
        for s in spans {
            for x in &mut a[s.clone()] {
                *x = 0.5;
            }
        }
        a
    }

    #[test]
    fn an_end_stretched_into_a_pause_is_pulled_back() {
        // Word one sounds 2400..7200 but was given up to 12000; word two from 12000.
        let a = audio(20_000, &[2400..7200, 12_000..16_800]);
        let mut w = vec![2400..12_000, 12_000..16_800];
        refine(&mut w, &a);
        assert_eq!(w[0], 2400..7200 + MARGIN);
        assert_eq!(w[1], 12_000..16_800);
    }

    #[test]
    fn a_first_word_that_began_early_starts_with_its_sound() {
        let a = audio(20_000, &[1200..9600]);
        let mut w = vec![2400..9600];
        refine(&mut w, &a);
        assert_eq!(w[0], 1200 - MARGIN..9600);
    }

    #[test]
    fn between_sounding_words_nothing_moves() {
        let a = audio(20_000, &[0..20_000]);
        let mut w = vec![0..4800, 4800..9600, 9600..20_000];
        let before = w.clone();
        refine(&mut w, &a);
        assert_eq!(w, before);
        // Silence everywhere: the model's times stay.
        let mut w = before.clone();
        refine(&mut w, &vec![0.0; 20_000]);
        assert_eq!(w, before);
    }
}
