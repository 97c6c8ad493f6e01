//! A project's pronunciation lexicon: words the writer wants said a particular way.
//!
//! Guest names, brand names and jargon are mispronounced the same way in every episode, so the
//! fix belongs to the project, not to each line. An entry gives either IPA (becomes a
//! [`Piece::Phonemes`], which bypasses the phonemizer for that word) or a respelling (plain text
//! that the phonemizer reads better, such as `Nguyen` → `win`). Matching is by whole word,
//! ignoring case; words are runs of letters, digits, apostrophes, hyphens and underscores.
//!
//! Text form, one entry per line, `#` starts a comment:
//! ```text
//! Kokoro: /kˈOkəɹO/
//! Nguyen: win
//! ```

use std::collections::HashMap;

use super::error::{ScriptError, ScriptErrorKind};
use super::model::{Piece, Position};
use super::source::split_lines;

/// How one word is to be said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pronunciation {
    /// IPA, without slashes.
    Ipa(String),
    /// Text to speak instead of the word.
    Respelling(String),
}

/// Words and how to say them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lexicon {
    entries: HashMap<String, Pronunciation>,
}

impl Lexicon {
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds or replaces a word's entry.
    pub fn insert(&mut self, word: &str, pronunciation: Pronunciation) {
        self.entries
            .insert(word.trim().to_lowercase(), pronunciation);
    }

    #[must_use]
    pub fn get(&self, word: &str) -> Option<&Pronunciation> {
        self.entries.get(&word.to_lowercase())
    }

    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Reads the text form (see the module docs); `file` names the source in errors.
    pub fn parse(file: &str, text: &str) -> Result<Self, ScriptError> {
        let mut lexicon = Self::new();
        for line in split_lines(text) {
            let trimmed = line.text.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let bad = |reason: &str| {
                ScriptError::new(
                    file,
                    Position::new(line.number, 1),
                    ScriptErrorKind::BadSetting {
                        key: "lexicon".to_owned(),
                        value: trimmed.to_owned(),
                        expected: format!("`word: /ipa/` or `word: respelling` ({reason})"),
                    },
                )
            };
            let (word, said) = trimmed
                .split_once(':')
                .ok_or_else(|| bad("there is no `:`"))?;
            let (word, said) = (word.trim(), said.trim());
            if word.is_empty() || !word.chars().all(is_word_char) {
                return Err(bad("the word must be a single word"));
            }
            let pronunciation = match said.strip_prefix('/').and_then(|s| s.strip_suffix('/')) {
                Some(ipa) if !ipa.trim().is_empty() => Pronunciation::Ipa(ipa.trim().to_owned()),
                _ if !said.is_empty() && !said.starts_with('/') => {
                    Pronunciation::Respelling(said.to_owned())
                }
                _ => return Err(bad("the pronunciation is empty or not closed with `/`")),
            };
            lexicon.insert(word, pronunciation);
        }
        Ok(lexicon)
    }

    /// Rewrites the text pieces of a turn, leaving explicit pronunciations and directives alone.
    #[must_use]
    pub fn apply(&self, pieces: &[Piece]) -> Vec<Piece> {
        if self.is_empty() {
            return pieces.to_vec();
        }
        let mut out = Vec::with_capacity(pieces.len());
        for piece in pieces {
            match piece {
                Piece::Text { text } => self.apply_text(text, &mut out),
                other => out.push(other.clone()),
            }
        }
        out
    }

    fn apply_text(&self, text: &str, out: &mut Vec<Piece>) {
        let mut pending = String::new();
        let mut rest = text;
        while !rest.is_empty() {
            let start = rest.find(is_word_char).unwrap_or(rest.len());
            pending.push_str(&rest[..start]);
            rest = &rest[start..];
            let end = rest.find(|c| !is_word_char(c)).unwrap_or(rest.len());
            let word = &rest[..end];
            match self.get(word) {
                Some(Pronunciation::Ipa(ipa)) => {
                    if !pending.is_empty() {
                        out.push(Piece::text(std::mem::take(&mut pending)));
                    }
                    out.push(Piece::Phonemes {
                        text: word.to_owned(),
                        ipa: ipa.clone(),
                    });
                }
                Some(Pronunciation::Respelling(said)) => {
                    if !pending.is_empty() {
                        out.push(Piece::text(std::mem::take(&mut pending)));
                    }
                    out.push(Piece::Respelled {
                        text: word.to_owned(),
                        said: said.clone(),
                    });
                }
                None => pending.push_str(word),
            }
            rest = &rest[end..];
        }
        if !pending.is_empty() {
            out.push(Piece::text(pending));
        }
    }
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '\'' | '’' | '-' | '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ipa_and_respellings() {
        let lex = Lexicon::parse("lex", "# names\nKokoro: /kˈOkəɹO/\n\nNguyen: win\n").unwrap();
        assert_eq!(lex.len(), 2);
        assert_eq!(
            lex.get("KOKORO"),
            Some(&Pronunciation::Ipa("kˈOkəɹO".into()))
        );
        let e = Lexicon::parse("lex", "ok: fine\ntwo words: x\n").unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("lex", 2));
        assert!(Lexicon::parse("lex", "a: /unclosed\n").is_err());
    }

    #[test]
    fn applies_to_whole_words_only() {
        let mut lex = Lexicon::new();
        lex.insert("Kokoro", Pronunciation::Ipa("kˈOkəɹO".into()));
        lex.insert("Nguyen", Pronunciation::Respelling("win".into()));
        let pieces = vec![
            Piece::text("Kokoro's not kokoro, says Nguyen; Kokorofan no."),
            Piece::Pause { secs: 1.0 },
        ];
        let out = lex.apply(&pieces);
        assert_eq!(
            out,
            [
                Piece::text("Kokoro's not "),
                Piece::Phonemes {
                    text: "kokoro".into(),
                    ipa: "kˈOkəɹO".into()
                },
                Piece::text(", says "),
                Piece::Respelled {
                    text: "Nguyen".into(),
                    said: "win".into()
                },
                Piece::text("; Kokorofan no."),
                Piece::Pause { secs: 1.0 },
            ]
        );
    }
}
