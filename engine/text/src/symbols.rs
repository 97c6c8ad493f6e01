//! Symbols that are said ("&" is "and", "#tag" is "hashtag tag", "C++" is "C plus plus") and
//! symbols that are not (markdown stars, trademark signs), plus dashes as pauses.
//!
//! A spaced hyphen or en dash between words is a pause, so it becomes Kokoro's em dash; between
//! numbers it was already read as a range by [`super::ranges`].

use super::numeric;
use super::rules::{Ctx, Hit};
use super::Dialect;

/// Symbols said when they stand alone.
const WORDS: &[(&str, &str)] = &[
    ("&", "and"),
    ("+", "plus"),
    ("=", "equals"),
    ("@", "at"),
    ("×", "times"),
    ("÷", "divided by"),
    ("±", "plus or minus"),
    ("+/-", "plus or minus"),
    ("+-", "plus or minus"),
    ("≈", "approximately"),
    ("≤", "less than or equal to"),
    ("≥", "greater than or equal to"),
    ("<", "less than"),
    (">", "greater than"),
    ("§§", "sections"),
    ("§", "section"),
    ("©", "copyright"),
    ("°", "degrees"),
    ("#", "hash"),
    ("♯", "sharp"),
    ("♭", "flat"),
    ("♮", "natural"),
    ("π", "pi"),
    ("∞", "infinity"),
    ("≠", "is not equal to"),
    ("√", "the square root of"),
    ("∛", "the cube root of"),
    // "6:30pm PT / 9:30pm ET", "Host / Producer": a spaced slash separates, like a dash.
    ("/", "—"),
    ("-", "—"),
    ("–", "—"),
    ("—", "—"),
    ("…", "…"),
];

/// Characters with no sound of their own, dropped wherever they are.
const SILENT: &[char] = &[
    '*', '_', '^', '|', '\\', '•', '·', '®', '™', '~', '<', '>', '{', '}', '[', ']', '`',
];

/// A lone symbol, a hashtag or handle, or a word joined by symbols.
pub(super) fn rule(ctx: &Ctx<'_>, i: usize) -> Option<Hit> {
    let d = ctx.dialect;
    let core = ctx.toks[i].core;
    if core == "%" {
        return Some(Hit::new(1, super::money::percent_word(d).to_owned()));
    }
    let between_numbers = |k: usize| {
        let numeric = |w: &str| w.starts_with(|c: char| c.is_ascii_digit());
        k > 0 && ctx.prev_core(k).is_some_and(numeric) && ctx.next_core(k).is_some_and(numeric)
    };
    if core == "x" && between_numbers(i) {
        return Some(Hit::new(1, "times".to_owned()));
    }
    if core == "≈" && i > 0 && ctx.next_core(i).is_some() {
        // "π ≈ 3.14": a verb between two terms, as "=" is "equals".
        return Some(Hit::new(1, "is approximately".to_owned()));
    }
    if let Some((_, words)) = WORDS.iter().find(|(s, _)| *s == core) {
        return Some(Hit::new(1, (*words).to_owned()));
    }
    if let Some(words) = shortcut(core) {
        return Some(Hit::new(1, words));
    }
    // "C#" (the language, or the note) and "F#": a letter A to G, sharp.
    if let [note @ b'A'..=b'G', b'#'] = core.as_bytes() {
        return Some(Hit::new(1, format!("{} sharp", char::from(*note))));
    }
    if let Some(tag) = core.strip_prefix('#').filter(|t| !t.is_empty()) {
        // "#1" is "number one"; "#100DaysOfCode" is a hashtag, not a number.
        let number = tag.starts_with(|c: char| c.is_ascii_digit())
            && tag
                .chars()
                .all(|c| c.is_ascii_digit() || c == ',' || c == '.');
        if let Some(n) = numeric::single(tag, d).filter(|_| number) {
            return Some(Hit::new(1, format!("number {n}")));
        }
        // "Order #A-1234", "ticket #B12": a code after its number sign, not a hashtag (those are
        // words, "#COVID19", or a letter and a digit, "#G7").
        if let Some(code) = is_code(tag).then(|| numeric::mixed(tag, d)).flatten() {
            return Some(Hit::new(1, format!("number {code}")));
        }
        let said = tag_words(tag, d);
        return Some(Hit::new(1, after_own_word(ctx, i, "hashtag", said)));
    }
    if let Some(handle) = core.strip_prefix('@').filter(|h| !h.is_empty()) {
        let said = super::web::handle_address(handle, d).unwrap_or_else(|| handle_words(handle, d));
        return Some(Hit::new(1, after_own_word(ctx, i, "at", said)));
    }
    if let Some(words) = community(core) {
        return Some(Hit::new(1, words));
    }
    joined(core, d).map(|w| Hit::new(1, w))
}

/// "r/podcasting" is "r slash podcasting", "u/spez" "u slash spez": a community or user as
/// people say it (the slash was silent).
fn community(core: &str) -> Option<String> {
    let (prefix, name) = core.split_once('/')?;
    let named = name.len() >= 2 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (matches!(prefix, "r" | "u") && named)
        .then(|| format!("{prefix} slash {}", name.replace('_', " underscore ")))
}

/// Capitals, digits and hyphens with a digit, joined by a hyphen or with one letter at most
/// before two digits or more: `A-1234`, `12-345`, `B12`; not `COVID19` or `G7`.
fn is_code(tag: &str) -> bool {
    let letters = tag.chars().filter(char::is_ascii_uppercase).count();
    let digits = tag.chars().filter(char::is_ascii_digit).count();
    tag.chars()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '-')
        && digits > 0
        && !tag.starts_with('-')
        && !tag.ends_with('-')
        && (tag.contains('-') || letters <= 1 && digits >= 2)
}

/// A hashtag or handle said with its sign's word ("hashtag", "at"), unless the author already
/// wrote that word before it: "follow us at @banter" was "at at banter", "the hashtag `#DeepDive`"
/// "hashtag hashtag Deep Dive".
fn after_own_word(ctx: &Ctx<'_>, i: usize, word: &str, said: String) -> String {
    if ctx
        .prev_core(i)
        .is_some_and(|p| p.eq_ignore_ascii_case(word))
    {
        said
    } else {
        format!("{word} {said}")
    }
}

/// A power or a root ("x^2", "r²", "√2"), before any rule that reads the digits alone.
pub(super) fn math(ctx: &Ctx<'_>, i: usize) -> Option<Hit> {
    let core = ctx.toks[i].core;
    power(core, ctx.dialect)
        .or_else(|| root(core, ctx.dialect))
        .or_else(|| comparison(core, ctx.dialect))
        .map(|w| Hit::new(1, w))
}

/// "p<0.001", "n≥30", "age>65": a name compared with a number, written without spaces (the
/// sign was dropped as markup, which read "p<0.001" as "p minus zero zero zero one").
fn comparison(core: &str, d: Dialect) -> Option<String> {
    let at = core.find(['<', '>', '≤', '≥', '≠', '≈'])?;
    // "<=" and ">=" are said as "≤" and "≥" are; every sign's words are the lone sign's.
    let (sign, len) = match &core[at..] {
        s if s.starts_with("<=") => ("≤", 2),
        s if s.starts_with(">=") => ("≥", 2),
        s => {
            let c = s.chars().next()?;
            (&s[..c.len_utf8()], c.len_utf8())
        }
    };
    let said = WORDS.iter().find(|(s, _)| *s == sign)?.1;
    let (name, number) = (&core[..at], &core[at + len..]);
    let named = (1..=6).contains(&name.len()) && name.chars().all(|c| c.is_ascii_alphabetic());
    if !named || !number.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let number = numeric::single(number, d)?;
    Some(format!("{} {said} {number}", spoken_word(name, d)))
}

/// The superscript digits, ⁰ to ⁹.
pub(super) const SUPERSCRIPTS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];

/// A written power ("⁻¹⁹") in plain digits ("-19"); `None` if anything else is in it.
pub(super) fn unraised(power: &str) -> Option<String> {
    power
        .chars()
        .map(|c| match c {
            '⁻' => Some('-'),
            c => SUPERSCRIPTS
                .iter()
                .position(|&s| s == c)
                .and_then(|k| char::from_digit(k as u32, 10)),
        })
        .collect()
}

/// "x^2", "10^-3", "r²", "2^n": a base and its power ("x squared", "ten to the power of minus
/// three"). The caret or superscript was dropped as silent, which read "x^2" as "x two".
fn power(core: &str, d: Dialect) -> Option<String> {
    let (base, exponent): (&str, String) = if let Some((base, exp)) = core.split_once('^') {
        (
            base,
            exp.trim_start_matches('(').trim_end_matches(')').to_owned(),
        )
    } else {
        let start = core.find(|c: char| SUPERSCRIPTS.contains(&c) || c == '⁻')?;
        (&core[..start], unraised(&core[start..])?)
    };
    // A superscript number after a word is a footnote's mark ("as the study¹ found"): the
    // listener hears the word. Only a symbol's base (x², m³) or a number's is raised to it.
    if !core.contains('^') && base.chars().filter(char::is_ascii_alphabetic).count() > 2 {
        let word = base.trim_end_matches(|c: char| !c.is_alphanumeric());
        let digits_only = exponent.chars().all(|c| c.is_ascii_digit());
        if digits_only && word.chars().all(char::is_alphabetic) {
            return Some(word.to_owned());
        }
    }
    let plain_base = !base.is_empty()
        && (base.chars().all(|c| c.is_ascii_alphabetic()) && base.len() <= 2
            || base.chars().all(|c| c.is_ascii_digit() || c == '.'));
    let digits = exponent.strip_prefix('-').unwrap_or(&exponent);
    let plain_exponent = !digits.is_empty()
        && (digits.chars().all(|c| c.is_ascii_digit())
            || digits.len() == 1 && digits.chars().all(|c| c.is_ascii_alphabetic()));
    if !plain_base || !plain_exponent {
        return None;
    }
    // "mc²" is "M C squared": two letters are two symbols, not a word ("mick").
    let base = numeric::single(base, d).unwrap_or_else(|| {
        if base.len() == 2 && base.chars().all(|c| c.is_ascii_alphabetic()) {
            super::abbreviations::spell(&base.to_ascii_uppercase())
        } else {
            base.to_owned()
        }
    });
    let said = match exponent.as_str() {
        "2" => "squared".to_owned(),
        "3" => "cubed".to_owned(),
        e => {
            let n = numeric::single(digits, d).unwrap_or_else(|| digits.to_owned());
            let sign = if e.starts_with('-') { "minus " } else { "" };
            format!("to the power of {sign}{n}")
        }
    };
    Some(format!("{base} {said}"))
}

/// "√2", "∛27": the root of a number or a letter.
fn root(core: &str, d: Dialect) -> Option<String> {
    let (which, rest) = if let Some(rest) = core.strip_prefix('√') {
        ("square", rest)
    } else {
        ("cube", core.strip_prefix('∛')?)
    };
    let rest = rest.trim_start_matches('(').trim_end_matches(')');
    let said = numeric::single(rest, d).or_else(|| {
        (!rest.is_empty() && rest.chars().all(|c| c.is_ascii_alphabetic()) && rest.len() <= 2)
            .then(|| rest.to_owned())
    })?;
    Some(format!("the {which} root of {said}"))
}

/// A handle as it is said: underscores are spoken, since the handle cannot be found without
/// them (`the_real_sam` is "the underscore real underscore sam"), and capitals split words
/// (`JaneDoe` is "Jane Doe").
fn handle_words(handle: &str, d: Dialect) -> String {
    let words: Vec<String> = handle
        .split('_')
        .map(|part| {
            if part.chars().all(char::is_alphabetic) && part.contains(char::is_lowercase) {
                split_camel(part)
            } else {
                spoken_word(part, d)
            }
        })
        .collect();
    words.join(" underscore ")
}

/// A hashtag's words: capitals split words, and each run of digits is a number in words
/// ("100DaysOfCode" is "one hundred Days Of Code").
fn tag_words(tag: &str, d: Dialect) -> String {
    let mut out = String::with_capacity(tag.len() + 8);
    let mut rest = tag;
    while !rest.is_empty() {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let (run, tail) = if digits > 0 {
            let (run, tail) = rest.split_at(digits);
            (super::numbers::integer(run, d), tail)
        } else {
            let end = rest
                .find(|c: char| c.is_ascii_digit())
                .unwrap_or(rest.len());
            let (run, tail) = rest.split_at(end);
            (split_camel(run), tail)
        };
        if !out.is_empty() && !run.is_empty() {
            out.push(' ');
        }
        out.push_str(run.trim());
        rest = tail;
    }
    out
}

/// `ThrowbackThursday` as "Throwback Thursday", `the_real` as "the real".
fn split_camel(tag: &str) -> String {
    let mut out = String::with_capacity(tag.len() + 4);
    let mut prev_lower = false;
    for c in tag.chars() {
        if c == '_' {
            out.push(' ');
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower {
            out.push(' ');
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        out.push(c);
    }
    out
}

/// Words joined by `&`, `+`, `=` or `/`: "R&D", "C++", "2+2=4", "and/or".
pub(super) fn joined(core: &str, d: Dialect) -> Option<String> {
    if !core.contains(['&', '+', '=', '/']) || core.contains("://") {
        return None;
    }
    // "Q&A", "R&D", "AT&T": letters on both sides are said as one spelled word ("Q-and-A");
    // with spaces, a lone "A" is the article ("the Q and A" was heard as "the cue enters").
    if let Some((left, right)) = core.split_once('&') {
        let letters =
            |p: &str| (1..=4).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_uppercase());
        if letters(left) && letters(right) {
            let spell = super::abbreviations::letters;
            return Some(format!("{}-and-{}", spell(left), spell(right)));
        }
    }
    // "sleep/night", "calls/day": a rate, said with "per" (the slash was a bare pause).
    if let Some((left, right)) = core.split_once('/') {
        const RATE_UNITS: [&str; 12] = [
            "day", "night", "week", "month", "year", "hour", "minute", "second", "person", "head",
            "serving", "capita",
        ];
        let word = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_alphabetic());
        if word(left) && RATE_UNITS.contains(&right.to_lowercase().as_str()) {
            return Some(format!(
                "{} per {}",
                spoken_word(left, d),
                right.to_lowercase()
            ));
        }
        // "cells/mL", "copies/µL": a count per a unit of measure; "tokens/s", "tok/s",
        // "req/s": a throughput per second or hour (its short names said in full).
        let counted = rate_count(left);
        let unit = super::units::lookup(right, true)
            .or_else(|| {
                super::units::lookup(right, false).filter(|u| matches!(u.symbol, "s" | "h"))
            })
            .filter(|_| counted.is_some() || left.len() > 2 && word(left));
        if let Some(unit) = unit {
            let one = super::units::words(unit, false, d);
            let left = counted.map_or_else(|| spoken_word(left, d), str::to_owned);
            return Some(format!("{left} per {one}"));
        }
    }
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if !word.is_empty() {
            push_word(out, &spoken_word(word, d));
            word.clear();
        }
    };
    for c in core.chars() {
        let said = match c {
            '&' => Some("and"),
            '+' => Some("plus"),
            '=' => Some("equals"),
            '/' => Some(""),
            _ => None,
        };
        match said {
            Some(w) => {
                flush(&mut word, &mut out);
                push_word(&mut out, w);
            }
            None => word.push(c),
        }
    }
    flush(&mut word, &mut out);
    Some(out)
}

/// What an engineer's short name for a counted thing before a rate's slash is said as:
/// "tok/s" is tokens per second, "req/s" requests, "it/s" iterations.
fn rate_count(short: &str) -> Option<&'static str> {
    Some(match short {
        "tok" | "toks" => "tokens",
        "req" | "reqs" => "requests",
        "msg" | "msgs" => "messages",
        "txn" | "txns" | "tx" => "transactions",
        "it" | "its" => "iterations",
        "ops" | "op" => "ops",
        "img" | "imgs" => "images",
        _ => return None,
    })
}

fn push_word(out: &mut String, w: &str) {
    if w.is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push(' ');
    }
    out.push_str(w);
}

/// One word in a handle or a symbol-joined phrase: numbers and capitals read as elsewhere.
fn spoken_word(word: &str, d: Dialect) -> String {
    if let Some(key) = key_name(word, true) {
        return key.to_owned();
    }
    power(word, d)
        .or_else(|| numeric::single(word, d))
        .unwrap_or_else(|| {
            if word.chars().all(|c| c.is_ascii_alphabetic()) {
                super::abbreviations::letters(word)
            } else {
                strip_silent(word)
            }
        })
}

/// Keys as they are said. `combo`: the word is part of a shortcut ("Ctrl+Del"), where "Del"
/// and `PgUp` are keys too; alone only the names no word or name shares are (espeak spelled
/// "Ctrl" letter by letter).
fn key_name(word: &str, combo: bool) -> Option<&'static str> {
    Some(match word {
        "Ctrl" | "CTRL" | "ctrl" => "control",
        "Cmd" | "CMD" | "cmd" => "command",
        "Esc" | "ESC" => "escape",
        "Del" | "DEL" if combo => "delete",
        "PgUp" => "page up",
        "PgDn" => "page down",
        "Opt" if combo => "option",
        "Bksp" => "backspace",
        _ => return None,
    })
}

/// "Ctrl", "Esc", "Ctrl-Z", "Cmd-Shift-P": a key or a shortcut written with hyphens, its
/// first key a name ("control Z").
fn shortcut(core: &str) -> Option<String> {
    let mut parts = core.split('-');
    let first = key_name(parts.next()?, false)?;
    let mut out = first.to_owned();
    for part in parts {
        let ok = !part.is_empty() && part.chars().all(|c| c.is_ascii_alphanumeric());
        if !ok {
            return None;
        }
        out.push(' ');
        out.push_str(key_name(part, true).unwrap_or(part));
    }
    Some(out)
}

/// `core` without characters that have no sound.
pub(super) fn strip_silent(core: &str) -> String {
    core.chars().filter(|c| !SILENT.contains(c)).collect()
}
