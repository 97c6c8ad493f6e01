//! Numbers joined by dashes, slashes and spaces: ranges ("5-10", "1990–1995", "$5-10"),
//! phone-like digit groups ("555-123-4567", "+44 20 7946 0958"), fractions ("3/4").
//!
//! A hyphen between numbers is ambiguous, so the shape decides: a 3-digit then 4-digit pair,
//! three or more groups, or a leading zero is a phone number read digit by digit in groups
//! (commas give Kokoro a short pause between groups); anything else is a range read with "to".

use super::money;
use super::numbers::{self, all_digits};
use super::numeric::Num;
use super::rules::{Ctx, Hit};
use super::Dialect;

/// "X to Y" for a range core, or `None` when it is not one.
pub(super) fn range(core: &str, dialect: Dialect) -> Option<String> {
    let cut = core
        .char_indices()
        .skip(1)
        .find(|&(_, c)| c == '-' || c == '–')?
        .0;
    let (left, right) = (
        &core[..cut],
        &core[cut + core[cut..].chars().next()?.len_utf8()..],
    );
    if right.contains(['-', '–']) || left.is_empty() || right.is_empty() {
        return None;
    }
    if let (Some(a), Some(b)) = (times(left, dialect), times(right, dialect)) {
        return Some(format!("{a} to {b}"));
    }
    if let Some(words) = shared_meridiem(left, right, dialect) {
        return Some(words);
    }
    let (currency, left) = match money::prefix(left) {
        Some((c, rest)) => (Some(c), rest),
        None => (None, left),
    };
    let right = match money::prefix(right) {
        Some((c, rest)) if currency.is_some_and(|l| std::ptr::eq(l, c)) => rest,
        Some(_) => return None,
        None => right,
    };
    if let Some(words) = currency.and_then(|c| money_range(c, left, right, dialect)) {
        return Some(words);
    }
    // "5–10M people": the scale written once, on the second end.
    if let (Some(l), None, Some(b)) = (
        Num::parse(left).filter(|_| currency.is_none()),
        Num::parse(right),
        super::numeric::scaled(right, dialect),
    ) {
        return Some(format!("{} to {b}", l.words(dialect)));
    }
    let (right, percent) = match right.strip_suffix('%') {
        Some(r) => (r, true),
        None => (right, false),
    };
    // "4.25%-4.5%": the percent written on both sides is said once, after the second.
    let left = match left.strip_suffix('%') {
        Some(l) if percent => l,
        _ => left,
    };
    let (l, r) = (Num::parse(left)?, Num::parse(right)?);
    // "2008-09" is a span of years, its second written short with the zero.
    let short_year = left.len() == 4
        && right.len() == 2
        && matches!((l.plain_int(), r.plain_int()), (Some(a), Some(b)) if is_year(a) && b > a % 100);
    if l.negative
        || r.negative
        || l.int.len() > 1 && l.int.starts_with('0')
        || r.int.len() > 1 && r.int.starts_with('0') && !short_year
    {
        return None;
    }
    if l.frac.is_none() && r.frac.is_none() && l.int.len() == 3 && r.int.len() == 4 {
        return None; // 555-1234 is a phone number
    }
    // "50-50", "3-3": equal ends are a split or a tie, never a range ("fifty-fifty").
    if l == r && l.frac.is_none() && currency.is_none() && !percent {
        if right == "0" {
            let nothing = nothing(dialect);
            return Some(format!("{nothing}-{nothing}"));
        }
        let w = l.words(dialect);
        return Some(format!("{w}-{w}"));
    }
    // "a 1-0 win": no range ends at nothing, so it is a score ("one to nothing", British "one
    // nil"); "0-60" stays a range.
    if right == "0" && l.plain_int().is_some() && currency.is_none() && !percent {
        let to = if dialect == Dialect::EnGb { "" } else { " to" };
        return Some(format!("{}{to} {}", l.words(dialect), nothing(dialect)));
    }
    let (lw, rw) = match (l.plain_int(), r.plain_int()) {
        (Some(a), Some(b)) if is_year(a) && is_year(b) && left.len() == 4 && right.len() == 4 => {
            (numbers::year(a, dialect), numbers::year(b, dialect))
        }
        // "2010-11": the second year keeps the first one's century.
        (Some(a), Some(b)) if is_year(a) && left.len() == 4 && right.len() == 2 && b > a % 100 => {
            let full = a / 100 * 100 + b;
            (numbers::year(a, dialect), numbers::year(full, dialect))
        }
        _ => (l.words(dialect), r.words(dialect)),
    };
    let unit = match (currency, percent) {
        (Some(c), _) => format!(" {}", money::plural_name(c)),
        (None, true) => format!(" {}", money::percent_word(dialect)),
        (None, false) => String::new(),
    };
    Some(format!("{lw} to {rw}{unit}"))
}

/// Ranges of money said as amounts: "$4.10–$4.25" with its cents ("four dollars and ten cents
/// to four dollars and twenty-five cents", not "four point one zero to four point two five
/// dollars"), and "$5–10M" with the scale written once, on the second end.
fn money_range(
    currency: &'static money::Currency,
    left: &str,
    right: &str,
    dialect: Dialect,
) -> Option<String> {
    let cents = |s: &str| s.split_once('.').is_some_and(|(_, f)| f.len() == 2);
    let (l, r) = (Num::parse(left)?, Num::parse(right));
    if l.negative {
        return None;
    }
    if cents(left) || cents(right) && r.is_some() {
        let a = money::amount(currency, left, None, dialect)?;
        let b = money::amount(currency, right, None, dialect)?;
        return Some(format!("{a} to {b}"));
    }
    if r.is_none() {
        let b = money::amount(currency, right, None, dialect)?;
        return Some(format!("{} to {b}", l.words(dialect)));
    }
    None
}

/// A score's zero: "nothing" ("one to nothing"), British "nil".
fn nothing(dialect: Dialect) -> &'static str {
    if dialect == Dialect::EnGb {
        "nil"
    } else {
        "nothing"
    }
}

/// A side of a time range: "9am", "17:00".
fn times(side: &str, dialect: Dialect) -> Option<String> {
    if !side.contains(':') && !side.ends_with(['m', 'M']) {
        return None;
    }
    super::dates::clock(side, dialect)
}

/// "9-11am", "9–11:30 p.m.": the meridiem written once, after the second time, holds for
/// both, and is said once ("nine to eleven A-M").
fn shared_meridiem(left: &str, right: &str, dialect: Dialect) -> Option<String> {
    let split = right.find(|c: char| c.is_ascii_alphabetic())?;
    let suffix = &right[split..];
    if left.is_empty() || !left.chars().all(|c| c.is_ascii_digit() || c == ':') {
        return None;
    }
    let mer = super::dates::meridiem(suffix)?;
    let first = super::dates::clock(&format!("{left}{suffix}"), dialect)?;
    let first = first.strip_suffix(&format!(" {mer}"))?.to_owned();
    Some(format!(
        "{first} to {}",
        super::dates::clock(right, dialect)?
    ))
}

fn is_year(n: u64) -> bool {
    (1100..=2099).contains(&n)
}

/// Whether `core` reads as a range.
pub(super) fn is_range(core: &str) -> bool {
    range(core, Dialect::EnUs).is_some()
}

/// Toll-free area codes, which vanity numbers use.
const TOLL_FREE: [&str; 7] = ["800", "888", "877", "866", "855", "844", "833"];

/// "1-800-FLOWERS", "1-888-GOT-JUNK": a toll-free number spelled with words, its digits said
/// as a phone's and the words as words ("one-eight hundred-FLOWERS" was read).
fn vanity_number(core: &str) -> Option<String> {
    let groups: Vec<&str> = core.split('-').collect();
    let first_word = groups.iter().position(|g| !all_digits(g))?;
    let (digits, words) = groups.split_at(first_word);
    let toll_free = match digits {
        [code] | ["1", code] => TOLL_FREE.contains(code),
        _ => false,
    };
    let spelled = words
        .iter()
        .all(|w| w.len() >= 2 && w.chars().all(|c| c.is_ascii_uppercase()));
    (toll_free && spelled).then(|| {
        let said: Vec<String> = digits
            .iter()
            .map(|g| match *g {
                "800" => "eight hundred".to_owned(),
                g => numbers::digits(g),
            })
            .collect();
        format!("{}, {}", said.join(", "), words.join(" ").to_lowercase())
    })
}

/// Digit groups joined by hyphens or dots, read digit by digit: "555-123-4567".
pub(super) fn digit_groups(core: &str) -> Option<String> {
    if let Some(words) = vanity_number(core) {
        return Some(words);
    }
    let sep = if core.contains('-') { '-' } else { '.' };
    let groups: Vec<&str> = core.split(sep).collect();
    let total: usize = groups.iter().map(|g| g.len()).sum();
    let phone_pair = groups.len() == 2 && groups[0].len() == 3 && groups[1].len() == 4;
    let zero_led = groups.iter().any(|g| g.len() > 1 && g.starts_with('0'));
    let ip = sep == '.' && groups.len() == 4 && groups.iter().all(|g| g.len() <= 3);
    if groups.len() < 2
        || ip
        || !groups.iter().all(|g| all_digits(g))
        || !(phone_pair || zero_led || groups.len() >= 3 && total >= 7)
    {
        return None;
    }
    Some(group_words(&groups))
}

/// Phone groups digit by digit, but the toll-free "800" as people say it: "one, eight
/// hundred, five five five, ...".
fn group_words(groups: &[&str]) -> String {
    groups
        .iter()
        .enumerate()
        .map(|(k, g)| {
            let area_code = k == 0 || k == 1 && groups[0] == "1";
            if *g == "800" && area_code && groups.len() >= 3 {
                "eight hundred".to_owned()
            } else {
                numbers::digits(g)
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Numerator and denominator of a simple fraction "3/4".
pub(super) fn fraction_parts(core: &str) -> Option<(u64, u64)> {
    let (a, b) = core.split_once('/')?;
    if b.contains('/') {
        return None;
    }
    if !all_digits(a) || !all_digits(b) || a.starts_with('0') || b.starts_with('0') {
        return None;
    }
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// The fraction part of "1 1/2": "a half", "three quarters", "an eighth".
pub(super) fn mixed_fraction(core: &str, dialect: Dialect) -> Option<String> {
    if fraction_parts(core)? == (24, 7) {
        return None;
    }
    let words = fraction(core, dialect)?;
    Some(match words.strip_prefix("one ") {
        Some(rest) if rest.starts_with(['a', 'e', 'i', 'o', 'u']) => format!("an {rest}"),
        Some(rest) => format!("a {rest}"),
        None => words,
    })
}

/// "3/4" is "three quarters", "1/2" "one half", "5/8" "five eighths", "24/7" "twenty-four
/// seven"; big denominators read "7 over 365"; "80/20" and "2019/20" are read as two numbers;
/// ratings "4.5/5" and "10/10" are "out of".
pub(super) fn fraction(core: &str, dialect: Dialect) -> Option<String> {
    // Ratings: "4.5/5" and "10/10" are "out of".
    if let Some((a, b)) = core.split_once('/') {
        let (x, y) = (Num::parse(a)?, Num::parse(b)?.plain_int()?);
        // "50/50" is a split ("fifty-fifty"), not a rating.
        if y == 50 && x.plain_int() == Some(50) {
            return Some("fifty-fifty".to_owned());
        }
        if x.frac.is_some() || x.plain_int() == Some(y) {
            let of = numbers::cardinal(y, dialect);
            return Some(format!("{} out of {of}", x.words(dialect)));
        }
    }
    let (a, b) = fraction_parts(core)?;
    let num = numbers::cardinal(a, dialect);
    match (a, b) {
        (24, 7) => return Some("twenty-four seven".to_owned()),
        (9, 11) => return Some("nine eleven".to_owned()),
        // "2019/20" is a season, "80/20" and "50/50" are splits: not fractions.
        _ if a >= b && (1000..=2099).contains(&a) && b < 100 => {
            return Some(format!(
                "{} {}",
                numbers::year(a, dialect),
                numbers::cardinal(b, dialect)
            ));
        }
        _ if a >= b || b > 20 && a >= 10 => {
            return Some(format!("{num} {}", numbers::cardinal(b, dialect)));
        }
        _ => {}
    }
    let one = a == 1;
    let denominator = match b {
        2 if one => "half".to_owned(),
        2 => "halves".to_owned(),
        4 if one => "quarter".to_owned(),
        4 => "quarters".to_owned(),
        3..=20 if one => numbers::ordinal(b, dialect),
        3..=20 => numbers::plural(&numbers::ordinal(b, dialect)),
        _ => return Some(format!("{num} over {}", numbers::cardinal(b, dialect))),
    };
    Some(format!("{num} {denominator}"))
}

/// "(555) 123-4567" and "+44 20 7946 0958".
pub(super) fn phone_rule(ctx: &Ctx<'_>, i: usize) -> Option<Hit> {
    let tok = &ctx.toks[i];
    let next = ctx.toks.get(i + 1);
    if tok.lead.ends_with('(') && tok.trail == ")" && tok.core.len() == 3 && all_digits(tok.core) {
        let next = next.filter(|n| n.lead.is_empty())?;
        let (a, b) = next.core.split_once('-')?;
        if a.len() == 3 && b.len() == 4 && all_digits(a) && all_digits(b) {
            let mut hit = Hit::new(2, group_words(&[tok.core, a, b]));
            hit.drop_lead = true;
            return Some(hit);
        }
        return None;
    }
    if let Some(hit) = national_number(ctx, i) {
        return Some(hit);
    }
    let country = tok.core.strip_prefix('+')?;
    if !all_digits(country) || country.len() > 3 {
        return None;
    }
    let mut groups = vec![country];
    let mut j = i;
    while groups.len() < 6 {
        match ctx.next_core(j) {
            // A British mobile's second group has six digits ("+44 7700 900123").
            Some(c) if all_digits(c) && (1..=6).contains(&c.len()) => groups.push(c),
            _ => break,
        }
        j += 1;
    }
    // A one-digit area code ("+61 2 5550 1234") is a group, but a number needs six digits
    // after the country code, and has no more than twelve.
    let national: usize = groups[1..].iter().map(|g| g.len()).sum();
    if groups.len() < 3 || !(6..=12).contains(&national) {
        return None;
    }
    Some(Hit::new(
        groups.len(),
        format!("plus {}", group_words(&groups)),
    ))
}

/// "020 7946 0958", "07700 900123", "01 23 45 67 89": a number dialled at home, a trunk zero
/// and spaced groups of digits (nine to eleven in all), read digit by digit in its groups. Each
/// group was read as a number ("seven thousand nine hundred and forty-six").
fn national_number(ctx: &Ctx<'_>, i: usize) -> Option<Hit> {
    let first = ctx.toks[i].core;
    if !first.starts_with('0') || !all_digits(first) || !(2..=5).contains(&first.len()) {
        return None;
    }
    let mut groups = vec![first];
    let mut j = i;
    while groups.len() < 5 {
        match ctx.next_core(j) {
            Some(c) if all_digits(c) && (2..=6).contains(&c.len()) => groups.push(c),
            _ => break,
        }
        j += 1;
    }
    let digits: usize = groups.iter().map(|g| g.len()).sum();
    if groups.len() < 2 || !(9..=11).contains(&digits) {
        return None;
    }
    Some(Hit::new(groups.len(), group_words(&groups)))
}

/// "5 – 10", "1990 - 1995": numbers around a lone dash.
pub(super) fn spaced_range(ctx: &Ctx<'_>, i: usize) -> Option<Hit> {
    let dash = ctx.next_core(i)?;
    if dash != "-" && dash != "–" {
        return None;
    }
    let right = ctx.next_core(i + 1)?;
    // "10 - 3 = 7": a difference in a sum, not a range.
    if ctx.next_core(i + 2) == Some("=") {
        let n = |s: &str| Num::parse(s).map(|n| n.words(ctx.dialect));
        return Some(Hit::new(
            3,
            format!("{} minus {}", n(ctx.toks[i].core)?, n(right)?),
        ));
    }
    let words = range(&format!("{}-{right}", ctx.toks[i].core), ctx.dialect)?;
    let words = if ctx
        .prev_core(i)
        .is_some_and(|p| p.eq_ignore_ascii_case("between"))
    {
        words.replacen(" to ", " and ", 1)
    } else {
        words
    };
    Some(Hit::new(3, words))
}

#[cfg(test)]
mod tests {
    use super::*;
    use Dialect::EnUs;

    #[test]
    fn ranges_and_phones() {
        assert_eq!(range("5-10", EnUs).unwrap(), "five to ten");
        assert_eq!(range("555-1234", EnUs), None);
        assert_eq!(
            digit_groups("555-1234").unwrap(),
            "five five five, one two three four"
        );
        assert_eq!(
            range("2010-11", EnUs).unwrap(),
            "twenty ten to twenty eleven"
        );
        assert_eq!(range("$5-10", EnUs).unwrap(), "five to ten dollars");
        assert_eq!(fraction("5/8", EnUs).unwrap(), "five eighths");
    }
}
