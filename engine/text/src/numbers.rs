//! Numbers to English words: cardinals, ordinals, digit strings, decimals, years and decades.
//!
//! espeak-ng reads digits itself, but it reads years as plain numbers, knows no dialect rule for
//! "and", and stops at large values; doing it here gives one reading that the tests pin down.
//! Everything up to `u64::MAX` (eighteen quintillion) is spelled; callers fall back to digit by
//! digit reading for longer strings.

use super::Dialect;

const ONES: [&str; 20] = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
];

const TENS: [&str; 10] = [
    "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
];

/// Scale words for groups of three digits, from the thousands up.
const SCALES: [&str; 6] = [
    "thousand",
    "million",
    "billion",
    "trillion",
    "quadrillion",
    "quintillion",
];

/// Whether `word` (lower case) is one of the words numbers are spelled with.
#[cfg(test)] // the NeMo comparison (oracle.rs) is its only user
pub(super) fn is_number_word(word: &str) -> bool {
    word == "hundred" || ONES.contains(&word) || TENS[2..].contains(&word) || SCALES.contains(&word)
}

/// Words for 0..=99 ("forty-two").
fn below_hundred(n: u64) -> String {
    debug_assert!(n < 100);
    let n = n as usize;
    if n < 20 {
        ONES[n].to_owned()
    } else if n.is_multiple_of(10) {
        TENS[n / 10].to_owned()
    } else {
        format!("{}-{}", TENS[n / 10], ONES[n % 10])
    }
}

/// Words for 1..=999; `and` puts the British "and" after the hundreds.
fn below_thousand(n: u64, dialect: Dialect) -> String {
    let (hundreds, rest) = (n / 100, n % 100);
    match (hundreds, rest) {
        (0, r) => below_hundred(r),
        (h, 0) => format!("{} hundred", ONES[h as usize]),
        (h, r) => {
            let joiner = if dialect == Dialect::EnGb {
                " and "
            } else {
                " "
            };
            format!("{} hundred{joiner}{}", ONES[h as usize], below_hundred(r))
        }
    }
}

/// Cardinal number in words: 105 is "one hundred five" (US) or "one hundred and five" (GB).
#[must_use]
pub fn cardinal(n: u64, dialect: Dialect) -> String {
    if n < 1000 {
        return below_thousand(n, dialect);
    }
    let mut groups = Vec::with_capacity(7);
    let mut rest = n;
    while rest > 0 {
        groups.push(rest % 1000);
        rest /= 1000;
    }
    let mut parts: Vec<String> = Vec::new();
    for (scale, &group) in groups.iter().enumerate().rev() {
        if group == 0 {
            continue;
        }
        let words = below_thousand(group, dialect);
        if scale == 0 {
            // British English joins a last group below a hundred with "and": "one thousand and five".
            if dialect == Dialect::EnGb && group < 100 {
                parts.push(format!("and {words}"));
            } else {
                parts.push(words);
            }
        } else {
            parts.push(format!("{words} {}", SCALES[scale - 1]));
        }
    }
    parts.join(" ")
}

/// Ordinal from a cardinal's words: the last word changes ("twenty-one" to "twenty-first").
fn ordinal_words(words: &str) -> String {
    let cut = words.rfind([' ', '-']).map_or(0, |i| i + 1);
    let (head, last) = words.split_at(cut);
    let last = match last {
        "one" => "first".to_owned(),
        "two" => "second".to_owned(),
        "three" => "third".to_owned(),
        "five" => "fifth".to_owned(),
        "eight" => "eighth".to_owned(),
        "nine" => "ninth".to_owned(),
        "twelve" => "twelfth".to_owned(),
        w if w.ends_with('y') => format!("{}ieth", &w[..w.len() - 1]),
        w => format!("{w}th"),
    };
    format!("{head}{last}")
}

/// Ordinal number in words: 103 is "one hundred third" (US) or "one hundred and third" (GB).
#[must_use]
pub fn ordinal(n: u64, dialect: Dialect) -> String {
    ordinal_words(&cardinal(n, dialect))
}

/// A word for one ASCII digit.
#[must_use]
pub fn digit_word(d: u8) -> &'static str {
    ONES[usize::from(d.saturating_sub(b'0')).min(9)]
}

/// Each digit as a word: "007" is "zero zero seven". Non-digits are skipped.
#[must_use]
pub fn digits(s: &str) -> String {
    let words: Vec<&str> = s
        .bytes()
        .filter(u8::is_ascii_digit)
        .map(digit_word)
        .collect();
    words.join(" ")
}

/// A code read out character by character: each digit its word, each letter in capitals
/// ("2abc1" is "two A B C one").
#[must_use]
pub fn characters(s: &str) -> String {
    let said: Vec<String> = s
        .bytes()
        .map(|b| {
            if b.is_ascii_digit() {
                digit_word(b).to_owned()
            } else {
                char::from(b.to_ascii_uppercase()).to_string()
            }
        })
        .collect();
    said.join(" ")
}

/// True when `s` is one or more ASCII digits.
#[must_use]
pub fn all_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// An integer written in digits: a cardinal, or digit by digit when it has a leading zero
/// ("007") or is too long for a sensible cardinal (more than 18 digits).
#[must_use]
pub fn integer(s: &str, dialect: Dialect) -> String {
    if s.len() > 1 && s.starts_with('0') || s.len() > 18 {
        return digits(s);
    }
    s.parse::<u64>()
        .map_or_else(|_| digits(s), |n| cardinal(n, dialect))
}

/// A decimal written "int.frac": "three point one four"; an empty integer part reads "point five".
#[must_use]
pub fn decimal(int: &str, frac: &str, dialect: Dialect) -> String {
    let mut out = if int.is_empty() {
        String::new()
    } else {
        integer(int, dialect) + " "
    };
    out.push_str("point");
    if !frac.is_empty() {
        out.push(' ');
        out.push_str(&digits(frac));
    }
    out
}

/// A year written with two digits ("'08", "3/4/21", "FY25"): "oh eight", "twenty-one";
/// `None` unless `digits` is two ASCII digits.
#[must_use]
pub fn two_digit_year(digits: &str, dialect: Dialect) -> Option<String> {
    if digits.len() != 2 || !all_digits(digits) {
        return None;
    }
    Some(match digits.as_bytes() {
        [b'0', d] => format!("oh {}", digit_word(*d)),
        _ => cardinal(digits.parse().ok()?, dialect),
    })
}

/// A year: 1998 "nineteen ninety-eight", 1905 "nineteen oh five", 1900 "nineteen hundred",
/// 2005 "two thousand five" (GB "two thousand and five"), 2010 "twenty ten".
#[must_use]
pub fn year(n: u64, dialect: Dialect) -> String {
    let (hi, lo) = (n / 100, n % 100);
    if !(1000..10_000).contains(&n) || hi % 10 == 0 && lo < 10 {
        // 476, 1005, 2005: plain cardinals read best.
        return cardinal(n, dialect);
    }
    let hi_words = below_hundred(hi);
    match lo {
        0 => format!("{hi_words} hundred"),
        1..=9 => format!("{hi_words} oh {}", ONES[lo as usize]),
        _ => format!("{hi_words} {}", below_hundred(lo)),
    }
}

/// Plural of a number's words for decades and "in the nineties": "ninety" to "nineties",
/// "hundred" to "hundreds", "ten" to "tens".
#[must_use]
pub fn plural(words: &str) -> String {
    match words.strip_suffix('y') {
        Some(stem) => format!("{stem}ies"),
        None if words.ends_with("six") => format!("{words}es"),
        None => format!("{words}s"),
    }
}

/// A decade: 1990 "nineteen nineties", 2000 "two thousands", 2010 "twenty tens", 1900
/// "nineteen hundreds". Two-digit forms (90) give "nineties".
#[must_use]
pub fn decade(n: u64, dialect: Dialect) -> String {
    if n < 100 {
        plural(&below_hundred(n))
    } else {
        plural(&year(n, dialect))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Dialect::{EnGb, EnUs};

    #[test]
    fn cardinals() {
        assert_eq!(cardinal(0, EnUs), "zero");
        assert_eq!(cardinal(21, EnUs), "twenty-one");
        assert_eq!(cardinal(105, EnUs), "one hundred five");
        assert_eq!(cardinal(105, EnGb), "one hundred and five");
        assert_eq!(cardinal(1005, EnGb), "one thousand and five");
        assert_eq!(cardinal(1105, EnGb), "one thousand one hundred and five");
        assert_eq!(cardinal(2_000_001, EnGb), "two million and one");
        assert_eq!(
            cardinal(999_999_999_999_999, EnUs),
            "nine hundred ninety-nine trillion nine hundred ninety-nine billion nine hundred \
             ninety-nine million nine hundred ninety-nine thousand nine hundred ninety-nine"
        );
        assert!(cardinal(u64::MAX, EnUs).starts_with("eighteen quintillion"));
    }

    #[test]
    fn ordinals() {
        assert_eq!(ordinal(1, EnUs), "first");
        assert_eq!(ordinal(22, EnUs), "twenty-second");
        assert_eq!(ordinal(103, EnUs), "one hundred third");
        assert_eq!(ordinal(103, EnGb), "one hundred and third");
        assert_eq!(ordinal(40, EnUs), "fortieth");
        assert_eq!(ordinal(12, EnUs), "twelfth");
        assert_eq!(ordinal(1000, EnUs), "one thousandth");
        assert_eq!(ordinal(0, EnUs), "zeroth");
    }

    #[test]
    fn years_and_decades() {
        assert_eq!(year(1998, EnUs), "nineteen ninety-eight");
        assert_eq!(year(1905, EnUs), "nineteen oh five");
        assert_eq!(year(1900, EnUs), "nineteen hundred");
        assert_eq!(year(2005, EnGb), "two thousand and five");
        assert_eq!(year(2010, EnUs), "twenty ten");
        assert_eq!(decade(1990, EnUs), "nineteen nineties");
        assert_eq!(decade(2000, EnUs), "two thousands");
        assert_eq!(decade(60, EnUs), "sixties");
        assert_eq!(plural("six"), "sixes");
    }

    #[test]
    fn digit_strings_and_decimals() {
        assert_eq!(integer("007", EnUs), "zero zero seven");
        assert_eq!(decimal("3", "14", EnUs), "three point one four");
        assert_eq!(decimal("", "5", EnUs), "point five");
    }
}
