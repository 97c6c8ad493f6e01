//! Canonical decomposition (NFD) exactly as Python's `unicodedata.normalize("NFD", s)`, which
//! piper-tts applies to espeak's phonemes. The tables (module `nfd_table`) are generated from the
//! Python that runs piper-tts, so both sides agree on the Unicode version.

use super::nfd_table::{COMBINING_CLASSES, DECOMPOSITIONS};

/// Hangul syllable decomposition constants (Unicode section 3.12).
const S_BASE: u32 = 0xAC00;
const L_BASE: u32 = 0x1100;
const V_BASE: u32 = 0x1161;
const T_BASE: u32 = 0x11A7;
const T_COUNT: u32 = 28;
const N_COUNT: u32 = 21 * T_COUNT;
const S_COUNT: u32 = 19 * N_COUNT;

/// `text` in Normalization Form D, as a list of code points.
pub(super) fn nfd_chars(text: &str) -> Vec<char> {
    let mut out: Vec<char> = Vec::with_capacity(text.len());
    for c in text.chars() {
        decompose(c, &mut out);
    }
    canonical_order(&mut out);
    out
}

fn decompose(c: char, out: &mut Vec<char>) {
    let u = u32::from(c);
    if (S_BASE..S_BASE + S_COUNT).contains(&u) {
        let s = u - S_BASE;
        let jamo = [
            Some(L_BASE + s / N_COUNT),
            Some(V_BASE + (s % N_COUNT) / T_COUNT),
            (!s.is_multiple_of(T_COUNT)).then(|| T_BASE + s % T_COUNT),
        ];
        out.extend(jamo.into_iter().flatten().filter_map(char::from_u32));
        return;
    }
    match DECOMPOSITIONS.binary_search_by_key(&c, |&(k, _)| k) {
        Ok(i) => out.extend(DECOMPOSITIONS[i].1.chars()),
        Err(_) => out.push(c),
    }
}

/// The canonical combining class of `c` (0 for starters).
fn combining_class(c: char) -> u8 {
    let i = COMBINING_CLASSES.partition_point(|&(first, _, _)| first <= c);
    match i.checked_sub(1).map(|i| COMBINING_CLASSES[i]) {
        Some((_, last, class)) if c <= last => class,
        _ => 0,
    }
}

/// The canonical ordering algorithm: every run of non-starters stably sorted by class.
fn canonical_order(chars: &mut [char]) {
    let mut start = 0;
    while start < chars.len() {
        if combining_class(chars[start]) == 0 {
            start += 1;
            continue;
        }
        let end = chars[start..]
            .iter()
            .position(|&c| combining_class(c) == 0)
            .map_or(chars.len(), |n| start + n);
        chars[start..end].sort_by_key(|&c| combining_class(c));
        start = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nfd(s: &str) -> String {
        nfd_chars(s).into_iter().collect()
    }

    #[test]
    fn decomposes_like_python() {
        // Python: unicodedata.normalize("NFD", ...)
        assert_eq!(nfd("ç"), "c\u{327}");
        assert_eq!(nfd("ɔ̃"), "ɔ\u{303}");
        assert_eq!(nfd("ǘ"), "u\u{308}\u{301}");
        assert_eq!(nfd("ạ\u{302}"), "a\u{323}\u{302}");
        assert_eq!(nfd("a\u{302}\u{323}"), "a\u{323}\u{302}");
        assert_eq!(nfd("한"), "\u{1112}\u{1161}\u{11ab}");
        assert_eq!(nfd("가"), "\u{1100}\u{1161}");
        assert_eq!(nfd("ɪ ˈæ"), "ɪ ˈæ");
        assert_eq!(nfd("\u{212b}"), "A\u{30a}");
    }
}
