//! Tokens made of numbers: plain, signed, decimal, grouped, ordinal, decades, money, percent,
//! units, fractions, and the multi-word patterns around them ("$5 million", "5 km", "9 am",
//! "(555) 123-4567", "between 5-10").
//!
//! [`single`] reads one token's core without context; [`rule`] looks at the neighbours first.
//! Anything with digits that no pattern claims is read part by part ("MP3" is "M-P-three"), so
//! no digit ever reaches espeak.

use super::numbers::{self, all_digits};
use super::rules::{Ctx, Hit};
use super::{abbreviations, dates, money, ranges, units, Dialect};

/// A written number: optional minus, integer digits (group commas removed), optional fraction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Num<'a> {
    pub negative: bool,
    pub int: String,
    pub frac: Option<&'a str>,
}

impl<'a> Num<'a> {
    /// "1,234.5", "-3", ".5", "007"; the whole string must be the number.
    pub fn parse(s: &'a str) -> Option<Self> {
        let (negative, body) = match s.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, s),
        };
        let (int_part, frac) = match body.split_once('.') {
            Some((i, f)) => (i, Some(f)),
            None => (body, None),
        };
        if frac.is_some_and(|f| !all_digits(f)) || int_part.is_empty() && frac.is_none() {
            return None;
        }
        let int = if int_part.contains(',') {
            let mut groups = int_part.split(',');
            let first = groups.next()?;
            let ok = (1..=3).contains(&first.len())
                && all_digits(first)
                && !first.starts_with('0')
                && groups.all(|g| g.len() == 3 && all_digits(g));
            if !ok {
                return None;
            }
            int_part.replace(',', "")
        } else if int_part.is_empty() || all_digits(int_part) {
            int_part.to_owned()
        } else {
            return None;
        };
        Some(Num {
            negative,
            int,
            frac,
        })
    }

    /// The integer part in words ("zero" when empty).
    pub fn whole(&self, dialect: Dialect) -> String {
        if self.int.is_empty() {
            "zero".to_owned()
        } else {
            numbers::integer(&self.int, dialect)
        }
    }

    /// The whole number in words, sign included.
    pub fn words(&self, dialect: Dialect) -> String {
        let sign = if self.negative { "minus " } else { "" };
        match self.frac {
            Some(f) => format!("{sign}{}", numbers::decimal(&self.int, f, dialect)),
            None => format!("{sign}{}", self.whole(dialect)),
        }
    }

    /// Exactly one, for singular nouns ("1 km", "-1 degree").
    pub fn is_one(&self) -> bool {
        self.int == "1" && self.frac.is_none()
    }

    pub fn int_value(&self) -> Option<u64> {
        if self.int.is_empty() {
            Some(0)
        } else {
            self.int.parse().ok()
        }
    }

    /// A plain whole number without sign.
    pub fn plain_int(&self) -> Option<u64> {
        (!self.negative && self.frac.is_none())
            .then(|| self.int_value())
            .flatten()
    }
}

/// One core in words, or `None` when it holds no digits this module understands.
pub(super) fn single(core: &str, dialect: Dialect) -> Option<String> {
    if !core.contains(|c: char| c.is_ascii_digit() || VULGAR.iter().any(|(v, _)| c == *v)) {
        return None;
    }
    if let Some(n) = Num::parse(core) {
        return Some(n.words(dialect));
    }
    if let Some(rest) = core.strip_prefix(['~', '≈']) {
        return Some(format!("about {}", single(rest, dialect)?));
    }
    if let Some(rest) = core.strip_prefix('+') {
        if all_digits(rest) && rest.len() >= 7 {
            return Some(format!("plus {}", numbers::digits(rest)));
        }
        return Some(format!("plus {}", single(rest, dialect)?));
    }
    if let Some(rest) = core.strip_prefix('-') {
        if rest.starts_with(|c: char| !c.is_ascii_digit()) && money::prefix(rest).is_some() {
            return Some(format!("minus {}", single(rest, dialect)?));
        }
    }
    if let Some(words) = ranges::range(core, dialect) {
        return Some(words);
    }
    if let Some((currency, rest)) = money::prefix(core).or_else(|| money::suffix(core)) {
        if let Some(words) = money::amount(currency, rest, None, dialect) {
            return Some(words);
        }
    }
    if let Some(words) = list(core, dialect) {
        return Some(words);
    }
    if let Some(words) = money::minor_suffix(core, dialect) {
        return Some(words);
    }
    if let Some(rest) = core.strip_suffix('%') {
        let n = Num::parse(rest)?;
        return Some(format!(
            "{} {}",
            n.words(dialect),
            money::percent_word(dialect)
        ));
    }
    ordinal(core, dialect)
        .or_else(|| decade(core, dialect))
        .or_else(|| dates::clock(core, dialect))
        .or_else(|| dates::numeric_date(core, dialect))
        .or_else(|| ranges::digit_groups(core))
        .or_else(|| ranges::fraction(core, dialect))
        .or_else(|| glued_unit(core, dialect))
        .or_else(|| vulgar(core, dialect))
        .or_else(|| dotted(core, dialect))
        .or_else(|| super::symbols::joined(core, dialect))
        .or_else(|| mixed(core, dialect))
}

/// Numbers separated by commas that are not thousands groups: "1,2,3" is a list.
fn list(core: &str, dialect: Dialect) -> Option<String> {
    if !core.contains(',') {
        return None;
    }
    let words: Option<Vec<String>> = core
        .split(',')
        .map(|p| Num::parse(p).map(|n| n.words(dialect)))
        .collect();
    Some(words?.join(", "))
}

/// "1st", "22nd", "103rd", "1,000th".
fn ordinal(core: &str, dialect: Dialect) -> Option<String> {
    let cut = core.len().checked_sub(2)?;
    if !core.is_char_boundary(cut) {
        return None;
    }
    let (num, suffix) = core.split_at(cut);
    if !matches!(
        suffix.to_ascii_lowercase().as_str(),
        "st" | "nd" | "rd" | "th"
    ) {
        return None;
    }
    let n = Num::parse(num)?.plain_int()?;
    Some(numbers::ordinal(n, dialect))
}

/// "1990s", "1990's", "90s", "'90s".
fn decade(core: &str, dialect: Dialect) -> Option<String> {
    let body = core.strip_suffix("'s").or_else(|| core.strip_suffix('s'))?;
    let (short, digits) = match body.strip_prefix('\'') {
        Some(d) => (true, d),
        None => (false, body),
    };
    if !all_digits(digits) || !digits.ends_with('0') {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    match digits.len() {
        2 if n >= 10 || short => Some(numbers::decade(n, dialect)),
        4 => Some(numbers::decade(n, dialect)),
        _ => None,
    }
}

/// A number glued to a unit: "10kg", "5km/h", "20°C", "3x".
fn glued_unit(core: &str, dialect: Dialect) -> Option<String> {
    let split = core
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ',' || c == '-'))
        .filter(|&i| i > 0)?;
    let (num, symbol) = core.split_at(split);
    let n = Num::parse(num)?;
    let unit = units::lookup(symbol, false)?;
    Some(format!(
        "{} {}",
        n.words(dialect),
        units::words(unit, !n.is_one(), dialect)
    ))
}

const VULGAR: &[(char, &str)] = &[
    ('½', "a half"),
    ('¼', "a quarter"),
    ('¾', "three quarters"),
    ('⅓', "a third"),
    ('⅔', "two thirds"),
    ('⅛', "an eighth"),
];

/// "½" is "one half"; "2½" is "two and a half".
fn vulgar(core: &str, dialect: Dialect) -> Option<String> {
    let last = core.chars().last()?;
    let (_, words) = VULGAR.iter().find(|(c, _)| *c == last)?;
    let int = &core[..core.len() - last.len_utf8()];
    if int.is_empty() {
        return Some(words.replacen("a ", "one ", 1).replacen("an ", "one ", 1));
    }
    Some(format!(
        "{} and {words}",
        Num::parse(int)?
            .plain_int()
            .map(|n| numbers::cardinal(n, dialect))?
    ))
}

/// Several dots between numbers: IP addresses are read digit by digit with "dot", versions
/// "1.2.3" with "point".
fn dotted(core: &str, dialect: Dialect) -> Option<String> {
    let parts: Vec<&str> = core.split('.').collect();
    if parts.len() < 3 || !parts.iter().all(|p| all_digits(p)) {
        return None;
    }
    // IP addresses are read digit by digit: "one nine two dot one six eight ...".
    if parts.len() == 4 && parts.iter().all(|p| p.len() <= 3) {
        let words: Vec<String> = parts.iter().map(|p| numbers::digits(p)).collect();
        return Some(words.join(" dot "));
    }
    let words: Vec<String> = parts.iter().map(|p| numbers::integer(p, dialect)).collect();
    Some(words.join(" point "))
}

/// Letters and digits mixed ("MP3", "COVID-19", "5-year-old", "v2"): each run read alone and
/// joined with hyphens, which espeak reads as one word without pausing.
pub(super) fn mixed(core: &str, dialect: Dialect) -> Option<String> {
    let mut parts = Vec::new();
    for piece in core.split(['-', '–']) {
        if piece.is_empty() {
            continue;
        }
        if let Some(words) = Num::parse(piece)
            .map(|n| n.words(dialect))
            .or_else(|| ordinal(piece, dialect))
            .or_else(|| decade(piece, dialect))
            .or_else(|| glued_unit(piece, dialect))
        {
            parts.push(words);
            continue;
        }
        let mut rest = piece;
        while let Some(c) = rest.chars().next() {
            let digit = c.is_ascii_digit();
            let len = rest
                .find(|ch: char| ch.is_ascii_digit() != digit)
                .unwrap_or(rest.len());
            let (run, tail) = rest.split_at(len);
            parts.push(if digit {
                numbers::integer(run, dialect)
            } else {
                abbreviations::letters(run)
            });
            rest = tail;
        }
    }
    let out = parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>();
    (!out.is_empty()).then(|| out.join("-"))
}

/// Words that make a following four-digit number a year even outside 1800..=2099.
const YEAR_CONTEXT: &[&str] = &[
    "in", "since", "of", "by", "from", "until", "till", "year", "circa", "ca", "c", "during",
    "before", "after", "around", "summer", "winter", "spring", "autumn", "fall", "early", "late",
    "mid",
];
const ERAS: &[&str] = &["AD", "BC", "BCE", "CE"];
/// Words before "30s" that make it a decade or an age rather than seconds.
const DECADE_CONTEXT: &[&str] = &[
    "the", "early", "late", "mid", "their", "his", "her", "my", "your", "our", "its", "and", "or",
    "to", "through",
];

/// Context-dependent number patterns, then [`single`].
pub(super) fn rule(ctx: &Ctx<'_>, i: usize) -> Option<Hit> {
    let d = ctx.dialect;
    let core = ctx.toks[i].core;
    let has_number = core.contains(|c: char| c.is_ascii_digit() || VULGAR.iter().any(|v| v.0 == c));
    if !has_number || core.starts_with(['#', '@']) {
        return None;
    }
    if let Some(hit) = ranges::phone_rule(ctx, i) {
        return Some(hit);
    }
    let next = ctx.next_core(i);
    let num = Num::parse(core);
    // "$5 million", "$3 bn"
    if let (Some((currency, rest)), Some(word)) = (money::prefix(core), next) {
        if let Some(scale) = money::scale(word).filter(|_| word.len() >= 2) {
            let words = money::amount(currency, rest, Some(scale), d)?;
            return Some(Hit::new(2, words));
        }
    }
    if let Some(clock) = next.and_then(|w| dates::with_meridiem(core, w, ctx.toks[i + 1].trail, d))
    {
        return Some(clock);
    }
    // "30s" is thirty seconds unless a decade is meant: "the 30s", "in her 30s".
    if core.len() == 3 && core.ends_with("0s") && all_digits(&core[..2]) {
        let decade = ctx
            .prev_core(i)
            .is_some_and(|p| DECADE_CONTEXT.contains(&p.to_lowercase().as_str()));
        if !decade {
            return glued_unit(core, d).map(|w| Hit::new(1, w));
        }
    }
    if let (Some(n), Some(word)) = (&num, next) {
        // "100 USD", "5 km", "50 %", "9 am", "1 1/2"
        if let Some(currency) = money::code(word) {
            let words = money::amount(currency, core, None, d)?;
            let words = words.replacen("dollars", "U-S dollars", 1);
            return Some(Hit::new(2, words));
        }
        if let Some(unit) = units::lookup(word, true) {
            let words = format!("{} {}", n.words(d), units::words(unit, !n.is_one(), d));
            return Some(Hit::new(2, words));
        }
        if word == "%" {
            let words = format!("{} {}", n.words(d), money::percent_word(d));
            return Some(Hit::new(2, words));
        }
        if let (Some(whole), Some(frac)) = (n.plain_int(), ranges::mixed_fraction(word, d)) {
            return Some(Hit::new(
                2,
                format!("{} and {frac}", numbers::cardinal(whole, d)),
            ));
        }
    }
    if let Some(hit) = ranges::spaced_range(ctx, i) {
        return Some(hit);
    }
    // Range reading of "5-10", "1990–1995", with "between ... and".
    if ranges::is_range(core) {
        let words = ranges::range(core, d)?;
        let words = if ctx
            .prev_core(i)
            .is_some_and(|p| p.eq_ignore_ascii_case("between"))
        {
            words.replacen(" to ", " and ", 1)
        } else {
            words
        };
        // A unit after a range applies to both ends: "5-10 km".
        if let Some(unit) = next.and_then(|w| units::lookup(w, true)) {
            return Some(Hit::new(
                2,
                format!("{words} {}", units::words(unit, true, d)),
            ));
        }
        return Some(Hit::new(1, words));
    }
    if let Some(year) = num.as_ref().and_then(|n| year_reading(ctx, i, n)) {
        return Some(Hit::new(1, year));
    }
    single(core, d).map(|w| Hit::new(1, w))
}

/// A four-digit number read as a year when it looks like one in its context.
fn year_reading(ctx: &Ctx<'_>, i: usize, n: &Num<'_>) -> Option<String> {
    let value = n
        .plain_int()
        .filter(|_| n.int.len() == 4 && !n.int.starts_with('0'))?;
    let core = ctx.toks[i].core;
    if core.contains(',') {
        return None;
    }
    let next = ctx.next_core(i);
    if next.is_some_and(|w| {
        units::lookup(w, true).is_some() || money::code(w).is_some() || money::scale(w).is_some()
    }) {
        return None;
    }
    let prev = ctx.prev_core(i).map(str::to_lowercase);
    let context = prev
        .as_deref()
        .is_some_and(|p| YEAR_CONTEXT.contains(&p) || dates::month(ctx.toks[i - 1].core).is_some())
        || next.is_some_and(|w| ERAS.contains(&w));
    let plausible = context && (1000..=2099).contains(&value) || (1800..=2099).contains(&value);
    plausible.then(|| numbers::year(value, ctx.dialect))
}
