//! Checks for the normaliser's fuzz target (`text_normalize`).
//!
//! The normaliser (`engine/text`) reads what API clients send and every script line, and is
//! thousands of lines of rules slicing strings by byte: a panic there is a 500 for a request
//! and a line that cannot render. It depends on nothing, so the fuzz build stays small.

use std::ops::Range;

use ::text::{normalize, split_sentences, Dialect};

/// Normalises `input` in both dialects and checks what must always hold: no panic, every
/// sentence and word range on character boundaries of the text it names, in order, and no
/// ASCII digit left for espeak to read its own way.
pub fn check(input: &str) {
    for dialect in [Dialect::EnUs, Dialect::EnGb] {
        let n = normalize(input, dialect);
        let mut spoken_at = 0;
        let mut source_at = 0;
        for s in &n.sentences {
            inside(&n.text, &s.spoken, "sentence spoken", input);
            inside(input, &s.source, "sentence source", input);
            assert!(s.spoken.start >= spoken_at, "sentences out of order: {input:?}");
            assert!(s.source.start >= source_at, "sentences out of order: {input:?}");
            spoken_at = s.spoken.end;
            source_at = s.source.end;
            assert!(
                n.spoken(s).contains(char::is_alphanumeric),
                "a sentence with nothing to say: {input:?}"
            );
        }
        let mut word_at = 0;
        for w in &n.words {
            inside(&n.text, &w.spoken, "word spoken", input);
            inside(input, &w.source, "word source", input);
            assert!(w.spoken.start >= word_at, "words out of order: {input:?}");
            word_at = w.spoken.start;
        }
        assert!(
            !n.text.contains(|c: char| c.is_ascii_digit()),
            "digits left in {:?} from {input:?}",
            n.text
        );
    }
    let mut at = 0;
    for r in split_sentences(input) {
        inside(input, &r, "split sentence", input);
        assert!(r.start >= at, "split sentences out of order: {input:?}");
        at = r.end;
    }
    for word in input.split_whitespace() {
        let _ = ::text::full_stop_is_ambiguous(word.trim_end_matches('.'));
    }
}

fn inside(text: &str, range: &Range<usize>, what: &str, input: &str) {
    assert!(
        range.start <= range.end && text.get(range.clone()).is_some(),
        "{what} {range:?} is not a range of characters of {text:?} (input {input:?})"
    );
}
