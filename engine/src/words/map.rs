//! The author's words onto the phonemes that say them, at planning time.
//!
//! [`phonemize_words`] gives exactly the phonemes the audio is made from (the same speakable
//! filter, normaliser and phonemizer as [`crate::segments::spoken_text`]) and, beside them, one
//! [`WordSpan`] per word as written. English goes through the normaliser, whose claims say which
//! stretch of the author's text became which said words; other languages are read as they are
//! written, a word being a run between spaces (so a Japanese or Chinese clause without spaces
//! is one word).

use std::ops::Range;

use crate::phonemes::{Language, PhonemeError, Phonemizer};
use crate::text::{self, is_pictograph, Dialect};

use super::align::{align, Matched};
use super::WordSpan;

/// Text as [`crate::segments::speakable_text`] makes it, and for every byte of it the source
/// byte range of the character it came from.
#[must_use]
pub fn speakable_with_map(text: &str) -> (String, Vec<Range<usize>>) {
    let mut out = String::with_capacity(text.len());
    let mut map = Vec::with_capacity(text.len());
    for (i, c) in text.char_indices() {
        if is_pictograph(c) {
            continue;
        }
        let source = i..i + c.len_utf8();
        let c = if c.is_control() && c != '\n' { ' ' } else { c };
        out.push(c);
        map.extend(std::iter::repeat_n(source, c.len_utf8()));
    }
    (out, map)
}

/// The source range behind a range of mapped bytes.
fn source_of(map: &[Range<usize>], range: &Range<usize>) -> Option<Range<usize>> {
    let first = map.get(range.start)?;
    let last = map.get(range.end.checked_sub(1)?)?;
    Some(first.start..last.end)
}

/// Phonemizes `text` in `language` as the audio is made, and says which phonemes each written
/// word became (see the module docs). Words are in order; every written word the normaliser
/// reads is there once.
pub fn phonemize_words(
    text: &str,
    language: Language,
) -> Result<(String, Vec<WordSpan>), PhonemeError> {
    let phonemizer = Phonemizer::global()?;
    let (speakable, map) = speakable_with_map(text);
    let (spoken, stretches): (String, Vec<Stretch>) =
        if let Some(dialect) = Dialect::from_language(language.espeak_code()) {
            let n = text::normalize(&speakable, dialect);
            let stretches = n.words.into_iter().map(|w| (w.spoken, w.source)).collect();
            (n.text, stretches)
        } else {
            let stretches = plain_words(&speakable)
                .into_iter()
                .map(|r| (r.clone(), r))
                .collect();
            (speakable.clone(), stretches)
        };
    let phonemes = phonemizer.phonemize(&spoken, language)?;
    let ranges = map_words(&phonemes, &spoken, &stretches, |word| {
        phonemizer
            .phonemize(word, language)
            .map_or_else(|_| word.chars().count(), |p| letters(&p))
    });
    let spans = stretches
        .iter()
        .zip(ranges)
        .filter_map(|((_, source), phonemes)| {
            let source = source_of(&map, source)?;
            Some(WordSpan {
                text: text.get(source.clone())?.to_owned(),
                source,
                phonemes,
            })
        })
        .collect();
    Ok((phonemes, spans))
}

/// [`phonemize_words`] for a voice with a phonemizer of its own (a Piper voice reads the text
/// as written, through piper's pipeline): `phonemize` gives the phonemes of the whole text and
/// of each word alone (when espeak's word count differs from the text's). Words are runs
/// between spaces, as for languages without a normaliser.
pub fn phonemize_words_with<E>(
    text: &str,
    mut phonemize: impl FnMut(&str) -> Result<String, E>,
) -> Result<(String, Vec<WordSpan>), E> {
    let stretches: Vec<Stretch> = plain_words(text)
        .into_iter()
        .map(|r| (r.clone(), r))
        .collect();
    let phonemes = phonemize(text)?;
    let ranges = map_words(&phonemes, text, &stretches, |word| {
        phonemize(word).map_or_else(|_| word.chars().count(), |p| letters(&p))
    });
    let spans = stretches
        .iter()
        .zip(ranges)
        .filter_map(|((_, source), phonemes)| {
            Some(WordSpan {
                text: text.get(source.clone())?.to_owned(),
                source: source.clone(),
                phonemes,
            })
        })
        .collect();
    Ok((phonemes, spans))
}

/// A stretch of text read as words: its range in the said text and in the source.
type Stretch = (Range<usize>, Range<usize>);

/// Byte ranges of the words of `text` read as written: runs between spaces, without the
/// punctuation at their ends, that hold a letter or digit.
fn plain_words(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    for piece in text.split(char::is_whitespace) {
        // Where the piece starts in `text`: a separator may be more than one byte (a
        // no-break space is two), so the pieces' lengths alone would drift.
        let start = piece.as_ptr() as usize - text.as_ptr() as usize;
        if let Some(core) = core_of(piece) {
            out.push(start + core.start..start + core.end);
        }
    }
    out
}

/// The part of `word` from its first to its last letter or digit.
fn core_of(word: &str) -> Option<Range<usize>> {
    let start = word.find(char::is_alphanumeric)?;
    let (last, c) = word
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_alphanumeric())?;
    Some(start..last + c.len_utf8())
}

/// Phoneme symbols that are punctuation: they get frames (a pause) but belong to no word. The
/// marks phonemizer keeps (the phonemes' punctuation), plus `,` `.` `-` `'`.
pub(super) fn is_punctuation(c: char) -> bool {
    crate::phonemes::is_plain_mark(c) || matches!(c, ',' | '.' | '-' | '\'')
}

fn is_stress(c: char) -> bool {
    matches!(c, 'ˈ' | 'ˌ')
}

/// Sounds in a phoneme string: symbols that are neither punctuation, stress nor space.
fn letters(phonemes: &str) -> usize {
    phonemes
        .chars()
        .filter(|&c| !c.is_whitespace() && !is_punctuation(c) && !is_stress(c))
        .count()
}

/// A phoneme word: the character range of its symbols without the punctuation around them.
#[derive(Debug)]
struct PhoneWord {
    chars: Range<usize>,
    letters: usize,
}

/// Phoneme words: runs of symbols between spaces and punctuation (espeak writes `θˈɪŋk—nˈoʊ`
/// for "think—no").
fn phone_words(phonemes: &str) -> Vec<PhoneWord> {
    let chars: Vec<char> = phonemes.chars().collect();
    let is_break = |c: char| c.is_whitespace() || is_punctuation(c);
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if is_break(chars[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && !is_break(chars[i]) {
            i += 1;
        }
        let letters = chars[start..i].iter().filter(|&&c| !is_stress(c)).count();
        if letters > 0 {
            out.push(PhoneWord {
                chars: start..i,
                letters,
            });
        }
    }
    out
}

/// The phoneme character range of every stretch `(said range in spoken, _)`, in order.
/// `expected` phonemizes one said word alone and counts its sounds (asked only when espeak's
/// word count differs from the text's).
fn map_words(
    phonemes: &str,
    spoken: &str,
    stretches: &[Stretch],
    mut expected: impl FnMut(&str) -> usize,
) -> Vec<Range<usize>> {
    // The said words, each with the stretch it belongs to.
    let mut said: Vec<(usize, &str)> = Vec::new();
    for (k, (range, _)) in stretches.iter().enumerate() {
        let Some(words) = spoken.get(range.clone()) else {
            continue;
        };
        for piece in words.split_whitespace() {
            if let Some(core) = core_of(piece) {
                said.push((k, &piece[core]));
            }
        }
    }
    let phones = phone_words(phonemes);
    let lengths: Vec<usize> = if said.len() == phones.len() {
        vec![0; said.len()]
    } else {
        said.iter().map(|(_, w)| expected(w).max(1)).collect()
    };
    let actual: Vec<usize> = phones.iter().map(|p| p.letters).collect();
    let matched = align(&lengths, &actual);
    let end = phones.last().map_or(0, |p| p.chars.end);
    let mut out: Vec<Option<Range<usize>>> = vec![None; stretches.len()];
    for ((k, _), m) in said.iter().zip(&matched) {
        let range = char_range(&phones, m, end);
        let slot = &mut out[*k];
        *slot = Some(match slot.take() {
            None => range,
            Some(r) if r.is_empty() => range.start.min(r.start)..range.end.max(r.end),
            Some(r) if range.is_empty() => r,
            Some(r) => r.start.min(range.start)..r.end.max(range.end),
        });
    }
    let mut last_end = 0;
    out.into_iter()
        .map(|r| {
            let r = r.unwrap_or(last_end..last_end);
            last_end = r.end;
            r
        })
        .collect()
}

/// The phoneme characters a matched said word gets.
fn char_range(phones: &[PhoneWord], m: &Matched, end: usize) -> Range<usize> {
    let Some(first) = phones.get(m.phones.start) else {
        return end..end;
    };
    if m.phones.is_empty() {
        return first.chars.start..first.chars.start;
    }
    let last = &phones[m.phones.end - 1];
    let span = first.chars.start..last.chars.end;
    if m.part == (0.0, 1.0) {
        return span;
    }
    let len = span.len() as f64;
    let at = |f: f64| span.start + (f * len).round() as usize;
    at(m.part.0)..at(m.part.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stretches(spoken: &str) -> Vec<Stretch> {
        plain_words(spoken)
            .into_iter()
            .map(|r| (r.clone(), r))
            .collect()
    }

    fn said<'a>(phonemes: &'a str, ranges: &[Range<usize>]) -> Vec<&'a str> {
        let chars: Vec<(usize, char)> = phonemes.char_indices().collect();
        let byte = |i: usize| chars.get(i).map_or(phonemes.len(), |c| c.0);
        ranges
            .iter()
            .map(|r| &phonemes[byte(r.start)..byte(r.end)])
            .collect()
    }

    #[test]
    fn words_get_their_phonemes_without_punctuation() {
        let spoken = "Hello, “world” again.";
        let phonemes = "həlˈoʊ, “wˈɜːld” ɐɡˈɛn.";
        let r = map_words(phonemes, spoken, &stretches(spoken), |_| unreachable!());
        assert_eq!(said(phonemes, &r), ["həlˈoʊ", "wˈɜːld", "ɐɡˈɛn"]);
    }

    #[test]
    fn a_joined_pair_is_split_by_expected_length() {
        let spoken = "in the morning";
        let phonemes = "ɪnðə mˈɔːɹnɪŋ";
        let lengths = |w: &str| match w {
            "in" | "the" => 2,
            _ => 7,
        };
        let r = map_words(phonemes, spoken, &stretches(spoken), lengths);
        assert_eq!(said(phonemes, &r), ["ɪn", "ðə", "mˈɔːɹnɪŋ"]);
    }

    #[test]
    fn a_stretch_said_as_several_words_spans_them_all() {
        // "$4.1 billion" read as five words is one stretch.
        let spoken = "raised four point one billion dollars today";
        let words: Vec<_> = stretches(spoken);
        let grouped = vec![
            words[0].clone(),
            (words[1].0.start..words[5].0.end, 7..19),
            words[6].clone(),
        ];
        let phonemes = "ɹˈeɪzd fˈoːɹ pˈɔɪnt wˈʌn bˈɪljən dˈɑːlɚz tədˈeɪ";
        let r = map_words(phonemes, spoken, &grouped, |_| unreachable!());
        assert_eq!(
            said(phonemes, &r),
            ["ɹˈeɪzd", "fˈoːɹ pˈɔɪnt wˈʌn bˈɪljən dˈɑːlɚz", "tədˈeɪ"]
        );
    }

    #[test]
    fn speakable_map_points_back_at_the_source() {
        let text = "Hi 🙂 there\u{7}!";
        let (s, map) = speakable_with_map(text);
        assert_eq!(s, crate::segments::speakable_text(text));
        let at = s.find("there").unwrap();
        assert_eq!(source_of(&map, &(at..at + 5)), Some(8..13));
        assert_eq!(&text[8..13], "there");
    }
}
