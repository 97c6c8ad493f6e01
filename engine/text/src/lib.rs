//! English text to speech-ready text for Kokoro.
//!
//! Kokoro reads through espeak-ng phonemes, and espeak reads digits, symbols and abbreviations
//! itself, but not the way a presenter would: years come out as cardinals, "$1.2M" and "No. 5"
//! come out wrong, "Dr." ends a sentence. [`normalize`] rewrites a script into plain words
//! (numbers, money, dates, times, units, addresses, abbreviations, acronyms, Roman numerals)
//! while keeping the punctuation Kokoro pauses on (`, . ! ? — … “ ”`), and returns the
//! sentences with their ranges in both the spoken text and the source, so captions can show
//! the author's words while the audio speaks the normalised ones.
//!
//! Both British and American readings are supported ([`Dialect`]): "one hundred and five" vs
//! "one hundred five", "per cent" vs "percent", day/month vs month/day numeric dates, "metres"
//! vs "meters".
//!
//! Layout: `clean` folds typography, `sentences` finds boundaries, `tokens` splits
//! words, `rules` drives the rule modules (`web`, `dates`, `phrases` and `numeric` with `ranges`, `money`,
//! `units`, `roman`, `abbreviations`, `symbols`) over each sentence, and `numbers` spells
//! numbers. Everything is one pass per stage: linear in the input.

mod abbreviations;
mod clean;
mod dates;
mod emphasis;
mod european;
mod heteronyms;
mod interjections;
mod money;
mod notes;
mod numbers;
mod numeric;
mod phrases;
mod points;
mod ranges;
mod roman;
mod rules;
mod run_ons;
mod scripture;
mod sentences;
mod symbols;
mod tokens;
mod units;
mod web;

#[cfg(test)]
mod oracle;
#[cfg(test)]
mod tests;

use std::ops::Range;

pub use numbers::{cardinal, ordinal, year};

/// Which English the text is read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Dialect {
    /// American English (Kokoro's `a` voices, espeak `en-us`).
    #[default]
    EnUs,
    /// British English (Kokoro's `b` voices, espeak `en-gb`).
    EnGb,
}

impl Dialect {
    /// The dialect for an espeak language code ("en-us", "en-gb"); `None` for other languages.
    #[must_use]
    pub fn from_language(code: &str) -> Option<Self> {
        match code.to_ascii_lowercase().as_str() {
            "en-us" | "en" | "a" => Some(Dialect::EnUs),
            "en-gb" | "b" => Some(Dialect::EnGb),
            _ => None,
        }
    }
}

/// One sentence: where it is in the spoken text and where it came from in the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sentence {
    /// Byte range in [`Normalized::text`].
    pub spoken: Range<usize>,
    /// Byte range in the text given to [`normalize`].
    pub source: Range<usize>,
}

/// A stretch of the author's text and the words it is read as: `$4.1 billion` → "four point
/// one billion dollars", `GPU` → "G P U", `Kokoro` → "Kokoro". Word timing keeps the author's
/// stretch as one word spanning everything it is read as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// Byte range of the words in [`Normalized::text`] (no punctuation around them).
    pub spoken: Range<usize>,
    /// Byte range of what the author wrote, in the text given to [`normalize`].
    pub source: Range<usize>,
}

/// Text ready for the phonemizer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Normalized {
    /// The whole text in words; sentences are separated by a space, or by a blank line where a
    /// space would not split them again (no closing punctuation, lower-case start).
    pub text: String,
    /// The sentences in order.
    pub sentences: Vec<Sentence>,
    /// Every stretch read as words, in order.
    pub words: Vec<Word>,
}

impl Normalized {
    /// The spoken words of sentence `s`.
    #[must_use]
    pub fn spoken(&self, s: &Sentence) -> &str {
        self.text.get(s.spoken.clone()).unwrap_or("")
    }
}

/// Rewrites `text` into words for reading aloud in `dialect`; see the module docs.
#[must_use]
pub fn normalize(text: &str, dialect: Dialect) -> Normalized {
    let mut cleaned = clean::clean(text);
    european::to_english_separators(&mut cleaned.text);
    let mut out = Normalized {
        text: String::with_capacity(text.len() + text.len() / 4),
        sentences: Vec::new(),
        words: Vec::new(),
    };
    for range in sentences::split(&cleaned.text) {
        let source_text = &cleaned.text[range.clone()];
        let (mut spoken, claims) = rules::render(source_text, dialect);
        capitalise_start(source_text, &mut spoken);
        if !spoken.contains(char::is_alphanumeric) {
            continue; // punctuation alone is nothing to say
        }
        if let Some(prev) = out.sentences.last() {
            let prev = &out.text[prev.spoken.clone()];
            let sep = if splits_at_space(prev, &spoken) {
                " "
            } else {
                "\n\n"
            };
            out.text.push_str(sep);
        }
        let start = out.text.len();
        out.text.push_str(&spoken);
        out.words.extend(claims.into_iter().map(|c| Word {
            spoken: start + c.spoken.start..start + c.spoken.end,
            source:
                cleaned.source_range(&(range.start + c.source.start..range.start + c.source.end)),
        }));
        out.sentences.push(Sentence {
            spoken: start..out.text.len(),
            source: cleaned.source_range(&range),
        });
    }
    out
}

/// Whether "prev next" would be split between the two again. Only the last word before and the
/// first word after the space matter to the splitter, so the probe is short.
fn splits_at_space(prev: &str, next: &str) -> bool {
    let last = prev.rsplit(char::is_whitespace).next().unwrap_or(prev);
    let first = next.split(char::is_whitespace).next().unwrap_or(next);
    sentences::split(&format!("{last} {first}")).len() == 2
}

/// A sentence that began with a number ("5 people came.") begins with a capital in words.
fn capitalise_start(source: &str, spoken: &mut String) {
    let first_source = source.chars().find(|c| c.is_alphanumeric());
    if first_source.is_some_and(char::is_lowercase) {
        return;
    }
    if let Some((at, c)) = spoken.char_indices().find(|(_, c)| c.is_alphanumeric()) {
        if c.is_ascii_lowercase() {
            spoken.replace_range(at..=at, &c.to_ascii_uppercase().to_string());
        }
    }
}

pub use run_ons::MAX_SENTENCE_CHARS;

/// Byte ranges of the sentences of `text` (without surrounding whitespace); a run-on longer
/// than [`MAX_SENTENCE_CHARS`] comes back in pieces cut at clauses ([`run_ons`]).
#[must_use]
pub fn split_sentences(text: &str) -> Vec<Range<usize>> {
    let cleaned = clean::clean(text);
    sentences::split(&cleaned.text)
        .into_iter()
        .flat_map(|r| run_ons::cut(&cleaned.text, r))
        .map(|r| cleaned.source_range(&r))
        .collect()
}

/// Whether a full stop right after `word` (as written, the stop not included) may close an
/// abbreviation or an initial rather than the sentence (`Dr`, `e.g`, `U.S`, `J`, `No`, `Jan`):
/// then only the next word tells ([`full_stop_ends_sentence`]). Text that arrives a word at a
/// time (the engine's `follow`) waits for it only in these cases.
#[must_use]
pub fn full_stop_is_ambiguous(word: &str) -> bool {
    let w = word.trim_start_matches(sentences::OPENERS);
    abbreviations::never_ends_sentence(w, 'A')
        || abbreviations::never_ends_sentence(w, '1')
        || abbreviations::may_end_sentence(w)
        || abbreviations::is_day_abbreviation(w)
        || sentences::is_initial(w)
        || sentences::is_dotted_initialism(w)
}

/// Whether `before. after` is two sentences, by the same rules as [`split_sentences`]
/// (`before` the word ending at the full stop, `after` the next word).
#[must_use]
pub fn full_stop_ends_sentence(before: &str, after: &str) -> bool {
    sentences::split(&format!("{before}. {after}")).len() > 1
}

const CLOSING: &[char] = &['"', '”', '\'', '’', ')', '*', '_', ' '];
const OPENING: &[char] = &['"', '“', '\'', '‘', '(', '*', '_', ' '];

/// Whether `line` is cut off by a dash ("I think—", "But--", "wai-"): the next speaker
/// interrupts, so the gap after it should be short or none.
#[must_use]
pub fn ends_with_interruption(line: &str) -> bool {
    let t = line.trim_end().trim_end_matches(CLOSING);
    if t.ends_with(['—', '–']) || t.ends_with("--") {
        return true;
    }
    // A hyphen glued to a word: "I thi-".
    t.strip_suffix('-')
        .is_some_and(|rest| rest.ends_with(char::is_alphabetic))
}

/// Whether `line` starts by cutting in with a dash ("—sorry", "-- wait"): it overlaps or
/// follows the previous line at once.
#[must_use]
pub fn starts_with_interruption(line: &str) -> bool {
    let t = line.trim_start().trim_start_matches(OPENING);
    if t.starts_with(['—', '–']) || t.starts_with("--") {
        return true;
    }
    t.strip_prefix('-')
        .is_some_and(|rest| rest.starts_with(char::is_alphabetic))
}

/// Music's flat, natural and sharp signs: they sit among the pictographs but are said
/// ("A♭ major" is not A major; `notes` reads them).
pub(crate) const MUSIC_SIGNS: [char; 3] = ['♭', '♮', '♯'];

/// Emoji and pictographs, with the joiners and selectors that build them: never read aloud
/// (espeak would name them), so segments and the word map both drop them.
#[must_use]
pub fn is_pictograph(c: char) -> bool {
    if MUSIC_SIGNS.contains(&c) {
        return false;
    }
    matches!(u32::from(c),
        0x1F000..=0x1FAFF   // emoticons, pictographs, transport, flags' regional indicators, symbols
        | 0x2600..=0x27BF   // miscellaneous symbols, dingbats
        | 0x2B00..=0x2BFF   // arrows and stars used as emoji
        | 0xFE00..=0xFE0F   // variation selectors
        | 0x200D            // zero-width joiner (emoji sequences)
        | 0xE0020..=0xE007F // tag characters (flag sequences)
    )
}
