//! Text to Kokoro phonemes and token ids, identical to kokoro-onnx 0.6.1.
//!
//! Kokoro-82M was trained on espeak-ng IPA as phonemizer produces it, and kokoro-onnx (the peer
//! Banter is measured against) feeds it raw espeak-ng 1.52 output with phonemizer 3.4's
//! punctuation handling. This module reproduces that pipeline exactly, for every Kokoro language:
//!
//! 1. `text.strip()`, split into lines, blank lines dropped (module `pytext` has Python's
//!    notion of whitespace);
//! 2. punctuation runs cut out and remembered (module `punctuation`);
//! 3. each piece phonemized by espeak-ng in IPA with stress marks (module `espeak`), with
//!    phonemizer's post-processing (separators removed, one space after every word); words of
//!    the rare shapes that crash espeak-ng 1.52 are rewritten first (module `guard`);
//! 4. punctuation put back, lines joined, symbols outside the vocabulary dropped ([`Vocab`]),
//!    whitespace collapsed to single spaces.
//!
//! One deliberate difference, recommended by kokoro-port.md section 6: espeak's language-switch
//! flags such as `(en)` / `(fr)` are removed (phonemizer's `remove-flags`) instead of being fed
//! to the model as the phonemes `(`, `e`, `n`, `)`. This only changes text where espeak switched
//! language (English words in French, Latin script or kanji in Japanese...); English text in
//! Latin script never switches, so it is identical to kokoro-onnx. The crash guard is the other
//! (rarer) difference: mixed-script words such as `"€-सत"`, on which kokoro-onnx itself crashes.
//! Mandarin also differs on multi-character words: espeak-rs-sys ships no `cmn_listx`, so the
//! embedded `cmn_dict` is espeak's small one (set [`DATA_ENV`] to a full 1.52 data directory for
//! parity).
//!
//! Token ids come from [`Vocab::encode`]; [`split_phonemes`] cuts long strings into model-sized
//! batches. The espeak-ng data travels inside the binary (module `data`), so no system espeak
//! is used.
//!
//! Piper (VITS) voices take phonemes made the way piper-tts 1.8.0 makes them instead, with the
//! same espeak-ng: [`piper_phonemize`] and [`piper_ids`] (module `piper`).

mod data;
mod espeak;
mod guard;
mod nfd;
mod nfd_table;
mod piper;
mod punctuation;
mod pytext;
mod split;
mod vocab;

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::{Mutex, PoisonError};

pub use data::{DATA_ENV, ESPEAK_NG_VERSION};
pub use piper::{
    merge_vowel_clusters, piper_ids, piper_phonemize, piper_phonemize_with_clusters, PiperIds,
    PIPER_BOS, PIPER_EOS, PIPER_PAD,
};
pub(crate) use punctuation::is_plain_mark;
pub use split::{split_phonemes, MAX_PHONEMES};
pub use vocab::Vocab;

use espeak::Espeak;

/// Errors of the phonemes module.
#[derive(Debug, thiserror::Error)]
pub enum PhonemeError {
    /// The espeak-ng data directory is unusable.
    #[error("espeak-ng data directory {path}: {reason}")]
    DataPath { path: PathBuf, reason: String },
    /// The embedded espeak-ng data could not be unpacked.
    #[error("cannot unpack espeak-ng data into {path}")]
    DataUnpack {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// espeak-ng failed to initialise.
    #[error("espeak-ng failed to initialise with data {path}: {message} (status {status:#x})")]
    Init {
        path: PathBuf,
        status: u32,
        message: String,
    },
    /// espeak-ng failed to load the voice of a language.
    #[error("espeak-ng cannot load voice {voice} for {language}: {message} (status {status:#x})")]
    Voice {
        language: Language,
        voice: &'static str,
        status: u32,
        message: String,
    },
    /// espeak-ng failed to load a voice named by a Piper voice's config (`espeak.voice`).
    #[error("espeak-ng cannot load voice {voice:?}: {message} (status {status:#x})")]
    EspeakVoice {
        voice: String,
        status: u32,
        message: String,
    },
    /// A Piper id map without the symbols every sentence needs.
    #[error("invalid Piper phoneme id map: {reason}")]
    PiperIdMap { reason: String },
    /// A language code or voice prefix Kokoro does not speak.
    #[error("unknown language {code:?} (expected one of en-us, en-gb, es, fr-fr, hi, it, pt-br, ja, cmn)")]
    UnknownLanguage { code: String },
    /// A vocabulary file that is not `{symbol: id}`.
    #[error("invalid phoneme vocabulary: {reason}")]
    Vocab { reason: String },
}

/// A language Kokoro speaks, named by the first letter of its voices (`af_heart` is `a`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    /// American English, voices `a*`.
    EnUs,
    /// British English, voices `b*`.
    EnGb,
    /// Spanish, voices `e*`.
    Es,
    /// French, voices `f*`.
    Fr,
    /// Hindi, voices `h*`.
    Hi,
    /// Italian, voices `i*`.
    It,
    /// Brazilian Portuguese, voices `p*`.
    PtBr,
    /// Japanese, voices `j*`.
    Ja,
    /// Mandarin Chinese, voices `z*`.
    Cmn,
}

impl Language {
    /// Every language, in Kokoro's order.
    pub const ALL: [Language; 9] = [
        Language::EnUs,
        Language::EnGb,
        Language::Es,
        Language::Fr,
        Language::Hi,
        Language::It,
        Language::PtBr,
        Language::Ja,
        Language::Cmn,
    ];

    /// The language of a voice from the first letter of its name (`'a'` for `af_heart`).
    #[must_use]
    pub fn from_voice_prefix(prefix: char) -> Option<Language> {
        Some(match prefix {
            'a' => Language::EnUs,
            'b' => Language::EnGb,
            'e' => Language::Es,
            'f' => Language::Fr,
            'h' => Language::Hi,
            'i' => Language::It,
            'p' => Language::PtBr,
            'j' => Language::Ja,
            'z' => Language::Cmn,
            _ => return None,
        })
    }

    /// The language of a voice name such as `bf_emma`.
    #[must_use]
    pub fn from_voice_name(voice: &str) -> Option<Language> {
        voice.chars().next().and_then(Language::from_voice_prefix)
    }

    /// The espeak language code kokoro-onnx passes as `lang` (`en-us`, `fr-fr`, ...).
    #[must_use]
    pub fn espeak_code(self) -> &'static str {
        match self {
            Language::EnUs => "en-us",
            Language::EnGb => "en-gb",
            Language::Es => "es",
            Language::Fr => "fr-fr",
            Language::Hi => "hi",
            Language::It => "it",
            Language::PtBr => "pt-br",
            Language::Ja => "ja",
            Language::Cmn => "cmn",
        }
    }

    /// The espeak-ng voice file phonemizer selects for [`Language::espeak_code`]: the first
    /// voice espeak lists with that language (checked against phonemizer by the goldens).
    #[must_use]
    pub fn espeak_voice(self) -> &'static str {
        match self {
            Language::EnUs => "gmw/en-US",
            Language::EnGb => "gmw/en",
            Language::Es => "roa/es",
            Language::Fr => "roa/fr",
            Language::Hi => "inc/hi",
            Language::It => "roa/it",
            Language::PtBr => "roa/pt-BR",
            Language::Ja => "jpx/ja",
            Language::Cmn => "sit/cmn",
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.espeak_code())
    }
}

impl FromStr for Language {
    type Err = PhonemeError;

    /// Parses an espeak code as kokoro-onnx takes it (`en-us`, case-insensitive).
    fn from_str(code: &str) -> Result<Self, Self::Err> {
        Language::ALL
            .into_iter()
            .find(|l| l.espeak_code().eq_ignore_ascii_case(code))
            .ok_or_else(|| PhonemeError::UnknownLanguage {
                code: code.to_owned(),
            })
    }
}

/// Text to phonemes with espeak-ng; one per process, shared by every thread (espeak's state is
/// global, so calls are serialised).
#[derive(Debug)]
pub struct Phonemizer {
    espeak: &'static Mutex<Espeak>,
}

impl Phonemizer {
    /// The process-wide phonemizer. The first call unpacks the embedded espeak-ng data (see
    /// [`DATA_ENV`]) and initialises espeak-ng; if that fails, a later call tries again.
    pub fn global() -> Result<&'static Phonemizer, PhonemeError> {
        static GLOBAL: std::sync::OnceLock<Phonemizer> = std::sync::OnceLock::new();
        if let Some(p) = GLOBAL.get() {
            return Ok(p);
        }
        let espeak = Espeak::global(data::data_dir)?;
        Ok(GLOBAL.get_or_init(|| Phonemizer { espeak }))
    }

    /// The espeak-ng data directory in use.
    #[must_use]
    pub fn data_dir(&self) -> PathBuf {
        self.lock().data_dir().to_path_buf()
    }

    /// The phonemes kokoro-onnx would tokenize for `text` (after its whitespace collapse), with
    /// language-switch flags removed. Only vocabulary symbols remain, so
    /// `Vocab::kokoro().encode(&p)` drops nothing. Never panics; empty or unpronounceable text
    /// gives an empty string.
    pub fn phonemize(&self, text: &str, language: Language) -> Result<String, PhonemeError> {
        let raw = {
            let mut espeak = self.lock();
            espeak
                .set_voice(language.espeak_voice())
                .map_err(|(status, message)| PhonemeError::Voice {
                    language,
                    voice: language.espeak_voice(),
                    status,
                    message,
                })?;
            phonemize_lines(&mut espeak, text, language)
        };
        let vocab = Vocab::kokoro();
        Ok(pytext::collapse_whitespace(&vocab.filter(&raw)))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Espeak> {
        // A panic elsewhere while holding the lock leaves espeak itself consistent (every FFI
        // call completes), so a poisoned lock is still usable.
        self.espeak.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// `phonemizer.phonemize(text.strip(), preserve_punctuation=True, with_stress=True,
/// language_switch="remove-flags")`: the phonemized lines joined by newlines.
fn phonemize_lines(espeak: &mut Espeak, text: &str, language: Language) -> String {
    // kokoro-onnx's normalize_text, then phonemizer's str2list and blank-line filter.
    let text = pytext::strip(text).trim_matches('\n');
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.trim_matches('\n'))
        .filter(|l| !pytext::strip(l).is_empty())
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    let (pieces, marks) = punctuation::preserve(&lines);
    let phonemized: Vec<String> = pieces
        .iter()
        .map(|piece| {
            let piece = guard::avoid_known_crashes(piece, language);
            postprocess_line(&espeak.text_to_phonemes(&piece))
        })
        .collect();
    punctuation::restore(phonemized, marks).join("\n")
}

/// phonemizer's `EspeakBackend._postprocess_line` (no tie, empty phone separator, word
/// separator `' '`, `strip=False`, stress kept) with the remove-flags language-switch policy.
fn postprocess_line(line: &str) -> String {
    let line = pytext::strip(line).replace('\n', " ").replace("  ", " ");
    let mut squeezed = String::with_capacity(line.len());
    for c in line.chars() {
        if !(c == '_' && squeezed.ends_with('_')) {
            squeezed.push(c);
        }
    }
    let line = remove_flags(&squeezed.replace("_ ", " "));
    if line.is_empty() {
        return String::new();
    }
    let mut out = String::with_capacity(line.len() + 8);
    for word in line.split(' ') {
        out.extend(pytext::strip(word).chars().filter(|&c| c != '_'));
        out.push(' ');
    }
    out
}

/// Removes espeak's language-switch flags, phonemizer's `re.sub(r"\(.+?\)", "", line)`.
fn remove_flags(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '(' {
            // `.+?` takes at least one character before the closing parenthesis.
            if let Some(close) = chars.iter().skip(i + 2).position(|&c| c == ')') {
                i += 2 + close + 1;
                continue;
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_round_trip() -> Result<(), PhonemeError> {
        for lang in Language::ALL {
            assert_eq!(lang.espeak_code().parse::<Language>()?, lang);
            let prefix = "abefhipjz"
                .chars()
                .find(|&c| Language::from_voice_prefix(c) == Some(lang));
            assert!(prefix.is_some(), "{lang} has a voice prefix");
        }
        assert_eq!(Language::from_voice_name("bf_emma"), Some(Language::EnGb));
        assert_eq!(Language::from_voice_name("zf_xiaobei"), Some(Language::Cmn));
        assert_eq!(Language::from_voice_name(""), None);
        assert_eq!(Language::from_voice_prefix('x'), None);
        assert!("klingon".parse::<Language>().is_err());
        Ok(())
    }

    #[test]
    fn flags_are_removed_like_phonemizer() {
        assert_eq!(remove_flags("ʒɛm (en)fʊtbɔːl(fr) e"), "ʒɛm fʊtbɔːl e");
        assert_eq!(remove_flags("a ()b) c"), "a  c");
        assert_eq!(remove_flags("a (b"), "a (b");
    }

    #[test]
    fn postprocess_matches_phonemizer() {
        assert_eq!(
            postprocess_line(" h_ə_l_ˈoʊ__ w_ˈɜː_l_d_ "),
            "həlˈoʊ wˈɜːld "
        );
        assert_eq!(postprocess_line("a  b"), "a b ");
        assert_eq!(postprocess_line("a   b"), "a  b ");
        assert_eq!(postprocess_line("   "), "");
    }

    /// espeak-ng 1.52 smashes its stack on one word stacking many suffixes (`guard`): each of
    /// these killed the process with SIGSEGV before the long-word cut, in every voice.
    #[test]
    fn words_stacking_suffixes_do_not_crash_espeak() -> Result<(), PhonemeError> {
        let p = Phonemizer::global()?;
        let stacked = ["s'".repeat(220), format!("walk{}", "ness".repeat(150))];
        for lang in Language::ALL {
            for text in &stacked {
                assert!(!p.phonemize(text, lang)?.is_empty(), "{lang}");
            }
        }
        // Piper's path into espeak, in a language Kokoro does not speak.
        for text in &stacked {
            assert!(!piper_phonemize(text, "de")?.is_empty(), "de");
        }
        Ok(())
    }

    #[test]
    fn phonemizes_english() -> Result<(), PhonemeError> {
        let p = Phonemizer::global()?;
        assert_eq!(
            p.phonemize("Welcome back to the show.", Language::EnUs)?,
            "wˈɛlkʌm bˈæk tə ðə ʃˈoʊ."
        );
        assert_eq!(p.phonemize("", Language::EnUs)?, "");
        assert_eq!(p.phonemize(" \n\t ", Language::EnGb)?, "");
        Ok(())
    }

    #[test]
    fn concurrent_callers_get_consistent_results() -> Result<(), PhonemeError> {
        let p = Phonemizer::global()?;
        let expected_us = p.phonemize("The tomato is ripe.", Language::EnUs)?;
        let expected_gb = p.phonemize("The tomato is ripe.", Language::EnGb)?;
        assert_ne!(expected_us, expected_gb);
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|t| {
                    s.spawn(move || {
                        let lang = if t % 2 == 0 {
                            Language::EnUs
                        } else {
                            Language::EnGb
                        };
                        (0..20)
                            .map(|_| p.phonemize("The tomato is ripe.", lang).map(|r| (lang, r)))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            for h in handles {
                for result in h.join().expect("phonemizing thread panicked") {
                    let (lang, got) = result.expect("phonemize failed");
                    let want = if lang == Language::EnUs {
                        &expected_us
                    } else {
                        &expected_gb
                    };
                    assert_eq!(&got, want);
                }
            }
        });
        Ok(())
    }
}
