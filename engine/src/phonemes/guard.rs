//! Keeps espeak-ng 1.52 away from the inputs that crash it.
//!
//! espeak-ng 1.52 dereferences a NULL phoneme (SIGSEGV in `InterpretPhoneme`, called from
//! `MakePhonemeList`) when a word makes it switch translator or phoneme table in the middle, for
//! instance a symbol and a hyphen glued to a script the voice cannot read. kokoro-onnx crashes on
//! the same inputs; upstream espeak-ng fixed this class of bug after 1.52, and espeak-rs-sys
//! 0.2.0 ships 1.52. A crash would take the whole application down, so Banter rewrites the few
//! words that have the crashing shape before espeak sees them (see [`avoid_known_crashes`]),
//! and cuts every word too long for its stack buffers (see [`cut_long_words`]; found by
//! `fuzz/speech`).
//!
//! The rule comes from fuzzing the nine Kokoro voices through both kokoro-onnx and Banter:
//! about a million seeded random mixes of scripts, symbols, hyphens, unassigned and private-use
//! code points found no remaining crash, and ordinary text (including Latin words, numbers,
//! common symbols and emoji inside Hindi, Japanese and Chinese) is never rewritten, so it stays
//! identical to kokoro-onnx.

use std::borrow::Cow;

use super::Language;

/// `text` with the words of the shapes known to crash espeak-ng 1.52 rewritten.
///
/// espeak 1.52 can dereference a NULL phoneme in `InterpretPhoneme` (SIGSEGV) when one word mixes
/// characters it reads through different translators or phoneme tables: a hyphenated word with a
/// symbol and a script the voice cannot read (`"€-सत"` in English, `"\u{e000}-は"` in Hindi), or
/// in Hindi even without a hyphen (`"Ꝿaは"`); upstream fixed this class after 1.52. Only such
/// words are rewritten:
///
/// - a hyphenated word that has an exotic character ([`is_exotic`]), a run of hyphens or a
///   hyphen beside a symbol, and a letter espeak reads through another translator (an exotic
///   letter; for the Hindi, Japanese and Chinese voices, which name symbols through English, any
///   letter), gets spaces for its hyphens;
/// - for Hindi, a word with an exotic character also gets spaces around its exotic runs.
///
/// Ordinary text (`state-of-the-art`, `COVID-19`, `राम-श्याम`, Latin words in Hindi, Japanese
/// or Chinese, numbers, common symbols, emoji) passes unchanged; seeded fuzzing of all nine
/// languages found no crash after this rewrite.
pub(super) fn avoid_known_crashes(text: &str, language: Language) -> Cow<'_, str> {
    let latin_voice = !matches!(language, Language::Hi | Language::Ja | Language::Cmn);
    let exotic = |c: char| is_exotic(c, language);
    let symbol = |c: char| !c.is_alphanumeric() && c != '-' && !is_native_letter(c, language);
    let switching_letter = |c: char| c.is_alphabetic() && (!latin_voice || exotic(c));
    let rewrite = |word: &str| -> Option<String> {
        if language == Language::Hi && word.chars().any(exotic) {
            let mut out = String::with_capacity(word.len() + 8);
            let mut previous: Option<bool> = None;
            for c in word.chars() {
                let is_exotic = exotic(c);
                if previous.is_some_and(|p| p != is_exotic) {
                    out.push(' ');
                }
                out.push(if c == '-' { ' ' } else { c });
                previous = Some(is_exotic);
            }
            return Some(out);
        }
        let chars: Vec<char> = word.chars().collect();
        let hyphen_beside_symbol = chars.iter().enumerate().any(|(i, &c)| {
            c == '-'
                && [i.checked_sub(1), Some(i + 1)]
                    .into_iter()
                    .flatten()
                    .filter_map(|j| chars.get(j))
                    .any(|&n| symbol(n))
        });
        let risky = word.contains('-')
            && (word.contains("--") || hyphen_beside_symbol || chars.iter().any(|&c| exotic(c)))
            && chars.iter().any(|&c| switching_letter(c));
        risky.then(|| word.replace('-', " "))
    };
    let words: Vec<&str> = text.split(' ').collect();
    let rewritten: Vec<Option<String>> = words.iter().map(|w| rewrite(w)).collect();
    if rewritten.iter().all(Option::is_none) {
        return Cow::Borrowed(text);
    }
    tracing::debug!("words rewritten to avoid an espeak-ng crash");
    let joined: Vec<&str> = words
        .iter()
        .zip(&rewritten)
        .map(|(w, r)| r.as_deref().unwrap_or(w))
        .collect();
    Cow::Owned(joined.join(" "))
}

/// The longest run of characters espeak is given as one word (see [`cut_long_words`]). The
/// longest English dictionary word has 45 letters; the crash needs well over a hundred.
pub(super) const MAX_WORD_CHARS: usize = 48;

/// `text` with a space in every run of more than [`MAX_WORD_CHARS`] characters that are neither
/// whitespace nor Chinese or Japanese script, every [`MAX_WORD_CHARS`] characters.
///
/// espeak-ng 1.52 overflows a 200-byte stack buffer when one word stacks many suffixes it may
/// peel one after another (`TranslateWord3` prepends each suffix's phonemes with an unbounded
/// `strcat`; upstream fixed it in 2026, after 1.52): 90 `s'` or 150 `ness` in one word kill the
/// process with SIGSEGV, in any voice, Kokoro's or Piper's. No word of a language reaches that
/// length; a run of Chinese or Japanese script, written without spaces, is cut by espeak's own
/// dictionary into words and left whole. This is applied to every text espeak reads.
pub(super) fn cut_long_words(text: &str) -> Cow<'_, str> {
    let joins = |c: char| !c.is_whitespace() && !is_cjk(c);
    let mut run = 0usize;
    let mut longest = 0usize;
    for c in text.chars() {
        run = if joins(c) { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    if longest <= MAX_WORD_CHARS {
        return Cow::Borrowed(text);
    }
    tracing::debug!("a word of {longest} characters cut for espeak");
    let mut out = String::with_capacity(text.len() + text.len() / MAX_WORD_CHARS + 1);
    let mut run = 0usize;
    for c in text.chars() {
        if joins(c) {
            if run == MAX_WORD_CHARS {
                out.push(' ');
                run = 0;
            }
            run += 1;
        } else {
            run = 0;
        }
        out.push(c);
    }
    Cow::Owned(out)
}

/// Han, kana and CJK punctuation: written without spaces between words.
fn is_cjk(c: char) -> bool {
    is_native_letter(c, Language::Ja) || is_native_letter(c, Language::Cmn)
}

/// A character espeak's voice for `language` does not read with its own translator and that
/// ordinary text in that language does not contain: letters of other scripts, unassigned and
/// private-use code points, and rare symbols. ASCII, Latin letters and combining accents,
/// Latin-1 symbols, general punctuation, currency and letter-like symbols, arrows, dingbats and
/// emoji are ordinary everywhere.
fn is_exotic(c: char, language: Language) -> bool {
    let u = u32::from(c);
    let ordinary = u < 0x250 // ASCII, Latin-1, Latin Extended-A/B
        || (0x1e00..0x1f00).contains(&u) // Latin Extended Additional
        || (0x2000..0x2200).contains(&u) // punctuation, super/subscripts, currency, letterlike, arrows
        || (0x2600..0x27c0).contains(&u) // miscellaneous symbols, dingbats
        || (0x1_f300..0x1_fb00).contains(&u) // emoji
        || (0x300..0x370).contains(&u) // combining diacritics (decomposed accents)
        || (0xfe00..0xfe10).contains(&u) // variation selectors
        || c.is_whitespace()
        || is_native_letter(c, language);
    !ordinary
}

/// Whether `c` belongs to the script the voice for `language` reads natively.
fn is_native_letter(c: char, language: Language) -> bool {
    let u = u32::from(c);
    let han = (0x3400..0x4dc0).contains(&u)
        || (0x4e00..0xa000).contains(&u)
        || (0xf900..0xfb00).contains(&u)
        || (0x2_0000..0x3_2400).contains(&u);
    let cjk_punctuation = (0x3000..0x3040).contains(&u) || (0xff00..0xfff0).contains(&u);
    let kana = (0x3040..0x3100).contains(&u) || (0x31f0..0x3200).contains(&u);
    match language {
        Language::Hi => (0x900..0x980).contains(&u),
        Language::Ja => kana || han || cjk_punctuation,
        Language::Cmn => han || cjk_punctuation,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unchanged(text: &str, language: Language) -> bool {
        matches!(avoid_known_crashes(text, language), Cow::Borrowed(t) if t == text)
    }

    #[test]
    fn ordinary_text_is_untouched() {
        for text in [
            "state-of-the-art co-op's e-mail",
            "-5°C at 10:30",
            "2023-05-17",
            "Zoë's-thing 😀-ok",
            "café-bar £5",
        ] {
            assert!(unchanged(text, Language::EnUs), "{text}");
        }
        for text in [
            "राम-श्याम दिल्ली-मुंबई",
            "COVID-19 e-mail iPhone-15",
            "₹500 😀 नमस्ते",
        ] {
            assert!(unchanged(text, Language::Hi), "{text}");
        }
        assert!(unchanged("東京 co-op's T-shirt 「本」", Language::Ja));
        assert!(unchanged("你好 Wi-Fi", Language::Cmn));
    }

    #[test]
    fn crashing_shapes_are_rewritten() {
        assert_eq!(avoid_known_crashes("a €-सत b", Language::EnUs), "a € सत b");
        assert_eq!(avoid_known_crashes("---नमस्ते", Language::Hi), "   नमस्ते");
        assert_eq!(avoid_known_crashes("'-नमस्ते", Language::Hi), "' नमस्ते");
        assert_eq!(avoid_known_crashes("😀-सत", Language::Ja), "😀 सत");
        assert_eq!(avoid_known_crashes("Ꝿaは", Language::Hi), "Ꝿ a は");
        assert_eq!(
            avoid_known_crashes("x \u{e000}-は", Language::Hi),
            "x \u{e000}   は"
        );
    }

    #[test]
    fn long_words_are_cut_and_words_and_cjk_are_not() {
        for text in [
            "antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis",
            "我们今天讨论人工智能的发展以及它对社会的影响和未来可能带来的各种变化与挑战这是一个非常重要的话题",
            "",
        ] {
            assert!(matches!(cut_long_words(text), Cow::Borrowed(t) if t == text), "{text}");
        }
        let stacked = "s'".repeat(220);
        let cut = cut_long_words(&stacked);
        assert!(cut.split(' ').all(|w| w.chars().count() <= MAX_WORD_CHARS));
        assert_eq!(cut.replace(' ', ""), stacked, "only spaces are added");
        let long = "x".repeat(MAX_WORD_CHARS + 1);
        assert_eq!(
            cut_long_words(&format!("a {long} b")),
            format!("a {} x b", &long[1..])
        );
    }

    #[test]
    fn exotic_depends_on_the_voice() {
        assert!(is_exotic('स', Language::EnUs));
        assert!(!is_exotic('स', Language::Hi));
        assert!(is_exotic('は', Language::Hi));
        assert!(!is_exotic('は', Language::Ja));
        assert!(is_exotic('は', Language::Cmn));
        assert!(!is_exotic('中', Language::Cmn));
        for c in ['a', 'é', '€', '—', '😀', '\u{301}', '°'] {
            assert!(!is_exotic(c, Language::Hi), "{c:?}");
        }
        assert!(is_exotic('\u{e000}', Language::EnUs));
        assert!(is_exotic('ж', Language::Fr));
    }
}
