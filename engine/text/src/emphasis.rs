//! A common short word written in capitals among ordinary words is stressed, not an
//! initialism: "I was SO tired", "this is NOT okay", "cook on LOW for 8 hours".
//!
//! Words of four letters or more that look like words already reach espeak as words
//! (`abbreviations::looks_like_a_word`); two and three capitals were spelled, because most of
//! them are initialisms ("CIA", "UK"), so a listener heard "S-O tired" and "N-O-T okay". Only
//! words that are rarely initialisms are read as words. A few that often are ("OR", "IN", "IS",
//! "WHO", "ME") count only after a word that is not a determiner ("this OR that", but "in the
//! OR") or, but for "ME", a preposition ("a report from WHO"), and "AM" only after "I"; "US", "IT", "PM" and "ID" are left to be spelled, as they
//! mostly mean the country, the trade, the time and the card.

use super::abbreviations::SHOUTED_WORDS;
use super::rules::{Ctx, Hit};

/// Words said as words whenever they stand in capitals among lower-case words: the common short
/// words that make a sentence a shout (`abbreviations::SHOUTED_WORDS`, but for the initialisms
/// among them, [`IN_CONTEXT`] and "IT"), and these.
const MORE_WORDS: &[&str] = &[
    "AGO", "ASK", "BIT", "BOY", "CUT", "EAT", "END", "FAR", "FAT", "FEW", "FIT", "FIX", "FLY",
    "FUN", "GUY", "HIT", "HOT", "HUH", "JOB", "KEY", "KID", "LIE", "LOT", "LOW", "MAD", "MIX",
    "NAH", "NOR", "ODD", "OWN", "PAY", "PUT", "RAW", "SAD", "SET", "SIT", "SIX", "TEN", "TON",
    "TOP", "USE", "WET", "WON", "YAY", "YEP",
];

/// Whether `word` in capitals is one of the common short words a shout is made of.
pub(super) fn is_common_word(word: &str) -> bool {
    SHOUTED_WORDS.contains(&word) || MORE_WORDS.contains(&word)
}

/// Words that are initialisms as often: words only after a word that is not a determiner and
/// before one that is not a name.
const IN_CONTEXT: &[&str] = &["IN", "IS", "ME", "OR", "WHO"];

/// Words before which an initialism is a noun ("the OR", "her ME").
const DETERMINERS: &[&str] = &[
    "the", "a", "an", "our", "your", "his", "her", "their", "my", "its", "of", "per",
];

/// Prepositions, after which "WHO", "OR", "IN" and "IS" are names ("a report from WHO", "we
/// met in OR 3"); "ME" after one is stressed ("give it to ME").
const PREPOSITIONS: &[&str] = &[
    "from", "to", "by", "with", "at", "for", "in", "on", "via", "about", "against", "into",
    "inside", "outside", "within", "under", "without",
];

/// Token `i` read as the stressed word it is, in lower case (so a second reading keeps it).
pub(super) fn rule(ctx: &Ctx<'_>, i: usize) -> Option<Hit> {
    let core = ctx.toks[i].core;
    if ctx.shouting || !(2..=3).contains(&core.len()) {
        return None;
    }
    if !core.bytes().all(|b| b.is_ascii_uppercase()) {
        return None;
    }
    // Among other capitals ("AND OR NOT", "ON AIR") a word may be part of a name or a label.
    let ordinary = |w: &str| w.starts_with(|c: char| c.is_lowercase());
    // The sentence's first word has a capital only because it is first ("This OR that").
    let prev = i.checked_sub(1).map(|k| ctx.toks[k].core).map(|p| {
        let opening = i == 1
            && ctx.toks[0].trail.is_empty()
            && p.len() > 1
            && p.chars().skip(1).all(char::is_lowercase);
        if opening {
            p.to_lowercase()
        } else {
            p.to_owned()
        }
    });
    let prev = prev.as_deref();
    let next = ctx.toks.get(i + 1).map(|t| t.core);
    // A word alone ("NO!", "WHY?") is a cry, not a name.
    let among_words = ctx.toks.len() == 1
        || ctx.toks[i].in_name
        || prev.is_some_and(ordinary)
        || next.is_some_and(ordinary);
    if !among_words {
        return None;
    }
    let common = SHOUTED_WORDS.contains(&core) && !IN_CONTEXT.contains(&core) && core != "IT";
    let said = if common || MORE_WORDS.contains(&core) {
        true
    } else if core == "AM" {
        // "I AM", not nine in the morning (a time is read before this rule).
        prev == Some("I")
    } else if IN_CONTEXT.contains(&core) {
        let noun_before =
            |p: &str| DETERMINERS.contains(&p) || core != "ME" && PREPOSITIONS.contains(&p);
        let after_word = prev.is_some_and(|p| ordinary(p) && !noun_before(p) || p == "I");
        // "OR 3", "WHO Europe": a name or a number after it makes it a name too.
        let before_name =
            next.is_some_and(|n| n.starts_with(|c: char| c.is_uppercase() || c.is_ascii_digit()));
        after_word && !before_name
    } else {
        false
    };
    said.then(|| Hit::new(1, core.to_lowercase()))
}
