//! Python's notion of whitespace, for byte-for-byte parity with kokoro-onnx and phonemizer.
//!
//! The reference pipeline leans on `str.strip()`, `str.split()` and regex `\s`, which all use
//! Python's `str.isspace`. That set is Unicode `White_Space` (Rust's `char::is_whitespace`) plus
//! the four ASCII information separators U+001C..U+001F, so Rust's own `trim` would differ on
//! them.

/// Python's `str.isspace` for one character.
pub(super) fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `s.strip()`.
pub(super) fn strip(s: &str) -> &str {
    s.trim_matches(is_space)
}

/// Python's `s.split()`: runs of whitespace separate words; no empty words.
pub(super) fn split_whitespace(s: &str) -> impl Iterator<Item = &str> {
    s.split(is_space).filter(|w| !w.is_empty())
}

/// Python's `" ".join(s.split())`.
pub(super) fn collapse_whitespace(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in split_whitespace(s) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_whitespace_set() {
        // The exact set Python 3.11 reports for chr(c).isspace() over all of Unicode.
        let python: Vec<u32> = [
            0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680,
        ]
        .into_iter()
        .chain(0x2000..=0x200a)
        .chain([0x2028, 0x2029, 0x202f, 0x205f, 0x3000])
        .collect();
        let ours: Vec<u32> = (0..=0x10_ffff_u32)
            .filter_map(char::from_u32)
            .filter(|&c| is_space(c))
            .map(u32::from)
            .collect();
        assert_eq!(ours, python);
    }

    #[test]
    fn strip_and_collapse() {
        assert_eq!(strip("\u{1f} a b\u{3000}"), "a b");
        assert_eq!(collapse_whitespace("  a \t\n b\u{1c}c  "), "a b c");
        assert_eq!(collapse_whitespace(" \u{a0} "), "");
        assert_eq!(split_whitespace("x  y").collect::<Vec<_>>(), ["x", "y"]);
    }
}
