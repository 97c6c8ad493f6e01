//! A turn's text to [`Piece`]s: words, inline directives, pronunciations, stage directions.
//!
//! The directive syntax is Kokoro-FastAPI's, so scripts written for it work here unchanged:
//! `[pause:1.5s]`, `[rate:1.2]`, `[word](/wˈɝd/)`. Anything else in brackets or parentheses is a
//! stage direction. Brackets are matched in one pass with a stack before the scan, so a turn of
//! any length parses in linear time, and an unmatched bracket is just a character (with a
//! warning), never an error: a stray `(` must not stop an episode.

use super::cue_places::cue_piece;
use super::error::{ScriptError, ScriptErrorKind};
use super::model::{collapse_whitespace, Piece, Position, Warning};
use super::source::Segment;

/// Fastest and slowest speeds a script may ask for (Kokoro-FastAPI's bounds).
pub const WRITTEN_SPEED_RANGE: std::ops::RangeInclusive<f32> = 0.25..=4.0;
/// Longest pause a directive may ask for, in seconds.
pub const MAX_PAUSE_SECS: f32 = 60.0;

/// Format-specific clean-up of the words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum TextStyle {
    #[default]
    Plain,
    /// Drop `*`, backticks and `_` at word edges (emphasis, code).
    Markdown,
    /// Decode `&amp;`-style entities.
    Xml,
    /// A stage play: as `Plain`, and a parenthesis that is a sentence of its own (`(To the
    /// PORTER, taking out her purse.)`) or opens the speech is a direction whatever its length.
    Play,
}

const NONE: usize = usize::MAX;

/// Parses the segments of one turn (joined by line breaks) into pieces, with the rules for
/// parentheses of its layout alone.
#[cfg(test)]
pub(crate) fn parse_pieces(
    file: &str,
    segments: &[Segment<'_>],
    style: TextStyle,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<Piece>, ScriptError> {
    parse_turn(file, segments, style, false, 0, warnings)
}

/// One turn's text as the scanner sees it: its segments joined by line breaks, and where each
/// segment starts in the file.
struct TurnText {
    chars: Vec<char>,
    starts: Vec<(usize, Position, bool)>,
}

impl TurnText {
    fn new(segments: &[Segment<'_>]) -> Self {
        let mut chars: Vec<char> = Vec::new();
        let mut starts: Vec<(usize, Position, bool)> = Vec::with_capacity(segments.len());
        for seg in segments {
            if !chars.is_empty() {
                chars.push('\n');
            }
            starts.push((chars.len(), seg.position, seg.fixed));
            chars.extend(seg.text.chars());
        }
        Self { chars, starts }
    }

    /// Where character `idx` of the turn is in the file.
    fn position(&self, idx: usize) -> Position {
        let k = self
            .starts
            .partition_point(|(s, _, _)| *s <= idx)
            .saturating_sub(1);
        self.starts
            .get(k)
            .map_or(Position::START, |&(s, p, fixed)| {
                if fixed {
                    p
                } else {
                    // A newline joining two segments sits just past the end of the first.
                    Position::new(p.line, p.column + idx.saturating_sub(s))
                }
            })
    }
}

/// Parses one turn into pieces. `directions_in_parentheses` is the file's verdict
/// ([`parentheses_look_like_directions`]): when set, a parenthesis that opens the turn, stands
/// as a sentence of its own or is led by a participle is a direction in any layout, as in a
/// play. A parenthesis read aloud that is longer than [`SHORT_PARENTHESIS`] words gets a
/// notice, so a wrong guess is never silent. `label_line` is the line of the turn's label: a
/// sound cue alone on any other line of the turn stands alone (speech waits for it).
pub(crate) fn parse_turn(
    file: &str,
    segments: &[Segment<'_>],
    style: TextStyle,
    directions_in_parentheses: bool,
    label_line: usize,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<Piece>, ScriptError> {
    let turn = TurnText::new(segments);
    let chars = &turn.chars;
    let pos_of = |idx: usize| turn.position(idx);
    let play_rules = style == TextStyle::Play || directions_in_parentheses;
    let close = match_brackets(chars);
    let n = chars.len();
    let mut out = Vec::new();
    let mut text = String::new();
    let mut warned_unclosed = false;
    let mut i = 0;
    while i < n {
        let c = chars[i];
        let j = close[i];
        if (c == '[' || c == '(') && j == NONE {
            if !warned_unclosed {
                warned_unclosed = true;
                warnings.push(Warning {
                    position: pos_of(i),
                    message: format!("`{c}` is never closed, so it is read as text"),
                });
            }
            text.push(c);
            i += 1;
            continue;
        }
        if c == '(' {
            let at_start = text.trim().is_empty()
                && !out.iter().any(|p| !matches!(p, Piece::Direction { .. }));
            if is_direction_parenthesis(chars, i, j, at_start, play_rules) {
                push_direction(&mut out, &mut text, &chars[i + 1..j], style);
                i = j + 1;
            } else {
                // A clause inside a sentence: speech. Its insides are read as usual; a long one
                // is said to the writer, in case it was meant as a direction.
                let words = chars[i + 1..j]
                    .iter()
                    .collect::<String>()
                    .split_whitespace()
                    .count();
                if words > SHORT_PARENTHESIS {
                    let excerpt = excerpt(chars, i, j);
                    warnings.push(Warning {
                        position: pos_of(i),
                        message: format!(
                            "the parenthesis `{excerpt}` ({words} words) is read aloud as part of the sentence; if it is a stage direction, write it in [brackets]"
                        ),
                    });
                }
                text.push(c);
                i += 1;
            }
            continue;
        }
        if c != '[' {
            text.push(c);
            i += 1;
            continue;
        }
        let inner: String = chars[i + 1..j].iter().collect();
        if chars.get(j + 1) == Some(&'(') && close[j + 1] != NONE {
            let k = close[j + 1];
            let target: String = chars[j + 2..k].iter().collect();
            let target = target.trim();
            match target.strip_prefix('/').and_then(|t| t.strip_suffix('/')) {
                Some(ipa) if !ipa.trim().is_empty() => {
                    flush(&mut out, &mut text, style);
                    out.push(Piece::Phonemes {
                        text: collapse_whitespace(&clean(&inner, style)),
                        ipa: ipa.trim().to_owned(),
                    });
                }
                // A Markdown link, or a pronunciation Kokoro-FastAPI has but we do not
                // (`(+1)` stress marks): keep the words.
                _ => text.push_str(&inner),
            }
            i = k + 1;
            continue;
        }
        if let Some(cue) = cue_piece(file, chars, i, j, label_line, &pos_of) {
            flush(&mut out, &mut text, style);
            out.push(cue?);
            text.push(' ');
            i = j + 1;
            continue;
        }
        match directive(&inner) {
            Some(Ok(piece)) => {
                flush(&mut out, &mut text, style);
                out.push(piece);
            }
            Some(Err(reason)) => {
                return Err(ScriptError::new(
                    file,
                    pos_of(i),
                    ScriptErrorKind::BadDirective {
                        directive: inner.trim().to_owned(),
                        reason,
                    },
                ));
            }
            None => push_direction(&mut out, &mut text, &chars[i + 1..j], style),
        }
        i = j + 1;
    }
    flush(&mut out, &mut text, style);
    Ok(tidy(out))
}

/// Words that open a stage direction in parentheses: `(laughs)`, `(quietly)`, `(to Bob)`.
const STAGE_WORDS: [&str; 58] = [
    "laughs",
    "laughing",
    "laugh",
    "laughter",
    "chuckles",
    "chuckling",
    "giggles",
    "sighs",
    "sighing",
    "sigh",
    "coughs",
    "clears",
    "pauses",
    "pause",
    "beat",
    "whispers",
    "whispering",
    "whisper",
    "shouts",
    "shouting",
    "yells",
    "cries",
    "crying",
    "sobs",
    "sniffs",
    "gasps",
    "groans",
    "yawns",
    "smiles",
    "smiling",
    "grins",
    "nods",
    "shrugs",
    "winks",
    "aside",
    "off",
    "offstage",
    "reading",
    "reads",
    "interrupting",
    "interrupts",
    "continuing",
    "music",
    "sfx",
    "sound",
    "applause",
    "silence",
    "inaudible",
    "crosstalk",
    "overlapping",
    "v.o.",
    "o.s.",
    "beat.",
    "unintelligible",
    "clapping",
    "scoffs",
    "snorts",
    "exhales",
];

/// Whether the parenthesis `chars[open..=close]` is a stage direction rather than words of the
/// sentence (FORMATS.md, "Parentheses"): it stands on its own line, opens with a stage word or
/// a lone adverb (`(laughs)`, `(quietly)`, `(to Bob)`), or is short (at most six words) at the
/// start or the end of the turn. A longer clause, or one inside a sentence, is speech.
fn is_direction_parenthesis(
    chars: &[char],
    open: usize,
    close: usize,
    at_start: bool,
    play_rules: bool,
) -> bool {
    let before_on_line = chars[..open]
        .iter()
        .rev()
        .take_while(|&&c| c != '\n')
        .all(|c| c.is_whitespace());
    let after_on_line = chars[close + 1..]
        .iter()
        .take_while(|&&c| c != '\n')
        .all(|c| c.is_whitespace());
    if before_on_line && after_on_line {
        return true;
    }
    let inner: String = chars[open + 1..close].iter().collect();
    let words: Vec<String> = inner
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric() && c != '.' && c != '\'')
                .to_lowercase()
        })
        .collect();
    let Some(first) = words.first() else {
        return true; // `()` says nothing either way; drop it
    };
    let second_is_addressee = inner.split_whitespace().nth(1).is_some_and(|w| {
        w.starts_with(char::is_uppercase)
            || [
                "him",
                "her",
                "them",
                "himself",
                "herself",
                "themselves",
                "audience",
                "camera",
            ]
            .contains(
                &w.trim_matches(|c: char| !c.is_alphabetic())
                    .to_lowercase()
                    .as_str(),
            )
    });
    // `(waves)`, `(pointing)`: one lower-case verb is an action, not words to say.
    let lone_verb = words.len() == 1
        && inner.trim().starts_with(char::is_lowercase)
        && first.chars().count() >= 4
        && (first.ends_with('s') || first.ends_with("ing"));
    let stage_led = STAGE_WORDS.contains(&first.as_str())
        || lone_verb
        || (words.len() <= 2 && first.len() > 4 && first.ends_with("ly"))
        || (first == "to" && second_is_addressee);
    // In a play, `(throwing down the turf)` inside a sentence is business, not words.
    let participle = inner.trim().starts_with(char::is_lowercase) && first.ends_with("ing");
    if stage_led || (play_rules && (at_start || participle || own_sentence(chars, open, close))) {
        return true;
    }
    // At the end only if the sentence ended before it: `… the gold standard (about 1 in 3.5
    // million).` closes its sentence after the parenthesis, so the clause is part of it.
    let rest: Vec<char> = chars[close + 1..]
        .iter()
        .copied()
        .filter(|c| !c.is_whitespace())
        .collect();
    let closes_its_sentence = rest.first().is_some_and(|c| ".!?…".contains(*c));
    let at_end = rest
        .iter()
        .all(|c| !c.is_alphanumeric() && !matches!(c, '[' | '('))
        && (!closes_its_sentence || sentence_ended_before(chars, open));
    words.len() <= SHORT_PARENTHESIS && (at_start || at_end)
}

/// A parenthesis of at most this many words at the start or end of a turn is a direction in
/// any layout; a longer one read aloud gets a notice.
pub(crate) const SHORT_PARENTHESIS: usize = 6;

/// Pronouns that open a direction written about a character (`(She grabs her coat.)`).
const THIRD_PERSON: [&str; 7] = ["he", "she", "they", "his", "her", "their", "both"];

/// Whether a file's parentheses are written as stage directions, decided once for the whole
/// file from its clearest cases: a parenthesis opening a turn with a lower-case participle
/// (`HOST: (leaning back, glancing at the clock) So…`), or one standing as a sentence of its
/// own about a character in the present tense (`… back. (She grabs her coat.) Sorry.`). Returns
/// where the first such parenthesis is, for the notice that says the file was read this way.
pub(crate) fn parentheses_look_like_directions<'s, 'a: 's>(
    turns: impl IntoIterator<Item = &'s [Segment<'a>]>,
) -> Option<(Position, String)> {
    for segments in turns {
        let turn = TurnText::new(segments);
        let chars = &turn.chars;
        let close = match_brackets(chars);
        for (open, &c) in chars.iter().enumerate() {
            let end = close[open];
            if c != '(' || end == NONE {
                continue;
            }
            let inner: String = chars[open + 1..end].iter().collect();
            let words: Vec<&str> = inner.split_whitespace().collect();
            let Some(first) = words.first() else {
                continue;
            };
            let first_lower = first
                .trim_matches(|c: char| !c.is_alphabetic())
                .to_lowercase();
            let opens_turn = chars[..open].iter().all(|c| c.is_whitespace());
            let participle_led = inner.trim_start().starts_with(char::is_lowercase)
                && first_lower.ends_with("ing")
                && words.len() >= 2;
            let about_a_character = own_sentence(chars, open, end)
                && words.len() >= 3
                && (THIRD_PERSON.contains(&first_lower.as_str())
                    || words.get(1).is_some_and(|w| {
                        let w = w.trim_matches(|c: char| !c.is_alphabetic());
                        w.starts_with(char::is_lowercase) && w.len() > 2 && w.ends_with('s')
                    }) && first.starts_with(char::is_uppercase));
            if (opens_turn && participle_led) || about_a_character {
                return Some((turn.position(open), excerpt(chars, open, end)));
            }
        }
    }
    None
}

/// Whether the text before `open` ends a sentence (or there is none).
fn sentence_ended_before(chars: &[char], open: usize) -> bool {
    chars[..open]
        .iter()
        .rev()
        .find(|c| !c.is_whitespace())
        .is_none_or(|c| ".!?…:;—".contains(*c) || matches!(c, ')' | ']'))
}

/// `… dressed. (To the PORTER, taking out her purse.) How much?`: a parenthesis that starts
/// with a capital after a finished sentence and ends its own with a full stop or is followed
/// by a new sentence, as plays write their directions.
fn own_sentence(chars: &[char], open: usize, close: usize) -> bool {
    let inner: String = chars[open + 1..close].iter().collect();
    let inner = inner.trim();
    let next_sentence = chars[close + 1..]
        .iter()
        .find(|c| !c.is_whitespace())
        .is_none_or(|c| c.is_uppercase());
    inner.starts_with(char::is_uppercase)
        && (inner.ends_with(['.', '!', '?']) || next_sentence)
        && sentence_ended_before(chars, open)
}

/// The parenthesis `chars[open..=close]` as a notice quotes it: its first 48 characters, and
/// `…` when there is more.
fn excerpt(chars: &[char], open: usize, close: usize) -> String {
    const SHOWN: usize = 48;
    let mut out: String = chars[open..=close].iter().take(SHOWN).collect();
    if close + 1 - open > SHOWN {
        out.push('…');
    }
    out
}

/// For every `[` and `(`, the index of its matching closer, or `NONE`.
fn match_brackets(chars: &[char]) -> Vec<usize> {
    let mut close = vec![NONE; chars.len()];
    let mut squares = Vec::new();
    let mut rounds = Vec::new();
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '[' => squares.push(i),
            '(' => rounds.push(i),
            ']' => {
                if let Some(o) = squares.pop() {
                    close[o] = i;
                }
            }
            ')' => {
                if let Some(o) = rounds.pop() {
                    close[o] = i;
                }
            }
            _ => {}
        }
    }
    close
}

/// `pause:…` and `rate:…` (alias `speed:…`); `None` if `inner` is not a directive at all.
fn directive(inner: &str) -> Option<Result<Piece, String>> {
    let (key, value) = inner.split_once(':')?;
    let key = key.trim().to_ascii_lowercase();
    let value = value.trim();
    match key.as_str() {
        "pause" | "break" => Some(parse_pause(value).map(|secs| Piece::Pause { secs })),
        "rate" | "speed" => Some(
            parse_rate(value)
                .map(|rate| Piece::Rate { rate })
                .ok_or_else(|| {
                    format!(
                        "the rate must be a number from {} to {}, such as `[rate:1.2]`",
                        WRITTEN_SPEED_RANGE.start(),
                        WRITTEN_SPEED_RANGE.end()
                    )
                }),
        ),
        _ => None,
    }
}

/// `1.5s`, `1.5`, `500ms` → seconds, when the time is from 0 to `max` (pauses and cue options
/// read times the same way).
pub(crate) fn seconds_up_to(value: &str, max: f32) -> Option<f32> {
    let v = value.trim().to_ascii_lowercase();
    let (number, scale) = if let Some(ms) = v.strip_suffix("ms") {
        (ms, 0.001)
    } else if let Some(s) = v.strip_suffix('s') {
        (s, 1.0)
    } else {
        (v.as_str(), 1.0)
    };
    match number.trim().parse::<f32>() {
        Ok(x) if x.is_finite() && x >= 0.0 && x * scale <= max => Some(x * scale),
        _ => None,
    }
}

/// `1.5s`, `1.5`, `500ms` → seconds.
pub(crate) fn parse_pause(value: &str) -> Result<f32, String> {
    seconds_up_to(value, MAX_PAUSE_SECS).ok_or_else(|| {
        format!(
            "the pause must be a number of seconds from 0 to {MAX_PAUSE_SECS}, such as `[pause:1.5s]` or `[pause:500ms]`"
        )
    })
}

/// `1.2` or `1.2x` → 1.2, within [`WRITTEN_SPEED_RANGE`].
pub(crate) fn parse_rate(value: &str) -> Option<f32> {
    let v = value.trim();
    let v = v.strip_suffix(['x', 'X']).unwrap_or(v).trim();
    v.parse::<f32>()
        .ok()
        .filter(|r| WRITTEN_SPEED_RANGE.contains(r))
}

fn push_direction(out: &mut Vec<Piece>, text: &mut String, inner: &[char], style: TextStyle) {
    let raw: String = inner.iter().collect();
    let cleaned = clean_direction(&clean(&raw, style));
    flush(out, text, style);
    if !cleaned.is_empty() {
        out.push(Piece::Direction { text: cleaned });
    }
    // Keep the word boundary the direction stood on.
    text.push(' ');
}

/// Drops emphasis marks around a direction (`[_Enter Lane._]` → `Enter Lane.`).
pub(crate) fn clean_direction(s: &str) -> String {
    collapse_whitespace(s.trim().trim_matches(|c| c == '_' || c == '*'))
}

fn flush(out: &mut Vec<Piece>, text: &mut String, style: TextStyle) {
    if !text.is_empty() {
        out.push(Piece::text(collapse_keeping_edges(&clean(text, style))));
        text.clear();
    }
}

fn clean(s: &str, style: TextStyle) -> String {
    let s: String = s
        .chars()
        .filter(|&c| !super::names::is_bidi_control(c))
        .collect();
    match style {
        TextStyle::Plain | TextStyle::Play => strip_emphasis(&s),
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
fn collapse_keeping_edges(s: &str) -> String {
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

/// Merges adjacent text, drops empty text, trims the turn's two ends.
fn tidy(pieces: Vec<Piece>) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::with_capacity(pieces.len());
    let mut only_directions = true;
    for piece in pieces {
        match (out.last_mut(), piece) {
            (Some(Piece::Text { text: prev }), Piece::Text { text }) => {
                if prev.ends_with(' ') && text.starts_with(' ') {
                    prev.push_str(&text[1..]);
                } else {
                    prev.push_str(&text);
                }
            }
            (_, piece) => {
                let direction = matches!(piece, Piece::Direction { .. });
                out.push(piece);
                let after_direction = only_directions && out.len() > 1;
                if let (true, Some(Piece::Text { text })) = (after_direction, out.last_mut()) {
                    *text = without_label_punctuation(text);
                }
                only_directions &= direction;
            }
        }
    }
    if let Some(Piece::Text { text }) = out.first_mut() {
        *text = text.trim_start().to_owned();
    }
    if let Some(Piece::Text { text }) = out.last_mut() {
        *text = text.trim_end().to_owned();
    }
    out.retain(|p| !matches!(p, Piece::Text { text } if text.is_empty()));
    out
}

/// `NORA (in a low voice).--Where is she?`: once the opening direction is taken out, the
/// punctuation that ended the label (`.`, `:`, `,`, a dash) is not part of the speech.
fn without_label_punctuation(text: &str) -> String {
    let t = text.trim_start();
    let t = match t.strip_prefix(['.', ':', ',', ';']) {
        Some(rest) if !rest.starts_with('.') => rest,
        _ => t,
    };
    let t = t.trim_start();
    let t = t
        .strip_prefix("--")
        .or_else(|| t.strip_prefix(['—', '–']))
        .unwrap_or(t);
    if t.len() == text.len() {
        text.to_owned()
    } else {
        format!(" {}", t.trim_start())
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;

    fn pieces(s: &str) -> Vec<Piece> {
        pieces_styled(s, TextStyle::Plain)
    }

    fn pieces_styled(s: &str, style: TextStyle) -> Vec<Piece> {
        let seg = Segment {
            position: Position::new(3, 5),
            text: Cow::Borrowed(s),
            fixed: false,
        };
        parse_pieces("f", &[seg], style, &mut Vec::new()).unwrap()
    }

    fn t(s: &str) -> Piece {
        Piece::text(s)
    }

    #[test]
    fn directives_become_structure() {
        assert_eq!(
            pieces("Well [pause:1.5s] then [rate:1.2] say [Kokoro](/kˈOkəɹO/) now."),
            [
                t("Well "),
                Piece::Pause { secs: 1.5 },
                t(" then "),
                Piece::Rate { rate: 1.2 },
                t(" say "),
                Piece::Phonemes {
                    text: "Kokoro".into(),
                    ipa: "kˈOkəɹO".into()
                },
                t(" now."),
            ]
        );
        assert_eq!(pieces("[PAUSE: 500ms]"), [Piece::Pause { secs: 0.5 }]);
        assert_eq!(pieces("[speed:0.8x]"), [Piece::Rate { rate: 0.8 }]);
    }

    #[test]
    fn stage_directions_in_brackets_and_parentheses() {
        assert_eq!(
            pieces("Oh (laughs) really?  [_Enter Lane._]"),
            [
                t("Oh "),
                Piece::Direction {
                    text: "laughs".into()
                },
                t(" really? "),
                Piece::Direction {
                    text: "Enter Lane.".into()
                },
            ]
        );
        assert_eq!(
            pieces("(a (nested) aside) yes"),
            [
                Piece::Direction {
                    text: "a (nested) aside".into()
                },
                t(" yes")
            ]
        );
    }

    #[test]
    fn bad_directive_is_an_error_at_its_bracket() {
        let seg = Segment {
            position: Position::new(3, 5),
            text: Cow::Borrowed("ok [pause:soon] go"),
            fixed: false,
        };
        let e = parse_pieces("ep.txt", &[seg], TextStyle::Plain, &mut Vec::new()).unwrap_err();
        assert_eq!((e.line, e.column), (3, 8));
        assert!(
            e.to_string().starts_with("ep.txt:3:8: `[pause:soon]`"),
            "{e}"
        );
        for bad in [
            "[rate:0]",
            "[rate:9]",
            "[pause:-1]",
            "[pause:61s]",
            "[rate:NaN]",
        ] {
            let seg = Segment {
                position: Position::START,
                text: Cow::Borrowed(bad),
                fixed: false,
            };
            assert!(parse_pieces("f", &[seg], TextStyle::Plain, &mut Vec::new()).is_err());
        }
    }

    #[test]
    fn unclosed_brackets_are_text_with_one_warning() {
        let seg = Segment {
            position: Position::new(2, 4),
            text: Cow::Borrowed("a ( b [ c ] ) d ("),
            fixed: false,
        };
        let mut w = Vec::new();
        let p = parse_pieces("f", &[seg], TextStyle::Plain, &mut w).unwrap();
        assert_eq!(p.len(), 3, "{p:?}");
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].position, Position::new(2, 20));
    }

    #[test]
    fn links_keep_their_words() {
        assert_eq!(
            pieces("see [our site](https://x.y) ok"),
            [t("see our site ok")]
        );
    }

    #[test]
    fn markdown_and_xml_clean_up() {
        assert_eq!(
            pieces_styled(
                "a **bold** and _it_ but snake_case `code`",
                TextStyle::Markdown
            ),
            [t("a bold and it but snake_case code")]
        );
        assert_eq!(
            pieces_styled("Q&amp;A &lt;3 &#233;t&#xE9; &bogus; & more", TextStyle::Xml),
            [t("Q&A <3 été &bogus; & more")]
        );
    }

    #[test]
    fn multi_segment_positions_and_joins() {
        let segs = [
            Segment {
                position: Position::new(1, 7),
                text: Cow::Borrowed("first (a"),
                fixed: false,
            },
            Segment {
                position: Position::new(2, 1),
                text: Cow::Borrowed("b) [pause:x]"),
                fixed: false,
            },
        ];
        let e = parse_pieces("f", &segs, TextStyle::Plain, &mut Vec::new()).unwrap_err();
        assert_eq!((e.line, e.column), (2, 4));
    }
}
