//! Scripture references: "John 3:16", "Gen 1:1", "1 Cor 13:4-7", "II Timothy 3:16".
//!
//! Sermons, Bible-study shows and history podcasts cite chapter and verse, and a reader that
//! does not know the books reads them as clock times or ratios ("Genesis 1:1" was "one to
//! one", "Rev 21:4" "Rev twenty-one to four"). After a book's name (full, or one of the usual
//! abbreviations), a chapter and verse is read as a preacher reads it: "John three, sixteen",
//! a span "thirteen, four to seven", a list "three, sixteen and eighteen". An abbreviated book
//! is said in full ("Revelation"), and a numbered book's number is an ordinal ("First
//! Corinthians"). Abbreviations count only before a chapter and verse, so "Phil" and "Mark"
//! elsewhere are names.

use super::numbers::{self, all_digits};
use super::rules::{Ctx, Hit};
use super::Dialect;

/// Each book as written (full names, then abbreviations) and as said.
const BOOKS: &[(&str, &str)] = &[
    ("Genesis", "Genesis"),
    ("Exodus", "Exodus"),
    ("Leviticus", "Leviticus"),
    ("Numbers", "Numbers"),
    ("Deuteronomy", "Deuteronomy"),
    ("Joshua", "Joshua"),
    ("Judges", "Judges"),
    ("Ruth", "Ruth"),
    ("Samuel", "Samuel"),
    ("Kings", "Kings"),
    ("Chronicles", "Chronicles"),
    ("Ezra", "Ezra"),
    ("Nehemiah", "Nehemiah"),
    ("Esther", "Esther"),
    ("Job", "Job"),
    ("Psalm", "Psalm"),
    ("Psalms", "Psalms"),
    ("Proverbs", "Proverbs"),
    ("Ecclesiastes", "Ecclesiastes"),
    ("Songs", "Songs"),
    ("Solomon", "Solomon"),
    ("Isaiah", "Isaiah"),
    ("Jeremiah", "Jeremiah"),
    ("Lamentations", "Lamentations"),
    ("Ezekiel", "Ezekiel"),
    ("Daniel", "Daniel"),
    ("Hosea", "Hosea"),
    ("Joel", "Joel"),
    ("Amos", "Amos"),
    ("Obadiah", "Obadiah"),
    ("Jonah", "Jonah"),
    ("Micah", "Micah"),
    ("Nahum", "Nahum"),
    ("Habakkuk", "Habakkuk"),
    ("Zephaniah", "Zephaniah"),
    ("Haggai", "Haggai"),
    ("Zechariah", "Zechariah"),
    ("Malachi", "Malachi"),
    ("Matthew", "Matthew"),
    ("Mark", "Mark"),
    ("Luke", "Luke"),
    ("John", "John"),
    ("Acts", "Acts"),
    ("Romans", "Romans"),
    ("Corinthians", "Corinthians"),
    ("Galatians", "Galatians"),
    ("Ephesians", "Ephesians"),
    ("Philippians", "Philippians"),
    ("Colossians", "Colossians"),
    ("Thessalonians", "Thessalonians"),
    ("Timothy", "Timothy"),
    ("Titus", "Titus"),
    ("Philemon", "Philemon"),
    ("Hebrews", "Hebrews"),
    ("James", "James"),
    ("Peter", "Peter"),
    ("Jude", "Jude"),
    ("Revelation", "Revelation"),
    ("Revelations", "Revelations"),
    // Abbreviations. Not "Is" (Isaiah), "Am" (Amos) or "Jon" (Jonah), which begin questions
    // and name people: "Is 2:1 enough?"
    ("Gen", "Genesis"),
    ("Gn", "Genesis"),
    ("Ex", "Exodus"),
    ("Exod", "Exodus"),
    ("Lev", "Leviticus"),
    ("Num", "Numbers"),
    ("Deut", "Deuteronomy"),
    ("Dt", "Deuteronomy"),
    ("Josh", "Joshua"),
    ("Judg", "Judges"),
    ("Sam", "Samuel"),
    ("Kgs", "Kings"),
    ("Chr", "Chronicles"),
    ("Chron", "Chronicles"),
    ("Neh", "Nehemiah"),
    ("Esth", "Esther"),
    ("Ps", "Psalm"),
    ("Psa", "Psalm"),
    ("Pss", "Psalms"),
    ("Prov", "Proverbs"),
    ("Eccl", "Ecclesiastes"),
    ("Eccles", "Ecclesiastes"),
    ("Isa", "Isaiah"),
    ("Jer", "Jeremiah"),
    ("Lam", "Lamentations"),
    ("Ezek", "Ezekiel"),
    ("Dan", "Daniel"),
    ("Hos", "Hosea"),
    ("Obad", "Obadiah"),
    ("Mic", "Micah"),
    ("Nah", "Nahum"),
    ("Hab", "Habakkuk"),
    ("Zeph", "Zephaniah"),
    ("Hag", "Haggai"),
    ("Zech", "Zechariah"),
    ("Mal", "Malachi"),
    ("Matt", "Matthew"),
    ("Mt", "Matthew"),
    ("Mk", "Mark"),
    ("Lk", "Luke"),
    ("Jn", "John"),
    ("Rom", "Romans"),
    ("Cor", "Corinthians"),
    ("Gal", "Galatians"),
    ("Eph", "Ephesians"),
    ("Phil", "Philippians"),
    ("Col", "Colossians"),
    ("Thess", "Thessalonians"),
    ("Tim", "Timothy"),
    ("Tit", "Titus"),
    ("Philem", "Philemon"),
    ("Phlm", "Philemon"),
    ("Heb", "Hebrews"),
    ("Jas", "James"),
    ("Pet", "Peter"),
    ("Rev", "Revelation"),
];

/// Books that come in parts, whose number before them is an ordinal.
const NUMBERED: &[&str] = &[
    "Samuel",
    "Kings",
    "Chronicles",
    "Corinthians",
    "Thessalonians",
    "Timothy",
    "Peter",
    "John",
];

/// Of those, the ones no other sense shares, numbered even with no chapter after them ("in 1
/// Corinthians, Paul…"); "2 Kings" or "1 John" alone may be a count.
const ONLY_BOOKS: &[&str] = &["Corinthians", "Thessalonians", "Chronicles"];

/// A reference from token `i`: an optional part number, a book, then a chapter and verses.
pub(super) fn rule(ctx: &Ctx<'_>, i: usize) -> Option<Hit> {
    let core = ctx.toks[i].core;
    let first = core.chars().next()?;
    if !(first.is_ascii_uppercase() || matches!(first, '1'..='3')) {
        return None;
    }
    if let Some(part) = part_number(core) {
        let written = ctx.next_core(i)?;
        let book = book(written).filter(|b| NUMBERED.contains(b))?;
        let said = format!("{part} {book}");
        if let Some(words) = reference_after(ctx, i + 1) {
            return Some(Hit::new(3, format!("{said} {words}")));
        }
        let chapter_follows = ctx
            .next_core_after_period(i + 1)
            .is_some_and(|c| all_digits(c) && c.len() <= 3);
        return (ONLY_BOOKS.contains(&book) || chapter_follows).then(|| Hit::new(2, said));
    }
    let said = book(core)?;
    // "Kings", "Samuel", "Timothy" and "Peter" are cited with their part ("2 Kings 5:1"):
    // without one they are a team or a name ("the Kings won 4:2").
    let needs_part = matches!(said, "Kings" | "Samuel" | "Timothy" | "Peter");
    if needs_part && !matches!(core, "Sam" | "Kgs" | "Tim" | "Pet") {
        return None;
    }
    if let Some(words) = reference_after(ctx, i) {
        return Some(Hit::new(2, format!("{said} {words}")));
    }
    // "Ps 23", "Ps. 139": a psalm is cited by its number alone.
    let chapter = ctx
        .next_core_after_period(i)
        .filter(|c| all_digits(c) && (1..=3).contains(&c.len()) && !c.starts_with('0'))?;
    matches!(core, "Ps" | "Psa").then(|| {
        let n: u64 = chapter.parse().unwrap_or_default();
        Hit::new(2, format!("{said} {}", numbers::cardinal(n, ctx.dialect)))
    })
}

/// The ordinal of a book's part number: "1", "I", "1st" and "First" are "First".
fn part_number(core: &str) -> Option<&'static str> {
    match core {
        "1" | "I" | "1st" => Some("First"),
        "2" | "II" | "2nd" => Some("Second"),
        "3" | "III" | "3rd" => Some("Third"),
        _ => None,
    }
}

/// The spoken name of the book written `core`.
fn book(core: &str) -> Option<&'static str> {
    BOOKS
        .iter()
        .find(|(w, _)| *w == core)
        .map(|(_, said)| *said)
}

/// The chapter and verses in the token after the book at `i` (an abbreviation's full stop may
/// come between), in words; not a clock time with its "am" or "pm" after it.
fn reference_after(ctx: &Ctx<'_>, i: usize) -> Option<String> {
    let core = ctx.next_core_after_period(i)?;
    let words = reference(core, ctx.dialect)?;
    let clock = ctx.next_core(i + 1).is_some_and(|w| {
        matches!(
            w.to_ascii_lowercase().as_str(),
            "am" | "pm" | "a.m" | "p.m" | "a" | "p"
        )
    });
    (!clock).then_some(words)
}

/// "3:16" is "three, sixteen"; "13:4-7" "thirteen, four to seven"; "3:16,18" "three, sixteen
/// and eighteen"; "3:16-4:2" "three, sixteen to four, two".
fn reference(core: &str, dialect: Dialect) -> Option<String> {
    let n = |s: &str| {
        (all_digits(s) && (1..=3).contains(&s.len()) && !s.starts_with('0'))
            .then(|| s.parse::<u64>().ok())
            .flatten()
            .map(|n| numbers::cardinal(n, dialect))
    };
    let (chapter, verses) = core.split_once(':')?;
    let chapter = n(chapter)?;
    // Across chapters: "3:16-4:2".
    if let Some((from, to)) = verses.split_once(['-', '–']) {
        if let Some((to_chapter, to_verse)) = to.split_once(':') {
            return Some(format!(
                "{chapter}, {} to {}, {}",
                n(from)?,
                n(to_chapter)?,
                n(to_verse)?
            ));
        }
    }
    let mut parts = Vec::new();
    for part in verses.split(',') {
        parts.push(match part.split_once(['-', '–']) {
            Some((from, to)) => format!("{} to {}", n(from)?, n(to)?),
            None => n(part)?,
        });
    }
    let last = parts.pop()?;
    let verses = if parts.is_empty() {
        last
    } else {
        format!("{} and {last}", parts.join(", "))
    };
    Some(format!("{chapter}, {verses}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_read_as_chapter_and_verses() {
        let d = Dialect::EnUs;
        assert_eq!(reference("1:1", d).unwrap(), "one, one");
        assert_eq!(reference("13:4-7", d).unwrap(), "thirteen, four to seven");
        assert_eq!(
            reference("3:16,18", d).unwrap(),
            "three, sixteen and eighteen"
        );
        assert_eq!(
            reference("3:16-4:2", d).unwrap(),
            "three, sixteen to four, two"
        );
        assert!(reference("3:", d).is_none());
        assert!(reference("03:15", d).is_none());
        assert!(reference("3:16x", d).is_none());
    }

    #[test]
    fn every_abbreviation_names_a_listed_book() {
        for (written, said) in BOOKS {
            assert!(book(said).is_some(), "{written} says {said}, not a book");
        }
    }
}
