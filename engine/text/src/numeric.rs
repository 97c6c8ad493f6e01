//! Tokens made of numbers: plain, signed, decimal, grouped, ordinal, decades, money, percent,
//! units, fractions, versions, feet and inches, rates ("$5/hr").
//!
//! [`single`] reads one token's core without context; `phrases` looks at the neighbours first.
//! Anything with digits that no pattern claims is read part by part ("MP3" is "M-P-three"), so
//! no digit ever reaches espeak.

use super::numbers::{self, all_digits};
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
    if core == "911" {
        return Some("nine one one".to_owned());
    }
    // Numeronyms (the letters between the ends counted) and the wars: the words said.
    let numeronym = match core {
        "WW1" => Some("World War one"),
        "WW2" => Some("World War two"),
        "k8s" | "K8s" => Some("Kubernetes"),
        "i18n" => Some("internationalization"),
        "l10n" => Some("localization"),
        "a11y" => Some("accessibility"),
        _ => None,
    };
    if let Some(word) = numeronym {
        return Some(word.to_owned());
    }
    // "B2B", "D2C", "P2P": business to business, said "B to B".
    if let [a, b'2', b] = core.as_bytes() {
        if a.is_ascii_uppercase() && b.is_ascii_uppercase() {
            return Some(format!("{} to {}", char::from(*a), char::from(*b)));
        }
    }
    if let Some(n) = Num::parse(core) {
        return Some(n.words(dialect));
    }
    if let Some(words) = rooms(core, dialect).or_else(|| repeats(core, dialect)) {
        return Some(words);
    }
    // A partial match falls through to the next pattern (and finally to `mixed`), so no digit
    // is ever left unread.
    let prefixed = |word: &str, rest: &str| single(rest, dialect).map(|w| format!("{word} {w}"));
    if let Some(words) = approximate(core).and_then(|(word, rest)| prefixed(word, rest)) {
        return Some(words);
    }
    // "p<0.05", "≥140": a bound glued to its number (it was read "zero-zero five").
    if let Some(words) = bound(core).and_then(|(word, rest)| prefixed(word, rest)) {
        return Some(words);
    }
    if let Some(words) = e_notation(core, dialect) {
        return Some(words);
    }
    if let Some(rest) = core.strip_prefix('+') {
        if all_digits(rest) && rest.len() >= 7 {
            return Some(format!("plus {}", numbers::digits(rest)));
        }
        if let Some(words) = prefixed("plus", rest) {
            return Some(words);
        }
    }
    if let Some(rest) = core
        .strip_prefix('-')
        .filter(|r| r.starts_with(|c: char| !c.is_ascii_digit()) && money::prefix(r).is_some())
    {
        if let Some(words) = prefixed("minus", rest) {
            return Some(words);
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
    if let Some(words) = version(core, dialect)
        .or_else(|| feet_inches(core, dialect))
        .or_else(|| per(core, dialect))
    {
        return Some(words);
    }
    if let Some(words) = core
        .strip_suffix('+')
        .and_then(|rest| single(rest, dialect))
    {
        return Some(format!("{words} plus"));
    }
    if let Some(words) = scaled(core, dialect) {
        return Some(words);
    }
    if let Some(words) = list(core, dialect) {
        return Some(words);
    }
    if let Some(words) = money::minor_suffix(core, dialect) {
        return Some(words);
    }
    if let Some(n) = core.strip_suffix('%').and_then(Num::parse) {
        return Some(format!(
            "{} {}",
            n.words(dialect),
            money::percent_word(dialect)
        ));
    }
    if let Some(words) = dimensions(core, dialect) {
        return Some(words);
    }
    ordinal(core, dialect)
        .or_else(|| team(core, dialect))
        .or_else(|| decade(core, dialect))
        .or_else(|| dates::clock(core, dialect))
        .or_else(|| dates::numeric_date(core, dialect))
        .or_else(|| ranges::digit_groups(core))
        .or_else(|| ranges::fraction(core, dialect))
        .or_else(|| unit_range(core, dialect))
        .or_else(|| plural_model(core, dialect))
        .or_else(|| glued_unit(core, dialect))
        .or_else(|| vulgar(core, dialect))
        .or_else(|| dotted(core, dialect))
        .or_else(|| super::symbols::joined(core, dialect))
        .or_else(|| fiscal_year(core, dialect))
        .or_else(|| mixed(core, dialect))
}

/// A number written with how exact it is: "~5" and "≈5" are "about five", "±3" and "+/-3"
/// "plus or minus three". The words and the rest of the token.
pub(super) fn approximate(core: &str) -> Option<(&'static str, &str)> {
    if let Some(rest) = core.strip_prefix(['~', '≈']) {
        return Some(("about", rest));
    }
    ["±", "+/-", "+-"]
        .iter()
        .find_map(|mark| core.strip_prefix(mark))
        .map(|rest| ("plus or minus", rest))
}

/// A bound glued to a number ("<0.05", "≥140"): its words and the number.
pub(super) fn bound(core: &str) -> Option<(&'static str, &str)> {
    [
        ("<=", "less than or equal to"),
        (">=", "greater than or equal to"),
        ("≤", "less than or equal to"),
        ("≥", "greater than or equal to"),
        ("<", "less than"),
        (">", "greater than"),
    ]
    .iter()
    .find_map(|(mark, word)| core.strip_prefix(mark).map(|rest| (*word, rest)))
    .filter(|(_, rest)| rest.starts_with(|c: char| c.is_ascii_digit() || c == '.'))
}

/// "3e8", "6.02e23", "1.6e-19": a number in scientific notation, "three times ten to the
/// power of eight".
pub(super) fn e_notation(core: &str, dialect: Dialect) -> Option<String> {
    if let Some(words) = times_power_of_ten(core, dialect) {
        return Some(words);
    }
    let (mantissa, exponent) = core.split_once(['e', 'E'])?;
    let digits = exponent.strip_prefix(['-', '+']).unwrap_or(exponent);
    let plain = |s: &str| !s.is_empty() && all_digits(s);
    let mantissa_ok = match mantissa.split_once('.') {
        Some((whole, frac)) => plain(whole) && plain(frac),
        None => plain(mantissa),
    };
    if !mantissa_ok || !plain(digits) || digits.len() > 3 {
        return None;
    }
    let sign = if exponent.starts_with('-') {
        "minus "
    } else {
        ""
    };
    let power = numbers::integer(digits, dialect);
    Some(format!(
        "{} times ten to the power of {sign}{power}",
        Num::parse(mantissa)?.words(dialect)
    ))
}

/// "3×10^8", "6.02x10^23", "1.6×10⁻¹⁹": scientific notation written with the power of ten,
/// read as [`e_notation`] reads "3e8".
fn times_power_of_ten(core: &str, dialect: Dialect) -> Option<String> {
    let (mantissa, power) = core.split_once(['×', 'x'])?;
    let power = power.strip_prefix("10")?;
    let exponent: String = match power.strip_prefix('^') {
        Some(e) => e.trim_start_matches('(').trim_end_matches(')').to_owned(),
        None => super::symbols::unraised(power)?,
    };
    e_notation(&format!("{mantissa}e{exponent}"), dialect)
}

/// "1920x1080", "2x4", "3×4×5": dimensions, "by" between plain numbers. ("0x1F" is a hex
/// literal and "2x" a factor: neither is one.)
pub(super) fn dimensions(core: &str, dialect: Dialect) -> Option<String> {
    let parts: Vec<&str> = core.split(['x', '×']).collect();
    if !(2..=3).contains(&parts.len()) || parts[0] == "0" {
        return None;
    }
    let words = parts
        .iter()
        .map(|p| {
            Num::parse(p)
                .filter(|n| !n.negative && !n.int.is_empty())
                .map(|n| n.words(dialect))
        })
        .collect::<Option<Vec<_>>>()?;
    Some(words.join(" by "))
}

/// "FY2025" is "F-Y twenty twenty-five" and "FY25" "F-Y twenty-five": the number is a year, and
/// it stands apart from the letters. Read as a letter-digit mix ("F-Y-two thousand
/// twenty-five"), espeak ran the letters into "two" and a listener heard only "FY".
fn fiscal_year(core: &str, dialect: Dialect) -> Option<String> {
    let digits = core.strip_prefix("FY").filter(|d| all_digits(d))?;
    let year = match digits.len() {
        4 => numbers::year(digits.parse().ok()?, dialect),
        _ => numbers::two_digit_year(digits, dialect)?,
    };
    Some(format!("F-Y {year}"))
}

/// The number in a model name, said the way such names are: "A320" is "A three twenty",
/// "F-150" "F one fifty", "RTX 4090" "forty ninety", "707" "seven oh seven"; round hundreds
/// stay cardinals ("H100" is "H one hundred"). Other lengths read as plain numbers.
pub(super) fn model_number(digits: &str, dialect: Dialect) -> String {
    let Ok(n) = digits.parse::<u64>() else {
        return numbers::integer(digits, dialect);
    };
    match digits.len() {
        _ if digits.starts_with('0') => numbers::integer(digits, dialect),
        3 if n % 100 == 0 => numbers::cardinal(n, dialect),
        3 if n % 100 < 10 => format!(
            "{} oh {}",
            numbers::cardinal(n / 100, dialect),
            numbers::cardinal(n % 100, dialect)
        ),
        3 => format!(
            "{} {}",
            numbers::cardinal(n / 100, dialect),
            numbers::cardinal(n % 100, dialect)
        ),
        // "ISO 9001" is "ninety oh one", where a year would say "nine thousand one".
        4 if (n / 100) % 10 == 0 && (1..10).contains(&(n % 100)) => {
            format!(
                "{} oh {}",
                numbers::cardinal(n / 100, dialect),
                numbers::cardinal(n % 100, dialect)
            )
        }
        4 => numbers::year(n, dialect),
        // "14900K", "13980HX": a chip's generation, then its model ("fourteen nine hundred").
        5 if digits.as_bytes()[2] != b'0' => format!(
            "{} {}",
            numbers::cardinal(n / 1000, dialect),
            model_number(&digits[2..], dialect)
        ),
        _ => numbers::integer(digits, dialect),
    }
}

/// "1.5M", "3bn", "1.2k" without a currency: "one point five million". Lower-case "m" is
/// metres.
pub(super) fn scaled(core: &str, dialect: Dialect) -> Option<String> {
    let split = core.find(|c: char| c.is_ascii_alphabetic())?;
    let (num, suffix) = core.split_at(split);
    // Not a whole "K": "4K" is a resolution and "5K" a race; "1.2k" can only be thousands.
    let thousands = matches!(suffix, "k" | "K") && num.contains('.');
    if !matches!(suffix, "M" | "B" | "bn" | "mn" | "tn") && !thousands {
        return None;
    }
    let n = Num::parse(num)?;
    Some(format!("{} {}", n.words(dialect), money::scale(suffix)?))
}

/// "v2.1.3" is "version two point one point three", "v4.2.1-beta" "version four point two
/// point one beta", "v2.0-rc.1" "version two point zero R-C one".
fn version(core: &str, dialect: Dialect) -> Option<String> {
    let rest = core.strip_prefix(['v', 'V'])?;
    // "V6", "V8", "V12": an engine's cylinders in a vee (and Chrome's engine), not a version.
    if core.starts_with('V') && matches!(rest, "6" | "8" | "10" | "12" | "16") {
        return Some(format!("V {}", numbers::integer(rest, dialect)));
    }
    let (rest, tag) = match rest.split_once('-') {
        Some((rest, tag)) => (rest, Some(release_tag(tag, dialect)?)),
        None => (rest, None),
    };
    if !rest.starts_with(|c: char| c.is_ascii_digit())
        || !rest.chars().all(|c| c.is_ascii_digit() || c == '.')
        || rest.ends_with('.')
    {
        return None;
    }
    let words: Vec<String> = rest
        .split('.')
        .map(|p| numbers::integer(p, dialect))
        .collect();
    let mut said = format!("version {}", words.join(" point "));
    if let Some(tag) = tag {
        said.push(' ');
        said.push_str(&tag);
    }
    Some(said)
}

/// A pre-release tag after a version: "beta", "rc.1" ("R-C one"), "alpha2" ("alpha two").
fn release_tag(tag: &str, dialect: Dialect) -> Option<String> {
    let mut words = Vec::new();
    for part in tag.split('.') {
        let letters = part.trim_end_matches(|c: char| c.is_ascii_digit());
        let digits = &part[letters.len()..];
        if !letters.chars().all(|c| c.is_ascii_alphabetic()) || part.is_empty() {
            return None;
        }
        match letters.to_ascii_lowercase().as_str() {
            "" => {}
            "rc" => words.push("R-C".to_owned()),
            "alpha" | "beta" | "preview" | "dev" | "pre" | "nightly" | "final" | "stable"
            | "lts" => words.push(letters.to_ascii_lowercase()),
            _ => return None,
        }
        if !digits.is_empty() {
            words.push(numbers::integer(digits, dialect));
        }
    }
    (!words.is_empty()).then(|| words.join(" "))
}

/// "6'2" is "six foot two"; "6'" is "six feet".
pub(super) fn feet_inches(core: &str, dialect: Dialect) -> Option<String> {
    let (feet, inches) = core.split_once('\'')?;
    let feet_n = Num::parse(feet)?.plain_int()?;
    if !all_digits(feet) {
        return None;
    }
    let feet_words = numbers::cardinal(feet_n, dialect);
    if inches.is_empty() {
        let unit = if feet_n == 1 { "foot" } else { "feet" };
        return Some(format!("{feet_words} {unit}"));
    }
    let inches_n = Num::parse(inches)?.plain_int().filter(|n| *n < 12)?;
    Some(format!(
        "{feet_words} foot {}",
        numbers::cardinal(inches_n, dialect)
    ))
}

/// "$12.99/month" is "twelve dollars and ninety-nine cents per month", "$5/hr" "... per hour";
/// a price per a count, as model and cloud pricing is written ("$0.002/1K tokens", "$15/1M"),
/// is "... per thousand", "... per million".
fn per(core: &str, dialect: Dialect) -> Option<String> {
    let (amount, rate) = core.rsplit_once('/')?;
    if rate.is_empty() {
        return None;
    }
    let rate = if rate.chars().all(char::is_alphabetic) {
        units::lookup(rate, true).map_or(rate, |u| u.one).to_owned()
    } else if amount.starts_with(|c: char| !c.is_ascii_digit()) {
        per_count(rate, dialect)?
    } else {
        return None;
    };
    let amount = single(amount, dialect)?;
    Some(format!("{amount} per {rate}"))
}

/// The count after a price's slash: "1K" is "thousand", "10K" "ten thousand", "1M" "million",
/// "100" "hundred" (a lone one is not said: "per thousand", not "per one thousand").
fn per_count(rate: &str, dialect: Dialect) -> Option<String> {
    let (digits, scale) = match rate.char_indices().last()? {
        (at, 'k' | 'K') => (&rate[..at], Some("thousand")),
        (at, 'M') => (&rate[..at], Some("million")),
        (at, 'B') => (&rate[..at], Some("billion")),
        _ => (rate, None),
    };
    let n = Num::parse(digits)?;
    if !all_digits(&digits.replace(',', "")) {
        return None;
    }
    let words = n.words(dialect);
    let words = match (scale, n.plain_int()) {
        (Some(scale), Some(1)) => scale.to_owned(),
        (Some(scale), _) => format!("{words} {scale}"),
        // Without a scale only a round count ("$5/100 words", "$2/1,000"): "$10/3" is a sum.
        (None, _) if !digits.starts_with('1') || digits.len() < 3 => return None,
        (None, _) if digits[1..].chars().any(|c| c != '0' && c != ',') => return None,
        (None, _) => words.strip_prefix("one ").unwrap_or(&words).to_owned(),
    };
    Some(words)
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
pub(super) fn ordinal(core: &str, dialect: Dialect) -> Option<String> {
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
    // "14st" is fourteen stone: "st" ends only first, twenty-first and their like.
    if suffix.eq_ignore_ascii_case("st") && (n % 10 != 1 || n % 100 == 11) {
        return None;
    }
    Some(numbers::ordinal(n, dialect))
}

/// "49ers", "76ers": a number made a noun with "-ers", said as its words are ("forty-niners",
/// "seventy-sixers"), not "forty-nine-ers".
fn team(core: &str, dialect: Dialect) -> Option<String> {
    let num = core.strip_suffix("ers")?;
    if num.is_empty() || num.len() > 3 || !all_digits(num) {
        return None;
    }
    let words = numbers::integer(num, dialect);
    Some(if words.ends_with('e') {
        format!("{words}rs")
    } else {
        format!("{words}ers")
    })
}

/// "1990s", "1990's", "90s", "'90s"; one digit is a plural of the digit ("1s and 0s").
fn decade(core: &str, dialect: Dialect) -> Option<String> {
    let body = core.strip_suffix("'s").or_else(|| core.strip_suffix('s'))?;
    let (short, digits) = match body.strip_prefix('\'') {
        Some(d) => (true, d),
        None => (false, body),
    };
    if digits.len() == 1 && !short && all_digits(digits) {
        // "1s and 0s", "in 2s and 3s"
        return Some(numbers::plural(numbers::digit_word(digits.as_bytes()[0])));
    }
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
pub(super) fn glued_unit(core: &str, dialect: Dialect) -> Option<String> {
    let split = core
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ',' || c == '-'))
        .filter(|&i| i > 0)?;
    let (num, symbol) = core.split_at(split);
    // "10-min", "5-km": joined by a hyphen, the amount describes a noun ("a ten minute walk").
    if let Some(n) = num.strip_suffix('-').and_then(Num::parse) {
        let unit = units::phrase(symbol, false, false, dialect)?;
        return Some(format!("{} {unit}", n.words(dialect)));
    }
    let n = Num::parse(num)?;
    let unit = units::phrase(symbol, false, !n.is_one(), dialect)?;
    Some(format!("{} {unit}", n.words(dialect)))
}

/// "3BR/2BA", "4bd/2.5ba": a listing's bedrooms and bathrooms, "three bedroom, two bath", the
/// way an agent reads it out (singular: the counts describe the home).
fn rooms(core: &str, dialect: Dialect) -> Option<String> {
    let (beds, baths) = core.split_once('/')?;
    let count = |part: &'static str, glued: &str, symbols: &[&str]| {
        let split = glued.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
        let (n, symbol) = glued.split_at(split);
        if !symbols.contains(&symbol) {
            return None;
        }
        // "2.5ba": two and a half baths.
        if let Some(whole) = n.strip_suffix(".5").filter(|w| all_digits(w)) {
            return Some(format!(
                "{} and a half {part}",
                numbers::integer(whole, dialect)
            ));
        }
        Some(format!("{} {part}", Num::parse(n)?.words(dialect)))
    };
    let beds = count(
        "bedroom",
        beds,
        &["BR", "br", "Br", "bd", "BD", "bed", "bdrm"],
    )?;
    let baths = count("bath", baths, &["BA", "ba", "Ba", "bth", "bath"])?;
    Some(format!("{beds}, {baths}"))
}

/// "4x400m", "8×200 yd": sets of a distance, "four by four hundred meters" (the unit was
/// spelled and the x said as a letter).
fn repeats(core: &str, dialect: Dialect) -> Option<String> {
    let (sets, each) = core.split_once(['x', '×'])?;
    if !all_digits(sets) || sets.len() > 2 || !each.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let each = glued_unit(each, dialect)?;
    Some(format!("{} by {each}", numbers::integer(sets, dialect)))
}

/// "two 747s", "the 1040s": three or four digits with an "s" are planes or forms, not seconds
/// ("seven forty-sevens"); a round number stays a decade or a count ("the 1990s", "120s").
fn plural_model(core: &str, dialect: Dialect) -> Option<String> {
    let digits = core.strip_suffix('s')?;
    let ok = (3..=4).contains(&digits.len()) && all_digits(digits) && !digits.ends_with('0');
    ok.then(|| numbers::plural(&model_number(digits, dialect)))
}

/// "30-35°C", "5–10km": a range with the unit glued to its second end, said once after it.
fn unit_range(core: &str, dialect: Dialect) -> Option<String> {
    let split = core
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | ',' | '-' | '–')))
        .filter(|&i| i > 0)?;
    let (nums, symbol) = core.split_at(split);
    let words = ranges::range(nums, dialect)?;
    let unit = units::phrase(symbol, false, true, dialect)?;
    Some(format!("{words} {unit}"))
}

pub(super) const VULGAR: &[(char, &str)] = &[
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

/// "2ABC123", "1Z999AA1": a code (a plate, a tracking number) that starts and ends with digits
/// around capitals is read character by character; as a model number it was "two-A-B-C-one
/// twenty-three".
fn code(piece: &str) -> Option<String> {
    let bytes = piece.as_bytes();
    let ok = bytes.len() >= 5
        && bytes.first()?.is_ascii_digit()
        && bytes.last()?.is_ascii_digit()
        && bytes
            .iter()
            .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase())
        && bytes.iter().any(u8::is_ascii_uppercase);
    ok.then(|| numbers::characters(piece))
}

/// Letters and digits mixed ("MP3", "COVID-19", "5-year-old", "v2"): each run read alone and
/// joined with hyphens, which espeak reads as one word without pausing. A number after letters
/// is a model number ("A320", "F-150"; see [`model_number`]), and an "s" after a number makes
/// it plural ("H100s" is "H-one hundreds").
pub(super) fn mixed(core: &str, dialect: Dialect) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    let mut after_letters = false;
    for piece in core.split(['-', '–']) {
        if piece.is_empty() {
            continue;
        }
        if let Some(words) = code(piece) {
            parts.push(words);
            continue;
        }
        // "F-35s" are jets, not seconds: a number after letters is a model, plural with an s.
        let model = after_letters
            && (all_digits(piece)
                || piece
                    .strip_suffix('s')
                    .is_some_and(|d| !d.is_empty() && all_digits(d)));
        if let Some(words) = (!model)
            .then(|| {
                Num::parse(piece)
                    .map(|n| n.words(dialect))
                    .or_else(|| ordinal(piece, dialect))
                    .or_else(|| decade(piece, dialect))
                    .or_else(|| glued_unit(piece, dialect))
                    .or_else(|| vulgar(piece, dialect))
            })
            .flatten()
        {
            parts.push(words);
            continue;
        }
        let letters_in_piece = piece.contains(|c: char| c.is_alphabetic());
        let mut rest = piece;
        let mut prev_digits = false;
        while let Some(c) = rest.chars().next() {
            let digit = c.is_ascii_digit();
            let len = rest
                .find(|ch: char| ch.is_ascii_digit() != digit)
                .unwrap_or(rest.len());
            let (run, tail) = rest.split_at(len);
            if digit {
                parts.push(if model || letters_in_piece {
                    model_number(run, dialect)
                } else {
                    numbers::integer(run, dialect)
                });
            } else if run == "s" && prev_digits {
                if let Some(last) = parts.last_mut() {
                    *last = numbers::plural(last);
                }
            } else if let Some(words) = vulgar(run, dialect).filter(|_| run.chars().count() == 1) {
                parts.push(words);
            } else if run.chars().any(char::is_alphanumeric) {
                parts.push(abbreviations::letters(run));
            }
            prev_digits = digit;
            rest = tail;
        }
        after_letters |= letters_in_piece;
    }
    let out = parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>();
    (!out.is_empty()).then(|| out.join("-"))
}
