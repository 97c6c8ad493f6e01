//! Number phrases that need their neighbours: "$5 million", "5 km", "9 am", "1 1/2",
//! "(555) 123-4567", "between 5-10", years by context ("in 1066"), "30s" as seconds or a decade,
//! and the singular of an amount used before a noun ("a five dollar bill").

use super::numbers::{self, all_digits};
use super::numeric::{self, glued_unit, single, Num, VULGAR};
use super::rules::{Ctx, Hit};
use super::{abbreviations, dates, money, points, ranges, units, Dialect};

/// Words that make a following four-digit number a year even outside 1800..=2099.
const YEAR_CONTEXT: &[&str] = &[
    "in", "since", "of", "by", "from", "until", "till", "year", "circa", "ca", "c", "during",
    "before", "after", "around", "summer", "winter", "spring", "autumn", "fall", "early", "late",
    "mid",
];
const ERAS: &[&str] = &["AD", "BC", "BCE", "CE"];
/// Words before a year that also come before counts ("back to 1776", "grew to 1776 staff"):
/// a year only when no noun follows the number.
const WEAK_YEAR_CONTEXT: &[&str] = &["to", "through", "thru"];
/// Words before a service number read digit by digit ("dial 999").
/// Words before a label that names a place rather than counts it ("Apt. 4B", "seat 12C").
const PLACE_WORDS: &[&str] = &[
    // A motorway's "Exit 12B".
    "exit",
    "junction",
    // A ballot's "Measure 3B", "Prop 22A", "Question 1A".
    "measure",
    "prop",
    "proposition",
    "question",
    "apt",
    "apartment",
    "rm",
    "room",
    "suite",
    "unit",
    "flat",
    "gate",
    "seat",
    "platform",
    "bay",
    "row",
    "block",
    "building",
    "bldg",
    "cabin",
    "berth",
    "terminal",
    "pier",
    "dock",
    "locker",
    "studio",
    "ward",
    "bed",
    "lot",
    "aisle",
    "stand",
    "booth",
    "hall",
    "office",
    "floor",
];
const DIAL_WORDS: &[&str] = &[
    "dial", "dialed", "dialled", "dialing", "call", "called", "calling",
];
/// Whether `word` before a number makes it a code, read digit by digit ("zip", "PIN").
fn is_code_word(word: &str) -> bool {
    ["zip", "zipcode", "code", "pin", "passcode"]
        .iter()
        .any(|w| word.eq_ignore_ascii_case(w))
}
/// Words before "30s" that make it a decade or an age rather than seconds.
const DECADE_CONTEXT: &[&str] = &[
    "the", "early", "late", "mid", "their", "his", "her", "my", "your", "our", "its", "and", "or",
    "to", "through",
];

/// Context-dependent number patterns, then [`single`].
pub(super) fn rule(ctx: &Ctx<'_>, i: usize) -> Option<Hit> {
    if let Some(hit) = compass_point(ctx, i) {
        return Some(hit);
    }
    if attributive(ctx, i, 1) {
        if let Some(words) = dates::compact_duration(ctx.toks[i].core, ctx.dialect) {
            return Some(Hit::new(1, words));
        }
    }
    let mut hit = phrase(ctx, i)?;
    if attributive(ctx, i, hit.span) || priced_noun(ctx, i, hit.span) {
        hit.text = singular_ending(&hit.text, ctx.dialect);
    }
    Some(hit)
}

/// "the $95B valuation", "their $2 million fund": a price between a determiner and its noun is
/// an adjective too ("the ninety-five billion dollar valuation"), unless a verb or a function
/// word follows ("the $5 was gone", "the $5 I owe").
fn priced_noun(ctx: &Ctx<'_>, i: usize, span: usize) -> bool {
    const DETERMINERS: [&str; 10] = [
        "the", "this", "that", "its", "their", "his", "her", "our", "my", "your",
    ];
    const NOT_NOUNS: [&str; 34] = [
        "is", "was", "are", "were", "be", "been", "has", "had", "have", "will", "would", "could",
        "should", "can", "may", "might", "must", "did", "does", "and", "or", "but", "to", "of",
        "in", "on", "at", "for", "from", "with", "that", "which", "we", "you",
    ];
    if money::prefix(ctx.toks[i].core).is_none() {
        return false;
    }
    // A possessive determines its noun too: "the EU's €750bn fund".
    let determiner = ctx.prev_core(i).is_some_and(|p| {
        DETERMINERS.contains(&p.to_lowercase().as_str()) || p.ends_with("'s") || p.ends_with("’s")
    });
    let last = &ctx.toks[i + span - 1];
    determiner
        && last.trail.is_empty()
        && ctx.next_core(i + span - 1).is_some_and(|w| {
            w.starts_with(char::is_lowercase)
                && w.chars().all(char::is_alphabetic)
                && !NOT_NOUNS.contains(&w)
                && !w.ends_with("ly")
                && !w.ends_with("ed")
        })
}

/// "a $5 bill", "a 6ft wall": an amount before a noun takes the singular ("a five dollar bill").
/// After "a" the amount can only describe what follows, a name or an acronym too ("a $12M
/// Series A", "a 512GB SSD"); not the pronoun ("a 5 km I ran").
pub(super) fn attributive(ctx: &Ctx<'_>, i: usize, span: usize) -> bool {
    let last = i + span - 1;
    let article = ctx
        .prev_core(i)
        .is_some_and(|p| p.eq_ignore_ascii_case("a") || p.eq_ignore_ascii_case("an"));
    article
        && ctx.toks[last].trail.is_empty()
        && ctx
            .next_core(last)
            .is_some_and(|w| w.starts_with(char::is_alphabetic) && w != "I")
}

/// The words with a final plural unit or currency made singular.
fn singular_ending(words: &str, dialect: Dialect) -> String {
    for (many, one) in units::names(dialect).into_iter().chain(money::names()) {
        if let Some(stem) = words.strip_suffix(&many) {
            if stem.ends_with(' ') {
                return format!("{stem}{one}");
            }
        }
    }
    words.to_owned()
}

/// Number patterns that span several tokens or need their neighbours, then [`single`].
fn phrase(ctx: &Ctx<'_>, i: usize) -> Option<Hit> {
    let d = ctx.dialect;
    let core = ctx.toks[i].core;
    let has_number = core.contains(|c: char| c.is_ascii_digit() || VULGAR.iter().any(|v| v.0 == c));
    // "report_2024.pdf" is a file's name, read by `abbreviations`.
    if !has_number || core.starts_with(['#', '@']) || abbreviations::is_file_name(core) {
        return None;
    }
    if let Some(hit) = ranges::phone_rule(ctx, i) {
        return Some(hit);
    }
    if let Some(words) = hex_number(core) {
        return Some(Hit::new(1, words));
    }
    if let Some(words) = verses(ctx, i) {
        return Some(Hit::new(1, words));
    }
    // "No.1", "No.10": the number sign glued to its number.
    if let Some(n) = core
        .strip_prefix("No.")
        .filter(|n| (1..=4).contains(&n.len()) && all_digits(n))
    {
        let n: u64 = n.parse().ok()?;
        return Some(Hit::new(1, format!("number {}", numbers::cardinal(n, d))));
    }
    // "1600 Pennsylvania Ave", "221 Baker Street": a house number is said in pairs.
    if (3..=4).contains(&core.len())
        && all_digits(core)
        && !core.starts_with('0')
        && before_street_name(ctx, i)
    {
        return Some(Hit::new(1, numeric::model_number(core, d)));
    }
    if let Some(words) = weather_degrees(ctx, i) {
        return Some(Hit::new(1, words));
    }
    if let Some(words) = model_variant(ctx, i) {
        return Some(Hit::new(1, words));
    }
    if let Some(hit) = marked_length(ctx, i) {
        return Some(hit);
    }
    if let Some(hit) = lettered_duration(ctx, i) {
        return Some(hit);
    }
    if let Some(words) = short_year(ctx, i).or_else(|| bare_military_time(ctx, i)) {
        return Some(Hit::new(1, words));
    }
    let next = ctx.next_core(i);
    if let Some(hit) = next.and_then(|unit| fraction_of_unit(core, unit, d)) {
        return Some(hit);
    }
    if let Some(words) = season_episode(core, d) {
        return Some(Hit::new(1, words));
    }
    // Bond's number; "code 007" stays a code.
    if core == "007" && !ctx.prev_core(i).is_some_and(is_code_word) {
        return Some(Hit::new(1, "double oh seven".to_owned()));
    }
    let num = Num::parse(core);
    // "$5 million", "$3 bn"
    if let (Some((currency, rest)), Some(word)) = (money::prefix(core), next) {
        if let Some(scale) = money::scale(word).filter(|_| word.len() >= 2) {
            // "₹1.5 lakh crore": a lakh of crores, both scales before the currency.
            if scale == "lakh" && ctx.next_core(i + 1) == Some("crore") {
                if let Some(words) = money::amount(currency, rest, Some("lakh crore"), d) {
                    return Some(Hit::new(3, words));
                }
            }
            if let Some(words) = money::amount(currency, rest, Some(scale), d) {
                return Some(Hit::new(2, words));
            }
            // "$5-10 million", "$5–$10 billion": a range of the scaled amount.
            if let Some((a, b)) = rest.split_once(['-', '–']) {
                let b = money::prefix(b).map_or(b, |(_, b)| b);
                let a = Num::parse(a).filter(|a| !a.negative);
                let b = money::amount(currency, b, Some(scale), d);
                if let (Some(a), Some(b)) = (a, b) {
                    return Some(Hit::new(2, format!("{} to {b}", a.words(d))));
                }
            }
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
    // "~5 km", "±3 m": how exact the number is, said before it.
    let (approx, bare) = match numeric::approximate(core) {
        Some((word, rest)) => (format!("{word} "), rest),
        None => (String::new(), core),
    };
    // "90+ mph", "100+ km": at least the number, in the unit after it.
    if let (Some(n), Some(word)) = (core.strip_suffix('+').and_then(Num::parse), next) {
        if let Some(unit) = units::phrase(word, true, true, d) {
            let mut hit = Hit::new(2, format!("{}-plus {unit}", n.words(d)));
            hit.eat_period = true;
            return Some(hit);
        }
    }
    if let Some(hit) = points::rule(ctx, i, &approx, bare) {
        return Some(hit);
    }
    // "3e8 m/s": a number in scientific notation measures too.
    if let (Some(said), Some(word)) = (numeric::e_notation(bare, d), next) {
        if let Some(unit) = units::phrase(word, true, true, d) {
            return Some(Hit::new(2, format!("{approx}{said} {unit}")));
        }
    }
    if let (Some(n), Some(word)) = (Num::parse(bare), next) {
        // "100 USD", "5 km", "50 %", "9 am", "1 1/2"
        if let Some(currency) = money::code(word) {
            if let Some(words) = money::amount(currency, bare, None, d) {
                let words = words.replacen("dollars", "U-S dollars", 1);
                return Some(Hit::new(2, format!("{approx}{words}")));
            }
        }
        // "100 €", "2.50 €": the sign after the amount, as much of Europe writes it.
        if let Some(currency) = money::sign(word) {
            if let Some(words) = money::amount(currency, bare, None, d) {
                return Some(Hit::new(2, format!("{approx}{words}")));
            }
        }
        // "1.5 million km", "20 billion kWh": a scaled amount measures in the unit after it.
        if matches!(word, "thousand" | "million" | "billion" | "trillion") {
            if let Some(unit) = ctx
                .next_core(i + 1)
                .and_then(|u| units::lookup(u, true))
                .filter(|u| !matches!(u.symbol, "x" | "×" | "pts" | "pp"))
            {
                let unit = units::words(unit, true, d);
                let mut hit = Hit::new(3, format!("{approx}{} {word} {unit}", n.words(d)));
                hit.eat_period = true;
                return Some(hit);
            }
        }
        // "1,100 sq ft", "50 sq. m": an area in two words.
        if word.eq_ignore_ascii_case("sq") {
            let area = ctx
                .next_core_after_period(i + 1)
                .and_then(|u| units::lookup(u, true).filter(|u| u.one.len() > 2))
                .filter(|u| matches!(u.symbol, "ft" | "m" | "km" | "mi" | "yd" | "cm"));
            if let Some(unit) = area {
                let unit = units::words(unit, !n.is_one(), d);
                let mut hit = Hit::new(3, format!("{approx}{} square {unit}", n.words(d)));
                hit.eat_period = true;
                return Some(hit);
            }
        }
        // "6 ft. 2 in.": after feet, "in." is inches (alone, "2 in the box" is not).
        // "5 ft 4 in," ends a phrase there; "4 in the box" does not.
        let ends_phrase =
            |t: &super::tokens::Token<'_>| !t.trail.is_empty() || i + 2 == ctx.toks.len();
        let inches = word == "in"
            && ends_phrase(&ctx.toks[i + 1])
            && ctx
                .prev_core_after_period(i)
                .is_some_and(|p| matches!(p, "ft" | "feet" | "foot"));
        if let Some(unit) = units::phrase(word, false, !n.is_one(), d).filter(|_| inches) {
            let mut hit = Hit::new(2, format!("{approx}{} {unit}", n.words(d)));
            hit.eat_period = true;
            return Some(hit);
        }
        // A clock time says when ("at 1430 hours"); a leading zero always does ("0300 hrs").
        let when = bare.starts_with('0')
            || ctx.prev_core(i).is_some_and(|p| {
                matches!(
                    p.to_lowercase().as_str(),
                    "at" | "by" | "until" | "till" | "from" | "before" | "after" | "since" | "to"
                )
            });
        if let Some(said) = military_time(bare, word, d).filter(|_| when) {
            return Some(Hit::new(2, said));
        }
        if let Some(unit) = units::phrase(word, true, !n.is_one(), d) {
            let words = format!("{approx}{} {unit}", n.words(d));
            // "2 tbsp. sugar": the symbol's full stop is an abbreviation's, not a pause.
            let mut hit = Hit::new(2, words);
            hit.eat_period = true;
            return Some(hit);
        }
        if word == "%" {
            let words = format!("{approx}{} {}", n.words(d), money::percent_word(d));
            return Some(Hit::new(2, words));
        }
        // "1 1/2", "2 ½ cups": a whole number and a fraction, and the unit they measure.
        let frac = ranges::mixed_fraction(word, d).or_else(|| lone_vulgar(word));
        if let (Some(whole), Some(frac)) = (n.plain_int(), frac) {
            let mut hit = Hit::new(
                2,
                format!("{approx}{} and {frac}", numbers::cardinal(whole, d)),
            );
            if let Some(unit) = ctx
                .next_core(i + 1)
                .and_then(|u| units::phrase(u, true, true, d))
            {
                hit = Hit::new(3, format!("{} {unit}", hit.text));
                hit.eat_period = true;
            }
            return Some(hit);
        }
    }
    // "3×4 = 12": a product in a sum, not dimensions.
    if next == Some("=") {
        if let Some(words) = numeric::dimensions(core, d) {
            return Some(Hit::new(1, words.replace(" by ", " times ")));
        }
    }
    if let Some(hit) = ranges::spaced_range(ctx, i) {
        return Some(hit);
    }
    // "9-11 am", "9:30–11 p.m.": the meridiem after a range of hours holds for both ends
    // (not the verb: "3-2 am I right?").
    let meridiem_next = next.filter(|w| {
        dates::meridiem(w).is_some() && !(*w == "am" && ctx.next_core(i + 1) == Some("I"))
    });
    if let Some(times) = meridiem_next.and_then(|w| {
        core.contains(['-', '–'])
            .then(|| ranges::range(&format!("{core}{w}"), d))
            .flatten()
    }) {
        let mut hit = Hit::new(2, times);
        hit.eat_period = true; // "9-11 a.m. and": the abbreviation's stop
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
        // "2-4\" of rain", "6-8 in. of snow": inches, marked or abbreviated (no quotation is
        // open, and a word follows).
        let quoted = ctx.toks[..=i].iter().any(|t| t.lead.contains(['"', '“']));
        let word_after = ctx
            .toks
            .get(i + 1)
            .is_some_and(|t| t.core.starts_with(char::is_lowercase));
        if ctx.toks[i].trail == "\"" && !quoted && word_after {
            let mut hit = Hit::new(
                1,
                format!("{words} {}", units::phrase("in", false, true, d)?),
            );
            hit.eat_mark = Some('"');
            return Some(hit);
        }
        if next == Some("in") && ctx.toks[i + 1].trail.starts_with('.') && ctx.toks.len() > i + 2 {
            let mut hit = Hit::new(
                2,
                format!("{words} {}", units::phrase("in", false, true, d)?),
            );
            hit.eat_period = true;
            return Some(hit);
        }
        // A unit after a range applies to both ends: "5-10 km" (and "3–4 hrs. of" keeps no
        // stop: the symbol's, not the sentence's).
        if let Some(unit) = next.and_then(|w| units::lookup(w, true)) {
            let mut hit = Hit::new(2, format!("{words} {}", units::words(unit, true, d)));
            hit.eat_period = true;
            return Some(hit);
        }
        return Some(Hit::new(1, words));
    }
    // "a 10-min. walk", "5km. away": a unit's abbreviation stop inside a sentence is not a
    // sentence's end.
    let next_is_lower = || {
        ctx.toks
            .get(i + 1)
            .is_some_and(|t| t.lead.is_empty() && t.core.starts_with(char::is_lowercase))
    };
    if ctx.toks[i].trail.starts_with('.') && next_is_lower() {
        if let Some(words) = glued_unit(core, d) {
            let mut hit = Hit::new(1, words);
            hit.eat_period = true;
            return Some(hit);
        }
    }
    if let Some(hit) = lower_case_millions(ctx, i) {
        return Some(hit);
    }
    if let Some(words) = magnitude(ctx, i) {
        return Some(Hit::new(1, words));
    }
    // "250K subscribers", "10k steps": a K before a counted noun is thousands ("5K" alone is a
    // race, "4K" and "8K" resolutions).
    // "15T tokens" likewise trillions ("3T" alone is a magnet's tesla); "10K+ listeners" is
    // at least that many.
    let (counted_core, plus) = match core.strip_suffix('+') {
        Some(rest) => (rest, " plus"),
        None => (core, ""),
    };
    let (scaled, scale) = match counted_core.strip_suffix('T') {
        Some(n) => (Some(n), "trillion"),
        None => (counted_core.strip_suffix(['k', 'K']), "thousand"),
    };
    let resolution = |n: &str| scale == "thousand" && matches!(n, "4" | "8");
    if let Some(n) = scaled.filter(|n| all_digits(n) && !n.starts_with('0') && !resolution(n)) {
        // A rate counts too ("5k req/s", "10k tokens/s"), and so do the plurals without an s.
        let counted = next.map(|w| w.split_once('/').map_or(w, |(count, _)| count));
        let counted = counted.is_some_and(|w| {
            let plural = w.len() > 2 && w.ends_with('s')
                || matches!(w, "people" | "children" | "men" | "women" | "staff");
            plural && w.chars().all(|c| c.is_ascii_lowercase())
                || next.is_some_and(|n| n.contains('/'))
                    && (2..=5).contains(&w.len())
                    && w.chars().all(|c| c.is_ascii_lowercase())
        });
        if counted {
            return Some(Hit::new(
                1,
                format!("{} {scale}{plus}", numbers::integer(n, d)),
            ));
        }
    }
    // "401(k)", "403(b)", "501(c)(3)", "Rule 12(b)(6)": a section and its subsections, each
    // letter said as a letter and each number as a number.
    if let Some(words) = subsections(core, d).filter(|_| ctx.toks[i].trail.starts_with(')')) {
        let mut hit = Hit::new(1, words);
        hit.eat_mark = Some(')');
        return Some(hit);
    }
    if let Some(words) = num.as_ref().and_then(|n| named_number(ctx, i, n)) {
        return Some(Hit::new(1, words));
    }
    // Numbers whose reading the word before or after says.
    if let Some(hit) = blood_pressure(ctx, i) {
        return Some(hit);
    }
    let named = release_number(ctx, i)
        .or_else(|| short_code(ctx, i))
        .or_else(|| time_signature(ctx, i));
    if let Some(words) = named {
        return Some(Hit::new(1, words));
    }
    if let Some(year) = num.as_ref().and_then(|n| year_reading(ctx, i, n)) {
        return Some(Hit::new(1, year));
    }
    if let Some(words) = place_label(ctx, i)
        .or_else(|| place_number(ctx, i))
        .or_else(|| short_dial(ctx, i))
    {
        return Some(Hit::new(1, words));
    }
    if let Some(words) = dated(ctx, i) {
        return Some(Hit::new(1, words));
    }
    if let Some(words) = rating(ctx, i) {
        return Some(Hit::new(1, words));
    }
    single(core, d).map(|w| Hit::new(1, w))
}

/// "0300 hrs", "1430 hours": the military clock, "oh three hundred hours", "fourteen thirty
/// hours" (it was read digit by digit, or as a count of hours).
fn military_time(digits: &str, word: &str, d: Dialect) -> Option<String> {
    if !is_hours_word(word) {
        return None;
    }
    Some(format!("{} hours", military_clock(digits, d)?))
}

fn is_hours_word(word: &str) -> bool {
    matches!(word.to_lowercase().as_str(), "hrs" | "hours" | "hr")
}

/// "departs at 0730", "from 0800 to 1700", "at 1430 sharp": a four-digit clock after a word of
/// time, without "hours" after it (they were "zero seven three zero", "one thousand four
/// hundred thirty"). With a leading zero the number can be nothing else; without one it must
/// follow "at" and end the phrase, so "at 1200 feet" stays a number and "since 1945" a year.
fn bare_military_time(ctx: &Ctx<'_>, i: usize) -> Option<String> {
    let core = ctx.toks[i].core;
    let clock = military_clock(core, ctx.dialect)?;
    let when = |k: usize| {
        ctx.prev_core(k).is_some_and(|p| {
            matches!(
                p.to_lowercase().as_str(),
                "at" | "by" | "until" | "till" | "from" | "before" | "after" | "since"
            )
        })
    };
    // "from 0800 to 1700": the second end of a span of clock times.
    let span_end = ctx
        .prev_core(i)
        .is_some_and(|p| matches!(p, "to" | "until"))
        && i >= 2
        && military_clock(ctx.toks[i - 2].core, ctx.dialect).is_some()
        && when(i - 2);
    let hours_follow = ctx.next_core(i).is_some_and(is_hours_word);
    if !(when(i) || span_end) || hours_follow {
        return None;
    }
    let ends = ctx.next_core(i).is_none_or(|w| {
        matches!(
            w.to_lowercase().as_str(),
            "local" | "utc" | "gmt" | "zulu" | "sharp" | "today" | "tomorrow" | "tonight" | "to"
        )
    });
    // Without a leading zero only "at" makes it a clock: "from 2007", "since 1945" are years.
    let at = ctx
        .prev_core(i)
        .is_some_and(|p| p.eq_ignore_ascii_case("at"));
    (core.starts_with('0') || span_end || ends && at).then_some(clock)
}

/// A four-digit 24-hour clock time in words: "0300" is "oh three hundred", "1430" "fourteen
/// thirty", "0000" "zero hundred".
fn military_clock(digits: &str, d: Dialect) -> Option<String> {
    if digits.len() != 4 || !all_digits(digits) {
        return None;
    }
    let (h, m): (u64, u64) = (digits[..2].parse().ok()?, digits[2..].parse().ok()?);
    if h > 23 || m > 59 {
        return None;
    }
    let hour = match h {
        0 => "zero".to_owned(),
        h if digits.starts_with('0') => format!("oh {}", numbers::cardinal(h, d)),
        h => numbers::cardinal(h, d),
    };
    let minutes = match m {
        0 => "hundred".to_owned(),
        m if m < 10 => format!("oh {}", numbers::cardinal(m, d)),
        m => numbers::cardinal(m, d),
    };
    Some(format!("{hour} {minutes}"))
}

/// "text STOP to 55555": a short code is texted digit by digit, not "fifty-five thousand".
fn short_code(ctx: &Ctx<'_>, i: usize) -> Option<String> {
    const TEXT_WORDS: [&str; 5] = ["text", "texting", "txt", "sms", "message"];
    let core = ctx.toks[i].core;
    let code = (5..=6).contains(&core.len()) && all_digits(core);
    let after_to = ctx
        .prev_core(i)
        .is_some_and(|p| p.eq_ignore_ascii_case("to"));
    let texted = ctx.word_before(i, 2..=5, &TEXT_WORDS);
    (code && after_to && texted).then(|| numbers::digits(core))
}

/// "8/10", "4/5 stars", "95/100": a score out of five, ten or a hundred, unless "of" follows
/// ("3/5 of the vote" is a fraction); out of anything after a word for a score ("scored
/// 17/20", "a score of 12/20", where "twelve twentieths" was read). Dates ("on 8/10") were
/// claimed before.
fn rating(ctx: &Ctx<'_>, i: usize) -> Option<String> {
    const SCORE_WORDS: [&str; 10] = [
        "score", "scored", "scores", "scoring", "rated", "rating", "graded", "grade", "marks",
        "got",
    ];
    let (a, b) = ctx.toks[i].core.split_once('/')?;
    let (x, y) = (Num::parse(a)?.plain_int()?, Num::parse(b)?.plain_int()?);
    let of_follows = ctx
        .next_core(i)
        .is_some_and(|w| w.eq_ignore_ascii_case("of"));
    let scored = ctx.word_before(i, 1..=3, &SCORE_WORDS);
    let out_of = matches!(y, 5 | 10 | 100) || scored && (2..=1000).contains(&y);
    if !out_of || x > y || of_follows || b.starts_with('0') {
        return None;
    }
    let d = ctx.dialect;
    Some(format!(
        "{} out of {}",
        numbers::cardinal(x, d),
        numbers::cardinal(y, d)
    ))
}

/// Lengths written with foot and inch marks: `5'7"` and `5' 7"` are "five foot seven", `6'`
/// "six feet", `12"` "twelve inches" (singular before a noun after "a": "a twelve inch
/// pizza"). The marks sit in the tokens' trailing punctuation, where they were left unread
/// ("five foot seven\""), so the pattern eats them. A mark that closes a quotation opened
/// earlier in the sentence is a quote, not a length.
fn marked_length(ctx: &Ctx<'_>, i: usize) -> Option<Hit> {
    let tok = &ctx.toks[i];
    let d = ctx.dialect;
    let inch_mark = |t: &super::tokens::Token<'_>| t.trail.starts_with('"');
    // Whether a quotation with these marks is open before token `i`: opened in a token's
    // leading punctuation, closed in a trailing one (not a length's own mark after a digit).
    let quote_open = |straight: char, opener: char, closer: char| {
        let mut open = tok.lead.matches([straight, opener]).count();
        let mut closed = 0;
        for t in &ctx.toks[..i] {
            open += t.lead.matches([straight, opener]).count();
            if !t.core.ends_with(|c: char| c.is_ascii_digit()) {
                closed += t.trail.matches([straight, closer]).count();
            }
        }
        open > closed
    };
    let eaten = |mut hit: Hit, mark: char| {
        hit.eat_mark = Some(mark);
        Some(hit)
    };
    // `5'7"`: the feet and inches in one core, the inch mark after it.
    if tok.core.contains('\'') && inch_mark(tok) && !quote_open('"', '“', '”') {
        let words = numeric::feet_inches(tok.core, d).filter(|w| w.contains(" foot "))?;
        return eaten(Hit::new(1, words), '"');
    }
    // `6.9"`: a screen's diagonal has a decimal.
    let (whole, frac) = tok.core.split_once('.').unwrap_or((tok.core, ""));
    let decimal = !frac.is_empty() && all_digits(frac) && !tok.trail.starts_with('\'');
    if !all_digits(whole) || whole.starts_with('0') && whole != "0" || !decimal && !frac.is_empty()
    {
        return None;
    }
    let n: u64 = whole.parse().ok()?;
    let said = if decimal {
        Num::parse(tok.core)?.words(d)
    } else {
        numbers::cardinal(n, d)
    };
    let singular = ctx
        .prev_core(i)
        .is_some_and(|p| p.eq_ignore_ascii_case("a") || p.eq_ignore_ascii_case("an"));
    let length = |symbol: &str| {
        let unit = units::phrase(symbol, false, (n != 1 || decimal) && !singular, d)?;
        Some(format!("{said} {unit}"))
    };
    if tok.trail.starts_with('\'') && !quote_open('\'', '‘', '’') {
        // `5' 7"`: feet, then inches below twelve.
        if let Some(next) = ctx.toks.get(i + 1).filter(|t| t.lead.is_empty()) {
            let inches = all_digits(next.core)
                .then(|| next.core.parse::<u64>().ok())
                .flatten()
                .filter(|&v| v < 12);
            if let Some(inches) = inches.filter(|_| inch_mark(next)) {
                let words = format!(
                    "{} foot {}",
                    numbers::cardinal(n, d),
                    numbers::cardinal(inches, d)
                );
                return eaten(Hit::new(2, words), '"');
            }
        }
        // `6'` only before more words ("a 6' fence", "6' tall"): at the end it may close a
        // quotation whose opening mark the sentence split left elsewhere.
        ctx.toks.get(i + 1)?;
        return eaten(Hit::new(1, length("ft")?), '\'');
    }
    if inch_mark(tok) && !quote_open('"', '“', '”') {
        return eaten(Hit::new(1, length("in")?), '"');
    }
    None
}

/// "1h 45m", "2m 30s", "1h45m": up to three tokens of a length in unit letters
/// ([`dates::lettered_duration`]), the longest that reads as one.
fn lettered_duration(ctx: &Ctx<'_>, i: usize) -> Option<Hit> {
    let mut parts = vec![ctx.toks[i].core];
    while parts.len() < 3 {
        match ctx.next_core(i + parts.len() - 1) {
            Some(next) if next.starts_with(|c: char| c.is_ascii_digit()) => parts.push(next),
            _ => break,
        }
    }
    (1..=parts.len()).rev().find_map(|span| {
        dates::lettered_duration(&parts[..span], ctx.dialect).map(|words| Hit::new(span, words))
    })
}

/// "'08", "'98": a year with its century left out, after an apostrophe ("oh eight",
/// "ninety-eight"); not a number quoted in single quotes ("'08'").
fn short_year(ctx: &Ctx<'_>, i: usize) -> Option<String> {
    let tok = &ctx.toks[i];
    // The tokenizer keeps an apostrophe before digits in the word ("'90s").
    let digits = tok.core.strip_prefix('\'')?;
    if tok.trail.starts_with('\'') {
        return None;
    }
    numbers::two_digit_year(digits, ctx.dialect)
}

/// Words before "2/14" that make it a date ("on 2/14", "due 11/30").
const DATE_WORDS: &[&str] = &["on", "due", "dated", "starting", "ending"];
/// Words before "11/30" that take a date or a fraction ("by 11/30", "cut by 1/3"): a date
/// unless it reads as a proper fraction with a denominator up to twelve.
/// An offer, a season or opening hours take dates too ("ends 12/31", "opens 6/1").
const DATE_OR_FRACTION_WORDS: &[&str] = &[
    "from",
    "to",
    "between",
    "by",
    "before",
    "after",
    "until",
    "till",
    "since",
    "through",
    "thru",
    "ends",
    "expires",
    "opens",
    "open",
    "closes",
    "starts",
    "begins",
    "launches",
    "drops",
    "releases",
    "airs",
    "premieres",
    "debuts",
    "ships",
    "arrives",
    "returns",
    "out",
];

/// "on 2/14": a month and day after a word that takes a date.
fn dated(ctx: &Ctx<'_>, i: usize) -> Option<String> {
    let prev = ctx.prev_core(i)?.to_lowercase();
    let core = ctx.toks[i].core;
    if core == "24/7" {
        return None; // "open 24/7" is around the clock
    }
    let fraction_like = || {
        let (a, b) = core.split_once('/')?;
        let (a, b): (u64, u64) = (a.parse().ok()?, b.parse().ok()?);
        Some(a < b && b <= 12)
    };
    let date = DATE_WORDS.contains(&prev.as_str())
        || DATE_OR_FRACTION_WORDS.contains(&prev.as_str()) && fraction_like() == Some(false);
    if !date {
        return None;
    }
    dates::month_day(core, ctx.dialect)
}

/// "0x71C7…", a hex number (a wallet, a memory address, a colour): said character by
/// character, as anyone reads one out ("zero x seven one C seven"), not as numbers and words.
fn hex_number(core: &str) -> Option<String> {
    let digits = core
        .strip_prefix("0x")
        .or_else(|| core.strip_prefix("0X"))?;
    if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    Some(format!("zero x {}", numbers::characters(digits)))
}

/// "Psalm 23:1-4", "John 3:16-18": a chapter and a span of verses after a book's name, "twenty-
/// three, one to four" (it was "twenty-three-one-four").
fn verses(ctx: &Ctx<'_>, i: usize) -> Option<String> {
    let (chapter, span) = ctx.toks[i].core.split_once(':')?;
    let (first, last) = span.split_once(['-', '–'])?;
    let n =
        |s: &str| (all_digits(s) && (1..=3).contains(&s.len())).then(|| s.parse::<u64>().ok())?;
    let (chapter, first, last) = (n(chapter)?, n(first)?, n(last)?);
    let book = ctx
        .prev_core(i)
        .is_some_and(|p| p.starts_with(char::is_uppercase) && p.chars().all(char::is_alphabetic));
    if !book || first >= last || chapter == 0 {
        return None;
    }
    let d = ctx.dialect;
    Some(format!(
        "{}, {} to {}",
        numbers::cardinal(chapter, d),
        numbers::cardinal(first, d),
        numbers::cardinal(last, d)
    ))
}

/// Words that make a glued lower-case "m" millions, not metres, when they follow it ("7.6m
/// people") or come before it in the sentence ("the waiting list is 7.6m"), as British news
/// writes millions.
const COUNTED: &[&str] = &[
    "people",
    "users",
    "viewers",
    "listeners",
    "subscribers",
    "downloads",
    "views",
    "votes",
    "voters",
    "jobs",
    "homes",
    "households",
    "patients",
    "cases",
    "customers",
    "members",
    "followers",
    "streams",
    "copies",
    "units",
    "list",
    "population",
    "residents",
    "visitors",
    "passengers",
    "fans",
    "children",
    "adults",
    "workers",
    "staff",
    "deaths",
    "sales",
];
/// Words after a glued "m" that keep it metres ("1.8m tall", "the 100m final").
const LENGTH_WORDS: &[&str] = &[
    "tall",
    "wide",
    "long",
    "high",
    "deep",
    "away",
    "across",
    "above",
    "below",
    "up",
    "down",
    "race",
    "sprint",
    "hurdles",
    "freestyle",
    "relay",
    "dash",
    "final",
    "run",
    "swim",
    "of",
    "from",
    "under",
    "over",
    "in",
    "squared",
];

/// "7.6m people", "a waiting list of 7.6m": a decimal with a glued lower-case "m" counting
/// something is millions; measuring something ("1.8m tall", "a 2.5m wall") it stays metres.
fn lower_case_millions(ctx: &Ctx<'_>, i: usize) -> Option<Hit> {
    let core = ctx.toks[i].core;
    let num = core.strip_suffix('m')?;
    let (whole, frac) = num.split_once('.')?;
    if whole.is_empty() || !all_digits(whole) || frac.is_empty() || !all_digits(frac) {
        return None;
    }
    let counted = |w: &str| COUNTED.contains(&w.to_lowercase().as_str());
    let next = ctx.next_core(i);
    let millions = match next {
        Some(w) if LENGTH_WORDS.contains(&w) => false,
        Some(w) if counted(w) => true,
        _ => ctx.toks[..i].iter().any(|t| counted(t.core)),
    };
    let n = Num::parse(num)?;
    millions.then(|| Hit::new(1, format!("{} million", n.words(ctx.dialect))))
}

/// "call 911", "text 988", "dial 999 now": a short number to ring is said digit by digit ("nine
/// eight eight"), unless it counts what follows ("call 200 customers").
fn short_dial(ctx: &Ctx<'_>, i: usize) -> Option<String> {
    let core = ctx.toks[i].core;
    if !(3..=4).contains(&core.len()) || !all_digits(core) {
        return None;
    }
    let prev = ctx.prev_core(i)?.to_lowercase();
    if !matches!(prev.as_str(), "call" | "dial" | "text" | "ring" | "phone") {
        return None;
    }
    let counts = ctx.toks[i].trail.is_empty()
        && ctx.next_core(i).is_some_and(|w| {
            w.starts_with(char::is_lowercase)
                && !matches!(
                    w,
                    "or" | "and" | "now" | "for" | "if" | "to" | "right" | "anytime"
                )
        });
    (!counts).then(|| numbers::digits(core))
}

/// "Room 101", "Suite 1204", "Form 1040": a number that names a room or a form is said in
/// pairs, as on a door ("one oh one", "twelve oh four", "ten forty"), not counted ("one
/// hundred one").
fn place_number(ctx: &Ctx<'_>, i: usize) -> Option<String> {
    const NAMING_WORDS: [&str; 17] = [
        // "HTTP 429", "error 503": a status code is said as developers say it.
        "http",
        "status",
        "error",
        "highway",
        "hwy",
        "route",
        "rte",
        "room",
        "rm",
        "suite",
        "apt",
        "apartment",
        "unit",
        "flat",
        "cabin",
        "ward",
        "form",
    ];
    let core = ctx.toks[i].core;
    if !(3..=4).contains(&core.len()) || !all_digits(core) || core.starts_with('0') {
        return None;
    }
    let prev = ctx.prev_core_after_period(i)?.to_lowercase();
    NAMING_WORDS
        .contains(&prev.as_str())
        .then(|| numeric::model_number(core, ctx.dialect))
}

/// A label after a word for a place ("Apt. 4B", "gate 12C", "seat 3A"): its number, then its
/// letters as letters. Elsewhere "4B" is four billion, which a flat or a seat never is.
fn place_label(ctx: &Ctx<'_>, i: usize) -> Option<String> {
    let core = ctx.toks[i].core;
    let split = core.find(|c: char| !c.is_ascii_digit())?;
    let (digits, letters) = core.split_at(split);
    let label = (1..=4).contains(&digits.len())
        && (1..=2).contains(&letters.len())
        && letters.bytes().all(|b| b.is_ascii_alphabetic());
    if !label {
        return None;
    }
    // "Apt. 4B": an abbreviation's full stop is no pause here.
    let after_place_word = ctx
        .prev_core_after_period(i)
        .is_some_and(|p| PLACE_WORDS.contains(&p.to_lowercase().as_str()));
    if !after_place_word && !before_street_name(ctx, i) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    Some(format!(
        "{} {}",
        numbers::cardinal(n, ctx.dialect),
        abbreviations::spell(&letters.to_uppercase())
    ))
}

/// Words for a street after its name ("Baker St.", "Elm Street", "Sunset Blvd").
const STREETS: &[&str] = &[
    "St",
    "Street",
    "Ave",
    "Avenue",
    "Rd",
    "Road",
    "Ln",
    "Lane",
    "Blvd",
    "Boulevard",
    "Dr",
    "Drive",
    "Way",
    "Pl",
    "Place",
    "Ct",
    "Court",
    "Terrace",
    "Close",
    "Crescent",
    "Square",
    "Hwy",
    "Highway",
    "Pkwy",
    "Parkway",
];

/// Whether a street's name follows token `i` ("221B Baker St.", "12A Rue de Rivoli" does not
/// count): one to three capitalised words or ordinals, then a word for a street.
fn before_street_name(ctx: &Ctx<'_>, i: usize) -> bool {
    street_follows(ctx, i, |w| street_name_word(w, ctx.dialect))
}

/// A word of a street's name: capitalised, or an ordinal ("W 42nd St").
fn street_name_word(w: &str, d: Dialect) -> bool {
    w.starts_with(char::is_uppercase)
        || w.starts_with(|c: char| c.is_ascii_digit()) && numeric::ordinal(w, d).is_some()
}

/// Whether one to three words that `name` accepts follow token `i`, then a word for a street.
fn street_follows(ctx: &Ctx<'_>, i: usize, name: impl Fn(&str) -> bool) -> bool {
    let words = ctx.toks.iter().skip(i + 1).take(4).map(|t| t.core);
    for (names, w) in words.enumerate() {
        if names > 0 && STREETS.contains(&w) {
            return true;
        }
        if !name(w) {
            return false;
        }
    }
    false
}

/// "4127 W. Elm St.", "1500 NW 12th Ave", "1600 Pennsylvania Ave NW": a compass point before a
/// street's name or after a street's word is a direction, not a letter ("W Elm Street").
fn compass_point(ctx: &Ctx<'_>, i: usize) -> Option<Hit> {
    let words = match ctx.toks[i].core {
        "N" => "North",
        "S" => "South",
        "E" => "East",
        "W" => "West",
        "NE" => "Northeast",
        "NW" => "Northwest",
        "SE" => "Southeast",
        "SW" => "Southwest",
        _ => return None,
    };
    let after_street = ctx
        .prev_core_after_period(i)
        .is_some_and(|p| STREETS.contains(&p) && i >= 2);
    if !before_street_name(ctx, i) && !after_street {
        return None;
    }
    let mut hit = Hit::new(1, words.to_owned());
    hit.eat_period = true;
    Some(hit)
}

/// Software whose releases are numbered: "Python 3.12" is "three point twelve".
const NUMBERED_SOFTWARE: &[&str] = &[
    "Python",
    "Java",
    "Node",
    "Ruby",
    "PHP",
    "Perl",
    "Rust",
    "Go",
    "Kotlin",
    "Swift",
    "Scala",
    "iOS",
    "iPadOS",
    "macOS",
    "Android",
    "Windows",
    "Ubuntu",
    "Debian",
    "Fedora",
    "Linux",
    "Firefox",
    "Chrome",
    "Safari",
    "Blender",
    "Unity",
    "Unreal",
    "Django",
    "Rails",
    "React",
    "Angular",
    "Vue",
    "GNOME",
    "KDE",
    "Excel",
    "Office",
    "Photoshop",
    "Xcode",
    "GPT",
    "Llama",
    "Gemini",
    "Claude",
    "Kubernetes",
    "Docker",
    "PostgreSQL",
    "MySQL",
    "Postgres",
    "Redis",
    "Bluetooth",
    "USB",
    "Wi-Fi",
    "HDMI",
    "version",
    "Version",
    "release",
    "Release",
];

/// "Python 3.12", "version 2.10", "USB 3.2": a release number, whose part after the point is a
/// number of its own ("three point twelve"), not decimals ("three point one two").
fn release_number(ctx: &Ctx<'_>, i: usize) -> Option<String> {
    let core = ctx.toks[i].core;
    let (major, minor) = core.split_once('.')?;
    let plain = |p: &str| !p.is_empty() && p.len() <= 3 && all_digits(p);
    if !plain(major) || !plain(minor) || minor.len() < 2 || minor.starts_with('0') {
        return None;
    }
    if !NUMBERED_SOFTWARE.contains(&ctx.prev_core(i)?) {
        return None;
    }
    let n = |p: &str| numbers::integer(p, ctx.dialect);
    Some(format!("{} point {}", n(major), n(minor)))
}

/// `core` without its last ")" ("501(c)(3"): the section's number and its subsections' marks
/// in words ("five oh one C three").
fn subsections(core: &str, d: Dialect) -> Option<String> {
    let (digits, marks) = core.split_once('(')?;
    if !all_digits(digits) || digits.len() > 4 {
        return None;
    }
    let mut words = vec![numeric::model_number(digits, d)];
    for mark in marks.split(")(") {
        let ok = (1..=3).contains(&mark.len()) && mark.chars().all(|c| c.is_ascii_alphanumeric());
        if !ok || mark.chars().any(|c| c.is_ascii_digit()) && !all_digits(mark) {
            return None;
        }
        words.push(if all_digits(mark) {
            numbers::integer(mark, d)
        } else {
            abbreviations::spell(&mark.to_ascii_uppercase())
        });
    }
    Some(words.join(" "))
}

/// "BP 120/80", "blood pressure of 135/85", "140/90 mmHg": "one twenty over eighty", as
/// clinicians say it.
fn blood_pressure(ctx: &Ctx<'_>, i: usize) -> Option<Hit> {
    let core = ctx.toks[i].core;
    let (bound, core) = numeric::bound(core).map_or(("", core), |(w, rest)| (w, rest));
    let (top, bottom) = core.split_once('/')?;
    let reading = |p: &str| (2..=3).contains(&p.len()) && all_digits(p);
    if !reading(top) || !reading(bottom) {
        return None;
    }
    let before = |k: usize| ctx.prev_core(k).map(str::to_lowercase);
    let pressure = match before(i).as_deref() {
        Some("bp" | "pressure") => true,
        Some("of" | "was" | "is" | "at") => {
            i > 0 && matches!(before(i - 1).as_deref(), Some("bp" | "pressure"))
        }
        _ => false,
    };
    // "Stage 1 hypertension starts at 130/80": a word of the sentence says what it measures.
    let pressure = pressure
        || ctx.toks.iter().any(|t| {
            let w = t.core.to_lowercase();
            w.starts_with("hypertensi")
                || w.starts_with("hypotensi")
                || matches!(w.as_str(), "systolic" | "diastolic" | "bp")
        });
    // "140/90 mmHg": the unit says what the numbers are, and is read with them.
    let unit = ctx
        .next_core(i)
        .filter(|&w| w == "mmHg")
        .and_then(|w| units::phrase(w, true, true, ctx.dialect));
    let n = |p: &str| numeric::model_number(p, ctx.dialect);
    let bound = if bound.is_empty() {
        String::new()
    } else {
        format!("{bound} ")
    };
    let said = format!("{bound}{} over {}", n(top), n(bottom));
    match unit {
        Some(unit) => Some(Hit::new(2, format!("{said} {unit}"))),
        None => pressure.then(|| Hit::new(1, said)),
    }
}

/// "30C in the south-east", "highs of 85F": a temperature written without its degree sign,
/// in a sentence about the weather or heat ("Apt 4C" and "the 5F form" are not).
fn weather_degrees(ctx: &Ctx<'_>, i: usize) -> Option<String> {
    const WEATHER: &[&str] = &[
        "temperature",
        "temperatures",
        "temp",
        "temps",
        "degrees",
        "heat",
        "heatwave",
        "high",
        "highs",
        "low",
        "lows",
        "warm",
        "warmer",
        "hot",
        "hotter",
        "cold",
        "colder",
        "weather",
        "forecast",
        "sunny",
        "frost",
        "freezing",
        "mild",
        "celsius",
        "fahrenheit",
        "oven",
    ];
    let core = ctx.toks[i].core;
    let (number, scale) = match core.strip_suffix('C') {
        Some(n) => (n, "Celsius"),
        None => (core.strip_suffix('F')?, "Fahrenheit"),
    };
    let n =
        Num::parse(number).filter(|n| n.int.len() <= 3 && n.frac.is_none_or(|f| f.len() == 1))?;
    let about_weather = ctx
        .toks
        .iter()
        .any(|t| WEATHER.contains(&t.core.to_lowercase().as_str()));
    let labelled = ctx
        .prev_core_after_period(i)
        .is_some_and(|p| PLACE_WORDS.contains(&p.to_lowercase().as_str()));
    if !about_weather || labelled {
        return None;
    }
    let degrees = if n.is_one() { "degree" } else { "degrees" };
    Some(format!("{} {degrees} {scale}", n.words(ctx.dialect)))
}

/// "4/4 time", "a 6/8 time signature": a metre is its two numbers ("four four"), not a
/// fraction ("three quarters") or a score ("four out of four").
fn time_signature(ctx: &Ctx<'_>, i: usize) -> Option<String> {
    let (top, bottom) = ctx.toks[i].core.split_once('/')?;
    let beats = top
        .parse::<u64>()
        .ok()
        .filter(|b| (1..=16).contains(b) && all_digits(top))?;
    let unit = bottom
        .parse::<u64>()
        .ok()
        .filter(|u| matches!(u, 2 | 4 | 8 | 16) && all_digits(bottom))?;
    ctx.next_core(i)
        .is_some_and(|w| w.eq_ignore_ascii_case("time"))
        .then(|| {
            let n = |k| numbers::cardinal(k, ctx.dialect);
            format!("{} {}", n(beats), n(unit))
        })
}

/// Makers whose models are numbers said in pairs.
const MODEL_MAKERS: &[&str] = &[
    "Boeing", "Porsche", "Peugeot", "Ferrari", "Cessna", "Volvo", "Fiat", "Learjet",
];

/// "Boeing 737-800": a maker's model and its variant ("seven thirty-seven eight hundred"), not
/// a range.
fn model_variant(ctx: &Ctx<'_>, i: usize) -> Option<String> {
    let prev = ctx.prev_core(i)?;
    let (model, variant) = ctx.toks[i].core.split_once('-')?;
    let ok = MODEL_MAKERS.contains(&prev)
        && (3..=4).contains(&model.len())
        && all_digits(model)
        && (1..=4).contains(&variant.len())
        && all_digits(variant);
    let d = ctx.dialect;
    ok.then(|| {
        let variant = numeric::model_number(variant, d);
        format!("{} {variant}", numeric::model_number(model, d))
    })
}

/// Numbers that name something rather than count it, by the word before them: a model after
/// a name in capitals ("RTX 4090" is "forty ninety", "ISO 9001" "ninety oh one") and a
/// service number after "dial" or "call" ("dial 999", "call 311"), read digit by digit.
fn named_number(ctx: &Ctx<'_>, i: usize, n: &Num<'_>) -> Option<String> {
    let core = ctx.toks[i].core;
    if n.plain_int().is_none() || !all_digits(core) {
        return None; // "1,500" is a count
    }
    let prev = ctx.prev_core(i)?;
    let brand = (2..=5).contains(&prev.len())
        && prev.bytes().all(|b| b.is_ascii_uppercase())
        && money::code(prev).is_none()
        && !ctx.shouting;
    // "Boeing 747" is "seven forty-seven", "Porsche 911" "nine eleven": makers whose models
    // are numbers, named here because a capitalised word before a number is usually not one
    // ("Some 300 came", "Chapter 394").
    let maker = MODEL_MAKERS.contains(&prev) && (3..=4).contains(&core.len());
    if brand && core.len() == 4 || maker {
        return Some(numeric::model_number(core, ctx.dialect));
    }
    let service = core.len() == 3 && (core.ends_with("11") || matches!(core, "999" | "112"));
    let dialling = DIAL_WORDS.contains(&prev.to_lowercase().as_str());
    // "zip 90210", "code 4521", "PIN 0000": a code is its digits, not a count.
    let code = core.len() >= 3
        && (is_code_word(prev)
            || prev == "is" && i >= 2 && ctx.prev_core(i - 1).is_some_and(is_code_word));
    (service && dialling || code).then(|| numbers::digits(core))
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
    let no_noun_after = !next.is_some_and(|w| w.starts_with(char::is_lowercase));
    let context = prev.as_deref().is_some_and(|p| {
        YEAR_CONTEXT.contains(&p)
            || WEAK_YEAR_CONTEXT.contains(&p) && no_noun_after
            || dates::month(ctx.toks[i - 1].core).is_some()
    }) || next.is_some_and(|w| ERAS.contains(&w))
        // "The Battle of Hastings (1066)": a number alone in brackets after a name is its date.
        || ctx.toks[i].lead == "(" && ctx.toks[i].trail.starts_with(')');
    // Context reaches into the next century ("by 2100" is "twenty-one hundred").
    let plausible = context && (1000..=2199).contains(&value) || (1800..=2099).contains(&value);
    plausible.then(|| numbers::year(value, ctx.dialect))
}

/// "a 6.2M quake", "an M7.1 earthquake": an earthquake's magnitude, not millions (or "M-seven-
/// one").
fn magnitude(ctx: &Ctx<'_>, i: usize) -> Option<String> {
    let core = ctx.toks[i].core;
    // "M7.1" is said as written ("an M seven point one"), "6.2M" with the word.
    let (number, name) = match core.strip_suffix('M') {
        Some(number) => (number, "magnitude"),
        None => (core.strip_prefix('M')?, "M"),
    };
    let (whole, tenths) = number.split_once('.')?;
    let shaken = ctx.next_core(i).is_some_and(|w| {
        matches!(
            w.to_lowercase().as_str(),
            "quake" | "earthquake" | "tremor" | "aftershock" | "temblor" | "quakes" | "earthquakes"
        )
    });
    let plausible =
        whole.len() == 1 && tenths.len() == 1 && all_digits(whole) && all_digits(tenths);
    if !(shaken && plausible) {
        return None;
    }
    Some(format!("{name} {}", Num::parse(number)?.words(ctx.dialect)))
}

/// "S4E12" (and "s04e12") is "season four, episode twelve", as every show's listing means it.
fn season_episode(core: &str, d: Dialect) -> Option<String> {
    let rest = core.strip_prefix(['S', 's'])?;
    let (season, episode) = rest.split_once(['E', 'e'])?;
    let ok = |p: &str, max: usize| (1..=max).contains(&p.len()) && all_digits(p);
    if !ok(season, 2) || !ok(episode, 3) {
        return None;
    }
    let n = |p: &str| p.parse::<u64>().ok().map(|n| numbers::cardinal(n, d));
    Some(format!("season {}, episode {}", n(season)?, n(episode)?))
}

/// "½" standing alone, as in "2 ½": "a half".
fn lone_vulgar(word: &str) -> Option<String> {
    let mut chars = word.chars();
    let (c, None) = (chars.next()?, chars.next()) else {
        return None;
    };
    VULGAR
        .iter()
        .find(|(v, _)| *v == c)
        .map(|(_, w)| (*w).to_owned())
}

/// The vulgar fraction a common written one stands for ("1/2" is "½").
fn ascii_vulgar(parts: (u64, u64)) -> Option<char> {
    Some(match parts {
        (1, 2) => '½',
        (1, 4) => '¼',
        (3, 4) => '¾',
        (1, 3) => '⅓',
        (2, 3) => '⅔',
        (1, 8) => '⅛',
        _ => return None,
    })
}

/// "½ cup" is "half a cup", "¼ tsp." "a quarter teaspoon", "2½ cups" "two and a half
/// cups", "1/2 tsp" "half a teaspoon": a fraction before a unit (the unit was left as written
/// after a fraction).
fn fraction_of_unit(core: &str, unit: &str, d: Dialect) -> Option<Hit> {
    let (int, last) = if let Some(parts) = ranges::fraction_parts(core) {
        ("", ascii_vulgar(parts)?)
    } else {
        let last = core.chars().last()?;
        (&core[..core.len() - last.len_utf8()], last)
    };
    let (_, words) = VULGAR.iter().find(|(c, _)| *c == last)?;
    let text = if int.is_empty() {
        let unit = units::phrase(unit, true, false, d)?;
        let article = if unit.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        match last {
            '½' => format!("half {article} {unit}"),
            '¾' => format!("three-quarter {unit}"),
            '⅔' => format!("two-thirds {unit}"),
            _ => format!("{words} {unit}"),
        }
    } else {
        let whole = Num::parse(int)?.plain_int()?;
        let unit = units::phrase(unit, true, true, d)?;
        format!("{} and {words} {unit}", numbers::cardinal(whole, d))
    };
    let mut hit = Hit::new(2, text);
    hit.eat_period = true;
    Some(hit)
}
