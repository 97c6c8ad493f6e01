//! Numbers written with European separators, in English text: `€1.500,00`, `1.234.567`,
//! `€2,50`. A European author writing in English keeps them, and the English rules read the dots
//! as decimal points and the commas as list commas: `€1.500,00` was "one-five hundred-zero
//! zero", its euro sign lost, and `€2,50` was "two-fifty".
//!
//! Only the forms no English writer uses are rewritten, swapping `.` and `,` in place (the same
//! bytes, so every range still maps to the source): a dot before three digits then a comma
//! (`1.500,00`), two dot groups of three digits or more (`1.234.567`), and a comma before two
//! decimals next to a currency sign (`€2,50`, `2,50 €`). `1.500` alone, and `3,5` without a
//! currency, are left for the English reading (a decimal, a list).

/// `text` with the European-formatted numbers in it rewritten in place to English separators.
pub(super) fn to_english_separators(text: &mut String) {
    let bytes = text.as_bytes();
    let mut swaps: Vec<(usize, usize)> = Vec::new(); // byte ranges whose `.` and `,` swap
    let mut i = 0;
    while i < bytes.len() {
        let starts_run = bytes[i].is_ascii_digit()
            && (i == 0
                || !(bytes[i - 1].is_ascii_alphanumeric() || matches!(bytes[i - 1], b'.' | b',')));
        if !starts_run {
            i += 1;
            continue;
        }
        let mut end = i;
        while end < bytes.len()
            && (bytes[end].is_ascii_digit() || matches!(bytes[end], b'.' | b','))
        {
            end += 1;
        }
        // A sentence's full stop or a list comma after the number is not part of it.
        let mut run_end = end;
        while run_end > i && matches!(bytes[run_end - 1], b'.' | b',') {
            run_end -= 1;
        }
        let glued = end < bytes.len() && bytes[end].is_ascii_alphabetic();
        if !glued && is_european(&text[i..run_end], || currency_beside(text, i, run_end)) {
            swaps.push((i, run_end));
        }
        i = end;
    }
    for (from, to) in swaps {
        let swapped: String = text[from..to]
            .chars()
            .map(|c| match c {
                '.' => ',',
                ',' => '.',
                other => other,
            })
            .collect();
        text.replace_range(from..to, &swapped);
    }
}

/// Whether `number` (digits, dots and commas, starting and ending with a digit) is written the
/// European way in a form English never uses; `currency` says whether a sign is beside it.
fn is_european(number: &str, currency: impl Fn() -> bool) -> bool {
    let (whole, decimals) = match number.split_once(',') {
        Some((w, d)) => (w, Some(d)),
        None => (number, None),
    };
    if decimals.is_some_and(|d| d.is_empty() || !d.bytes().all(|b| b.is_ascii_digit())) {
        return false;
    }
    let groups: Vec<&str> = whole.split('.').collect();
    let grouped = groups.len() >= 2
        && (1..=3).contains(&groups[0].len())
        && groups[0].bytes().all(|b| b.is_ascii_digit())
        && groups[1..]
            .iter()
            .all(|g| g.len() == 3 && g.bytes().all(|b| b.is_ascii_digit()));
    match decimals {
        // `1.500,00`: thousands by dots, then a decimal comma.
        Some(_) if grouped => true,
        // `€2,50`: a decimal comma with cents, beside a currency.
        Some(d) => groups.len() == 1 && d.len() == 2 && currency(),
        // `1.234.567`: two dot groups or more.
        None => grouped && groups.len() >= 3,
    }
}

/// Whether a currency sign the money rules know sits right before `start` or after `end` (a
/// space between allowed).
fn currency_beside(text: &str, start: usize, end: usize) -> bool {
    let before = text[..start].trim_end_matches(' ').chars().next_back();
    let after = text[end..].trim_start_matches(' ').chars().next();
    [before, after]
        .into_iter()
        .flatten()
        .any(|c| super::money::sign(c.encode_utf8(&mut [0; 4])).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn english(text: &str) -> String {
        let mut text = text.to_owned();
        to_english_separators(&mut text);
        text
    }

    #[test]
    fn european_forms_become_english_and_english_ones_stay() {
        for (european, english_form) in [
            ("It cost €1.500,00.", "It cost €1,500.00."),
            ("It cost 1.500,00 € in all.", "It cost 1,500.00 € in all."),
            (
                "Population: 1.234.567 people.",
                "Population: 1,234,567 people.",
            ),
            ("Only €2,50 each, or 2,50 €.", "Only €2.50 each, or 2.50 €."),
        ] {
            assert_eq!(english(european), english_form);
        }
        for text in [
            "It cost $1,500.00, or 1.5 million.",
            "Version 2.0.1 and 1.500 and pages 3,5 and 12,34.",
            "IP 192.168.1.1 and 10.000.000x.",
            "We had 3,50 votes, then 1.234.567.",
        ] {
            let expected = if text.ends_with("1.234.567.") {
                text.replace("1.234.567.", "1,234,567.")
            } else {
                text.to_owned()
            };
            assert_eq!(english(text), expected, "{text}");
        }
    }
}
