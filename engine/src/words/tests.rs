//! Word maps of real text through the real normaliser and espeak: the properties every caption,
//! API response and highlight relies on.

use crate::phonemes::{Language, Phonemizer};
use crate::segments::spoken_text;

use super::phonemize_words;

const TEXTS: &[&str] = &[
    "The company raised $4.1 billion in FY2025, said Dr. Smith at 7:30 pm.",
    "Our GPU cluster has 8 H100s; the NASA team doesn't.",
    "In the morning, we'll meet at St. John's — it's on 5th Ave.",
    "Well... I think—no, wait! Twenty-five cats? On 3/14/2015, at 9:05.",
    "“Quote,” she said (quietly). The U.S. and the U.K. agreed; 50% said yes.",
    "Nguyen, Siobhan and Zhang Wei read chapter IV aloud.",
];

fn check(text: &str, language: Language) -> Vec<String> {
    let (phonemes, words) = phonemize_words(text, language).expect("phonemize");
    let expected = Phonemizer::global()
        .unwrap()
        .phonemize(&spoken_text(text, language), language)
        .unwrap();
    assert_eq!(phonemes, expected, "the audio's phonemes, unchanged");
    let chars = phonemes.chars().count();
    let mut source_end = 0;
    let mut phoneme_end = 0;
    for w in &words {
        assert_eq!(&text[w.source.clone()], w.text, "{text}");
        assert!(w.source.start >= source_end, "in order: {words:?}");
        assert!(w.phonemes.start >= phoneme_end, "no overlap: {words:?}");
        assert!(w.phonemes.end <= chars);
        source_end = w.source.end;
        phoneme_end = w.phonemes.end;
    }
    words.iter().map(|w| w.text.clone()).collect()
}

#[test]
fn every_written_word_once_in_order_without_overlap() {
    for text in TEXTS {
        for language in [Language::EnUs, Language::EnGb] {
            let words = check(text, language);
            assert!(!words.is_empty(), "{text}");
        }
    }
}

#[test]
fn expansions_stay_one_word_in_the_authors_spelling() {
    let words = check(TEXTS[0], Language::EnUs);
    assert!(words.contains(&"$4.1 billion".to_owned()), "{words:?}");
    assert!(
        words.iter().any(|w| w == "7:30 pm" || w == "7:30"),
        "{words:?}"
    );
    let words = check(TEXTS[1], Language::EnUs);
    assert!(words.contains(&"GPU".to_owned()), "{words:?}");
    let (_, spans) = phonemize_words("Hello world", Language::EnUs).unwrap();
    assert_eq!(spans.len(), 2);
    assert!(spans.iter().all(|s| !s.phonemes.is_empty()));
}

#[test]
fn nothing_speakable_gives_no_words() {
    for text in ["🙂👍", "... !!! —", ""] {
        let (_, words) = phonemize_words(text, Language::EnUs).unwrap();
        assert!(words.is_empty(), "{text:?}: {words:?}");
    }
}

#[test]
fn other_languages_are_read_as_written() {
    let words = check("¿Dónde está la biblioteca, señor?", Language::Es);
    assert_eq!(words, ["Dónde", "está", "la", "biblioteca", "señor"]);
    check("Il a 5 ans, et moi aussi.", Language::Fr);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Any text: no panic, and the word map keeps its promises.
    #[test]
    fn any_text_maps_in_order(text in "[a-zA-Z0-9 $%&.,;:!?'\"()—…/@#*-é中🙂\n]{0,80}") {
        for language in [Language::EnUs, Language::Fr] {
            check(&text, language);
        }
    }
}

#[test]
fn words_after_wide_spaces_keep_their_place() {
    // No-break and em spaces are more than one byte: the words after them must still map to
    // their own text (they drifted onto the next word's bytes).
    for language in [Language::EnUs, Language::Fr] {
        let words = check("Un\u{a0}deux\u{2003}trois\u{a0}\u{a0}中\nA", language);
        assert!(
            words.iter().any(|w| w == "trois"),
            "{language:?}: {words:?}"
        );
    }
}
