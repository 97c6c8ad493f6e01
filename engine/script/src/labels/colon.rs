//! `Name: text` labels: the strict rule (short, no sentence punctuation, capitalised words
//! or words without case, name particles allowed), the names a script vouches for beyond it
//! ([`KnownNames`]), Markdown bold labels, quote and list markers before them, and Dia tags.

use std::collections::{HashMap, HashSet};

use super::{
    bracket_candidate, bracketed_name, dash_candidate, period_candidates, play_name, tab_candidate,
    timestamp_len, title_period_candidate, without_timestamp,
};
use crate::cast::speaker_key;
use crate::source::SourceLine;

pub(super) const PARTICLES: [&str; 18] = [
    "van", "von", "der", "den", "de", "da", "di", "del", "la", "le", "du", "of", "the", "and", "y",
    "bin", "al", "ibn",
];

/// A label found at the start of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Label<'a> {
    pub name: &'a str,
    /// Byte offset of the label's first character in the line.
    pub name_at: usize,
    /// Byte offset where the speech after the label starts.
    pub rest_at: usize,
}

/// Names the script itself vouches for, so labels can be accepted beyond the strict rule.
///
/// A name is known if the cast lists it, if it is used as a strict `Name:` label anywhere (so
/// `bob:` after `BOB:` is Bob again), if an all-lower-case label is used at least three times
/// (chat logs: `alice: hi`), or if it stands in a label position (`NAME.`, `NAME [...]`,
/// `NAME —`, a name alone on its line) on at least two lines.
#[derive(Debug, Clone, Default)]
pub(crate) struct KnownNames {
    keys: HashSet<String>,
    /// How many lines offer each name (key) as a label in some layout.
    counts: HashMap<String, usize>,
    /// How many paragraphs start with each title-case name and a full stop (`Lane.  Yes.`).
    title_counts: HashMap<String, usize>,
    /// The script writes its speakers as `[Name] text`: three lines or more do, and one name
    /// does more than once, so a name heard once that way is a speaker too.
    bracket_layout: bool,
}

impl KnownNames {
    pub fn new<'n>(cast: impl IntoIterator<Item = &'n str>, lines: &[SourceLine<'_>]) -> Self {
        let mut keys: HashSet<String> = cast.into_iter().map(speaker_key).collect();
        let mut lower: HashMap<&str, usize> = HashMap::new();
        let mut counts: HashMap<String, usize> = HashMap::new();
        let mut title_counts: HashMap<String, usize> = HashMap::new();
        let mut bracketed: HashMap<String, usize> = HashMap::new();
        for (index, line) in lines.iter().enumerate().take(5000) {
            let text = strip_line_prefix(line.text);
            let paragraph_start = index == 0 || lines[index - 1].text.trim().is_empty();
            if paragraph_start {
                if let Some((name, _)) = title_period_candidate(text.trim()) {
                    *title_counts.entry(speaker_key(name)).or_default() += 1;
                }
            }
            let mut offered: Vec<String> = Vec::new();
            if let Some((name, _, _, spaced)) = split_label(text) {
                let name = without_timestamp(name);
                if spaced && is_strict_label(name) {
                    keys.insert(speaker_key(name));
                } else if spaced && name.split_whitespace().count() <= 3 && is_label_shape(name) {
                    *lower.entry(name).or_default() += 1;
                }
            }
            if let Some(label) = bold_label(text) {
                keys.insert(speaker_key(label.name));
            }
            let trimmed = text.trim();
            offered.extend(period_candidates(trimmed).map(|(n, _)| speaker_key(n)));
            offered.extend(bracket_candidate(trimmed).map(|(n, _)| speaker_key(n)));
            if let Some((a, b, _)) = bracketed_name(trimmed) {
                let key = speaker_key(&trimmed[a..b]);
                *bracketed.entry(key.clone()).or_default() += 1;
                offered.push(key);
            }
            offered.extend(dash_candidate(trimmed).map(|(n, _)| speaker_key(n)));
            offered.extend(tab_candidate(trimmed).map(|(n, _)| speaker_key(n)));
            if let Some(n) = play_name(trimmed, true) {
                offered.push(speaker_key(n.name));
            }
            offered.sort_unstable();
            offered.dedup();
            for key in offered {
                *counts.entry(key).or_default() += 1;
            }
        }
        keys.extend(
            lower
                .into_iter()
                .filter(|&(_, n)| n >= 3)
                .map(|(name, _)| speaker_key(name)),
        );
        let bracket_layout =
            bracketed.values().sum::<usize>() >= 3 && bracketed.values().any(|&n| n >= 2);
        Self {
            keys,
            counts,
            title_counts,
            bracket_layout,
        }
    }

    /// Whether `[name] text` starts a turn: the name is known, or the script is written so.
    pub fn vouches_for_bracketed(&self, name: &str) -> bool {
        self.bracket_layout || self.contains(name)
    }

    /// Whether paragraphs start with `name.` in title case often enough (three times, or the
    /// name is known otherwise) for a `Name.  speech` line to be read as a label.
    pub fn vouches_for_title_label(&self, name: &str) -> bool {
        let key = speaker_key(name);
        let n = self.title_counts.get(&key).copied().unwrap_or(0);
        n >= 3 || (n >= 1 && self.keys.contains(&key))
    }

    pub fn contains(&self, name: &str) -> bool {
        let key = speaker_key(name);
        self.keys.contains(&key) || self.counts.get(&key).is_some_and(|&n| n >= 2)
    }

    /// How many lines offer `name` as a label (0 if none).
    pub fn count(&self, name: &str) -> usize {
        let key = speaker_key(name);
        self.counts.get(&key).copied().unwrap_or(0) + usize::from(self.keys.contains(&key))
    }
}

/// The line without a Markdown quote (`> `), list marker (`- `, `* `, `+ `, `• `, `1. `,
/// `1) `) or timestamp (`[00:01:02] `) in front, for recognising labels in lists and quotes.
pub(crate) fn strip_line_prefix(text: &str) -> &str {
    let at = line_prefix_len(text);
    let rest = &text[at..];
    let lead = rest.len() - rest.trim_start().len();
    &rest[lead + timestamp_len(&rest[lead..])..]
}

/// Byte length of a quote or list marker (with its spaces) at the start of `text`, or 0.
pub(crate) fn line_prefix_len(text: &str) -> usize {
    let lead = text.len() - text.trim_start().len();
    let mut at = lead;
    while text[at..].starts_with('>') {
        at += 1;
        at += text[at..].len() - text[at..].trim_start().len();
    }
    let rest = &text[at..];
    let marker = if rest.starts_with(['-', '*', '+', '•', '–']) {
        rest.chars().next().map_or(0, char::len_utf8)
    } else {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if (1..=3).contains(&digits) && rest[digits..].starts_with(['.', ')']) {
            digits + 1
        } else {
            0
        }
    };
    if marker > 0 && rest[marker..].starts_with([' ', '\t']) {
        at += marker;
        at += text[at..].len() - text[at..].trim_start().len();
    }
    if at == lead {
        0
    } else {
        at
    }
}

/// `Name: rest` (or a full-width `：`), whatever the name looks like: `(name, name_at, rest_at,
/// spaced)`, where `spaced` says the colon is full-width or followed by whitespace or nothing.
pub(super) fn split_label(text: &str) -> Option<(&str, usize, usize, bool)> {
    let lead = text.len() - text.trim_start().len();
    let head = text.get(lead..)?;
    let limit = head.char_indices().nth(48).map_or(head.len(), |(i, _)| i);
    // a colon inside brackets belongs to them (`Priya (00:00:09): Ten`)
    let mut depth = 0i32;
    let (colon, width) = head[..limit]
        .char_indices()
        .find(|&(_, c)| {
            match c {
                '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                _ => {}
            }
            depth <= 0 && (c == ':' || c == '：')
        })
        .map(|(i, c)| (i, c.len_utf8()))?;
    let after = &head[colon + width..];
    let name = head[..colon].trim_end();
    let spaced = width > 1 || after.is_empty() || after.starts_with(char::is_whitespace);
    Some((name, lead, lead + colon + width, spaced))
}

/// A plain `Name: text` label. An ASCII colon needs a space after it (`10:30`, `https://`),
/// except after a name the script already uses as a label (`小明:The chart…` after `小明：`).
pub(crate) fn plain_label<'a>(text: &'a str, known: &KnownNames) -> Option<Label<'a>> {
    let (name, name_at, rest_at, spaced) = split_label(text)?;
    let bare = without_timestamp(name); // `Priya (00:00:09): …`
    let vouched = is_label_shape(bare) && known.contains(bare);
    ((spaced && is_strict_label(bare)) || vouched).then_some(Label {
        name,
        name_at,
        rest_at,
    })
}

/// A Markdown label: `**Name:** text`, `**Name**: text`, `__Name:__`, `*Name:*`.
pub(crate) fn bold_label(text: &str) -> Option<Label<'_>> {
    let lead = text.len() - text.trim_start().len();
    let head = &text[lead..];
    let marker = ["**", "__", "*", "_"]
        .into_iter()
        .find(|m| head.starts_with(m))?;
    let inner_at = lead + marker.len();
    let body = &text[inner_at..];
    let end = body.find(marker)?;
    let inner = &body[..end];
    let after_at = inner_at + end + marker.len();
    let (name, rest_at) = if let Some(name) = inner.trim_end().strip_suffix(':') {
        (name, after_at)
    } else if text[after_at..].starts_with(':') {
        (inner, after_at + 1)
    } else {
        return None;
    };
    let name = name.trim();
    (is_label_shape(name) && !name.is_empty()).then_some(Label {
        name,
        name_at: inner_at + (inner.len() - inner.trim_start().len()),
        rest_at,
    })
}

/// Short, no sentence punctuation, not starting like a list, a quote or a number.
pub(super) fn is_label_shape(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    name.chars().count() <= 40
        && name.split_whitespace().count() <= 5
        && !first.is_ascii_digit()
        && !first.is_whitespace()
        && !"-–—'‘’~+".contains(first)
        && !name
            .chars()
            .any(|c| "?!,;\"“”[]{}<>|/\\=*#@_`:".contains(c) || c.is_control())
        && balanced_parentheses(name)
}

/// `Ana (Annie)`: parentheses in a name must pair up, and the name cannot start with one.
pub(super) fn balanced_parentheses(name: &str) -> bool {
    let mut depth = 0i32;
    for c in name.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if !(0..=1).contains(&depth) {
            return false;
        }
    }
    depth == 0 && !name.starts_with('(')
}

/// The strict label rule of the module docs.
pub(super) fn is_strict_label(name: &str) -> bool {
    is_label_shape(name)
        && name.split_whitespace().all(|word| {
            word.chars().next().is_some_and(|c| !c.is_lowercase())
                || PARTICLES.contains(&word.to_lowercase().as_str())
        })
        && name.chars().next().is_some_and(|c| !c.is_lowercase())
}

/// `[S1]`-style Dia tag at byte `at` of `text`: returns the speaker number's text and the tag's
/// length in bytes.
pub(crate) fn dia_tag(text: &str, at: usize) -> Option<(&str, usize)> {
    let rest = text.get(at..)?.strip_prefix('[')?;
    let rest = rest.strip_prefix(['S', 's'])?;
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || digits > 3 || !rest[digits..].starts_with(']') {
        return None;
    }
    Some((&rest[..digits], digits + 3))
}
