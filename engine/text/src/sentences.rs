//! Sentence boundaries in cleaned text.
//!
//! Synthesis, captions and gap timing all work sentence by sentence, so a wrong cut is audible:
//! an abbreviation read as a full stop drops the pitch mid-sentence. A boundary is a run of
//! `. ! ? …` (plus closing quotes or brackets) followed by whitespace, or a blank line. It is
//! *not* a boundary when the next word starts lower case (`"Stop." she said`, `wait… no`), or
//! when a full stop closes a title or reference abbreviation (`Dr.`, `No. 5`, `e.g.`), an
//! initial (`J. R. R. Tolkien`) or, unless an obvious sentence opener follows, a dotted
//! initialism or a company suffix (`U.S. Army`, but `in the U.S. Then`). Decimals, URLs and
//! times never qualify because no whitespace follows their dots.
//!
//! One pass, and each look-back stops at the previous whitespace, so the cost is linear.

use std::ops::Range;

use super::abbreviations;

const TERMINATORS: &[char] = &['.', '!', '?', '…'];
const CLOSERS: &[char] = &['"', '”', '\'', ')', ']', '}', '’', '»'];
pub(super) const OPENERS: &[char] = &['"', '“', '\'', '(', '[', '{', '‘', '«', '¿', '¡', '*', '_'];

/// Words that, capitalised after an ambiguous abbreviation, start a new sentence.
const SENTENCE_OPENERS: &[&str] = &[
    "A",
    "After",
    "An",
    "And",
    "As",
    "At",
    "Before",
    "But",
    "He",
    "Her",
    "Here",
    "His",
    "How",
    "However",
    "I",
    "If",
    "In",
    "It",
    "Its",
    "Meanwhile",
    "My",
    "Now",
    "On",
    "Our",
    "She",
    "So",
    "That",
    "The",
    "Their",
    "Then",
    "There",
    "These",
    "They",
    "This",
    "Those",
    "Today",
    "We",
    "What",
    "When",
    "Why",
    "Who",
    "You",
];

/// Byte ranges of the sentences of `text`, without surrounding whitespace.
pub(super) fn split(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut iter = text.char_indices().peekable();
    while let Some((i, c)) = iter.next() {
        let cut = if c == '\n' {
            // A blank line (paragraph break) ends a sentence even without punctuation.
            let rest = &text[i + 1..];
            let gap = rest.len() - rest.trim_start_matches([' ', '\t']).len();
            rest[gap..].starts_with('\n').then_some(i)
        } else if TERMINATORS.contains(&c) {
            let after_run = i + text[i..]
                .find(|ch: char| !TERMINATORS.contains(&ch))
                .unwrap_or(text.len() - i);
            let end = after_run
                + text[after_run..]
                    .find(|ch: char| !CLOSERS.contains(&ch))
                    .unwrap_or(text.len() - after_run);
            while iter.peek().is_some_and(|&(j, _)| j < end) {
                iter.next();
            }
            is_boundary(text, start, i, after_run, end).then_some(end)
        } else {
            None
        };
        if let Some(end) = cut {
            push_trimmed(&mut out, text, start..end);
            start = end;
        }
    }
    push_trimmed(&mut out, text, start..text.len());
    out
}

fn push_trimmed(out: &mut Vec<Range<usize>>, text: &str, range: Range<usize>) {
    let piece = &text[range.clone()];
    let lead = piece.len() - piece.trim_start().len();
    let trimmed = piece.trim();
    if !trimmed.is_empty() {
        let s = range.start + lead;
        out.push(s..s + trimmed.len());
    }
}

/// Whether the terminator run `run_start..run_end` (closers up to `end`) ends a sentence that
/// began at `sentence_start`.
fn is_boundary(
    text: &str,
    sentence_start: usize,
    run_start: usize,
    run_end: usize,
    end: usize,
) -> bool {
    let rest = &text[end..];
    if !rest.is_empty() && !rest.starts_with(char::is_whitespace) {
        return false; // 3.14, example.com, a.m.-ish glue, "Stop."she
    }
    let next_word = rest.trim_start().trim_start_matches(OPENERS);
    let Some(next) = next_word.chars().next() else {
        return true; // end of text
    };
    if next.is_lowercase() {
        return false;
    }
    let run = &text[run_start..run_end];
    if run != "." {
        return true;
    }

    let word_start = text[sentence_start..run_start]
        .rfind(char::is_whitespace)
        .map_or(sentence_start, |k| sentence_start + k + 1);
    let word = text[word_start..run_start].trim_start_matches(OPENERS);
    let next_is_opener = {
        let w = next_word
            .split(|ch: char| !ch.is_alphanumeric())
            .next()
            .unwrap_or("");
        SENTENCE_OPENERS.contains(&w)
    };
    if abbreviations::never_ends_sentence(word, next) {
        return false;
    }
    // "6 ft. 2 in.": a unit's stop before the next number of the same measure.
    if next.is_ascii_digit() && super::units::lookup(word, true).is_some() {
        return false;
    }
    // "every Tues. & Thurs.": a weekday's full stop before "&" is the abbreviation's.
    if next == '&' && abbreviations::is_day_abbreviation(word) {
        return false;
    }
    if is_initial(word) {
        // "J. R. R. Tolkien"; but "Neither did I. Then" ends, and so does "go to plan B. We
        // run": a letter after a lower-case word ("plan", "vitamin", "option") names a thing,
        // and an opener after it starts the next sentence.
        let before = text[sentence_start..word_start].trim_end();
        let after_word = before.rsplit(char::is_whitespace).next().is_some_and(|w| {
            w.starts_with(char::is_lowercase) && w.chars().all(char::is_alphabetic)
        });
        return word == "I" || after_word && next_is_opener;
    }
    if abbreviations::may_end_sentence(word) || is_dotted_initialism(word) {
        return next_is_opener;
    }
    true
}

/// One capital letter: an initial.
pub(super) fn is_initial(word: &str) -> bool {
    let mut chars = word.chars();
    matches!((chars.next(), chars.next()), (Some(c), None) if c.is_uppercase())
}

/// Letters separated by dots: "U.S", "Ph.D", "a.k.a".
pub(super) fn is_dotted_initialism(word: &str) -> bool {
    word.contains('.')
        && word.split('.').all(|part| {
            !part.is_empty() && part.len() <= 2 && part.chars().all(char::is_alphabetic)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotted_initialisms() {
        assert!(is_dotted_initialism("U.S"));
        assert!(is_dotted_initialism("Ph.D"));
        assert!(!is_dotted_initialism("example.com"));
        assert!(!is_dotted_initialism("US"));
    }
}
