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
use super::source::TextSpan;

mod clean;
mod directions;
mod ssml;
pub(crate) use directions::is_delivery_note;

pub(crate) use clean::clean_direction;
use clean::{clean, collapse_keeping_edges};
use directions::{emphasised_action, excerpt, is_direction_parenthesis};
pub(crate) use directions::{parentheses_look_like_directions, SHORT_PARENTHESIS};

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
    segments: &[TextSpan<'_>],
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
    fn new(segments: &[TextSpan<'_>]) -> Self {
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
    segments: &[TextSpan<'_>],
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
            let at_start = nothing_said_yet(&out, &text);
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
        if matches!(c, '*' | '_') {
            if let Some(action) = emphasised_action(chars, i) {
                if action.is_direction(chars, i, nothing_said_yet(&out, &text)) {
                    push_direction(&mut out, &mut text, &chars[action.inner.clone()], style);
                    i = action.end;
                    continue;
                }
                if action.opens_with_stage_word() {
                    warnings.push(Warning {
                        position: pos_of(i),
                        message: format!(
                            "`{}` inside a sentence is read aloud as a stressed word; if it is an action, write it in [brackets]",
                            chars[i..action.end].iter().collect::<String>()
                        ),
                    });
                }
            }
        }
        if c == '<' {
            if let Some((tag, end)) = ssml::tag_at(chars, i) {
                ssml_piece(tag, &mut out, &mut text, style, pos_of(i), warnings);
                i = end;
                continue;
            }
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

/// What an SSML tag in a turn adds: a pause, a pronunciation, an alias's words, or nothing
/// (with one notice per tag Banter does not follow).
fn ssml_piece(
    tag: ssml::Tag,
    out: &mut Vec<Piece>,
    text: &mut String,
    style: TextStyle,
    at: Position,
    warnings: &mut Vec<Warning>,
) {
    match tag {
        ssml::Tag::Break(secs) => {
            flush(out, text, style);
            out.push(Piece::Pause { secs });
        }
        ssml::Tag::Phoneme { ipa, text: words } => {
            flush(out, text, style);
            out.push(Piece::Phonemes {
                text: collapse_whitespace(&clean(&words, style)),
                ipa: ipa.trim().to_owned(),
            });
        }
        ssml::Tag::Sub(alias) => text.push_str(&alias),
        ssml::Tag::Markup(None) => {}
        ssml::Tag::Markup(Some(name)) => {
            let message = format!(
                "the SSML tag `<{name}>` is not followed: its words are read as written, and the tag is not spoken"
            );
            if !warnings.iter().any(|w| w.message == message) {
                warnings.push(Warning {
                    position: at,
                    message,
                });
            }
        }
    }
}

/// Whether the turn so far holds only directions: a direction here opens the turn.
fn nothing_said_yet(out: &[Piece], text: &str) -> bool {
    text.trim().is_empty() && out.iter().all(|p| matches!(p, Piece::Direction { .. }))
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

/// The directive a bracket's inside names, whatever its value: `pause` (alias `break`) or
/// `rate` (alias `speed`); `None` if it names none. Layouts ask this to leave a directive where
/// it stands rather than take it for a stage direction or a label.
pub(crate) fn directive_key(inner: &str) -> Option<&'static str> {
    let (key, _) = inner.split_once(':')?;
    match key.trim().to_ascii_lowercase().as_str() {
        "pause" | "break" => Some("pause"),
        "rate" | "speed" => Some("rate"),
        _ => None,
    }
}

/// `pause:…` and `rate:…` (alias `speed:…`); `None` if `inner` is not a directive at all.
fn directive(inner: &str) -> Option<Result<Piece, String>> {
    let key = directive_key(inner)?;
    let value = inner.split_once(':')?.1.trim();
    match key {
        "pause" => Some(parse_pause(value).map(|secs| Piece::Pause { secs })),
        _ => Some(
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

fn flush(out: &mut Vec<Piece>, text: &mut String, style: TextStyle) {
    if !text.is_empty() {
        out.push(Piece::text(collapse_keeping_edges(&clean(text, style))));
        text.clear();
    }
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
mod tests;
