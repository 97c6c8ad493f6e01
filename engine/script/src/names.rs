//! When two spellings of a speaker's name are the same person.
//!
//! Scripts are typed on many keyboards and pasted from many places, so one name arrives as
//! `BOB` and `bob`, `José` with a composed accent and with a combining one, with a no-break
//! space, with full-width letters from a CJK input method, or wrapped in the invisible
//! direction marks that editors insert around Arabic and Hebrew. Those are one speaker with one
//! voice. So are names that differ only by a leading article: published plays write `A
//! NEIGHBOUR` on one page and `THE NEIGHBOUR` on the next, transcripts `Host` and `The host`.
//! [`speaker_key`] is the form names are compared in; [`display_name`] is the form shown and
//! cast. Anything else (`Ann` and `Anne`) stays two people: merging is only ever for differences
//! a reader cannot see or would not mean, and every merge is reported where it happens.

use unicode_normalization::UnicodeNormalization;

/// Invisible bidirectional controls: marks, embeddings, overrides and isolates. They steer
/// display only and are never part of a name.
pub(crate) fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{200E}' | '\u{200F}' | '\u{061C}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
    )
}

/// Screenplay extensions after a name (`JOHN (V.O.)`, `ANA (CONT'D)`): how the line is heard,
/// not who speaks it.
const EXTENSIONS: [&str; 8] = ["v.o.", "vo", "o.s.", "os", "o.c.", "oc", "cont'd", "contd"];

/// The name without a trailing screenplay extension, or a delivery note in parentheses
/// (`HOST (laughing)`: `crate::pieces::is_delivery_note`), which says how the line is said,
/// not who says it.
fn without_extension(name: &str) -> &str {
    let trimmed = name.trim_end();
    if let Some(inner_end) = trimmed.strip_suffix(')') {
        if let Some(open) = inner_end.rfind('(') {
            let inner = inner_end[open + 1..]
                .trim()
                .to_lowercase()
                .replace('’', "'");
            let before = inner_end[..open].trim_end();
            let note = crate::pieces::is_delivery_note(&inner_end[open + 1..]);
            if !before.is_empty() && (EXTENSIONS.contains(&inner.as_str()) || note) {
                return before;
            }
        }
    }
    trimmed
}

/// The name as it should be shown: no bidi controls, composed accents (NFC), single spaces, no
/// trailing `.`/`:`, no screenplay extension, no transcript timestamp (`Ana (00:01:02)`).
pub(crate) fn display_name(name: &str) -> String {
    let clean: String = name
        .chars()
        .filter(|&c| !is_bidi_control(c))
        .nfc()
        .collect();
    let trimmed = clean.trim().trim_end_matches(['.', ':', '：']).trim_end();
    let untimed = super::labels::without_timestamp(trimmed);
    let collapsed = without_extension(untimed.trim_end_matches(['.', ':', '：']).trim_end())
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if collapsed.is_empty() {
        clean.trim().to_owned()
    } else {
        collapsed
    }
}

/// Leading articles that do not change who is speaking (English; a name that is only an
/// article, like a speaker called `A`, keeps it).
const ARTICLES: [&str; 3] = ["the ", "a ", "an "];

/// The form names are compared in: [`display_name`], then compatibility-normalised (NFKC:
/// full-width letters, no-break spaces), case-folded, and without a leading article.
pub(crate) fn speaker_key(name: &str) -> String {
    let folded = folded(name);
    ARTICLES
        .iter()
        .find_map(|a| folded.strip_prefix(a).filter(|rest| !rest.is_empty()))
        .map_or_else(|| folded.clone(), str::to_owned)
}

/// [`display_name`], compatibility-normalised, single-spaced and case-folded.
fn folded(name: &str) -> String {
    let display = display_name(name);
    let compatible: String = display.nfkc().collect();
    compatible
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// Why `a` and `b` (same key, different spelling) were merged, for the notice the writer gets.
pub(crate) fn how_they_differ(a: &str, b: &str) -> &'static str {
    if folded(a) != folded(b) {
        return "only by a leading article (`The`, `A`, `An`)";
    }
    let (da, db) = (display_name(a), display_name(b));
    if da.to_lowercase() == db.to_lowercase() {
        if da == db {
            "only in invisible marks, spacing or punctuation"
        } else {
            "only in case"
        }
    } else {
        let fa: String = da.nfkc().collect();
        let fb: String = db.nfkc().collect();
        if fa.split_whitespace().eq(fb.split_whitespace()) {
            "only in the width of their letters or the kind of space"
        } else {
            "only in case and the width of their letters"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_person_many_spellings() {
        let key = speaker_key("José Ruiz");
        for variant in [
            "JOSÉ RUIZ",
            "Jose\u{301} Ruiz",
            "José\u{a0}Ruiz",
            "\u{200f}José Ruiz\u{200f}",
            "Ｊｏｓé Ruiz",
            "  josé   ruiz. ",
            "José Ruiz：",
            "José Ruiz (V.O.)",
            "José Ruiz (cont’d)",
        ] {
            assert_eq!(speaker_key(variant), key, "{variant:?}");
        }
        assert_ne!(speaker_key("Ann"), speaker_key("Anne"));
        // A leading article does not make another person; a name that is an article stays.
        assert_eq!(speaker_key("A NEIGHBOUR"), speaker_key("THE NEIGHBOUR"));
        assert_eq!(speaker_key("Host"), speaker_key("The host"));
        assert_eq!(speaker_key("An Usher"), speaker_key("usher"));
        assert_ne!(speaker_key("A"), speaker_key("B"));
        assert_eq!(speaker_key("A"), "a");
        assert_ne!(speaker_key("Theo"), speaker_key("o"));
        assert_eq!(
            how_they_differ("THE NEIGHBOUR", "A NEIGHBOUR"),
            "only by a leading article (`The`, `A`, `An`)"
        );
        assert_ne!(speaker_key("Ana (Annie)"), speaker_key("Ana"));
    }

    #[test]
    fn display_keeps_what_the_writer_meant() {
        assert_eq!(display_name("Jose\u{301}"), "José");
        assert_eq!(display_name("\u{200f}أحمد\u{200f}"), "أحمد");
        assert_eq!(display_name("Ana (Annie) 🌍"), "Ana (Annie) 🌍");
        assert_eq!(display_name("SAM (V.O.)"), "SAM");
        // A delivery note is how the line is said; a parenthesised alias is part of the name.
        assert_eq!(display_name("HOST (laughing)"), "HOST");
        assert_eq!(display_name("Ana (quietly):"), "Ana");
        assert_eq!(display_name("BOB (whispers)"), "BOB");
        assert_eq!(display_name("Ana (Annie)"), "Ana (Annie)");
        assert_eq!(display_name("Ana (Laughing Annie)"), "Ana (Laughing Annie)");
        assert_eq!(display_name("LADY  BRACKNELL."), "LADY BRACKNELL");
        assert_eq!(how_they_differ("BOB", "bob"), "only in case");
    }
}
