//! Word timing for a stream: text spoken as a run of segments whose durations arrive one by
//! one (the speech API, previews), rather than an episode's placed sentences.
//!
//! [`WordTrack`] is made with the segments (on the caller's thread, beside the phonemizing it
//! already does) and turns each segment's durations, when its first chunk arrives, into the
//! timed words that start in it. Nothing is trimmed in a stream, so a word's time is where its
//! segment's audio starts in the stream plus its place in the segment.

use std::ops::Range;

use super::timing::{pass_offsets, pass_word_samples, Pass};
use super::{TimedWord, WordSpan};
use crate::speech::{Segment, SAMPLE_RATE};

/// The words of a text and the segments that speak them.
#[derive(Debug, Clone)]
pub struct WordTrack {
    /// The whole text's phonemes, as characters (the segments are pieces of it).
    phonemes: Vec<char>,
    words: Vec<WordSpan>,
    /// 1-based line and column of each word in the text.
    places: Vec<(usize, usize)>,
    segments: Vec<String>,
    /// Character offset of each segment in `phonemes`.
    offsets: Vec<usize>,
}

impl WordTrack {
    /// `words` map `text` onto `phonemes`, which `segments` are pieces of, in order.
    #[must_use]
    pub fn new(text: &str, phonemes: &str, words: Vec<WordSpan>, segments: &[Segment]) -> Self {
        let segments: Vec<String> = segments.iter().map(|s| s.phonemes.clone()).collect();
        let texts: Vec<&str> = segments.iter().map(String::as_str).collect();
        let offsets = pass_offsets(phonemes, &texts);
        let places = line_columns(text, words.iter().map(|w| w.source.start));
        Self {
            phonemes: phonemes.chars().collect(),
            words,
            places,
            segments,
            offsets,
        }
    }

    /// Indices of the words that start in segment `segment` (the first segment also takes
    /// words before it: a word espeak said nothing for).
    fn segment_range(&self, segment: usize) -> Range<usize> {
        let Some(&first) = self.offsets.get(segment) else {
            return 0..0;
        };
        let end = self.offsets.get(segment + 1).copied().unwrap_or(usize::MAX);
        let from = if segment == 0 {
            0
        } else {
            self.words.partition_point(|w| w.phonemes.start < first)
        };
        let to = self.words.partition_point(|w| w.phonemes.start < end);
        from..to.max(from)
    }

    /// Where the words [`Self::segment_words`] gives for `segment` are in the text (byte
    /// ranges, in the same order).
    #[must_use]
    pub fn segment_sources(&self, segment: usize) -> Vec<Range<usize>> {
        self.words[self.segment_range(segment)]
            .iter()
            .map(|w| w.source.clone())
            .collect()
    }

    /// The stretch of the text (bytes, of `len`) that segment `segment` speaks: from its first
    /// word (the text's start for the first segment) to the first word of the next segment
    /// that has words (the text's end for the last).
    #[must_use]
    pub fn segment_span(&self, segment: usize, len: usize) -> Range<usize> {
        let start = if segment == 0 {
            0
        } else {
            let r = self.segment_range(segment);
            match self.words.get(r.start) {
                Some(w) if r.end > r.start => w.source.start,
                _ => return len..len,
            }
        };
        let end = (segment + 1..self.segments.len())
            .map(|k| self.segment_range(k))
            .find(|r| r.end > r.start)
            .and_then(|r| self.words.get(r.start))
            .map_or(len, |w| w.source.start);
        start.min(len)..end.clamp(start.min(len), len)
    }

    /// Segments the text was cut into.
    #[must_use]
    pub fn segment_count(&self) -> usize {
        self.segments.len()
    }

    /// The words that start in segment `segment`, timed from its `durations` (frames per
    /// token, pads included) with its audio starting `start` samples into the stream.
    #[must_use]
    pub fn segment_words(&self, segment: usize, durations: &[u32], start: u64) -> Vec<TimedWord> {
        let (Some(text), Some(&first)) = (self.segments.get(segment), self.offsets.get(segment))
        else {
            return Vec::new();
        };
        let mine = self.segment_range(segment);
        let ranges: Vec<Range<usize>> = self.words[mine.clone()]
            .iter()
            .map(|w| w.phonemes.clone())
            .collect();
        let pass = Pass {
            phonemes: text,
            durations,
        };
        let rate = f64::from(SAMPLE_RATE);
        pass_word_samples(&self.phonemes, &ranges, &pass, first)
            .into_iter()
            .zip(mine)
            .map(|(s, k)| TimedWord {
                word: self.words[k].text.clone(),
                start: (start + s.start) as f64 / rate,
                end: (start + s.end) as f64 / rate,
                source_line: self.places[k].0,
                source_column: self.places[k].1,
            })
            .collect()
    }
}

/// 1-based line and character column of each byte offset of `text` in `at` (ascending), in
/// one pass over the text.
fn line_columns(text: &str, at: impl Iterator<Item = usize>) -> Vec<(usize, usize)> {
    let (mut line, mut column) = (1, 1);
    let mut chars = text.char_indices().peekable();
    at.map(|target| {
        while let Some(&(i, c)) = chars.peek() {
            if i >= target {
                break;
            }
            if c == '\n' {
                (line, column) = (line + 1, 1);
            } else {
                column += 1;
            }
            chars.next();
        }
        (line, column)
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phonemes::Language;
    use crate::segments::segments_from_phonemes;
    use crate::words::phonemize_words;

    #[test]
    fn each_word_is_timed_once_in_the_segment_it_starts_in() {
        let text = "Hello there.\nHow are you today? Fine, thanks.";
        let (phonemes, words) = phonemize_words(text, Language::EnUs).unwrap();
        let segments = segments_from_phonemes(&phonemes);
        assert!(segments.len() >= 2, "{segments:?}");
        let track = WordTrack::new(text, &phonemes, words, &segments);
        let mut all = Vec::new();
        let mut start = 0;
        for (k, s) in segments.iter().enumerate() {
            // Two frames a token, pads included.
            let durations = vec![2u32; s.ids.len() + 2];
            all.extend(track.segment_words(k, &durations, start));
            start += durations.iter().map(|&d| u64::from(d)).sum::<u64>() * 600;
        }
        let said: Vec<&str> = all.iter().map(|w| w.word.as_str()).collect();
        assert_eq!(
            said,
            ["Hello", "there", "How", "are", "you", "today", "Fine", "thanks"]
        );
        assert!(all
            .windows(2)
            .all(|w| w[0].end <= w[1].start && w[0].start < w[0].end));
        assert_eq!((all[2].source_line, all[2].source_column), (2, 1));
        assert_eq!((all[7].source_line, all[7].source_column), (2, 26));
        assert!(track.segment_words(9, &[1, 2], 0).is_empty());
        // The segments' stretches of text tile it, and each word's source is its spelling.
        let spans: Vec<_> = (0..segments.len())
            .map(|k| track.segment_span(k, text.len()))
            .collect();
        assert_eq!(spans[0].start, 0);
        assert_eq!(spans.last().map(|r| r.end), Some(text.len()));
        assert!(
            spans.windows(2).all(|w| w[0].end == w[1].start),
            "{spans:?}"
        );
        let sources: Vec<&str> = (0..segments.len())
            .flat_map(|k| track.segment_sources(k))
            .map(|r| &text[r])
            .collect();
        assert_eq!(sources, said);
    }
}
