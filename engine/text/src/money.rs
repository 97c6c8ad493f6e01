//! Currency amounts and percentages: "$5.50", "£3", "€20", "¥100", "$1.2M", "$3bn", "50%".
//!
//! The symbol is written before the number but spoken after it, with singular and plural
//! forms, minor units ("fifty cents") and scale suffixes ("one point two million dollars").
//! Pounds use the British habit "three pounds fifty"; the other currencies say
//! "five dollars and fifty cents".

use super::numeric::Num;
use super::Dialect;

/// A currency and its spoken names.
pub(super) struct Currency {
    symbols: &'static [&'static str],
    one: &'static str,
    many: &'static str,
    minor_one: &'static str,
    minor_many: &'static str,
    /// "three pounds fifty" instead of "three pounds and fifty pence".
    short_minor: bool,
}

const CURRENCIES: &[Currency] = &[
    Currency {
        symbols: &["US$", "$", "USD"],
        one: "dollar",
        many: "dollars",
        minor_one: "cent",
        minor_many: "cents",
        short_minor: false,
    },
    Currency {
        symbols: &["£", "GBP"],
        one: "pound",
        many: "pounds",
        minor_one: "penny",
        minor_many: "pence",
        short_minor: true,
    },
    Currency {
        symbols: &["€", "EUR"],
        one: "euro",
        many: "euros",
        minor_one: "cent",
        minor_many: "cents",
        short_minor: false,
    },
    Currency {
        symbols: &["¥", "JPY"],
        one: "yen",
        many: "yen",
        minor_one: "",
        minor_many: "",
        short_minor: false,
    },
    Currency {
        symbols: &["₹", "INR"],
        one: "rupee",
        many: "rupees",
        minor_one: "paisa",
        minor_many: "paise",
        short_minor: false,
    },
    Currency {
        symbols: &["₩"],
        one: "won",
        many: "won",
        minor_one: "",
        minor_many: "",
        short_minor: false,
    },
    Currency {
        symbols: &["₽"],
        one: "ruble",
        many: "rubles",
        minor_one: "kopek",
        minor_many: "kopeks",
        short_minor: false,
    },
    Currency {
        symbols: &["₿"],
        one: "bitcoin",
        many: "bitcoin",
        minor_one: "",
        minor_many: "",
        short_minor: false,
    },
];

/// Minor units written after a number: "50¢", "20p".
const MINOR_SUFFIXES: &[(&str, &str, &str)] = &[("¢", "cent", "cents"), ("p", "penny", "pence")];

/// Scale words and their written suffixes, longest first.
const SCALES: &[(&str, &str)] = &[
    ("trillion", "trillion"),
    ("billion", "billion"),
    ("million", "million"),
    ("thousand", "thousand"),
    ("crore", "crore"),
    ("lakh", "lakh"),
    ("mn", "million"),
    ("bn", "billion"),
    ("tn", "trillion"),
    ("k", "thousand"),
    ("K", "thousand"),
    ("m", "million"),
    ("M", "million"),
    ("b", "billion"),
    ("B", "billion"),
    ("T", "trillion"),
];

/// A currency symbol at the start of `core` ("$5" gives dollars and "5").
pub(super) fn prefix(core: &str) -> Option<(&'static Currency, &str)> {
    CURRENCIES.iter().find_map(|c| {
        c.symbols
            .iter()
            .filter(|s| !s.chars().all(|ch| ch.is_ascii_uppercase()))
            .find_map(|s| core.strip_prefix(s).map(|rest| (c, rest)))
    })
}

/// A currency symbol at the end of `core` ("20€").
pub(super) fn suffix(core: &str) -> Option<(&'static Currency, &str)> {
    CURRENCIES.iter().find_map(|c| {
        c.symbols
            .iter()
            .filter(|s| !s.chars().all(|ch| ch.is_ascii_uppercase()) && **s != "US$")
            .find_map(|s| core.strip_suffix(s).map(|rest| (c, rest)))
    })
}

/// A currency written as a separate word after a number ("100 USD", "20 EUR").
pub(super) fn code(word: &str) -> Option<&'static Currency> {
    CURRENCIES.iter().find(|c| {
        c.symbols
            .iter()
            .any(|s| s.len() == 3 && s.chars().all(|ch| ch.is_ascii_uppercase()) && *s == word)
    })
}

/// The currency a one-character sign written on its own names (`€` in "2,50 €").
pub(super) fn sign(word: &str) -> Option<&'static Currency> {
    CURRENCIES.iter().find(|c| {
        c.symbols
            .iter()
            .any(|s| s.chars().count() == 1 && *s == word)
    })
}

/// A scale word or suffix ("bn", "million").
pub(super) fn scale(word: &str) -> Option<&'static str> {
    SCALES.iter().find(|(w, _)| *w == word).map(|(_, s)| *s)
}

/// "$" + `amount` in words; `amount` may end in a scale suffix ("1.2M"), or a separate scale
/// word may follow (`scale_word`, as in "$5 million").
pub(super) fn amount(
    currency: &Currency,
    amount: &str,
    scale_word: Option<&str>,
    dialect: Dialect,
) -> Option<String> {
    let (number, scale) = match Num::parse(amount) {
        Some(n) => (n, scale_word),
        None => SCALES.iter().find_map(|(suffix, scale)| {
            let n = Num::parse(amount.strip_suffix(suffix)?)?;
            Some((n, Some(*scale)))
        })?,
    };
    let sign = if number.negative { "minus " } else { "" };
    if let Some(scale) = scale {
        return Some(format!(
            "{sign}{} {scale} {}",
            number.words(dialect),
            currency.many
        ));
    }
    let whole = number.whole(dialect);
    let name = |one: bool| if one { currency.one } else { currency.many };
    let Some(frac) = number
        .frac
        .filter(|f| f.len() == 2 && !currency.minor_many.is_empty())
    else {
        let plural = !(number.is_one() && number.frac.is_none());
        return Some(format!("{sign}{} {}", number.words(dialect), name(!plural)));
    };
    let cents: u64 = frac.parse().ok()?;
    let minor = |n: u64| {
        if n == 1 {
            currency.minor_one
        } else {
            currency.minor_many
        }
    };
    let cents_words = super::numbers::cardinal(cents, dialect);
    Some(match (number.int_value(), cents) {
        (_, 0) => format!("{sign}{whole} {}", name(number.int_value() == Some(1))),
        (Some(0), c) => format!("{sign}{cents_words} {}", minor(c)),
        (i, _) if currency.short_minor => {
            format!("{sign}{whole} {} {cents_words}", name(i == Some(1)))
        }
        (i, c) => format!(
            "{sign}{whole} {} and {cents_words} {}",
            name(i == Some(1)),
            minor(c)
        ),
    })
}

/// Video resolutions, which take a "p" that is not pence ("1080p").
const RESOLUTIONS: &[&str] = &[
    "144", "240", "360", "480", "576", "720", "1080", "1440", "2160",
];

/// Minor units after a number ("50¢", "20p"; not "1080p").
pub(super) fn minor_suffix(core: &str, dialect: Dialect) -> Option<String> {
    MINOR_SUFFIXES.iter().find_map(|(suffix, one, many)| {
        let amount = core.strip_suffix(suffix)?;
        if *suffix == "p" && RESOLUTIONS.contains(&amount) {
            return None;
        }
        let n = Num::parse(amount)?;
        let word = if n.is_one() { one } else { many };
        Some(format!("{} {word}", n.words(dialect)))
    })
}

/// "percent" (US) or "per cent" (GB).
pub(super) fn percent_word(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::EnUs => "percent",
        Dialect::EnGb => "per cent",
    }
}

/// Every currency's (plural, singular) names, minor units included.
pub(super) fn names() -> impl Iterator<Item = (String, String)> {
    CURRENCIES.iter().flat_map(|c| {
        [(c.many, c.one), (c.minor_many, c.minor_one)]
            .into_iter()
            .filter(|(many, one)| !many.is_empty() && many != one)
            .map(|(many, one)| (many.to_owned(), one.to_owned()))
    })
}

/// The currency's plural name, for ranges ("$5-10" is "five to ten dollars").
pub(super) fn plural_name(currency: &Currency) -> &'static str {
    currency.many
}
