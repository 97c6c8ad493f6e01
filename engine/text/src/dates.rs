//! Dates and times: "March 3, 2021", "3 March 2021", "2021-03-03", "03/04/2021", "3:45 pm",
//! "15:30", "9am".
//!
//! Numeric dates are where the dialects disagree: 03/04/2021 is March the fourth in the US and
//! the third of April in Britain (a part above 12 settles it either way). Written dates keep
//! the author's order; the British reading adds "the" ("March the third").

use super::numbers::{self, all_digits};
use super::numeric::Num;
use super::rules::{Ctx, Hit};
use super::Dialect;

pub(super) const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// Month abbreviations (written with or without a full stop).
const MONTH_ABBREVIATIONS: [(&str, usize); 12] = [
    ("Jan", 1),
    ("Feb", 2),
    ("Mar", 3),
    ("Apr", 4),
    ("Jun", 6),
    ("Jul", 7),
    ("Aug", 8),
    ("Sep", 9),
    ("Sept", 9),
    ("Oct", 10),
    ("Nov", 11),
    ("Dec", 12),
];

/// The month (1..=12) a capitalised word names.
pub(super) fn month(word: &str) -> Option<usize> {
    MONTHS
        .iter()
        .position(|m| *m == word)
        .map(|i| i + 1)
        .or_else(|| {
            MONTH_ABBREVIATIONS
                .iter()
                .find(|(a, _)| *a == word)
                .map(|(_, m)| *m)
        })
}

/// A day of the month written "3" or "3rd".
fn day(word: &str) -> Option<u64> {
    let digits = word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &word[digits.len()..];
    if !all_digits(digits) || digits.len() > 2 || !matches!(suffix, "" | "st" | "nd" | "rd" | "th")
    {
        return None;
    }
    digits.parse().ok().filter(|d| (1..=31).contains(d))
}

fn four_digit_year(word: &str) -> Option<u64> {
    (word.len() == 4 && all_digits(word))
        .then(|| word.parse().ok())
        .flatten()
}

/// "March third, twenty twenty-one" (US) or "the third of March twenty twenty-one" (GB).
fn full_date(month: usize, day: u64, year: Option<String>, dialect: Dialect) -> String {
    let name = MONTHS[month - 1];
    let ord = numbers::ordinal(day, dialect);
    match (dialect, year) {
        (Dialect::EnUs, Some(y)) => format!("{name} {ord}, {y}"),
        (Dialect::EnUs, None) => format!("{name} {ord}"),
        (Dialect::EnGb, Some(y)) => format!("the {ord} of {name} {y}"),
        (Dialect::EnGb, None) => format!("the {ord} of {name}"),
    }
}

/// Written dates over several words.
pub(super) fn rule(ctx: &Ctx<'_>, i: usize) -> Option<Hit> {
    let d = ctx.dialect;
    let core = ctx.toks[i].core;
    // Month Day[,] [Year]
    if let Some(m) = month(core) {
        let day_tok = ctx.toks.get(i + 1).filter(|t| t.lead.is_empty())?;
        let tok = &ctx.toks[i];
        if !(tok.trail.is_empty() || tok.trail == "." && core != "May" && core.len() <= 4) {
            return None;
        }
        let Some(day) = day(day_tok.core) else {
            // "Dec. 2019" is "December twenty nineteen": an abbreviated month and a year.
            let year = four_digit_year(day_tok.core).filter(|_| core != MONTHS[m - 1])?;
            let words = format!("{} {}", MONTHS[m - 1], numbers::year(year, d));
            return Some(Hit::new(2, words));
        };
        let ord = numbers::ordinal(day, d);
        let the = if d == Dialect::EnGb { "the " } else { "" };
        let name = MONTHS[m - 1];
        let year = ctx
            .toks
            .get(i + 2)
            .filter(|t| matches!(day_tok.trail, "" | ",") && t.lead.is_empty())
            .and_then(|t| four_digit_year(t.core));
        return Some(match year {
            Some(y) => Hit::new(3, format!("{name} {the}{ord}, {}", numbers::year(y, d))),
            None => Hit::new(2, format!("{name} {the}{ord}")),
        });
    }
    // Day Month [Year]
    let day = day(core)?;
    let month_word = ctx.next_core(i)?;
    let m = month(month_word)?;
    let ord = numbers::ordinal(day, d);
    let name = MONTHS[m - 1];
    let year = ctx.next_core(i + 1).and_then(four_digit_year);
    Some(match year {
        Some(y) => Hit::new(3, format!("the {ord} of {name} {}", numbers::year(y, d))),
        None => Hit::new(2, format!("the {ord} of {name}")),
    })
}

/// "2021-03-03", "03/04/2021", "3/4/21", "03.04.2021".
pub(super) fn numeric_date(core: &str, dialect: Dialect) -> Option<String> {
    let sep = ['-', '/', '.'].into_iter().find(|&s| core.contains(s))?;
    let parts: Vec<&str> = core.split(sep).collect();
    if parts.len() != 3 || !parts.iter().all(|p| all_digits(p)) {
        return None;
    }
    let num = |s: &str| s.parse::<u64>().ok();
    let (y, a, b) = if parts[0].len() == 4 && sep == '-' {
        // ISO: year-month-day
        (parts[0], num(parts[1])?, num(parts[2])?)
    } else if sep != '-' && (parts[2].len() == 4 || parts[2].len() == 2) {
        (parts[2], num(parts[0])?, num(parts[1])?)
    } else {
        return None;
    };
    let (month, day) = if parts[0].len() == 4 {
        (a, b)
    } else if a > 12 || sep == '.' {
        (b, a)
    } else if b > 12 {
        (a, b)
    } else {
        match dialect {
            Dialect::EnUs => (a, b),
            Dialect::EnGb => (b, a),
        }
    };
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    // "4/28/19" aired in twenty nineteen: a short year said short ("April twenty-eighth,
    // nineteen") sounds like another day. Like strptime's %y, 00-49 are this century.
    let year = match num(y)? {
        n if y.len() == 4 => n,
        n if n < 50 => 2000 + n,
        n => 1900 + n,
    };
    let year = numbers::year(year, dialect);
    Some(full_date(month as usize, day, Some(year), dialect))
}

/// "2/14" (the US order; "14/2" in British English; either where only one is a date) as a
/// date without a year, for a caller
/// whose context says it is one ("on 2/14"): elsewhere it may be a fraction or a score.
pub(super) fn month_day(core: &str, dialect: Dialect) -> Option<String> {
    let (a, b) = core.split_once('/')?;
    if !(1..=2).contains(&a.len())
        || !(1..=2).contains(&b.len())
        || !all_digits(a)
        || !all_digits(b)
    {
        return None;
    }
    let (a, b): (u64, u64) = (a.parse().ok()?, b.parse().ok()?);
    // The dialect's order, unless only the other one is a date ("14/2" in the US).
    let (month, day) = match dialect {
        _ if a > 12 => (b, a),
        _ if b > 12 => (a, b),
        Dialect::EnUs => (a, b),
        Dialect::EnGb => (b, a),
    };
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    Some(full_date(month as usize, day, None, dialect))
}

/// "A-M" / "P-M" for the ways a.m. and p.m. are written.
pub(super) fn meridiem(word: &str) -> Option<&'static str> {
    match word.to_ascii_lowercase().as_str() {
        "am" | "a.m" | "a.m." => Some("A-M"),
        "pm" | "p.m" | "p.m." => Some("P-M"),
        _ => None,
    }
}

/// Hours and minutes in words: "three forty-five", "three oh five", "three o'clock".
fn hours_minutes(h: u64, m: u64, with_meridiem: bool, dialect: Dialect) -> String {
    let hour = numbers::cardinal(h, dialect);
    match m {
        0 if with_meridiem => hour,
        0 if h > 12 => format!("{hour} hundred"),
        0 => format!("{hour} o'clock"),
        1..=9 => format!("{hour} oh {}", numbers::cardinal(m, dialect)),
        _ => format!("{hour} {}", numbers::cardinal(m, dialect)),
    }
}

/// "twelve minutes and thirty-four seconds", leaving out a part that is zero.
fn minutes_seconds(m: u64, s: u64, dialect: Dialect) -> String {
    match (m, s) {
        (0, s) => counted(s, "second", "seconds", dialect),
        (m, 0) => counted(m, "minute", "minutes", dialect),
        (m, s) => format!(
            "{} and {}",
            counted(m, "minute", "minutes", dialect),
            counted(s, "second", "seconds", dialect)
        ),
    }
}

/// "one minute", "nine seconds".
fn counted(n: u64, one: &str, many: &str, dialect: Dialect) -> String {
    format!(
        "{} {}",
        numbers::cardinal(n, dialect),
        if n == 1 { one } else { many }
    )
}

/// "a 2:01:09 marathon" is "a two oh one oh nine marathon": a length before a noun, read as
/// sport reads a time (the hours, minutes and seconds of [`duration`] do not fit there).
pub(super) fn compact_duration(core: &str, dialect: Dialect) -> Option<String> {
    let parts: Vec<&str> = core.split(':').collect();
    let [h, m, s] = parts.as_slice() else {
        return None;
    };
    if h.len() != 1
        || m.len() != 2
        || s.len() != 2
        || !all_digits(h)
        || !all_digits(m)
        || !all_digits(s)
    {
        return None;
    }
    let (h, m, s): (u64, u64, u64) = (h.parse().ok()?, m.parse().ok()?, s.parse().ok()?);
    if m > 59 || s > 59 {
        return None;
    }
    let two = |n: u64| match n {
        0 => "hundred".to_owned(),
        1..=9 => format!("oh {}", numbers::cardinal(n, dialect)),
        _ => numbers::cardinal(n, dialect),
    };
    Some(format!(
        "{} {} {}",
        numbers::cardinal(h, dialect),
        two(m),
        two(s)
    ))
}

/// "1h 45m", "1h45m", "2m 30s", "1hr 20min" (the parts a token each, or glued): a length
/// written with unit letters, in at least two parts, largest first. The "m" of "45m" alone is
/// meters; after hours or before seconds it is minutes ("1h 45m" was "one hour forty-five
/// meters").
pub(super) fn lettered_duration(parts: &[&str], dialect: Dialect) -> Option<String> {
    let mut found: Vec<(u64, usize)> = Vec::new();
    for part in parts {
        let mut rest = *part;
        while !rest.is_empty() {
            let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            let (number, tail) = rest.split_at(digits);
            let letters = tail.len()
                - tail
                    .trim_start_matches(|c: char| c.is_ascii_lowercase())
                    .len();
            let (unit, tail) = tail.split_at(letters);
            // "1h30": two bare digits after the hours are its minutes.
            let minutes_after_hours = unit.is_empty()
                && tail.is_empty()
                && number.len() == 2
                && found.last().is_some_and(|&(_, rank)| rank == 0);
            let rank = match unit {
                "h" | "hr" | "hrs" => 0,
                "m" | "min" | "mins" => 1,
                "s" | "sec" | "secs" => 2,
                "" if minutes_after_hours => 1,
                _ => return None,
            };
            if number.is_empty() || number.len() > 3 {
                return None;
            }
            if found.last().is_some_and(|&(_, last)| last >= rank) {
                return None;
            }
            found.push((number.parse().ok()?, rank));
            rest = tail;
        }
    }
    if found.len() < 2 || found.iter().skip(1).any(|&(n, _)| n > 59) {
        return None;
    }
    let part = |rank| found.iter().find(|p| p.1 == rank).map_or(0, |p| p.0);
    Some(duration(part(0), part(1), part(2), dialect))
}

/// "two hours, one minute and nine seconds", leaving out a part that is zero.
fn duration(h: u64, m: u64, s: u64, dialect: Dialect) -> String {
    if h == 0 {
        return minutes_seconds(m, s, dialect);
    }
    let hours = counted(h, "hour", "hours", dialect);
    match (m, s) {
        (0, 0) => hours,
        (_, 0) | (0, _) => format!("{hours} and {}", minutes_seconds(m, s, dialect)),
        _ => format!("{hours}, {}", minutes_seconds(m, s, dialect)),
    }
}

/// "3:45", "15:30", "3:45:10", "3:45pm", "9am"; a one-digit minute ("3:1") is a ratio; a
/// time with seconds and no hours ("00:12:34") is a timestamp, read as minutes and seconds.
pub(super) fn clock(core: &str, dialect: Dialect) -> Option<String> {
    let split = core
        .find(|c: char| c.is_ascii_alphabetic())
        .unwrap_or(core.len());
    let (time, suffix) = core.split_at(split);
    // "6:42a", "7:58p": a schedule's one-letter meridiem, only after hours and minutes.
    let letter = |s: &str| match s {
        "a" | "A" if time.contains(':') => Some("A-M"),
        "p" | "P" if time.contains(':') => Some("P-M"),
        _ => None,
    };
    let mer = if suffix.is_empty() {
        None
    } else {
        Some(meridiem(suffix).or_else(|| letter(suffix))?)
    };
    let parts: Vec<&str> = time.split(':').collect();
    if !parts.iter().all(|p| all_digits(p)) || parts[0].len() > 2 {
        return ratio(time, dialect).filter(|_| mer.is_none());
    }
    let h: u64 = parts[0].parse().ok()?;
    let words = match parts.as_slice() {
        [_] => {
            let mer = mer?;
            (1..=12).contains(&h).then_some(())?;
            format!("{} {mer}", numbers::cardinal(h, dialect))
        }
        [_, m] | [_, m, _] if m.len() == 2 => {
            let m: u64 = m.parse().ok()?;
            if h > 24 || m > 59 || mer.is_some() && !(1..=12).contains(&h) {
                return None;
            }
            // "00:12:34" is a timestamp in a recording, not a quarter past midnight; "2:01:09"
            // (one digit of hours) a race's or a film's length, or a place in a recording.
            if let ([h_written, _, s], None) = (parts.as_slice(), mer) {
                if h == 0 || h_written.len() == 1 {
                    let s: u64 = s.parse().ok().filter(|s| *s < 60)?;
                    return Some(duration(h, m, s, dialect));
                }
            }
            let mut words = match (h, mer) {
                (0, None) => format!("{} A-M", hours_minutes(12, m, true, dialect)),
                (_, None) => hours_minutes(h, m, false, dialect),
                (_, Some(mer)) => format!("{} {mer}", hours_minutes(h, m, true, dialect)),
            };
            if let [_, _, s] = parts.as_slice() {
                let s: u64 = s.parse().ok().filter(|s| *s < 60)?;
                if s == 0 {
                    return Some(words);
                }
                let unit = if s == 1 { "second" } else { "seconds" };
                words = format!("{words} and {} {unit}", numbers::cardinal(s, dialect));
            }
            words
        }
        _ => return ratio(time, dialect).filter(|_| mer.is_none()),
    };
    Some(words)
}

/// "3:1" is "three to one", a map's "1:50,000" "one to fifty thousand".
fn ratio(core: &str, dialect: Dialect) -> Option<String> {
    // Digits, or thousands grouped with commas as a scale writes them ("50,000", not "5,0").
    let number = |s: &str| {
        let grouped = s.contains(',')
            && !s.starts_with('-')
            && Num::parse(s).is_some_and(|n| n.plain_int().is_some());
        (grouped || !s.is_empty() && all_digits(s))
            .then(|| numbers::integer(&s.replace(',', ""), dialect))
    };
    let (a, b) = core.split_once(':')?;
    Some(format!("{} to {}", number(a)?, number(b)?))
}

/// A time followed by a separate "am"/"p.m." word: "9 am", "3:45 p.m.".
pub(super) fn with_meridiem(core: &str, word: &str, trail: &str, dialect: Dialect) -> Option<Hit> {
    let mer_word = if trail.starts_with('.') && word.contains('.') {
        format!("{word}.")
    } else {
        word.to_owned()
    };
    meridiem(&mer_word)?;
    let words = clock(&format!("{core}{mer_word}"), dialect)?;
    let mut hit = Hit::new(2, words);
    hit.eat_period = mer_word.ends_with('.');
    Some(hit)
}
