//! Text to Piper phonemes and phoneme ids, as piper-tts 1.8.0 makes them.
//!
//! Piper (VITS) voices were trained on ids made by piper's own phonemizer, which differs from
//! the Kokoro pipeline in this module's parent (phonemizer 3.4's punctuation handling): piper
//! asks espeak-ng for each clause's IPA *and* the punctuation that ended it, keeps that
//! punctuation as a phoneme, splits the text into sentences where espeak ends one, and maps every
//! NFD code point to ids padded with `_`. A voice fed Kokoro-style phonemes would mispronounce
//! and misphrase, so Piper voices get this pipeline, reproduced step by step from piper-tts
//! 1.8.0 (`voice.py`, `phonemize_espeak.py`, `phoneme_ids.py`, `espeakbridge.c`):
//!
//! 1. `[[ raw phonemes ]]` blocks are cut out of the text ([`piper_phonemize`]); their
//!    characters are phonemes as written;
//! 2. every other part goes through espeak-ng clause by clause with the clause terminator
//!    (`Espeak::clauses_with_terminators`); language-switch flags such as `(fr)` are removed,
//!    the terminator is appended as `.` `?` `!` `,` `:` or `;` (with a space after the last
//!    three), and the result is decomposed into NFD code points (module `nfd`, Python's tables);
//! 3. a clause whose terminator has `CLAUSE_TYPE_SENTENCE` ends a sentence;
//! 4. [`piper_ids`] maps each sentence to `^ _ p1 _ p2 _ ... $` ids. Phonemes the voice's id map
//!    lacks are skipped as piper skips them, but reported to the caller in
//!    [`PiperIds::missing`] instead of only logged.
//!
//! The espeak-ng is Banter's (espeak-rs-sys's 1.52 snapshot, the same library and data as for
//! Kokoro), not the newer build piper-tts bundles. The pipeline is identical, but espeak's
//! output differs in two known ways: piper's build has an IPA-output regression (espeak-ng
//! #2367: a linking `ʲ` after `i` vowels, German `r` for `ɾ` after plosives) that 1.52 does not
//! have, and a few of its dictionaries (`ru`, `sv`) are newer. The golden test
//! (`tests/fixtures/goldens/piper/phonemes.json`, written by `tools/goldens/piper_phonemes.py`
//! from piper-tts itself) checks every other case id for id and lists those explicitly.
//! Text for Kokoro's languages also passes the crash guard (module `guard`), which leaves
//! ordinary text unchanged.

use std::collections::HashMap;
use std::hash::BuildHasher;

use super::espeak::{clause, Espeak};
use super::{guard, nfd, pytext, Language, PhonemeError, Phonemizer};

/// piper's padding symbol, after BOS and after every phoneme.
pub const PIPER_PAD: &str = "_";
/// piper's beginning-of-sentence symbol.
pub const PIPER_BOS: &str = "^";
/// piper's end-of-sentence symbol.
pub const PIPER_EOS: &str = "$";

/// The phonemes of every sentence of `text` as piper-tts 1.8.0's `PiperVoice.phonemize` makes
/// them for a voice whose config names `espeak_voice` (`espeak.voice`, such as `en-us`, `de`,
/// `pt-br`) and has no `vowel_clusters`. Each phoneme is one Unicode code point, except the
/// characters of `[[ raw ]]` blocks, which are taken as written (also one code point each).
///
/// An espeak voice that espeak-ng does not know is an error naming it
/// ([`PhonemeError::EspeakVoice`]); empty or unpronounceable text gives no sentences.
pub fn piper_phonemize(text: &str, espeak_voice: &str) -> Result<Vec<Vec<String>>, PhonemeError> {
    piper_phonemize_with_clusters(text, espeak_voice, &[])
}

/// [`piper_phonemize`] for a voice whose config has `vowel_clusters`: runs of phonemes that
/// spell one of `vowel_clusters` (longest first) become one phoneme, in espeak's output only
/// (not in `[[ raw ]]` blocks), as piper's `_merge_known_vowel_clusters`.
pub fn piper_phonemize_with_clusters(
    text: &str,
    espeak_voice: &str,
    vowel_clusters: &[Vec<String>],
) -> Result<Vec<Vec<String>>, PhonemeError> {
    let phonemizer = Phonemizer::global()?;
    let mut espeak = phonemizer.lock();
    espeak
        .set_voice(espeak_voice)
        .map_err(|(status, message)| PhonemeError::EspeakVoice {
            voice: espeak_voice.to_owned(),
            status,
            message,
        })?;
    let language = guard_language(espeak_voice);

    let parts = split_phoneme_blocks(text);
    let mut phonemes: Vec<Vec<String>> = Vec::new();
    let mut prev_raw = false;
    for (i, part) in parts.iter().enumerate() {
        if part.starts_with("[[") {
            prev_raw = true;
            if phonemes.is_empty() {
                phonemes.push(Vec::new());
            }
            let Some(sentence) = phonemes.last_mut() else {
                continue; // unreachable: a sentence was just ensured
            };
            if i > 0 && parts[i - 1].ends_with(' ') {
                sentence.push(" ".to_owned());
            }
            // Python's `text_part[2:-2].strip()`, one phoneme per code point.
            let chars: Vec<char> = part.chars().collect();
            let inner: String = chars
                .get(2..chars.len().saturating_sub(2))
                .unwrap_or_default()
                .iter()
                .collect();
            sentence.extend(pytext::strip(&inner).chars().map(String::from));
            if i + 1 < parts.len() && parts[i + 1].starts_with(' ') {
                sentence.push(" ".to_owned());
            }
            continue;
        }
        let part = match language {
            Some(language) => guard::avoid_known_crashes(part, language),
            None => std::borrow::Cow::Borrowed(*part),
        };
        let mut part_phonemes = phonemize_part(&mut espeak, &part, vowel_clusters);
        if prev_raw && !part_phonemes.is_empty() {
            let first = part_phonemes.remove(0);
            if let Some(last) = phonemes.last_mut() {
                last.extend(first);
            }
        }
        phonemes.extend(part_phonemes);
        prev_raw = false;
    }
    if phonemes.last().is_some_and(Vec::is_empty) {
        phonemes.pop();
    }
    Ok(phonemes)
}

/// The Kokoro language whose crash-guard rules (which depend only on the script the voice
/// reads) fit `espeak_voice`: its own (`en-gb`), else the first with the same primary language
/// (`fr` is `fr-fr`, `en-gb-x-rp` is `en-us`, `pt` is `pt-br`). Other voices (`de`, `ru`...)
/// are not guarded: the guard's notion of exotic letters is only right for those nine.
fn guard_language(espeak_voice: &str) -> Option<Language> {
    let primary = |code: &str| {
        code.split('-')
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase()
    };
    Language::ALL
        .into_iter()
        .find(|l| l.espeak_code().eq_ignore_ascii_case(espeak_voice))
        .or_else(|| {
            Language::ALL
                .into_iter()
                .find(|l| primary(l.espeak_code()) == primary(espeak_voice))
        })
}

/// piper's `EspeakPhonemizer.phonemize(voice, text)`: espeak's phonemes of `text` by sentence.
fn phonemize_part(
    espeak: &mut Espeak,
    text: &str,
    vowel_clusters: &[Vec<String>],
) -> Vec<Vec<String>> {
    let mut all: Vec<Vec<String>> = Vec::new();
    let mut sentence: Vec<String> = Vec::new();
    for (clause_phonemes, terminator) in espeak.clauses_with_terminators(text) {
        let mut phonemes = remove_switch_flags(&clause_phonemes);
        let mark = terminator_mark(terminator);
        phonemes.push_str(mark);
        if matches!(mark, "," | ":" | ";") {
            phonemes.push(' ');
        }
        sentence.extend(nfd::nfd_chars(&phonemes).into_iter().map(String::from));
        if terminator & clause::TYPE_SENTENCE == clause::TYPE_SENTENCE {
            all.push(merge_vowel_clusters(
                std::mem::take(&mut sentence),
                vowel_clusters,
            ));
        }
    }
    if !sentence.is_empty() {
        all.push(merge_vowel_clusters(sentence, vowel_clusters));
    }
    all
}

/// The punctuation piper's `espeakbridge` names a clause terminator by: the low 20 bits must be
/// exactly one of espeak's clause kinds (pause included), else nothing.
fn terminator_mark(terminator: u32) -> &'static str {
    match terminator & 0x000F_FFFF {
        clause::PERIOD => ".",
        clause::QUESTION => "?",
        clause::EXCLAMATION => "!",
        clause::COMMA => ",",
        clause::COLON => ":",
        clause::SEMICOLON => ";",
        _ => "",
    }
}

/// Removes espeak's language-switch flags, piper's `re.sub(r"\([^)]+\)", "", phonemes)`.
fn remove_switch_flags(phonemes: &str) -> String {
    let mut out = String::with_capacity(phonemes.len());
    let mut rest = phonemes;
    while let Some(open) = rest.find('(') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find(')') {
            Some(close) if close > 0 => rest = &after[close + 1..],
            _ => {
                out.push('(');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// piper's `_merge_known_vowel_clusters`: longest known cluster first, at least two phonemes.
#[must_use]
pub fn merge_vowel_clusters(phonemes: Vec<String>, clusters: &[Vec<String>]) -> Vec<String> {
    let Some(max_len) = clusters.iter().map(Vec::len).max() else {
        return phonemes;
    };
    let mut out = Vec::with_capacity(phonemes.len());
    let mut i = 0;
    while i < phonemes.len() {
        let longest = max_len.min(phonemes.len() - i);
        let found = (2..=longest)
            .rev()
            .find(|&n| clusters.iter().any(|c| c.as_slice() == &phonemes[i..i + n]));
        if let Some(n) = found {
            out.push(phonemes[i..i + n].concat());
            i += n;
        } else {
            out.push(phonemes[i].clone());
            i += 1;
        }
    }
    out
}

/// Python's `re.split(r"(\[\[.*?\]\])", text)`: the text around every `[[ ... ]]` block (no
/// newline inside) and the blocks themselves, alternating, starting and ending with text (which
/// may be empty).
fn split_phoneme_blocks(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut last = 0;
    let mut search = 0;
    while let Some(found) = text[search..].find("[[") {
        let start = search + found;
        let body = &text[start + 2..];
        let newline = body.find('\n').unwrap_or(body.len());
        match body.find("]]") {
            Some(close) if close <= newline => {
                let end = start + 2 + close + 2;
                parts.push(&text[last..start]);
                parts.push(&text[start..end]);
                last = end;
                search = end;
            }
            // No match starting here; the regex tries the next position ('[' is one byte).
            _ => search = start + 1,
        }
    }
    parts.push(&text[last..]);
    parts
}

/// A sentence's phoneme ids, and the phonemes the id map lacks.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PiperIds {
    /// `^ _ p1 _ p2 _ ... $` as piper's `phonemes_to_ids`, missing phonemes left out.
    pub ids: Vec<i64>,
    /// `(index in the phonemes, phoneme)` of every phoneme the id map lacks; piper drops these
    /// with a logged warning, so a voice never hears them.
    pub missing: Vec<(usize, String)>,
}

/// piper's `phonemes_to_ids(phonemes, id_map)` for one sentence: BOS, PAD, then every phoneme's
/// ids followed by PAD, then EOS. Phonemes not in `id_map` are skipped, as piper skips them, and
/// listed in [`PiperIds::missing`]. An id map without `^`, `_` or `$` is an error
/// ([`PhonemeError::PiperIdMap`]), where piper would raise `KeyError`.
pub fn piper_ids<S: BuildHasher>(
    phonemes: &[String],
    id_map: &HashMap<String, Vec<i64>, S>,
) -> Result<PiperIds, PhonemeError> {
    let special = |symbol: &str| {
        id_map.get(symbol).ok_or_else(|| PhonemeError::PiperIdMap {
            reason: format!("no id for {symbol:?}"),
        })
    };
    let (bos, pad, eos) = (
        special(PIPER_BOS)?,
        special(PIPER_PAD)?,
        special(PIPER_EOS)?,
    );
    let mut out = PiperIds::default();
    out.ids.extend(bos);
    out.ids.extend(pad);
    for (i, phoneme) in phonemes.iter().enumerate() {
        if let Some(ids) = id_map.get(phoneme) {
            out.ids.extend(ids);
            out.ids.extend(pad);
        } else {
            out.missing.push((i, phoneme.clone()));
        }
    }
    out.ids.extend(eos);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_split_like_python_re() {
        assert_eq!(split_phoneme_blocks("a"), ["a"]);
        assert_eq!(
            split_phoneme_blocks("[[ a ]][[ b ]]"),
            ["", "[[ a ]]", "", "[[ b ]]", ""]
        );
        assert_eq!(
            split_phoneme_blocks("x [[ a\nb ]] [[[y]]] z"),
            ["x [[ a\nb ]] ", "[[[y]]", "] z"]
        );
        assert_eq!(split_phoneme_blocks("[[ open"), ["[[ open"]);
    }

    #[test]
    fn flags_are_removed_like_piper() {
        assert_eq!(
            remove_switch_flags("ʒɛm (en)fʊtbɔːl(fr) e"),
            "ʒɛm fʊtbɔːl e"
        );
        assert_eq!(remove_switch_flags("a ()b) c"), "a ()b) c");
        assert_eq!(remove_switch_flags("x (a(b)c) y"), "x c) y");
        assert_eq!(remove_switch_flags("a (b"), "a (b");
    }

    #[test]
    fn vowel_clusters_merge_longest_first() {
        let p = |s: &str| s.chars().map(String::from).collect::<Vec<_>>();
        let clusters = vec![p("aɪ"), p("aɪə")];
        assert_eq!(
            merge_vowel_clusters(p("taɪəaɪa"), &clusters),
            ["t", "aɪə", "aɪ", "a"]
        );
        assert_eq!(merge_vowel_clusters(p("ab"), &[]), ["a", "b"]);
    }

    /// One case of `tests/fixtures/goldens/piper/phonemes.json`.
    #[derive(serde::Deserialize)]
    struct Case {
        voice: String,
        id_map: String,
        text: String,
        phonemes: Vec<Vec<String>>,
        ids: Vec<Vec<i64>>,
        missing: Vec<(usize, usize, String)>,
    }

    #[derive(serde::Deserialize)]
    struct Golden {
        id_maps: HashMap<String, HashMap<String, Vec<i64>>>,
        cases: Vec<Case>,
    }

    /// Why a golden case may differ from piper-tts 1.8.0. Each cause was verified both ways by
    /// swapping data directories: piper-tts's own library with Banter's espeak-ng data, and
    /// Banter's library with piper-tts's data (`$BANTER_ESPEAK_DATA`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Known {
        /// piper-tts 1.8.0 bundles an espeak-ng master build with an IPA-output regression
        /// (espeak-ng issue #2367, introduced by PR #2082, fixed by PR #2457): `WritePhMnemonic`
        /// evaluates every `prevPh`/`prevPhW`/`prev2PhW` condition as false, so it writes the
        /// linking `ʲ` after `i` vowels (`ðɪʲ ˈɑːɹt`) and German `r` after plosives, where
        /// espeak-ng 1.52 (Banter's) writes nothing and `ɾ`. It is library code, not data: piper's
        /// library with Banter's data still writes them, Banter's with piper's data does not.
        /// Such a case must differ only in `ʲ` and `r`/`ɾ`.
        IpaRegression,
        /// The dictionaries differ (piper-tts bundles newer `ru_dict` and `sv_dict`): piper's
        /// library with Banter's data gives exactly Banter's phonemes, and Banter with piper's
        /// data exactly piper's.
        Dictionary,
    }

    /// Every golden case Banter is known to phonemize differently from piper-tts 1.8.0, as
    /// `(espeak voice, text, cause)`. A listed case that starts to match fails the test too.
    const KNOWN_DIFFERENCES: &[(&str, &str, Known)] = &[
        (
            "en-us",
            "Meet Dr. Smith and Mrs. O'Brien at 10:30 a.m. tomorrow.",
            Known::IpaRegression,
        ),
        (
            "en-us",
            "Is this the real life? Is this just fantasy?",
            Known::IpaRegression,
        ),
        (
            "en-us",
            "A state-of-the-art, well-known, twenty-one-year-old approach.",
            Known::IpaRegression,
        ),
        (
            "en-us",
            "NASA and the FBI met at IBM's headquarters in NYC.",
            Known::IpaRegression,
        ),
        (
            "en-us",
            "The über-cool Straße in München.",
            Known::IpaRegression,
        ),
        (
            "en-us",
            "Email me at test@example.com or visit www.example.org.",
            Known::IpaRegression,
        ),
        (
            "en-us",
            "Mr. Jones met Ms. Lee at 5 p.m.; they talked.",
            Known::IpaRegression,
        ),
        (
            "de",
            "Die Straße ist 12,5 Kilometer lang.",
            Known::IpaRegression,
        ),
        ("de", "Schön! Das ist großartig.", Known::IpaRegression),
        (
            "de",
            "Ärger, Öl und Übel: drei Wörter.",
            Known::IpaRegression,
        ),
        ("ru", "Здравствуйте, как дела?", Known::Dictionary),
        ("ru", "Москва — столица России.", Known::Dictionary),
        (
            "ru",
            "У меня 25 книг; я читаю каждый день.",
            Known::Dictionary,
        ),
        ("cs", "V Praze žije 1300000 lidí.", Known::IpaRegression),
        ("sv", "God morgon, hur mår du?", Known::Dictionary),
        ("sv", "Stockholm är Sveriges huvudstad.", Known::Dictionary),
        ("sv", "Jag har 42 böcker; de är gamla.", Known::Dictionary),
        ("sv", "Vilken fin dag! Ska vi gå ut?", Known::Dictionary),
        (
            "sv",
            "Räksmörgås, sju sjuka sjömän: tre ord.",
            Known::Dictionary,
        ),
        (
            "fr",
            "Il y a 365 jours dans une année; c'est long.",
            Known::IpaRegression,
        ),
        ("es", "Buenos días, ¿cómo estás?", Known::IpaRegression),
        (
            "es",
            "¡Qué día tan bonito! ¿Vamos a la playa?",
            Known::IpaRegression,
        ),
    ];

    /// Sentences with the symbols [`Known::IpaRegression`] touches made equal.
    fn without_ipa_regression(phonemes: &[Vec<String>]) -> Vec<Vec<String>> {
        phonemes
            .iter()
            .map(|s| {
                s.iter()
                    .filter(|p| p.as_str() != "ʲ")
                    .map(|p| if p == "ɾ" { "r".to_owned() } else { p.clone() })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn matches_piper_tts_goldens() -> Result<(), Box<dyn std::error::Error>> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/fixtures/goldens/piper/phonemes.json"
        );
        let golden: Golden = serde_json::from_str(&std::fs::read_to_string(path)?)?;
        let mut failures = Vec::new();
        // voice -> (identical, known differences, cases)
        let mut per_voice: Vec<(String, [usize; 3])> = Vec::new();
        for case in &golden.cases {
            let id_map = &golden.id_maps[&case.id_map];
            let phonemes = piper_phonemize(&case.text, &case.voice)?;
            let mut ids = Vec::new();
            let mut missing = Vec::new();
            for (s, sentence) in phonemes.iter().enumerate() {
                let got = piper_ids(sentence, id_map)?;
                ids.push(got.ids);
                missing.extend(got.missing.into_iter().map(|(i, p)| (s, i, p)));
            }
            let identical = ids == case.ids && phonemes == case.phonemes && missing == case.missing;
            let known = KNOWN_DIFFERENCES
                .iter()
                .find(|&&(v, t, _)| v == case.voice && t == case.text)
                .map(|&(_, _, why)| why);
            let index = if let Some(i) = per_voice.iter().position(|(v, _)| *v == case.voice) {
                i
            } else {
                per_voice.push((case.voice.clone(), [0; 3]));
                per_voice.len() - 1
            };
            let counts = &mut per_voice[index].1;
            counts[0] += usize::from(identical);
            counts[1] += usize::from(known.is_some());
            counts[2] += 1;
            let problem = match (identical, known) {
                (true, None) | (false, Some(Known::Dictionary)) => continue,
                (true, Some(_)) => "listed as a known difference but identical now",
                (false, None) => "differs",
                (false, Some(Known::IpaRegression)) => {
                    if without_ipa_regression(&phonemes) == without_ipa_regression(&case.phonemes) {
                        continue;
                    }
                    "differs beyond the IPA regression it is listed for"
                }
            };
            let join =
                |p: &[Vec<String>]| p.iter().map(|s| s.concat()).collect::<Vec<_>>().join(" | ");
            failures.push(format!(
                "{} {:?}: {problem}\n  piper  {}\n  banter {}\n  piper ids  {:?}\n  banter ids {:?}\n  \
                 missing: piper {:?} banter {:?}",
                case.voice,
                case.text,
                join(&case.phonemes),
                join(&phonemes),
                case.ids,
                ids,
                case.missing,
                missing
            ));
        }
        for (voice, [identical, known, total]) in &per_voice {
            eprintln!(
                "piper goldens {voice}: {identical}/{total} identical, {known} known differences"
            );
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        Ok(())
    }

    #[test]
    fn guard_follows_the_voice_script() {
        assert_eq!(guard_language("en-us"), Some(Language::EnUs));
        assert_eq!(guard_language("EN-GB"), Some(Language::EnGb));
        assert_eq!(guard_language("en-gb-x-rp"), Some(Language::EnUs));
        assert_eq!(guard_language("fr"), Some(Language::Fr));
        assert_eq!(guard_language("cmn"), Some(Language::Cmn));
        assert_eq!(guard_language("ru"), None);
        assert_eq!(guard_language(""), None);
    }

    #[test]
    fn unknown_voice_is_named() {
        let err = piper_phonemize("hi", "no-such-voice-xx");
        assert!(
            matches!(&err, Err(PhonemeError::EspeakVoice { voice, .. }) if voice == "no-such-voice-xx"),
            "{err:?}"
        );
    }

    #[test]
    fn missing_phonemes_are_reported() -> Result<(), PhonemeError> {
        let map: HashMap<String, Vec<i64>> = [("^", 1), ("_", 0), ("$", 2), ("a", 5)]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), vec![v]))
            .collect();
        let got = piper_ids(&["a".into(), "é".into(), "a".into()], &map)?;
        assert_eq!(got.ids, [1, 0, 5, 0, 5, 0, 2]);
        assert_eq!(got.missing, [(1, "é".to_owned())]);
        assert!(piper_ids(&[], &HashMap::new()).is_err());
        Ok(())
    }
}
