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
    /// One word of a name joined by underscores (`OPENAI_API_KEY`): a word among words,
    /// whatever its neighbours' case.
    pub in_name: bool,
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
                let piece = &rest[..cut];
                for (k, part) in identifier_parts(piece).enumerate() {
                    let mut token = split_word(part, space_before || k > 0);
                    token.in_name = part.len() < piece.len();
                    out.push(token);
                }
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
                    in_name: false,
                });
                space_before = false;
                rest = &rest[len + trail_len..];
            }
        }
    }
    out
}

/// `top_p`, `OPENAI_API_KEY`: a name joined by underscores is its words ("top p", "OPENAI
/// API KEY", each read by the rules as a word of its own); the underscore was silent, which
/// ran them together ("topp"). Addresses, handles and paths keep theirs (`@jane_doe`,
/// `jane_doe@example.com`), as do markdown's `_emphasis_` marks at a word's ends.
fn identifier_parts(word: &str) -> impl Iterator<Item = &str> {
    let bytes = word.as_bytes();
    let joined = (1..bytes.len().saturating_sub(1)).any(|k| {
        bytes[k] == b'_'
            && bytes[k - 1].is_ascii_alphanumeric()
            && bytes[k + 1].is_ascii_alphanumeric()
    });
    // A full stop before a letter is a domain's or a file's ("jane_doe.com", "my_app.py").
    let inner = word.trim_end_matches(TRAIL);
    let dotted = inner
        .as_bytes()
        .windows(2)
        .any(|w| w[0] == b'.' && w[1].is_ascii_alphabetic());
    let address = dotted || inner.contains(['@', '/', '#', ':', '\\']);
    // Cleaned text has no NUL (control characters became spaces): splitting at it keeps the
    // word whole without a second iterator type.
    let at = if joined && !address { '_' } else { '\0' };
    word.split(at).filter(|p| !p.is_empty())
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
        in_name: false,
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
    fn underscores_join_words_of_a_name_but_not_of_an_address() {
        assert_eq!(
            cores("set top_p and OPENAI_API_KEY"),
            ["set", "top", "p", "and", "OPENAI", "API", "KEY"]
        );
        assert_eq!(
            cores("@jane_doe jane_doe@x.com __init__ _so_"),
            ["@jane_doe", "jane_doe@x.com", "init", "so"]
        );
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
