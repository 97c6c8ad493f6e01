//! "bp", "bps" and "pp" after a number: each symbol has two meanings, and the sentence says
//! which.
//!
//! - "bps" is basis points on a markets show ("margins expanded 150 bps", "cut by 25bps") and
//!   bits per second beside a word of networks ("a 9600 bps modem").
//! - "bp" is basis points beside money and rates and base pairs elsewhere ("a 500 bp
//!   fragment"), where "bits per second" was read for both.
//! - "pp" is percentage points beside a percentage or a poll ("up 3.5pp", "the lead is 4 pp")
//!   and pages elsewhere ("300pp").

use super::numeric::Num;
use super::rules::{Ctx, Hit};

/// Words that put a "bp" or "pp" among money, rates and polls (any word starting "rate" or
/// "yield" does too, and any amount of money or percentage).
const FINANCE_WORDS: &[&str] = &[
    "fed",
    "fomc",
    "ecb",
    "boe",
    "bond",
    "bonds",
    "spread",
    "spreads",
    "hike",
    "hikes",
    "cut",
    "cuts",
    "treasury",
    "treasuries",
    "percent",
    "basis",
    "coupon",
    "margin",
    "margins",
    "qoq",
    "yoy",
    "mortgage",
    "mortgages",
    "inflation",
    "cpi",
    "gdp",
    "stocks",
    "equities",
    "credit",
    "loan",
    "loans",
    "poll",
    "polls",
    "lead",
    "approval",
    "unemployment",
    "share",
    "turnout",
    "tightened",
    "widened",
];

/// Words that make "bps" a bit rate.
const NETWORK_WORDS: &[&str] = &[
    "speed",
    "speeds",
    "bandwidth",
    "link",
    "network",
    "modem",
    "baud",
    "connection",
    "throughput",
    "upload",
    "download",
    "bitrate",
    "ethernet",
    "serial",
    "data",
    "transfer",
    "stream",
    "streaming",
    "line",
];

/// A number with "bp", "bps" or "pp" after it, glued ("25bp") or spaced ("25 bp"), at token
/// `i`, with an approximation word already said (`approx`, "about ").
pub(super) fn rule(ctx: &Ctx<'_>, i: usize, approx: &str, bare: &str) -> Option<Hit> {
    let (number, symbol, span) = match split(bare) {
        Some((number, symbol)) => (number, symbol, 1),
        None => (bare, ctx.next_core(i)?, 2),
    };
    if !matches!(symbol, "bp" | "bps" | "pp") {
        return None;
    }
    let n = Num::parse(number)?;
    let any_word = |list: &[&str]| {
        ctx.toks
            .iter()
            .any(|t| list.contains(&t.core.to_lowercase().as_str()))
    };
    let money = || {
        any_word(FINANCE_WORDS)
            || ctx.toks.iter().any(|t| {
                let w = t.core.to_lowercase();
                t.core.ends_with('%')
                    || t.core.starts_with(['$', '€', '£'])
                    || w.starts_with("rate")
                    || w.starts_with("yield")
            })
    };
    let (one, many) = match symbol {
        "bps" if any_word(NETWORK_WORDS) => ("bit per second", "bits per second"),
        "bps" => ("basis point", "basis points"),
        "bp" if money() => ("basis point", "basis points"),
        "bp" => ("base pair", "base pairs"),
        _ if number.contains('.') || money() => ("percentage point", "percentage points"),
        _ => ("page", "pages"),
    };
    let singular = n.is_one() || super::phrases::attributive(ctx, i, span);
    let unit = if singular { one } else { many };
    let mut hit = Hit::new(span, format!("{approx}{} {unit}", n.words(ctx.dialect)));
    hit.eat_period = true;
    Some(hit)
}

/// "25bps" as its number and symbol.
fn split(core: &str) -> Option<(&str, &str)> {
    let at = core
        .find(|c: char| c.is_ascii_alphabetic())
        .filter(|&at| at > 0)?;
    Some(core.split_at(at))
}
