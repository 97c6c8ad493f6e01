//! Word times spread over characters, for clients that align by character.

use std::ops::Range;

/// One character of a text and when it is spoken: samples from the start of the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CharTime {
    pub ch: char,
    pub start: u64,
    pub end: u64,
}

/// Times for every character of `text`, tiling `start..end` (samples) with no gap or overlap.
///
/// `words` are the spoken words: the character range each covers in `text`, and its start and
/// end in samples, in order. A word's characters share its time evenly; the characters between
/// two words (spaces, punctuation) share the time between them, those before the first word the
/// silence before it, and those after the last the time up to `end`, so the last character
/// ends exactly at `end`. Without words (nothing said) every character shares `start..end`.
#[must_use]
pub fn char_times(
    text: &str,
    words: &[(Range<usize>, u64, u64)],
    start: u64,
    end: u64,
) -> Vec<CharTime> {
    let chars: Vec<char> = text.chars().collect();
    let n = chars.len();
    let end = end.max(start);
    // Stretches of characters with the time each covers, in order.
    let mut stretches: Vec<(Range<usize>, u64, u64)> = Vec::new();
    let mut at = 0;
    let mut t = start;
    for (range, w_start, w_end) in words {
        let r = range.start.min(n).max(at)..range.end.min(n);
        let w_start = (*w_start).clamp(t, end);
        let w_end = (*w_end).clamp(w_start, end);
        if r.start > at {
            stretches.push((at..r.start, t, w_start));
        }
        if r.end > r.start {
            stretches.push((r.clone(), w_start, w_end));
            at = r.end;
        }
        t = w_end;
    }
    if at < n {
        stretches.push((at..n, t, end));
    } else if let Some(last) = stretches.last_mut() {
        last.2 = end;
    }
    let mut out = Vec::with_capacity(n);
    for (range, from, to) in stretches {
        let len = (range.end - range.start) as u64;
        for (k, i) in range.enumerate() {
            let k = k as u64;
            out.push(CharTime {
                ch: chars[i],
                start: from + (to - from) * k / len,
                end: from + (to - from) * (k + 1) / len,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characters_tile_the_span_in_order() {
        let text = " Hi, you.";
        // "Hi" 100..300, "you" 500..800, span 0..1000.
        let times = char_times(text, &[(1..3, 100, 300), (5..8, 500, 800)], 0, 1000);
        let said: String = times.iter().map(|c| c.ch).collect();
        assert_eq!(said, text);
        assert_eq!(
            (times[0].start, times[0].end),
            (0, 100),
            "the leading space is the silence"
        );
        assert_eq!((times[1].start, times[2].end), (100, 300));
        assert_eq!(
            (times[3].start, times[4].end),
            (300, 500),
            ", and the space fill the gap"
        );
        assert_eq!((times[5].start, times[7].end), (500, 800));
        assert_eq!(
            times[8].end, 1000,
            "the last character ends at the span's end"
        );
        assert!(times.windows(2).all(|w| w[0].end == w[1].start));
    }

    #[test]
    fn no_words_and_odd_ranges_stay_in_bounds() {
        let times = char_times("...", &[], 10, 40);
        assert_eq!((times[0].start, times[2].end), (10, 40));
        let times = char_times("ab", &[(0..9, 50, 20), (1..2, 0, 999)], 0, 100);
        assert!(
            times.iter().all(|c| c.start <= c.end && c.end <= 100),
            "{times:?}"
        );
        assert_eq!(times.len(), 2);
    }
}
