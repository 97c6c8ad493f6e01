//! Word timing in the studio: where a timed word is in the text a line shows, which word a
//! click lands on, and where a seek to it lands (the studio seeks or plays from there in
//! `app::words`).
//!
//! The words come from playback ([`crate::work::play::PlayEvent::Words`]) and live in the
//! timeline's regions ([`crate::waveform::Word`]). The lines view shows each turn's spoken
//! text ([`engine::script::Episode::spoken_text`]: directions removed, whitespace collapsed,
//! turns over several source lines joined), so a word's `source_line`/`source_column` in the
//! script file does not point into what is drawn. What does hold is the author's spelling, in
//! order: every word is found in the shown text by searching for it from where the word before
//! it ended ([`Spans`]), at word boundaries where it can be, spaces inside a word (`$4.1
//! billion`) matching any run of whitespace. A word that cannot be found (text rewritten since
//! it was rendered) has no span and moves the search nowhere, so the words after it still match.
//! Finding word `k` walks the words before it: a few string searches in a short line, no
//! allocation, cheap enough for every frame.

use std::ops::Range;

use crate::waveform::Word;

/// The byte range of each word in `shown`, in order: `None` for a word not found there.
pub struct Spans<'a, I> {
    shown: &'a str,
    words: I,
    /// Where the search for the next word starts.
    from: usize,
}

/// Maps `words` (the author's spelling, in spoken order) onto the text a line shows.
pub fn spans<'a, I>(shown: &'a str, words: I) -> Spans<'a, I::IntoIter>
where
    I: IntoIterator<Item = &'a str>,
{
    Spans {
        shown,
        words: words.into_iter(),
        from: 0,
    }
}

impl<'a, I: Iterator<Item = &'a str>> Iterator for Spans<'a, I> {
    type Item = Option<Range<usize>>;

    fn next(&mut self) -> Option<Self::Item> {
        let word = self.words.next()?;
        let found = find_word(self.shown, self.from, word, true)
            .or_else(|| find_word(self.shown, self.from, word, false));
        if let Some(r) = &found {
            self.from = r.end;
        }
        Some(found)
    }
}

/// Where word `k` of `words` is in `shown`.
pub fn span_of<'a>(
    shown: &'a str,
    words: impl IntoIterator<Item = &'a str>,
    k: usize,
) -> Option<Range<usize>> {
    spans(shown, words).nth(k).flatten()
}

/// The word at byte `at` of `shown`, or the first one after it (a click between two words, or
/// on the punctuation after one, means the next): its index among `words`.
pub fn word_index_at<'a>(
    shown: &'a str,
    words: impl IntoIterator<Item = &'a str>,
    at: usize,
) -> Option<usize> {
    spans(shown, words).position(|span| span.is_some_and(|r| r.end > at))
}

/// The first occurrence of `word` in `shown` at or after byte `from`; with `bounded`, only one
/// standing alone (no letter or digit just before or after it).
fn find_word(shown: &str, from: usize, word: &str, bounded: bool) -> Option<Range<usize>> {
    let mut pieces = word.split_whitespace();
    let first = pieces.next()?;
    let mut search = from;
    loop {
        let start = search + shown.get(search..)?.find(first)?;
        search = start + first.len();
        let Some(end) = rest_matches(shown, search, pieces.clone()) else {
            continue;
        };
        let alone = |c: Option<char>| !c.is_some_and(char::is_alphanumeric);
        if !bounded
            || (alone(shown[..start].chars().next_back()) && alone(shown[end..].chars().next()))
        {
            return Some(start..end);
        }
    }
}

/// Where the rest of a word with spaces in it ends, if each piece follows `at` after whitespace.
fn rest_matches<'a>(
    shown: &str,
    mut at: usize,
    pieces: impl Iterator<Item = &'a str>,
) -> Option<usize> {
    for piece in pieces {
        let rest = &shown[at..];
        let trimmed = rest.trim_start();
        if trimmed.len() == rest.len() || !trimmed.starts_with(piece) {
            return None;
        }
        at = shown.len() - trimmed.len() + piece.len();
    }
    Some(at)
}

/// How far before a word's start a seek to it lands, at most, if silence comes before it.
pub const PRE_ROLL: usize = engine::SAMPLE_RATE as usize / 10;

/// Where to seek to play word `k` of a line starting at sample `line_start`: its start, less up
/// to [`PRE_ROLL`] of the pause before it (never into the word before). A word after a pause
/// is timed from the end of the pause's frames, but its first sound is often a little earlier
/// (tens of milliseconds); starting in the pause keeps it whole, and costs nothing after a
/// word, where there is no pause to start in.
#[must_use]
pub fn seek_target(words: &[Word], k: usize, line_start: usize) -> usize {
    let before = k
        .checked_sub(1)
        .and_then(|j| words.get(j))
        .map_or(line_start, |w| w.end);
    let start = words[k].start;
    start.saturating_sub(PRE_ROLL).max(before.min(start))
}

/// The byte of `text` at character `index` (a galley's cursor counts characters).
#[must_use]
pub fn byte_of_char(text: &str, index: usize) -> usize {
    text.char_indices()
        .nth(index)
        .map_or(text.len(), |(b, _)| b)
}

/// "Play from here" on a line that was not rendered yet: playback starts at the line, paused,
/// and moves to the word once the line's words arrive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PendingWord {
    pub line: usize,
    /// Byte of the line's shown text that was right-clicked.
    pub at: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(shown: &str, words: &[&str]) -> Vec<Option<String>> {
        spans(shown, words.iter().copied())
            .map(|r| r.map(|r| shown[r].to_owned()))
            .collect()
    }

    #[test]
    fn words_are_found_in_order_in_the_shown_text() {
        let shown = "Again? We did trains, and a train again.";
        let words = ["Again", "We", "did", "trains", "and", "a", "train", "again"];
        let got = all(shown, &words);
        assert!(got.iter().all(Option::is_some), "{got:?}");
        // "a" is the word alone, not the a of "and"; "train" is not inside "trains".
        assert_eq!(span_of(shown, words, 5), Some(26..27));
        assert_eq!(span_of(shown, words, 6), Some(28..33));
        assert_eq!(span_of(shown, words, 7), Some(34..39));
    }

    #[test]
    fn odd_words_match_or_are_skipped() {
        // A word with a space in it matches any whitespace; one that is not there has no span
        // and the words after it still match; non-ASCII is counted in bytes.
        let shown = "It cost $4.1\u{a0} billion — café GPU.";
        let words = ["It", "cost", "$4.1 billion", "nowhere", "café", "GPU"];
        assert_eq!(
            all(shown, &words),
            vec![
                Some("It".into()),
                Some("cost".into()),
                Some("$4.1\u{a0} billion".into()),
                None,
                Some("café".into()),
                Some("GPU".into()),
            ]
        );
        assert_eq!(span_of(shown, words, 3), None);
        // A word inside a longer one is taken when it stands nowhere alone.
        assert_eq!(all("Nguyens", &["Nguyen"]), vec![Some("Nguyen".into())]);
    }

    #[test]
    fn a_click_means_the_word_under_it_or_the_next() {
        let shown = "Good morning, Ann!";
        let words = ["Good", "morning", "Ann"];
        assert_eq!(word_index_at(shown, words, 0), Some(0));
        assert_eq!(word_index_at(shown, words, 3), Some(0));
        assert_eq!(
            word_index_at(shown, words, 4),
            Some(1),
            "the space before it"
        );
        assert_eq!(
            word_index_at(shown, words, 12),
            Some(2),
            "the comma after morning"
        );
        assert_eq!(word_index_at(shown, words, 17), None, "past the last word");
        assert_eq!(byte_of_char("café x", 5), 6);
        assert_eq!(byte_of_char("ab", 9), 2);
    }

    #[test]
    fn a_seek_starts_a_little_before_a_word_after_a_pause() {
        let word = |start, end| Word {
            text: "w".into(),
            start,
            end,
        };
        let words = [word(3000, 5000), word(5000, 6000), word(6100, 7000)];
        assert_eq!(
            seek_target(&words, 0, 0),
            3000 - PRE_ROLL,
            "after the line's start"
        );
        assert_eq!(seek_target(&words, 0, 2000), 2000, "not before the line");
        assert_eq!(seek_target(&words, 1, 0), 5000, "no pause: at the word");
        assert_eq!(seek_target(&words, 2, 0), 6000, "a short pause: all of it");
    }
}
