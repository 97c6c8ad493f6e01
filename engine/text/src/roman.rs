//! Roman numerals where the context makes them unmistakable: "Chapter IV", "World War II",
//! "Henry VIII", "Super Bowl LVII".
//!
//! Capital letters like "I", "V", "X", "MIX" are ordinary words or initials most of the time,
//! so a numeral is read only after a word that announces a number (cardinal: "Chapter four")
//! or after a regnal name (ordinal: "Henry the eighth"). Only canonical numerals parse, so
//! "IIII" or "VX" stay letters. After any other name, a numeral of two or more of the letters
//! I, V and X is a sequel or mission number ("Artemis III" is "Artemis three", "Apollo XI"
//! "Apollo eleven", and after a title in capitals "GTA VI" is "G-T-A six"); spelled as
//! letters ("I-I-I") it meant nothing to a listener. A lone "V" or "X" there stays a letter
//! ("Malcolm X", "Generation X").

use super::numbers;
use super::rules::{Ctx, Hit};

/// Words after which a numeral is a cardinal ("Part two").
const CARDINAL_CONTEXT: &[&str] = &[
    "act", "appendix", "article", "book", "bowl", "chapter", "class", "episode", "level", "part",
    "phase", "scene", "season", "section", "stage", "title", "type", "vol", "volume", "war",
];

/// Names after which a numeral is a regnal ordinal ("Louis the fourteenth").
const REGNAL_NAMES: &[&str] = &[
    "Alexander",
    "Alfonso",
    "Benedict",
    "Boniface",
    "Carlos",
    "Catherine",
    "Charles",
    "Christian",
    "Clement",
    "Constantine",
    "David",
    "Edward",
    "Elizabeth",
    "Ferdinand",
    "Francis",
    "Frederick",
    "George",
    "Gregory",
    "Gustav",
    "Harald",
    "Henry",
    "Innocent",
    "Isabella",
    "Ivan",
    "James",
    "John",
    "Joseph",
    "Leo",
    "Leopold",
    "Louis",
    "Ludwig",
    "Malcolm",
    "Mary",
    "Nicholas",
    "Olaf",
    "Otto",
    "Paul",
    "Pedro",
    "Peter",
    "Philip",
    "Pius",
    "Ramesses",
    "Richard",
    "Robert",
    "Rudolf",
    "Stephen",
    "Urban",
    "Victor",
    "Wilhelm",
    "William",
];

/// The value of a canonical Roman numeral (I..=MMMCMXCIX).
pub(super) fn parse(s: &str) -> Option<u64> {
    if s.is_empty() || s.len() > 15 {
        return None;
    }
    let value = |c: char| match c {
        'I' => Some(1),
        'V' => Some(5),
        'X' => Some(10),
        'L' => Some(50),
        'C' => Some(100),
        'D' => Some(500),
        'M' => Some(1000),
        _ => None,
    };
    let chars: Vec<u64> = s.chars().map(value).collect::<Option<_>>()?;
    let n = sum(&chars)?;
    (to_roman(n) == s).then_some(n)
}

/// Sum with subtraction for a smaller value before a larger one; canonical form is checked by
/// the caller, which rejects whatever this sums loosely.
fn sum(values: &[u64]) -> Option<u64> {
    let mut total: i64 = 0;
    for (k, &v) in values.iter().enumerate() {
        let signed = i64::try_from(v).ok()?;
        if values.get(k + 1).is_some_and(|&next| next > v) {
            total -= signed;
        } else {
            total += signed;
        }
    }
    u64::try_from(total).ok().filter(|&n| n > 0 && n < 4000)
}

/// The canonical numeral for 1..4000.
fn to_roman(mut n: u64) -> String {
    const TABLE: [(u64, &str); 13] = [
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ];
    let mut out = String::new();
    for (value, numeral) in TABLE {
        while n >= value {
            out.push_str(numeral);
            n -= value;
        }
    }
    out
}

/// A numeral after a context word or regnal name.
pub(super) fn rule(ctx: &Ctx<'_>, i: usize) -> Option<Hit> {
    let core = ctx.toks[i].core;
    // Possessive "Henry VIII's" keeps its 's.
    let (numeral, possessive) = match core.strip_suffix("'s") {
        Some(n) => (n, "'s"),
        None => (core, ""),
    };
    let n = parse(numeral)?;
    // "Vol. II", "Pt. III": an abbreviation's full stop does not part them.
    let abbreviated = ctx
        .prev_core_after_period(i)
        .is_some_and(super::abbreviations::takes_roman);
    let prev = ctx.prev_core(i);
    if abbreviated {
        return Some(Hit::new(
            1,
            format!("{}{possessive}", numbers::cardinal(n, ctx.dialect)),
        ));
    }
    let prev = prev?;
    if CARDINAL_CONTEXT.contains(&prev.to_lowercase().as_str()) {
        return Some(Hit::new(
            1,
            format!("{}{possessive}", numbers::cardinal(n, ctx.dialect)),
        ));
    }
    let single_x = numeral == "X" && prev == "Malcolm";
    if (REGNAL_NAMES.contains(&prev) || prev == "Pope") && !single_x {
        return Some(Hit::new(
            1,
            format!("the {}{possessive}", numbers::ordinal(n, ctx.dialect)),
        ));
    }
    // "GTA VI", "FIFA II": a title written in capitals numbers its sequels too.
    let initials = (2..=5).contains(&prev.len())
        && prev.bytes().all(|b| b.is_ascii_uppercase())
        && !matches!(prev, "US" | "UK")
        && !ctx.shouting;
    if (is_name(prev) || initials)
        && numeral.len() >= 2
        && numeral.chars().all(|c| "IVX".contains(c))
    {
        return Some(Hit::new(
            1,
            format!("{}{possessive}", numbers::cardinal(n, ctx.dialect)),
        ));
    }
    None
}

/// A capitalised word that is not all capitals: "Artemis", "Rocky", not "NASA" or "I".
fn is_name(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(char::is_uppercase) && chars.any(char::is_lowercase)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_numerals_only() {
        assert_eq!(parse("IV"), Some(4));
        assert_eq!(parse("VIII"), Some(8));
        assert_eq!(parse("LVII"), Some(57));
        assert_eq!(parse("MCMXCIX"), Some(1999));
        assert_eq!(parse("IIII"), None);
        assert_eq!(parse("VX"), None);
        assert_eq!(parse("MIX"), Some(1009));
        assert_eq!(parse("Iv"), None);
    }
}
