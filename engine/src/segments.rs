//! Text to segments, without the model: normalised text → phonemes (espeak-ng) → the pieces
//! Kokoro speaks in one pass each.
//!
//! Everything here runs on the caller's thread (a request handler, the studio's workers), never
//! on the model thread, so phonemizing one request overlaps with the model speaking another.
//! The policy: the first segment is kept short — the first sentence, or its first clause when
//! the sentence is long — so that the first audio comes early; later segments pack whole
//! sentences up to [`PACK_PHONEMES`] for natural prosody and throughput. Episode rendering uses
//! one segment per sentence instead ([`sentence_segments`]).

use crate::phonemes::{self, Phonemizer, Vocab, MAX_PHONEMES};
use crate::speech::{Segment, SpeechRequest, SynthError};
use crate::text::{is_pictograph, Dialect};
use crate::voice::PiperVoice;
use crate::words::WordTrack;

/// Later segments pack whole sentences up to this many phoneme characters (about 20 s of speech).
pub const PACK_PHONEMES: usize = 250;
/// The first segment is at most this long (about 6 s): longer first sentences are cut at a
/// clause mark, else at a word boundary.
pub const FIRST_PHONEMES: usize = 80;
/// A first sentence longer than this (about 3 s) is cut at its earliest clause mark, so the
/// first audio, which costs what its length costs, comes sooner (`Well, …` stays whole: see
/// [`MIN_PIECE`]).
pub const FIRST_CLAUSE_ABOVE: usize = 40;
/// Neither piece of a cut first sentence is shorter than this (a lone word sounds clipped).
const MIN_PIECE: usize = 12;

/// Phonemizes `text` in the request's language and cuts it into segments (see the module docs).
pub fn segments(text: &str, request: &SpeechRequest) -> Result<Vec<Segment>, SynthError> {
    if text.trim().is_empty() {
        return Err(SynthError::EmptyText);
    }
    let language = request.language.unwrap_or_else(|| request.voice.language());
    let phonemes = Phonemizer::global()?.phonemize(&spoken_text(text, language), language)?;
    let segments = segments_from_phonemes(&phonemes);
    if segments.is_empty() {
        let excerpt: String = text.chars().take(40).collect();
        return Err(SynthError::NothingToSay { excerpt });
    }
    Ok(segments)
}

/// [`segments`], and the [`WordTrack`] that times the text's words as the segments are spoken.
pub fn segments_with_words(
    text: &str,
    request: &SpeechRequest,
) -> Result<(Vec<Segment>, WordTrack), SynthError> {
    if text.trim().is_empty() {
        return Err(SynthError::EmptyText);
    }
    let language = request.language.unwrap_or_else(|| request.voice.language());
    let (phonemes, words) = crate::words::phonemize_words(text, language)?;
    let segments = segments_from_phonemes(&phonemes);
    if segments.is_empty() {
        let excerpt: String = text.chars().take(40).collect();
        return Err(SynthError::NothingToSay { excerpt });
    }
    let track = WordTrack::new(text, &phonemes, words, &segments);
    Ok((segments, track))
}

/// Cuts an already phonemized string into segments (see the module docs for the policy).
#[must_use]
pub fn segments_from_phonemes(phonemes: &str) -> Vec<Segment> {
    plan_segments(phonemes)
        .into_iter()
        // Punctuation alone (`...`, `!!!`) is no speech: Kokoro would only breathe.
        .filter(|p| p.chars().any(char::is_alphabetic))
        .filter_map(encode)
        .collect()
}

/// One segment per sentence for episode rendering: `phonemes` is one sentence, kept whole (its
/// own prosody, one Kokoro pass) unless it exceeds [`MAX_PHONEMES`], when it is split at
/// clauses, then words. Empty when there is nothing to say.
#[must_use]
pub fn sentence_segments(phonemes: &str) -> Vec<Segment> {
    let collapsed = phonemes.split_whitespace().collect::<Vec<_>>().join(" ");
    fit(&collapsed)
        .into_iter()
        .filter(|p| p.chars().any(char::is_alphabetic))
        .filter_map(encode)
        .collect()
}

/// One segment of exactly these phonemes, as another machine cut it (a remote render's
/// segment arriving at a server); `None` when none of them is a Kokoro symbol.
#[must_use]
pub fn exact_segment(phonemes: &str) -> Option<Segment> {
    encode(phonemes.to_owned())
}

fn encode(phonemes: String) -> Option<Segment> {
    let ids = Vocab::kokoro().encode(&phonemes);
    (!ids.is_empty()).then_some(Segment { phonemes, ids })
}

/// The words to phonemize for `text`: [`speakable_text`], then, for English, the normaliser
/// ([`crate::text::normalize`]), as episode rendering does. Without it espeak read "$4.1 billion"
/// as "dollar four. one billion" (the phonemizer cuts at the first "." even inside a number) and
/// "FY2025" as letters run into "two thousand".
#[must_use]
pub fn spoken_text(text: &str, language: phonemes::Language) -> String {
    let speakable = speakable_text(text);
    match Dialect::from_language(language.espeak_code()) {
        Some(dialect) => crate::text::normalize(&speakable, dialect).text,
        None => speakable,
    }
}

/// Text as espeak should see it: emoji and other pictographs dropped (espeak would read out their
/// names, "slightly smiling face"), control characters turned into spaces. Everything else is
/// left to the phonemizer, which matches kokoro-onnx.
#[must_use]
pub fn speakable_text(text: &str) -> String {
    text.chars()
        .filter(|&c| !is_pictograph(c))
        .map(|c| if c.is_control() && c != '\n' { ' ' } else { c })
        .collect()
}

/// Splits a phoneme string into segment strings: a short first one, later ones packed sentences.
#[must_use]
pub fn plan_segments(phonemes: &str) -> Vec<String> {
    let collapsed = phonemes.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut sentences: Vec<String> = Vec::new();
    for sentence in split_sentences(&collapsed) {
        let sentence = sentence.trim();
        if sentence.is_empty() {
            continue;
        }
        if sentences.is_empty() && sentence.chars().count() > FIRST_CLAUSE_ABOVE {
            let (head, tail) = split_first(sentence, FIRST_PHONEMES);
            sentences.push(head.to_owned());
            if !tail.is_empty() {
                sentences.extend(fit(tail));
            }
        } else {
            sentences.extend(fit(sentence));
        }
    }
    let mut segments: Vec<String> = Vec::new();
    for sentence in sentences {
        if segments.len() > 1 {
            if let Some(last) = segments.last_mut() {
                if last.chars().count() + 1 + sentence.chars().count() <= PACK_PHONEMES {
                    last.push(' ');
                    last.push_str(&sentence);
                    continue;
                }
            }
        }
        segments.push(sentence);
    }
    segments
}

/// A sentence as one or more pieces of at most [`MAX_PHONEMES`].
fn fit(sentence: &str) -> Vec<String> {
    if sentence.chars().count() > MAX_PHONEMES {
        phonemes::split_phonemes(sentence, MAX_PHONEMES)
    } else {
        vec![sentence.to_owned()]
    }
}

/// Cuts a long first sentence after its earliest clause mark (`,;:—`) that leaves at least
/// [`MIN_PIECE`] characters on both sides within `max` characters. Without one, a sentence of
/// at most `max` stays whole (a cut mid-clause costs more in prosody than it saves in latency);
/// a longer one is cut after its last word within `max`, else at `max`. Returns (head, rest),
/// both trimmed; rest is empty when nothing was cut.
fn split_first(sentence: &str, max: usize) -> (&str, &str) {
    let chars = sentence.chars().count();
    let limit = sentence
        .char_indices()
        .nth(max)
        .map_or(sentence.len(), |(i, _)| i);
    let window = &sentence[..limit];
    let clause = window
        .char_indices()
        .enumerate()
        .filter(|&(_, (i, c))| {
            matches!(c, ',' | ';' | ':' | '—') && sentence[i + c.len_utf8()..].starts_with(' ')
        })
        .map(|(n, (i, c))| (n + 1, i + c.len_utf8()))
        .find(|&(n, _)| n >= MIN_PIECE && chars - n > MIN_PIECE)
        .map(|(_, end)| end);
    if clause.is_none() && chars <= max {
        return (sentence, "");
    }
    let cut = clause
        .or_else(|| window.rfind(' ').filter(|&i| i > 0))
        .unwrap_or(limit);
    (sentence[..cut].trim(), sentence[cut..].trim())
}

/// Sentence ends in phoneme space: `.`, `!`, `?` or `…` followed by a space.
fn split_sentences(phonemes: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = phonemes.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if matches!(c, '.' | '!' | '?' | '…') && chars.peek().is_some_and(|&(_, n)| n == ' ') {
            let end = i + c.len_utf8();
            out.push(&phonemes[start..end]);
            start = end;
        }
    }
    if start < phonemes.len() {
        out.push(&phonemes[start..]);
    }
    out
}

/// A Piper voice's segments of `text`: one per sentence as piper-tts cuts it, with its own
/// phonemes and ids ([`crate::phonemes::piper_phonemize`]). Phonemes the voice's id map lacks
/// are left out, as piper leaves them out, but never silently: each is logged with the voice
/// and the sentence.
pub fn piper_segments(text: &str, voice: &PiperVoice) -> Result<Vec<Segment>, SynthError> {
    if text.trim().is_empty() {
        return Err(SynthError::EmptyText);
    }
    let sentences = piper_sentences(text, voice)?;
    let segments = sentences
        .iter()
        .filter_map(|p| piper_segment(p, voice).transpose())
        .collect::<Result<Vec<_>, _>>()?;
    if segments.is_empty() {
        let excerpt: String = text.chars().take(40).collect();
        return Err(SynthError::NothingToSay { excerpt });
    }
    Ok(segments)
}

/// The phonemes of each sentence of `text` for `voice`, as one string each (one character per
/// Piper phoneme), the form an episode plan keeps.
pub fn piper_sentences(text: &str, voice: &PiperVoice) -> Result<Vec<String>, SynthError> {
    use vits::config::PhonemeType;
    let sentences = match voice.config.phoneme_type {
        PhonemeType::Espeak => crate::phonemes::piper_phonemize(text, &voice.config.espeak_voice)?,
        PhonemeType::Text => {
            use unicode_normalization::UnicodeNormalization;
            vec![text.nfd().map(String::from).collect()]
        }
    };
    // One string per sentence; vowel clusters are merged when the ids are made.
    Ok(sentences.into_iter().map(|p| p.concat()).collect())
}

/// [`piper_segments`], and the [`WordTrack`] that times the text's words from the voice's own
/// durations (words are runs between spaces, mapped onto piper's phonemes).
pub fn piper_segments_with_words(
    text: &str,
    voice: &PiperVoice,
) -> Result<(Vec<Segment>, WordTrack), SynthError> {
    let segments = piper_segments(text, voice)?;
    let (phonemes, words) = piper_words(text, voice)?;
    let track = WordTrack::new(text, &phonemes, words, &segments);
    Ok((segments, track))
}

/// The phonemes of all of `text` for `voice` (its sentences joined) and the words mapped onto
/// them: runs between spaces, each phonemized alone where espeak's word count differs.
pub fn piper_words(
    text: &str,
    voice: &PiperVoice,
) -> Result<(String, Vec<crate::words::WordSpan>), SynthError> {
    crate::words::phonemize_words_with(text, |t| piper_sentences(t, voice).map(|s| s.concat()))
}

/// A sentence's Piper phonemes (a string, one character per phoneme) as the voice's phoneme
/// list: its known vowel clusters merged, as piper merges them.
pub(crate) fn piper_phoneme_list(phonemes: &str, voice: &PiperVoice) -> Vec<String> {
    let list: Vec<String> = phonemes.chars().map(String::from).collect();
    if voice.config.vowel_clusters.is_empty() {
        list
    } else {
        crate::phonemes::merge_vowel_clusters(list, &voice.config.vowel_clusters)
    }
}

/// One sentence of Piper phonemes (a string, one character per phoneme) as a segment; `None`
/// when nothing in it is speech.
pub fn piper_segment(phonemes: &str, voice: &PiperVoice) -> Result<Option<Segment>, SynthError> {
    if !phonemes.chars().any(char::is_alphabetic) {
        return Ok(None);
    }
    let list = piper_phoneme_list(phonemes, voice);
    let ids = crate::phonemes::piper_ids(&list, &voice.config.phoneme_id_map)?;
    if !ids.missing.is_empty() {
        let missing: Vec<&str> = ids.missing.iter().map(|(_, p)| p.as_str()).collect();
        tracing::warn!(
            voice = %voice.name,
            "the Piper voice has no ids for {missing:?} in \"{phonemes}\"; they are left out, as piper leaves them out"
        );
    }
    let ids = ids
        .ids
        .into_iter()
        .map(|id| u32::try_from(id).unwrap_or(u32::MAX))
        .collect();
    Ok(Some(Segment {
        phonemes: phonemes.to_owned(),
        ids,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sentence_is_alone_and_later_ones_are_packed() {
        let s = plan_segments("ə. bˈi. sˈiː! dˈiː? ˈiː");
        assert_eq!(s, vec!["ə.", "bˈi. sˈiː! dˈiː? ˈiː"]);
    }

    #[test]
    fn a_long_first_sentence_is_cut_at_a_clause_then_a_word() {
        let clause = format!("{}, {} {}.", "a".repeat(40), "b".repeat(30), "c".repeat(30));
        let s = plan_segments(&clause);
        assert_eq!(s[0], format!("{},", "a".repeat(40)));
        assert_eq!(s[1], format!("{} {}.", "b".repeat(30), "c".repeat(30)));
        let words = "wˈʌn ".repeat(40);
        let s = plan_segments(&words);
        assert!(
            s[0].chars().count() <= FIRST_PHONEMES && s[0].ends_with('n'),
            "{:?}",
            s[0]
        );
        assert_eq!(s.join(" ").split_whitespace().count(), 40);
    }

    #[test]
    fn a_first_sentence_is_cut_at_its_earliest_useful_clause() {
        // "wˈɛl," is too short to stand alone; the next clause is the cut.
        let sentence = format!(
            "wˈɛl, {}, {} {}.",
            "a".repeat(14),
            "b".repeat(20),
            "c".repeat(20)
        );
        let s = plan_segments(&sentence);
        assert_eq!(s[0], format!("wˈɛl, {},", "a".repeat(14)));
        // A medium sentence without a clause mark stays whole...
        let plain = format!("{} {} {}.", "a".repeat(20), "b".repeat(20), "c".repeat(20));
        assert_eq!(plan_segments(&plain), vec![plain.clone()]);
        // ...and so does a short one with a comma.
        let short = format!("{}, {}.", "a".repeat(15), "b".repeat(15));
        assert_eq!(plan_segments(&short), vec![short.clone()]);
        // A clause leaving a lone word behind is not a cut.
        let tail = format!("{}, ɐ wˈʌn.", "a".repeat(45));
        assert_eq!(plan_segments(&tail), vec![tail.clone()]);
    }

    #[test]
    fn long_sentences_are_split_under_the_limit() {
        let word = "həlˈoʊ ";
        let long: String = word.repeat(200);
        let segs = plan_segments(&long);
        assert!(segs.len() >= 3, "{}", segs.len());
        assert!(segs.iter().all(|s| s.chars().count() <= MAX_PHONEMES));
        let joined: String = segs.join(" ");
        assert_eq!(joined.split_whitespace().count(), 200);
    }

    #[test]
    fn packing_respects_the_pack_limit() {
        let sentence = format!("{}.", "a".repeat(70));
        let text = [sentence.as_str(); 9].join(" ");
        let segs = plan_segments(&text);
        assert_eq!(segs[0], sentence);
        assert!(segs.iter().all(|s| s.chars().count() <= PACK_PHONEMES));
        assert!(segs.len() < 9, "sentences after the first are packed");
        assert_eq!(
            segs.iter().map(|s| s.matches('.').count()).sum::<usize>(),
            9
        );
    }

    #[test]
    fn pictographs_and_controls_are_not_read_out() {
        assert_eq!(speakable_text("Hi 🙂👍🏽 there ✨\u{7}!"), "Hi  there  !");
        assert_eq!(speakable_text("café — naïve"), "café — naïve");
        assert_eq!(speakable_text("a\nb\tc"), "a\nb c");
    }

    #[test]
    fn english_is_normalised_before_espeak() {
        use crate::phonemes::Language;
        let text = "The company raised $4.1 billion in FY2025.";
        assert_eq!(
            spoken_text(text, Language::EnUs),
            "The company raised four point one billion dollars in F-Y twenty twenty-five."
        );
        // Only the final full stop: espeak used to get "dollar four. one billion".
        let phonemes = Phonemizer::global()
            .unwrap()
            .phonemize(&spoken_text(text, Language::EnUs), Language::EnUs)
            .unwrap();
        assert_eq!(phonemes.matches('.').count(), 1, "{phonemes}");
        assert_eq!(spoken_text("Il a 5 ans.", Language::Fr), "Il a 5 ans.");
    }

    #[test]
    fn empty_and_whitespace_plan_nothing() {
        assert!(plan_segments("").is_empty());
        assert!(plan_segments("   \n ").is_empty());
    }
}
