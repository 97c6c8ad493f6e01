//! Recognising speaker labels and headings in a line, shared by detection and the parsers.
//!
//! The hard part of `Name: text` is telling a label from a sentence with a colon in it ("He
//! said this: it was fine"). The rule: a label is short (at most 5 words, 40 characters), has no
//! sentence punctuation, is followed by whitespace (so `10:30` and `https://` are not labels),
//! and each word starts with a capital or a character without case (digits, emoji, Arabic,
//! Hebrew, CJK), apart from name particles such as "van" or "de". Names the cast header lists are
//! always labels, and so is an all-lower-case label used at least three times in the script
//! (chat logs: `alice: hi`).

use std::collections::{HashMap, HashSet};

use super::cast::speaker_key;
use super::source::SourceLine;

const PARTICLES: [&str; 18] = [
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
}

impl KnownNames {
    pub fn new<'n>(cast: impl IntoIterator<Item = &'n str>, lines: &[SourceLine<'_>]) -> Self {
        let mut keys: HashSet<String> = cast.into_iter().map(speaker_key).collect();
        let mut lower: HashMap<&str, usize> = HashMap::new();
        let mut counts: HashMap<String, usize> = HashMap::new();
        for line in lines.iter().take(5000) {
            let text = strip_line_prefix(line.text);
            let mut offered: Vec<String> = Vec::new();
            if let Some((name, _, _)) = split_label(text) {
                if is_strict_label(name) {
                    keys.insert(speaker_key(name));
                } else if name.split_whitespace().count() <= 3 && is_label_shape(name) {
                    *lower.entry(name).or_default() += 1;
                }
            }
            if let Some(label) = bold_label(text) {
                keys.insert(speaker_key(label.name));
            }
            let trimmed = text.trim();
            offered.extend(period_candidates(trimmed).map(|(n, _)| speaker_key(n)));
            offered.extend(bracket_candidate(trimmed).map(|(n, _)| speaker_key(n)));
            offered.extend(dash_candidate(trimmed).map(|(n, _)| speaker_key(n)));
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
        Self { keys, counts }
    }

    pub fn contains(&self, name: &str) -> bool {
        let key = speaker_key(name);
        self.keys.contains(&key) || self.counts.get(&key).is_some_and(|&n| n >= 2)
    }

    /// How many lines offer `name` as a label (0 if none).
    fn count(&self, name: &str) -> usize {
        let key = speaker_key(name);
        self.counts.get(&key).copied().unwrap_or(0) + usize::from(self.keys.contains(&key))
    }
}

/// The line without a Markdown quote (`> `) or list marker (`- `, `* `, `+ `, `• `, `1. `,
/// `1) `) in front, for recognising labels in lists and quotes.
pub(crate) fn strip_line_prefix(text: &str) -> &str {
    let at = line_prefix_len(text);
    &text[at..]
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

/// `Name: rest` (or a full-width `：`), whatever the name looks like: `(name, name_at, rest_at)`.
fn split_label(text: &str) -> Option<(&str, usize, usize)> {
    let lead = text.len() - text.trim_start().len();
    let head = text.get(lead..)?;
    let limit = head.char_indices().nth(48).map_or(head.len(), |(i, _)| i);
    let (colon, width) = head[..limit]
        .char_indices()
        .find(|&(_, c)| c == ':' || c == '：')
        .map(|(i, c)| (i, c.len_utf8()))?;
    let after = &head[colon + width..];
    if width == 1 && !(after.is_empty() || after.starts_with(char::is_whitespace)) {
        return None;
    }
    let name = head[..colon].trim_end();
    Some((name, lead, lead + colon + width))
}

/// A plain `Name: text` label.
pub(crate) fn plain_label<'a>(text: &'a str, known: &KnownNames) -> Option<Label<'a>> {
    let (name, name_at, rest_at) = split_label(text)?;
    (is_strict_label(name) || (is_label_shape(name) && known.contains(name))).then_some(Label {
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
fn is_label_shape(name: &str) -> bool {
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
fn balanced_parentheses(name: &str) -> bool {
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
fn is_strict_label(name: &str) -> bool {
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

/// The title of a Markdown ATX heading (`## Part two ##`).
pub(crate) fn markdown_heading(trimmed: &str) -> Option<&str> {
    let hashes = trimmed.len() - trimmed.trim_start_matches('#').len();
    if hashes == 0 || hashes > 6 {
        return None;
    }
    let rest = &trimmed[hashes..];
    if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
        return None;
    }
    Some(rest.trim().trim_end_matches('#').trim())
}

/// A name on its own line in a play: `ALGERNON.`, `LADY BRACKNELL`, `JOHN (V.O.)`, or, with
/// `allow_title_case`, `Lady Bracknell.` (the period is then required).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PlayName<'a> {
    pub name: &'a str,
    /// Ended with `.`/`:` or had a screenplay extension such as `(V.O.)`.
    pub marked: bool,
}

pub(crate) fn play_name(trimmed: &str, allow_title_case: bool) -> Option<PlayName<'_>> {
    let (core, extension) = match trimmed
        .strip_suffix(')')
        .and_then(|t| t.rfind('(').map(|i| &t[..i]))
    {
        Some(before) if !before.trim().is_empty() => (before.trim(), true),
        _ => (trimmed, false),
    };
    let stripped = core.strip_suffix(['.', ':']).unwrap_or(core).trim_end();
    let marked = extension || stripped.len() < core.len();
    if !is_play_name_shape(stripped) {
        return None;
    }
    let upper = !stripped.chars().any(char::is_lowercase);
    let title = allow_title_case
        && marked
        && stripped.split_whitespace().all(|w| {
            w.chars().next().is_some_and(char::is_uppercase)
                || PARTICLES.contains(&w.to_lowercase().as_str())
        });
    (upper || title).then_some(PlayName {
        name: stripped,
        marked,
    })
}

/// Every way to read the start of `trimmed` as an upper-case name ended by `.` or `:` with
/// speech after it (`LANE. Yes, sir.`; `MR. WORTHING. Quite.` offers `MR` and `MR. WORTHING`):
/// `(name, byte offset of the speech)`, shortest first.
pub(crate) fn period_candidates(trimmed: &str) -> impl Iterator<Item = (&str, usize)> {
    let limit = trimmed
        .char_indices()
        .nth(48)
        .map_or(trimmed.len(), |(i, _)| i);
    trimmed[..limit].char_indices().filter_map(move |(i, c)| {
        if c != '.' && c != ':' {
            return None;
        }
        let after = &trimmed[i + 1..];
        if !after.starts_with(char::is_whitespace) || after.trim().is_empty() {
            return None;
        }
        let name = trimmed[..i].trim_end();
        (is_play_name_shape(name) && !name.chars().any(char::is_lowercase))
            .then(|| (name, i + 1 + (after.len() - after.trim_start().len())))
    })
}

/// `LANE. Yes, sir.` / `LANE: Yes, sir.`: an upper-case name, then speech on the same line.
/// Returns the name and the byte offset of the speech. Where several readings exist, the name
/// the script uses most as a label wins, then one whose last part is more than one letter (so
/// `HENRIETTA MARLOWE. I … I suppose so.` is Henrietta saying "I"), then the longest.
pub(crate) fn play_same_line_name<'a>(
    trimmed: &'a str,
    known: &KnownNames,
) -> Option<(&'a str, usize)> {
    period_candidates(trimmed).max_by_key(|(name, _)| {
        let last_part = name
            .rsplit(['.', ' '])
            .find(|p| !p.is_empty())
            .unwrap_or(name);
        (known.count(name), last_part.chars().count() > 1, name.len())
    })
}

/// `THE AUNT [at the window] It has been raining.` (Shaw's e-texts): an upper-case name, then a
/// bracketed direction (square or round) where a play puts `.`. Returns the name and the byte
/// offset of the bracket, which starts the speech (the direction is a piece of the turn).
pub(crate) fn bracket_candidate(trimmed: &str) -> Option<(&str, usize)> {
    let open = trimmed.find(['[', '('])?;
    let name = trimmed[..open].trim_end();
    let name = name.strip_suffix(['.', ':']).unwrap_or(name).trim_end();
    let upper = !name.chars().any(char::is_lowercase);
    (open > 0
        && upper
        && is_play_name_shape(name)
        && trimmed[..open].ends_with(char::is_whitespace))
    .then_some((name, open))
}

/// `NAME — text` (em or en dash, or a spaced hyphen): returns the name and the byte offset of
/// the speech. The name must look like a label; callers decide whether it is one.
pub(crate) fn dash_candidate(trimmed: &str) -> Option<(&str, usize)> {
    let limit = trimmed
        .char_indices()
        .nth(48)
        .map_or(trimmed.len(), |(i, _)| i);
    let (at, dash) = trimmed[..limit]
        .char_indices()
        .find(|&(_, c)| c == '—' || c == '–' || c == '-')?;
    if dash == '-' && !(trimmed[..at].ends_with(' ') && trimmed[at + 1..].starts_with(' ')) {
        return None;
    }
    let name = trimmed[..at].trim_end();
    let after = &trimmed[at + dash.len_utf8()..];
    let speech = at + dash.len_utf8() + (after.len() - after.trim_start().len());
    (!after.trim().is_empty() && is_label_shape(name) && name.split_whitespace().count() <= 4)
        .then_some((name, speech))
}

/// Whether a name in a weaker label layout (`NAME.`, `NAME —`, `NAME [...]`) may start a turn
/// in a `Name:` script: the script vouches for it, or it is all upper case.
pub(crate) fn is_weak_label_name(name: &str, known: &KnownNames) -> bool {
    known.contains(name)
        || (name.chars().filter(|c| c.is_alphabetic()).count() >= 2
            && !name.chars().any(char::is_lowercase)
            && name.chars().any(char::is_uppercase))
}

fn is_play_name_shape(name: &str) -> bool {
    const NOT_NAMES: [&str; 22] = [
        "the end",
        "end",
        "curtain",
        "dramatis personae",
        "characters",
        "cast",
        "fade in",
        "fade out",
        "fade to black",
        "cut to",
        "fin",
        "exit",
        "exeunt",
        "blackout",
        "intermission",
        "interval",
        "persons of the play",
        "the persons of the play",
        "scene",
        "act",
        "end of act",
        "continued",
    ];
    let words: Vec<&str> = name.split_whitespace().collect();
    let letters = name.chars().filter(|c| c.is_alphabetic()).count();
    let lower = name.to_lowercase();
    (1..=4).contains(&words.len())
        && letters >= 2
        && name.chars().count() <= 40
        && name.chars().next().is_some_and(char::is_alphabetic)
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c.is_whitespace() || "'’-.&".contains(c))
        && !NOT_NAMES.contains(&lower.as_str())
        && !matches!(
            words[0].to_lowercase().as_str(),
            "enter" | "exit" | "exeunt" | "re-enter"
        )
}

/// A scene heading: `INT. KITCHEN - DAY`, `EXT.`, `ACT I`, `SCENE 2`, `Scene: A garden`,
/// `FIRST ACT`.
pub(crate) fn scene_heading(trimmed: &str) -> bool {
    let words: Vec<&str> = trimmed.split_whitespace().collect();
    let Some(first) = words.first() else {
        return false;
    };
    let bare = first.trim_end_matches(['.', ':', ',', '—', '-']);
    if matches!(
        bare,
        "INT" | "EXT" | "INT./EXT" | "INT/EXT" | "I/E" | "EST" | "INTERIOR" | "EXTERIOR"
    ) && (first.ends_with('.') || words.len() > 1)
    {
        return true;
    }
    let lower = bare.to_lowercase();
    if matches!(lower.as_str(), "act" | "scene" | "prologue" | "epilogue") {
        let punctuated = first.len() > bare.len();
        return words.len() <= 4 || punctuated;
    }
    words.len() <= 3
        && words.last().is_some_and(|w| {
            matches!(
                w.trim_end_matches('.').to_lowercase().as_str(),
                "act" | "scene"
            )
        })
}

#[cfg(test)]
mod tests {
    use super::super::source::split_lines;
    use super::*;

    fn label(s: &str) -> Option<&str> {
        plain_label(s, &KnownNames::default()).map(|l| l.name)
    }

    #[test]
    fn labels_versus_sentences() {
        assert_eq!(label("Alice: Hello"), Some("Alice"));
        assert_eq!(
            label("  Dr. Jane van Helsing: Hi"),
            Some("Dr. Jane van Helsing")
        );
        assert_eq!(label("Speaker 1: Hi"), Some("Speaker 1"));
        assert_eq!(label("🎙️ Host: Hi"), Some("🎙️ Host"));
        assert_eq!(label("أحمد: مرحبا"), Some("أحمد"));
        assert_eq!(label("小明：你好"), Some("小明"));
        assert_eq!(label("Bob:"), Some("Bob"));
        assert_eq!(label("He said this: it was fine"), None);
        assert_eq!(label("At 10:30 we met"), None);
        assert_eq!(label("See https://example.invalid"), None);
        assert_eq!(label("Wait, what: no"), None);
        assert_eq!(label("(laughs): no"), None);
        assert_eq!(label("alice: hi"), None);
        let l = plain_label("  Bob:   hi", &KnownNames::default()).unwrap();
        assert_eq!((l.name_at, l.rest_at), (2, 6));
    }

    #[test]
    fn frequent_lower_case_labels_and_cast_names_are_known() {
        let text = "alice: hi\nbob: yo\nalice: so\nbob: ok\nalice: bye\n";
        let lines = split_lines(text);
        let known = KnownNames::new([], &lines);
        assert_eq!(
            plain_label("alice: x", &known).map(|l| l.name),
            Some("alice")
        );
        assert_eq!(plain_label("bob: x", &known), None, "only twice");
        let known = KnownNames::new(["Bob"], &lines);
        assert!(plain_label("bob: x", &known).is_some());
    }

    #[test]
    fn bold_labels() {
        let l = bold_label("**Alice:** Hello").unwrap();
        assert_eq!((l.name, l.name_at, l.rest_at), ("Alice", 2, 10));
        assert_eq!(bold_label("**Bob**: Hi").map(|l| l.name), Some("Bob"));
        assert_eq!(bold_label("__Ann:__ Hi").map(|l| l.name), Some("Ann"));
        assert_eq!(bold_label("**Important** news"), None);
        assert_eq!(bold_label("* list item: x"), None);
    }

    #[test]
    fn dia_tags_and_headings() {
        assert_eq!(dia_tag("x [S12] y", 2), Some(("12", 5)));
        assert_eq!(dia_tag("[s1]", 0), Some(("1", 4)));
        assert_eq!(dia_tag("[S] [Sx] [S1", 0), None);
        assert_eq!(markdown_heading("## Part two ##"), Some("Part two"));
        assert_eq!(markdown_heading("#hashtag"), None);
        assert_eq!(markdown_heading("####### seven"), None);
    }

    #[test]
    fn play_names_and_scene_headings() {
        let n = |s, t| play_name(s, t).map(|p| p.name);
        assert_eq!(n("ALGERNON.", false), Some("ALGERNON"));
        assert_eq!(n("LADY BRACKNELL", false), Some("LADY BRACKNELL"));
        assert_eq!(n("JOHN (V.O.)", false), Some("JOHN"));
        assert_eq!(n("Lady Bracknell.", true), Some("Lady Bracknell"));
        assert_eq!(n("Lady Bracknell.", false), None);
        assert_eq!(n("Yes, sir.", true), None);
        assert_eq!(n("THE END", false), None);
        assert_eq!(n("THE IMPORTANCE OF BEING EARNEST", false), None);
        let none = KnownNames::default();
        assert_eq!(
            play_same_line_name("LANE. Yes, sir.", &none),
            Some(("LANE", 6))
        );
        assert_eq!(
            play_same_line_name("MR. WORTHING. Quite.", &none),
            Some(("MR. WORTHING", 14))
        );
        assert_eq!(
            play_same_line_name("HENRIETTA MARLOWE. I … I suppose so.", &none),
            Some(("HENRIETTA MARLOWE", 19))
        );
        assert_eq!(play_same_line_name("Lane. Yes.", &none), None);
        assert_eq!(
            bracket_candidate("THE AUNT [at the window] It rains."),
            Some(("THE AUNT", 9))
        );
        assert_eq!(
            bracket_candidate("The aunt [at the window] It rains."),
            None
        );
        assert_eq!(dash_candidate("MAYA — We're live."), Some(("MAYA", 9)));
        assert_eq!(dash_candidate("well-known - fact"), None);
        for h in [
            "INT. KITCHEN - DAY",
            "ACT I",
            "Scene 2",
            "SCENE: Morning-room in Half-Moon Street.",
            "FIRST ACT",
        ] {
            assert!(scene_heading(h), "{h}");
        }
        for h in [
            "Interior decorating is hard work for us all",
            "ALGERNON.",
            "The act of reading is a joy to me",
        ] {
            assert!(!scene_heading(h), "{h}");
        }
    }
}
