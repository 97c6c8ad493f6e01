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
    /// How many paragraphs start with each title-case name and a full stop (`Lane.  Yes.`).
    title_counts: HashMap<String, usize>,
}

impl KnownNames {
    pub fn new<'n>(cast: impl IntoIterator<Item = &'n str>, lines: &[SourceLine<'_>]) -> Self {
        let mut keys: HashSet<String> = cast.into_iter().map(speaker_key).collect();
        let mut lower: HashMap<&str, usize> = HashMap::new();
        let mut counts: HashMap<String, usize> = HashMap::new();
        let mut title_counts: HashMap<String, usize> = HashMap::new();
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
        Self {
            keys,
            counts,
            title_counts,
        }
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
fn split_label(text: &str) -> Option<(&str, usize, usize, bool)> {
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
    // `Sarah Chen  0:07` (a transcript's speaker line): the timestamp marks it as a name
    let untimed = without_timestamp(trimmed);
    let stamped = untimed.len() < trimmed.trim_end().len();
    let trimmed = untimed;
    let (core, extension) = match trimmed
        .strip_suffix(')')
        .and_then(|t| t.rfind('(').map(|i| &t[..i]))
    {
        Some(before) if !before.trim().is_empty() => (before.trim(), true),
        _ => (trimmed, false),
    };
    let stripped = core.strip_suffix(['.', ':']).unwrap_or(core).trim_end();
    let marked = extension || stamped || stripped.len() < core.len();
    if !is_play_name_shape(stripped) || has_sentence_break(stripped) {
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

/// Abbreviations a name may contain before a full stop and a space (`MR. WORTHING`).
const ABBREVIATIONS: [&str; 22] = [
    "mr", "mrs", "ms", "mx", "dr", "st", "sr", "jr", "prof", "rev", "capt", "col", "gen", "lt",
    "sgt", "hon", "mme", "mlle", "messrs", "fr", "sen", "gov",
];

/// Whether the full stop (or colon) ending `before` is an abbreviation's or an initial's.
fn ends_in_abbreviation(before: &str) -> bool {
    let word = before.rsplit(char::is_whitespace).next().unwrap_or("");
    word.chars().count() <= 1 || ABBREVIATIONS.contains(&word.to_lowercase().as_str())
}

/// Whether `name` has a full stop inside it that is not an abbreviation's (`Lane.  Mr. Ernest
/// Worthing` is a speech after a name, `MR. WORTHING` and `J. P. MORGAN` are names).
fn has_sentence_break(name: &str) -> bool {
    name.match_indices(['.', ':']).any(|(at, _)| {
        name[at + 1..].starts_with(char::is_whitespace) && !ends_in_abbreviation(&name[..at])
    })
}

/// `Algernon.  Did you hear…` (Gutenberg's Wilde): a title-case name of up to three words
/// ended by `.` at the start of a paragraph, then the speech. Returns the name and the byte
/// offset of the speech. Callers accept it only for a name the script uses this way often.
pub(crate) fn title_period_candidate(trimmed: &str) -> Option<(&str, usize)> {
    let limit = trimmed
        .char_indices()
        .nth(40)
        .map_or(trimmed.len(), |(i, _)| i);
    let (at, _) = trimmed[..limit]
        .match_indices(". ")
        .find(|&(at, _)| !ends_in_abbreviation(&trimmed[..at]))?;
    let name = &trimmed[..at];
    let after = &trimmed[at + 1..];
    let title = name.split_whitespace().count() <= 3
        && name.chars().any(char::is_lowercase)
        && name.split_whitespace().all(|w| {
            w.chars().next().is_some_and(char::is_uppercase)
                || PARTICLES.contains(&w.to_lowercase().as_str())
        });
    (title && is_play_name_shape(name) && !after.trim().is_empty())
        .then(|| (name, at + 1 + (after.len() - after.trim_start().len())))
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
        && trimmed[..open].ends_with(char::is_whitespace)
        && !speech_starts_lower_case(&trimmed[open..]))
    .then_some((name, open))
}

/// `(20s, intern) hurries in with a printout.`: what follows the bracket that opens `s` starts
/// in lower case, so the line is action introducing a character, not a speech.
fn speech_starts_lower_case(s: &str) -> bool {
    let (opener, closer) = if s.starts_with('[') {
        ('[', ']')
    } else {
        ('(', ')')
    };
    let mut depth = 0usize;
    let Some(end) = s.char_indices().find_map(|(i, c)| {
        if c == opener {
            depth += 1;
        } else if c == closer {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                return Some(i + c.len_utf8());
            }
        }
        None
    }) else {
        return false; // a direction running on to the next lines
    };
    s[end..]
        .chars()
        .find(|c| c.is_alphanumeric())
        .is_some_and(char::is_lowercase)
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
    // `NAME -- text`, and Synge's `NAME.--text`: a doubled hyphen needs no spaces.
    let doubled = trimmed[at..].starts_with("--");
    if dash == '-'
        && !doubled
        && !(trimmed[..at].ends_with(' ') && trimmed[at + 1..].starts_with(' '))
    {
        return None;
    }
    let name = trimmed[..at].trim_end();
    let name = name.strip_suffix('.').unwrap_or(name).trim_end();
    let len = if doubled { 2 } else { dash.len_utf8() };
    let after = &trimmed[at + len..];
    let speech = at + len + (after.len() - after.trim_start().len());
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
    // Ibsen's and Synge's `SCENE.—A room…`, `SCENE.--An Island…`
    let head: String = trimmed.chars().take(9).collect::<String>().to_lowercase();
    if [
        "scene.—",
        "scene.--",
        "scene.–",
        "scene—",
        "scene--",
        "scene: ",
    ]
    .iter()
    .any(|p| head.starts_with(p))
    {
        return true;
    }
    let numbered = words.get(1).is_some_and(|second| {
        let ends_there = words.len() == 2
            || second.ends_with(['.', ':'])
            || words
                .get(2)
                .is_some_and(|w| ["—", "–", "-", "--"].contains(w));
        ends_there && is_numbered_heading(&format!("{bare} {second}"))
    });
    if numbered {
        return true; // `SCENE I. Elsinore. A platform before the castle.`, `Episode 3: Fog`
    }
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

/// Byte length of a timestamp and the spaces after it at the start of `s` (`[00:01:02] `,
/// `(1:02) `, `00:01:02.5 `, `0:07 `), or 0. Transcripts put one before or after each name.
pub(crate) fn timestamp_len(s: &str) -> usize {
    let (open, inner) = match s.chars().next() {
        Some(c @ ('[' | '(')) => (Some(c), &s[1..]),
        _ => (None, s),
    };
    let digits = |t: &str| t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let mut at = 0;
    let mut groups = 0;
    loop {
        let n = digits(&inner[at..]);
        if n == 0 || n > 2 && groups > 0 || n > 3 {
            return 0;
        }
        at += n;
        groups += 1;
        if groups < 3 && inner[at..].starts_with(':') && digits(&inner[at + 1..]) == 2 {
            at += 1;
        } else {
            break;
        }
    }
    if groups < 2 {
        return 0;
    }
    if inner[at..].starts_with(['.', ',']) && digits(&inner[at + 1..]) > 0 {
        at += 1 + digits(&inner[at + 1..]);
    }
    let mut len = at + usize::from(open.is_some());
    if let Some(open) = open {
        let close = if open == '[' { ']' } else { ')' };
        if !inner[at..].starts_with(close) {
            return 0;
        }
        len += 1;
    }
    let rest = &s[len..];
    let spaces = rest.len() - rest.trim_start().len();
    if rest.is_empty() || spaces > 0 || rest.starts_with(':') {
        len + spaces
    } else {
        0
    }
}

/// `name` without a timestamp after it (`Sarah Chen  0:07`, `Ana (00:01:02)`, `Bo [1:02]`).
pub(crate) fn without_timestamp(name: &str) -> &str {
    let trimmed = name.trim_end();
    let words: Vec<(usize, &str)> = trimmed
        .split_whitespace()
        .map(|w| (w.as_ptr() as usize - trimmed.as_ptr() as usize, w))
        .collect();
    match words.as_slice() {
        [.., (at, last)] if words.len() > 1 && timestamp_len(last) == last.len() => {
            trimmed[..*at].trim_end()
        }
        _ => trimmed,
    }
}

/// `Episode 3`, `Chapter 2`, `Part One`, `Scene I`: the name of a part of the show, so `Episode
/// 3: Fog` is a heading, not a speaker called "Episode 3".
pub(crate) fn is_numbered_heading(name: &str) -> bool {
    let words: Vec<&str> = name.split_whitespace().collect();
    let [first, number] = words.as_slice() else {
        return false;
    };
    let number = number.trim_end_matches(['.', ':']);
    let numeral = number.chars().all(|c| c.is_ascii_digit())
        || (number.len() <= 6 && number.chars().all(|c| "IVXLCivxlc".contains(c)))
        || [
            "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "first",
            "second", "third", "fourth", "fifth", "last", "final",
        ]
        .contains(&number.to_lowercase().as_str());
    numeral
        && matches!(
            first.to_lowercase().as_str(),
            "episode" | "chapter" | "part" | "act" | "scene" | "season" | "segment" | "round"
        )
}

/// Production cues written as labels in audio-drama scripts (`SFX: door slams`, `MUSIC: up
/// and under`): directions for the sound designer, never a speaker.
pub(crate) fn is_sound_cue(name: &str) -> bool {
    const CUES: [&str; 16] = [
        "sfx",
        "fx",
        "sound",
        "sound effect",
        "sound effects",
        "sound fx",
        "music",
        "music cue",
        "music in",
        "music out",
        "ambience",
        "ambiance",
        "atmos",
        "atmosphere",
        "grams",
        "cue",
    ];
    CUES.contains(&name.trim().to_lowercase().as_str())
}

/// A line of the title block before a script starts: `A DOLL'S HOUSE`, `by Henrik Ibsen`, `A
/// Comedy in Two Acts`, `Recorded 12 March 2026`. Short, not a sentence, capitalised or a
/// credit, and not a name `known` counts as a speaker's.
pub(crate) fn is_title_line(trimmed: &str, known: &KnownNames) -> bool {
    let words: Vec<&str> = trimmed.split_whitespace().collect();
    let lower = trimmed.to_lowercase();
    let credit = [
        "by ",
        "written by ",
        "translated by ",
        "adapted by ",
        "from ",
        "recorded ",
        "transcribed by ",
        "interview with ",
    ]
    .iter()
    .any(|p| lower.starts_with(p));
    let sentence = trimmed.ends_with(['.', '!', '?', '…']) && !credit;
    let capitalised = words
        .iter()
        .filter(|w| w.chars().filter(|c| c.is_alphabetic()).count() > 3)
        .all(|w| w.starts_with(char::is_uppercase));
    let speaker = play_name(trimmed, true).is_some_and(|n| known.count(n.name) >= 2);
    words.len() <= 10
        && !sentence
        && !speaker
        && (capitalised || credit)
        && !trimmed.starts_with(['[', '('])
}

/// A screenplay transition or a play's last word: `CUT TO:`, `SMASH CUT TO:`, `FADE OUT.`,
/// `CURTAIN`, `THE END`. They are directions, never names.
pub(crate) fn transition(trimmed: &str) -> bool {
    const WORDS: [&str; 14] = [
        "fade in",
        "fade out",
        "fade to black",
        "fade up",
        "curtain",
        "the curtain falls",
        "curtain falls",
        "the end",
        "end",
        "blackout",
        "black out",
        "end of play",
        "end of scene",
        "lights out",
    ];
    if trimmed.chars().any(char::is_lowercase) || trimmed.chars().count() > 40 {
        return false;
    }
    let bare = trimmed
        .trim_end_matches(['.', ':', '!', ' '])
        .trim_start_matches(['.', ' ']);
    let lower = bare.to_lowercase();
    WORDS.contains(&lower.as_str())
        || lower.starts_with("end of act")
        || (trimmed.trim_end().ends_with(':') && lower.ends_with(" to"))
}

/// `PERSONS OF THE PLAY`, `CHARACTERS`, `DRAMATIS PERSONAE`, `CAST OF CHARACTERS`: the
/// heading of a play's list of characters, which is metadata and never spoken.
pub(crate) fn persons_heading(trimmed: &str) -> bool {
    const HEADINGS: [&str; 12] = [
        "persons in the play",
        "persons of the play",
        "the persons of the play",
        "persons represented",
        "people in the play",
        "characters",
        "the characters",
        "characters in the play",
        "cast of characters",
        "dramatis personae",
        "cast",
        "the cast",
    ];
    let lower = trimmed.trim_end_matches(['.', ':']).trim().to_lowercase();
    HEADINGS.contains(&lower.as_str())
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
