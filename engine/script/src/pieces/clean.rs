//! The words' clean-up by layout: emphasis marks, Markdown, XML entities, invisible
//! direction controls, and whitespace, so that only what is spoken reaches the normaliser.

use super::TextStyle;
use crate::model::collapse_whitespace;

/// Drops emphasis marks around a direction (`[_Enter Lane._]` → `Enter Lane.`).
pub(crate) fn clean_direction(s: &str) -> String {
    collapse_whitespace(s.trim().trim_matches(|c| c == '_' || c == '*'))
}

/// WhatsApp's mark at the end of an edited message: the chat's, not the message's.
const EDITED_MARK: &str = "<This message was edited>";

pub(super) fn clean(s: &str, style: TextStyle) -> String {
    let s: String = s
        .replace(EDITED_MARK, "")
        .chars()
        .filter(|&c| !crate::names::is_bidi_control(c))
        .collect();
    match style {
        TextStyle::Plain | TextStyle::Play => strip_emphasis(&crate::labels::strip_cue_tags(&s)),
        TextStyle::Markdown => strip_markdown(&s),
        TextStyle::Xml => decode_entities(&s),
    }
}

/// Drops paired emphasis marks (`_was_`, `*really*`, `**very**`) that e-texts and chat use,
/// leaving lone ones (`snake_case`, `2 * 3`, `*` footnotes) alone.
fn strip_emphasis(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut drop = vec![false; chars.len()];
    let mut open: Vec<usize> = Vec::new();
    for (i, &c) in chars.iter().enumerate() {
        if c != '_' && c != '*' {
            continue;
        }
        let before = i.checked_sub(1).map(|k| chars[k]);
        let after = chars.get(i + 1).copied();
        let closes = before.is_some_and(|b| !b.is_whitespace())
            && after.is_none_or(|a| !a.is_alphanumeric());
        let opens = before.is_none_or(|b| !b.is_alphanumeric())
            && after.is_some_and(|a| !a.is_whitespace());
        if closes {
            if let Some(k) = open.iter().rposition(|&o| chars[o] == c) {
                drop[open[k]] = true;
                drop[i] = true;
                open.truncate(k);
                continue;
            }
        }
        if opens {
            open.push(i);
        }
    }
    chars
        .iter()
        .zip(drop)
        .filter(|&(_, d)| !d)
        .map(|(&c, _)| c)
        .collect()
}

fn strip_markdown(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    for (i, &c) in chars.iter().enumerate() {
        let word_before = i > 0 && chars[i - 1].is_alphanumeric();
        let word_after = chars.get(i + 1).is_some_and(|n| n.is_alphanumeric());
        match c {
            '*' | '`' => {}
            '_' if !(word_before && word_after) => {}
            _ => out.push(c),
        }
    }
    out
}

fn decode_entities(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let after = &rest[amp..];
        let end = after.find(';').filter(|&e| e <= 10);
        let decoded = end.and_then(|e| {
            let name = &after[1..e];
            let c = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "nbsp" => Some(' '),
                "mdash" => Some('—'),
                "ndash" => Some('–'),
                "hellip" => Some('…'),
                "lsquo" => Some('‘'),
                "rsquo" => Some('’'),
                "ldquo" => Some('“'),
                "rdquo" => Some('”'),
                "laquo" => Some('«'),
                "raquo" => Some('»'),
                "euro" => Some('€'),
                "pound" => Some('£'),
                "yen" => Some('¥'),
                "cent" => Some('¢'),
                "deg" => Some('°'),
                "times" => Some('×'),
                "minus" => Some('−'),
                "copy" => Some('©'),
                "reg" => Some('®'),
                "trade" => Some('™'),
                "eacute" => Some('é'),
                "egrave" => Some('è'),
                "aacute" => Some('á'),
                "agrave" => Some('à'),
                "iacute" => Some('í'),
                "oacute" => Some('ó'),
                "uacute" => Some('ú'),
                "ntilde" => Some('ñ'),
                "ccedil" => Some('ç'),
                "auml" => Some('ä'),
                "ouml" => Some('ö'),
                "uuml" => Some('ü'),
                "szlig" => Some('ß'),
                _ => name.strip_prefix('#').and_then(|num| {
                    let code = match num.strip_prefix(['x', 'X']) {
                        Some(hex) => u32::from_str_radix(hex, 16).ok(),
                        None => num.parse().ok(),
                    };
                    code.and_then(char::from_u32)
                }),
            };
            c.map(|c| (c, e))
        });
        if let Some((c, e)) = decoded {
            out.push(c);
            rest = &after[e + 1..];
        } else {
            out.push('&');
            rest = &after[1..];
        }
    }
    out.push_str(rest);
    out
}

/// Collapses whitespace runs to one space, keeping one space at an edge that had whitespace.
pub(super) fn collapse_keeping_edges(s: &str) -> String {
    let mut out = String::new();
    if s.starts_with(char::is_whitespace) {
        out.push(' ');
    }
    out.push_str(&collapse_whitespace(s));
    if s.ends_with(char::is_whitespace) && !out.ends_with(' ') {
        out.push(' ');
    }
    out
}
