//! Words of one cleaned sentence, each split into leading punctuation, core and trailing
//! punctuation.
//!
//! Rules match on cores ("$5.50", "U.S", "3:45pm") and keep the punctuation around them, which
//! Kokoro pauses on. Dashes and ellipses become tokens of their own so that `I think—` and
//! `word—word` read the same as the spaced forms. A trailing full stop stays in `trail`; rules
//! for abbreviations may claim it.

/// Characters stripped from the front of a word.
const LEAD: &[char] = &['"', '“', '(', '[', '{', '\'', '¡', '¿', '*', '_'];
/// Characters stripped from the end of a word.
const TRAIL: &[char] = &[
    '"', '”', ')', ']', '}', '\'', '.', ',', ';', ':', '!', '?', '*', '_',
];

/// A word of the sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Token<'a> {
    pub lead: &'a str,
    pub core: &'a str,
    pub trail: &'a str,
    /// Whitespace came before this token in the source (or it is the first).
    pub space_before: bool,
}

impl Token<'_> {
    /// Nothing separates this token from the next but whitespace: no trailing punctuation.
    pub fn bare_end(&self) -> bool {
        self.trail.is_empty()
    }
}

/// Splits one sentence into tokens.
pub(super) fn tokenize(sentence: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    for word in sentence.split_whitespace() {
        let mut space_before = true;
        let mut rest = word;
        while !rest.is_empty() {
            let cut = rest.find(['—', '…']).unwrap_or(rest.len());
            if cut > 0 {
                out.push(split_word(&rest[..cut], space_before));
                space_before = false;
            }
            rest = &rest[cut..];
            if let Some(mark) = rest.chars().next() {
                let len = mark.len_utf8();
                // Closing punctuation right after a dash belongs to it: `I think—"`.
                let trail_len = rest[len..].len()
                    - rest[len..]
                        .trim_start_matches(|c: char| TRAIL.contains(&c) && c != '.')
                        .len();
                out.push(Token {
                    lead: "",
                    core: &rest[..len],
                    trail: &rest[len..len + trail_len],
                    space_before,
                });
                space_before = false;
                rest = &rest[len + trail_len..];
            }
        }
    }
    out
}

fn split_word(word: &str, space_before: bool) -> Token<'_> {
    let mut lead_len = 0;
    for c in word.chars() {
        let next = word[lead_len + c.len_utf8()..].chars().next();
        // '90s keeps its apostrophe.
        if !LEAD.contains(&c) || c == '\'' && next.is_some_and(|n| n.is_ascii_digit()) {
            break;
        }
        lead_len += c.len_utf8();
    }
    let body = &word[lead_len..];
    let core = body.trim_end_matches(TRAIL);
    // Possessive "James'" and plural "the 90s'" keep no special meaning; the quote is trail.
    Token {
        lead: &word[..lead_len],
        core,
        trail: &body[core.len()..],
        space_before,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cores(s: &str) -> Vec<&str> {
        tokenize(s).iter().map(|t| t.core).collect()
    }

    #[test]
    fn punctuation_is_peeled() {
        let t = tokenize("“(Hello,” she said) '90s U.S.");
        assert_eq!(t[0].lead, "“(");
        assert_eq!(t[0].core, "Hello");
        assert_eq!(t[0].trail, ",”");
        assert_eq!(t[3].core, "'90s");
        assert_eq!(t[4].core, "U.S");
        assert_eq!(t[4].trail, ".");
    }

    #[test]
    fn dashes_and_ellipses_are_tokens() {
        assert_eq!(
            cores("I think—no… maybe"),
            ["I", "think", "—", "no", "…", "maybe"]
        );
        let t = tokenize("\"I think—\"");
        assert_eq!(t[2].core, "—");
        assert_eq!(t[2].trail, "\"");
        assert!(!t[2].space_before);
    }
}
