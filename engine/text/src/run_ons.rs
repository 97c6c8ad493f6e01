//! Run-on sentences cut where a reader would breathe.
//!
//! Everything downstream works a sentence at a time: a sentence is planned, rendered, trimmed,
//! captioned and placed as one piece of audio. A 50,000-character line with no full stop was one
//! "sentence" of an hour, held whole in memory (1.8 GB at its peak). A sentence longer than
//! [`MAX_SENTENCE_CHARS`] is cut into pieces no longer than that: after a clause mark (`,` `;`
//! `:` a dash) if there is one in the second half of the allowance, else before a conjunction,
//! else at the last space; a run with no space at all is cut at a character boundary. Memory
//! then stays flat for any input. Why 300: a render decodes each sentence in one exact pass, and
//! the pass's activations grow with it; rendering a 5,900-character line with no full stop
//! peaked at 920 MB with pieces of 500 characters, 640 MB with 300, and 390 MB for the same
//! words written as ordinary sentences (`/usr/bin/time`, this 2-core machine). 300 characters is
//! about 15 s of speech, longer than nearly every sentence people write.

use std::ops::Range;

/// The longest sentence passed on whole, in characters.
pub const MAX_SENTENCE_CHARS: usize = 300;

/// Words a clause may start with, where a cut sounds like a breath.
const CONJUNCTIONS: [&str; 12] = [
    "and", "but", "or", "so", "because", "which", "while", "although", "though", "that", "when",
    "where",
];

/// `range` of `text`, cut into pieces of at most [`MAX_SENTENCE_CHARS`] characters (each trimmed
/// of surrounding whitespace; none empty).
pub(super) fn cut(text: &str, range: Range<usize>) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = range.start;
    while start < range.end {
        let rest = &text[start..range.end];
        if rest.chars().count() <= MAX_SENTENCE_CHARS {
            push_trimmed(text, start..range.end, &mut out);
            break;
        }
        // The byte offset of the allowance's end within `rest`.
        let limit = rest
            .char_indices()
            .nth(MAX_SENTENCE_CHARS)
            .map_or(rest.len(), |(i, _)| i);
        let window = &rest[..limit];
        let half = window
            .char_indices()
            .nth(MAX_SENTENCE_CHARS / 2)
            .map_or(0, |(i, _)| i);
        let at = clause_mark(window, half)
            .or_else(|| conjunction(window, half))
            .or_else(|| window.rfind(char::is_whitespace).filter(|&i| i > 0))
            .unwrap_or(limit);
        push_trimmed(text, start..start + at, &mut out);
        start += at;
    }
    out
}

/// Just after the last clause mark followed by a space, in the second half of `window`.
fn clause_mark(window: &str, half: usize) -> Option<usize> {
    window
        .char_indices()
        .filter(|&(i, c)| {
            i >= half
                && matches!(c, ',' | ';' | ':' | '—' | '–')
                && window[i + c.len_utf8()..].starts_with(char::is_whitespace)
        })
        .map(|(i, c)| i + c.len_utf8())
        .next_back()
}

/// Just before the last conjunction that starts a word, in the second half of `window`.
fn conjunction(window: &str, half: usize) -> Option<usize> {
    window
        .char_indices()
        .filter(|&(i, c)| i >= half && c.is_whitespace())
        .filter(|&(i, _)| {
            let word: String = window[i + 1..]
                .chars()
                .take_while(|c| c.is_alphabetic())
                .collect::<String>()
                .to_lowercase();
            CONJUNCTIONS.contains(&word.as_str())
        })
        .map(|(i, _)| i)
        .next_back()
}

fn push_trimmed(text: &str, range: Range<usize>, out: &mut Vec<Range<usize>>) {
    let piece = &text[range.clone()];
    let lead = piece.len() - piece.trim_start().len();
    let trail = piece.len() - piece.trim_end().len();
    if lead + trail < piece.len() {
        out.push(range.start + lead..range.end - trail);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_on_is_cut_at_clauses_and_nothing_is_lost() {
        let clause = "the committee met again on Tuesday and talked for a long time, ";
        let text = clause.repeat(800); // ~50,000 characters, no full stop
        let pieces = cut(&text, 0..text.len());
        assert!(pieces.len() >= 100, "{}", pieces.len());
        for p in &pieces {
            let piece = &text[p.clone()];
            assert!(piece.chars().count() <= MAX_SENTENCE_CHARS);
            assert!(
                piece.ends_with(',') || p.end == text.trim_end().len(),
                "{piece:?}"
            );
        }
        let words: usize = pieces
            .iter()
            .map(|p| text[p.clone()].split_whitespace().count())
            .sum();
        assert_eq!(words, text.split_whitespace().count(), "every word kept");
    }

    #[test]
    fn without_clause_marks_it_cuts_before_a_conjunction_then_at_a_space() {
        let text = "word ".repeat(50) + "and then some more words ".repeat(20).as_str();
        let pieces = cut(&text, 0..text.len());
        assert!(text[pieces[1].clone()].starts_with("and "));
        let spaceless = "x".repeat(4 * MAX_SENTENCE_CHARS);
        let pieces = cut(&spaceless, 0..spaceless.len());
        assert_eq!(pieces.len(), 4);
        let short = "A short sentence.";
        let pieces = cut(short, 0..short.len());
        assert_eq!(pieces.len(), 1);
        assert_eq!(pieces[0], 0..short.len());
    }
}
