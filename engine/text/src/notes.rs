//! Musical notes, keys and chord symbols: "B♭ major", "F# minor", "C#m7", "Bbmaj7", "G7sus4".
//!
//! Music shows name keys and chords in the written shorthand, which a reader without the rules
//! says wrong or not at all: the sharp and flat signs were dropped as pictographs ("A♭ major"
//! read "A major", a different key, and nobody would notice on a page), "Bb" was two letters,
//! and "C#m7" "C#m-seven". A chord symbol is read as a player says it: "C sharp minor seven",
//! "B flat major seven", "G seven sus four", "D over F sharp".
//!
//! Only what cannot be something else is claimed. A root with a sharp or flat sign, or with a
//! quality ("Cmaj7", "Dm7", "Gsus4"), is a chord; a bare letter with digits is not ("B12" and
//! "D3" are vitamins, "A4" paper, "G7" a summit), nor a bare minor ("Am", "Em"). A flat written
//! as a letter b ("Bb", "Eb", "Ab") is a note only with more chord after it or beside a word of
//! music ("in Eb", "Ab major"), since "Ab" and "Db" are also words.

use super::numbers::{self, all_digits};
use super::rules::{Ctx, Hit};

/// Words after a note that make it one: "Bb major", "Eb tuning".
const MUSIC_AFTER: &[&str] = &[
    "major",
    "minor",
    "maj",
    "min",
    "chord",
    "chords",
    "key",
    "scale",
    "tuning",
    "string",
    "strings",
    "flat",
    "sharp",
    "natural",
    "pedal",
    "harmonica",
    "clarinet",
    "trumpet",
    "horn",
];
/// Words before a lone lettered flat that name it a key: "in Eb", "the key of Ab", "tune to
/// Db".
const MUSIC_BEFORE: &[&str] = &["in", "of", "to", "key"];

/// A note or chord symbol at token `i`.
pub(super) fn rule(ctx: &Ctx<'_>, i: usize) -> Option<Hit> {
    let core = ctx.toks[i].core;
    if !matches!(core.as_bytes().first(), Some(b'A'..=b'G')) || core.len() > 16 {
        return None;
    }
    let chord = Chord::parse(core)?;
    let next_is_music = ctx
        .next_core(i)
        .is_some_and(|w| MUSIC_AFTER.contains(&w.to_lowercase().as_str()));
    let lettered_flat_in_context = || {
        let before = ctx.word_before(i, 1..=1, MUSIC_BEFORE);
        let ends_phrase = ctx.toks.get(i + 1).is_none_or(|t| {
            !ctx.toks[i].trail.is_empty() || !t.core.starts_with(char::is_lowercase)
        });
        next_is_music || before && ends_phrase
    };
    let claimed = match chord.accidental {
        Some(Accidental::Sign) => true,
        // "Db2" is a database: a lettered flat with only a number takes a chord's number.
        Some(Accidental::LetterB) => {
            let chord_number = |n: &str| matches!(n, "6" | "7" | "9" | "11" | "13");
            let rest = &core[2..];
            let more = chord.has_quality || chord_number(rest) || !all_digits(rest);
            chord.has_more && more || lettered_flat_in_context()
        }
        None => chord.has_quality,
    };
    claimed.then(|| Hit::new(1, chord.said))
}

/// How the root's accidental was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Accidental {
    /// "#", "♯" or "♭": unmistakable.
    Sign,
    /// "b" for flat, which ordinary words share.
    LetterB,
}

/// A parsed chord symbol and its words.
#[derive(Debug, PartialEq, Eq)]
struct Chord {
    said: String,
    accidental: Option<Accidental>,
    /// A quality other than a bare minor "m": maj, min, dim, aug, sus, add, or m with digits.
    has_quality: bool,
    /// Anything after the root and its accidental.
    has_more: bool,
}

impl Chord {
    fn parse(core: &str) -> Option<Chord> {
        let (said, mut accidental, rest) = note(core)?;
        let mut words = vec![said];
        let mut rest = rest;
        let has_more = !rest.is_empty();
        let mut has_quality = false;
        let mut bare_minor = false;
        // The quality: longest names first, so "maj" is not "m" then "aj".
        for (written, word) in [
            ("maj", "major"),
            ("min", "minor"),
            ("dim", "diminished"),
            ("aug", "augmented"),
            // Not a capital "M" for major: "AM5" is a CPU socket, "DM2" diabetes.
            ("m", "minor"),
            ("ø", "half diminished"),
        ] {
            if let Some(after) = rest.strip_prefix(written) {
                words.push(word.to_owned());
                rest = after;
                has_quality = true;
                bare_minor = written == "m";
                break;
            }
        }
        let mut extended = false;
        while !rest.is_empty() {
            if let Some((bass, how, tail)) = rest.strip_prefix('/').and_then(note) {
                if !tail.is_empty() {
                    return None;
                }
                // "D/F#": the bass's sign marks a chord as well as the root's would.
                if how == Some(Accidental::Sign) {
                    accidental = accidental.or(how);
                }
                words.push(format!("over {bass}"));
                rest = tail;
                continue;
            }
            let (word, after) = if let Some(after) = rest.strip_prefix("sus") {
                ("sus".to_owned(), after)
            } else if let Some(after) = rest.strip_prefix("add") {
                ("add".to_owned(), after)
            } else if let Some(after) = rest.strip_prefix("maj") {
                ("major".to_owned(), after)
            } else if let Some(after) = rest.strip_prefix(['b', '♭']) {
                ("flat".to_owned(), after)
            } else if let Some(after) = rest.strip_prefix(['#', '♯']) {
                ("sharp".to_owned(), after)
            } else {
                let digits =
                    rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                let n: u64 = rest[..digits].parse().ok()?;
                if !matches!(n, 2 | 4 | 5 | 6 | 7 | 9 | 11 | 13) {
                    return None;
                }
                extended = true;
                (
                    numbers::integer(&rest[..digits], super::Dialect::EnUs),
                    &rest[digits..],
                )
            };
            // "sus", "add", a flat or a sharp inside a chord needs its number after it.
            if word != "major" && !after.starts_with(|c: char| c.is_ascii_digit()) && !extended {
                return None;
            }
            if matches!(word.as_str(), "sus" | "add") {
                has_quality = true;
            }
            words.push(word);
            rest = after;
        }
        Some(Chord {
            said: words.join(" "),
            accidental,
            has_quality: has_quality && !(bare_minor && !extended && words.len() == 2),
            has_more,
        })
    }
}

/// A note name at the start of `s`: its words, how its accidental was written, and the rest.
fn note(s: &str) -> Option<(String, Option<Accidental>, &str)> {
    let mut chars = s.chars();
    let root = chars.next().filter(|c| ('A'..='G').contains(c))?;
    let rest = chars.as_str();
    let signs = [
        ('#', "sharp", Accidental::Sign),
        ('♯', "sharp", Accidental::Sign),
        ('♭', "flat", Accidental::Sign),
        ('b', "flat", Accidental::LetterB),
    ];
    for (sign, word, how) in signs {
        if let Some(after) = rest.strip_prefix(sign) {
            return Some((format!("{root} {word}"), Some(how), after));
        }
    }
    Some((root.to_string(), None, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(core: &str) -> Option<String> {
        Chord::parse(core).map(|c| c.said)
    }

    #[test]
    fn chord_symbols_read_as_players_say_them() {
        assert_eq!(said("C#m7").unwrap(), "C sharp minor seven");
        assert_eq!(said("Bbmaj7").unwrap(), "B flat major seven");
        assert_eq!(said("G7sus4").unwrap(), "G seven sus four");
        assert_eq!(said("Cadd9").unwrap(), "C add nine");
        assert_eq!(said("Bm7b5").unwrap(), "B minor seven flat five");
        assert_eq!(said("D/F#").unwrap(), "D over F sharp");
        assert_eq!(said("A♭").unwrap(), "A flat");
        assert_eq!(said("Fdim").unwrap(), "F diminished");
    }

    #[test]
    fn what_is_not_a_chord_is_left() {
        // Vitamins, paper and summits: a bare letter with a number.
        for core in [
            "B12", "D3", "A4", "G7", "Am", "Bad", "Cab", "Dmx", "Eb3x", "Gsus", "DM", "AM", "A+",
            "AM5", "DM2",
        ] {
            let chord = Chord::parse(core);
            let claimed = chord.as_ref().is_some_and(|c| {
                c.accidental == Some(Accidental::Sign) || c.accidental.is_none() && c.has_quality
            });
            assert!(!claimed, "{core} was read as {chord:?}");
        }
    }
}
