//! Character-level clean-up before anything reads words, with a map back to the source bytes.
//!
//! Scripts arrive with typographic variety that means the same thing to a listener: curly and
//! straight apostrophes, guillemets, "--" for a dash, "..." for an ellipsis, emoji, invisible
//! joiners. Folding them first keeps every later rule small. Kokoro's vocabulary has `—`, `…`,
//! `"`, `“` and `”`, so those are the forms kept; emoji have no sound and are dropped; arrows are
//! dropped because `→ ↓ ↗ ↘` are intonation tokens in that vocabulary.
//!
//! Every output byte remembers the source character it came from, so sentence ranges found in
//! the cleaned text map back to the author's text for captions.

use std::ops::Range;

/// Cleaned text and, per cleaned byte, the source range of the character that produced it.
pub(super) struct Cleaned {
    pub text: String,
    starts: Vec<usize>,
    ends: Vec<usize>,
}

impl Cleaned {
    /// The source byte range behind a cleaned byte range.
    pub fn source_range(&self, range: &Range<usize>) -> Range<usize> {
        if range.is_empty() {
            let at = self.starts.get(range.start).copied().unwrap_or_default();
            return at..at;
        }
        self.starts[range.start]..self.ends[range.end - 1]
    }

    /// A dash, unless one ends the text already: "about — [crosstalk] — sorry" and "——"
    /// are one pause, not two.
    fn push_dash(&mut self, source: Range<usize>) {
        if !self.text.trim_end_matches([' ', '\t']).ends_with('—') {
            self.push('—', source);
        }
    }

    fn push(&mut self, c: char, source: Range<usize>) {
        self.text.push(c);
        for _ in 0..c.len_utf8() {
            self.starts.push(source.start);
            self.ends.push(source.end);
        }
    }
}

/// True for characters a listener cannot hear: emoji, pictographs and their modifiers, arrows.
pub(super) fn is_silent_symbol(c: char) -> bool {
    if super::MUSIC_SIGNS.contains(&c) {
        return false;
    }
    matches!(u32::from(c),
        0x1F000..=0x1FAFF   // emoji, pictographs, flags' regional indicators, skin tones
        | 0x2190..=0x21FF   // arrows (→ ↓ ↗ ↘ are intonation tokens in Kokoro's vocabulary)
        | 0x2300..=0x23FF   // technical symbols (⌚ ⏰ ...)
        | 0x25A0..=0x27BF   // geometric shapes, misc symbols, dingbats (★ ✓ ☀)
        | 0x2900..=0x297F   // supplemental arrows
        | 0x2B00..=0x2BFF   // misc symbols and arrows (⭐)
        | 0x3030 | 0x303D | 0x3297 | 0x3299
        | 0xFE00..=0xFE0F   // variation selectors
        | 0x200D            // zero-width joiner
        | 0x20E3            // combining keycap
        | 0xE0000..=0xE007F // tags (subdivision flags)
    )
}

/// An arrow that stands for a word: "LAX→JFK" and "Paris → Rome" go "to" (a route, a change
/// of state), "↑ 20%" and "costs ↓5%" go "up" and "down" by an amount. Elsewhere (a bullet, a
/// diagram) arrows stay silent.
fn arrow_word(src: &str, at: usize, c: char) -> Option<&'static str> {
    if !matches!(c, '→' | '⇒' | '⟶' | '⟹' | '↑' | '↓') {
        return None;
    }
    let before = src[..at].trim_end().chars().next_back();
    let after = src[at + c.len_utf8()..].trim_start().chars().next();
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || "%)\"'”".contains(c));
    let amount = after.is_some_and(|c| c.is_ascii_digit() || "+-$€£¥.".contains(c));
    match c {
        '→' | '⇒' | '⟶' | '⟹' if word(before) && word(after) => Some("to"),
        '↑' if amount => Some("up"),
        '↓' if amount => Some("down"),
        _ => None,
    }
}

/// The Mac's modifier key symbols by name (the technical-symbols block they sit in is
/// otherwise silent, which read "⌘-Z" as "dash Z").
fn mac_key(c: char) -> Option<&'static str> {
    Some(match c {
        '⌘' => "Cmd",
        '⌥' => "Option",
        '⇧' => "Shift",
        '⌃' => "Ctrl",
        _ => return None,
    })
}

/// Characters that carry nothing at all and vanish without leaving a space.
fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{200B}' | '\u{200C}' | '\u{2060}' | '\u{FEFF}' | '\u{00AD}' | '\r'
    )
}

/// HTML elements whose tags are markup around words, never words: inline ones vanish, block
/// ones (the second list) leave a space. SSML's tags around words (a request written for
/// another engine) are inline too; its `<break>` is a pause (see [`clean`]).
const INLINE_TAGS: [&str; 24] = [
    "a", "abbr", "b", "big", "cite", "code", "del", "em", "font", "i", "ins", "kbd", "mark", "q",
    "s", "samp", "small", "span", "strike", "strong", "sub", "sup", "tt", "u",
];
/// SSML's tags, inline like the first list.
const SSML_TAGS: [&str; 11] = [
    "speak",
    "emphasis",
    "prosody",
    "say-as",
    "voice",
    "lang",
    "phoneme",
    "audio",
    "amazon:effect",
    "amazon:domain",
    "break",
];
const BLOCK_TAGS: [&str; 21] = [
    "article",
    "blockquote",
    "br",
    "div",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "li",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "td",
    "th",
    "tr",
    "ul",
];

/// The length of the HTML tag `s` starts with (`<b>`, `</span>`, `<br/>`, `<a href="…">`) and
/// whether it is a block element's; `None` when `s` does not start with one. Attributes must
/// look like attributes (`name=value`), so "x <b and c> d" stays comparisons.
fn html_tag(s: &str) -> Option<(usize, bool)> {
    let body = s.strip_prefix('<')?;
    let name_at = usize::from(body.starts_with('/'));
    let name_len = body[name_at..]
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | ':')))
        .unwrap_or(body.len() - name_at);
    let name = body[name_at..name_at + name_len].to_ascii_lowercase();
    let block = BLOCK_TAGS.contains(&name.as_str());
    let ssml_only = SSML_TAGS.contains(&name.as_str());
    if !block && !ssml_only && !INLINE_TAGS.contains(&name.as_str()) {
        return None;
    }
    let rest = &body[name_at + name_len..];
    // The `>` that ends the tag, past any inside a quoted attribute value.
    let mut quote = None;
    let close = rest.char_indices().take(300).find_map(|(i, c)| {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '>') => return Some(i),
            _ => {}
        }
        None
    })?;
    let attributes = rest[..close].trim_end_matches('/');
    let plain = attributes.trim().is_empty();
    let attribute_like = attributes.starts_with(char::is_whitespace)
        && attributes.contains('=')
        && !attributes.contains(['<', '\n']);
    // A bare `<voice>` or `<lang>` opening nothing is a placeholder in a usage line
    // (`banter say <voice> <text>`), spoken as written; SSML's own tags close or carry
    // attributes.
    let bare_ssml = ssml_only
        && plain
        && name_at == 0
        && !rest[..close].ends_with('/')
        && !s.to_ascii_lowercase().contains(&format!("</{name}>"));
    (!bare_ssml && (plain || attribute_like)).then_some((1 + name_at + name_len + close + 1, block))
}

/// `<sup>…</sup>` at `at` holding a footnote's mark or a power: its whole length and what to
/// write for it: nothing after a word (`study<sup>[2]</sup>`, a reference), the superscript
/// digits after a single letter or a digit (`x<sup>2</sup>` is `x²`). `None` for anything else,
/// whose tags alone are dropped.
fn sup_marker(src: &str, at: usize) -> Option<(usize, String)> {
    const OPEN: &str = "<sup>";
    const CLOSE: &str = "</sup>";
    let rest = src.get(at..)?;
    if !rest.get(..OPEN.len())?.eq_ignore_ascii_case(OPEN) {
        return None;
    }
    let inner_at = OPEN.len();
    let inner_len = rest[inner_at..]
        .char_indices()
        .take(12)
        .find_map(|(i, _)| {
            rest[inner_at + i..]
                .get(..CLOSE.len())
                .is_some_and(|t| t.eq_ignore_ascii_case(CLOSE))
                .then_some(i)
        })?;
    let inner = &rest[inner_at..inner_at + inner_len];
    let len = inner_at + inner_len + CLOSE.len();
    let marker = !inner.is_empty()
        && inner
            .chars()
            .any(|c| c.is_ascii_digit() || "*†‡".contains(c))
        && inner
            .chars()
            .all(|c| c.is_ascii_digit() || ",-–[]() *†‡".contains(c));
    if !marker {
        return None;
    }
    let word: String = src[..at]
        .chars()
        .rev()
        .take_while(|c| c.is_alphanumeric())
        .collect();
    let power = inner.chars().all(|c| c.is_ascii_digit())
        && (word.chars().count() == 1
            || word.chars().all(|c| c.is_ascii_digit()) && !word.is_empty());
    if !power {
        return Some((len, String::new()));
    }
    let digits = inner
        .bytes()
        .map(|b| super::symbols::SUPERSCRIPTS[usize::from(b - b'0')])
        .collect();
    Some((len, digits))
}

/// Folds typography into the forms later rules expect (see the module docs).
pub(super) fn clean(src: &str) -> Cleaned {
    let mut out = Cleaned {
        text: String::with_capacity(src.len()),
        starts: Vec::with_capacity(src.len()),
        ends: Vec::with_capacity(src.len()),
    };
    let mut chars = src.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let end = at + c.len_utf8();
        if let Some(word) = arrow_word(src, at, c) {
            for k in format!(" {word} ").chars() {
                out.push(k, at..end);
            }
            continue;
        }
        match c {
            '-' if src[end..].starts_with('-') => {
                // "--" and "---" are typewriter dashes.
                let run = src[at..].bytes().take_while(|&b| b == b'-').count();
                for _ in 1..run {
                    chars.next();
                }
                out.push_dash(at..at + run);
            }
            '.' if src[end..].starts_with("..") || src[end..].starts_with(" . .") => {
                let mut stop = end;
                loop {
                    let rest = &src[stop..];
                    if rest.starts_with('.') {
                        stop += 1;
                    } else if rest.starts_with(" .") {
                        stop += 2;
                    } else {
                        break;
                    }
                }
                while chars.peek().is_some_and(|&(i, _)| i < stop) {
                    chars.next();
                }
                out.push('…', at..stop);
            }
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' | '`' => {
                out.push('\'', at..end);
            }
            '«' | '„' | '\u{201F}' => out.push('“', at..end),
            '»' => out.push('”', at..end),
            '\u{2033}' => out.push('"', at..end),
            '—' | '\u{2015}' => out.push_dash(at..end),
            '\u{2012}' => out.push('–', at..end),
            '\u{2010}' | '\u{2011}' | '\u{2212}' => out.push('-', at..end),
            '\u{2024}' => out.push('.', at..end),
            '\n' => out.push('\n', at..end),
            '<' => {
                // `study<sup>[2]</sup>`: a footnote's mark is not spoken; `x<sup>2</sup>` is
                // the power `x²` that later rules say. Other markup pasted with the text (`<b>`,
                // `<br/>`, a link) is not spoken; a block element parts the words around it.
                // Anything else is a less-than sign.
                let (len, said) = if let Some(sup) = sup_marker(src, at) {
                    sup
                } else if let Some((len, block)) = html_tag(&src[at..]) {
                    let tag = &src[at..at + len];
                    let pause = tag.len() > 6
                        && tag
                            .get(..6)
                            .is_some_and(|t| t.eq_ignore_ascii_case("<break"));
                    let said_before = out.text.trim_end().ends_with(|c: char| c.is_alphanumeric());
                    // SSML's `<break/>` between words: a dash, which Kokoro pauses on (a
                    // script's breaks are real pauses: the script crate reads them first).
                    if pause && said_before {
                        out.push_dash(at..at + len);
                    }
                    (
                        len,
                        if block || pause {
                            " ".to_owned()
                        } else {
                            String::new()
                        },
                    )
                } else {
                    out.push(c, at..end);
                    continue;
                };
                while chars.peek().is_some_and(|&(i, _)| i < at + len) {
                    chars.next();
                }
                for c in said.chars() {
                    out.push(c, at..at + len);
                }
            }
            c if mac_key(c).is_some() => {
                // "⌘Z", "⌘⇧P": the keys by name, joined as a shortcut ("Cmd-Shift-P").
                for k in mac_key(c).unwrap_or_default().chars() {
                    out.push(k, at..end);
                }
                let joined = chars
                    .peek()
                    .is_some_and(|&(_, n)| n.is_alphanumeric() || mac_key(n).is_some());
                if joined {
                    out.push('-', at..end);
                }
            }
            c if is_invisible(c) => {}
            c if c.is_whitespace() || c.is_control() || is_silent_symbol(c) => {
                out.push(' ', at..end);
            }
            c => out.push(c, at..end),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_typography() {
        let c = clean("It’s «fine» -- really... ok . . . 👍🏽 go\u{200B}od");
        assert_eq!(c.text, "It's “fine” — really… ok …    good");
    }

    #[test]
    fn html_tags_are_not_words() {
        assert_eq!(clean("<b>Really</b> glad").text, "Really glad");
        assert_eq!(clean("One<br>two<BR />three").text, "One two three");
        assert_eq!(
            clean("Click <a href=\"https://x.com/a>b\">here</a>.").text,
            "Click here."
        );
        // SSML pasted from a request written for another engine: tags unspoken, a break
        // between words a pause.
        assert_eq!(
            clean("<speak>Hello <break time=\"1s\"/> there. <break/> <say-as interpret-as=\"characters\">NASA</say-as></speak>").text,
            "Hello —  there.   NASA"
        );
        for kept in [
            "x <b and c> d",
            "a < b",
            "<3 you",
            "<bogus>",
            "<b",
            "<break-even>",
        ] {
            assert_eq!(clean(kept).text, kept);
        }
    }

    #[test]
    fn a_run_of_dashes_is_one_pause() {
        assert_eq!(clean("about — — sorry").text, "about —  sorry");
        assert_eq!(clean("back. —— So").text, "back. — So");
        assert_eq!(clean("a -- -- b").text, "a —  b");
    }

    #[test]
    fn maps_back_to_source() {
        let src = "a😀 b… c";
        let c = clean(src);
        assert_eq!(c.text, "a  b… c");
        let b = c.text.find('b').unwrap();
        assert_eq!(&src[c.source_range(&(b..b + 4))], "b…");
        let src = "x... y";
        let c = clean(src);
        assert_eq!(
            &src[c.source_range(&(0..c.text.find(' ').unwrap()))],
            "x..."
        );
    }
}
