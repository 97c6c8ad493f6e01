//! The source lines no turn took: each is still accounted for (metadata, a direction, or
//! narration with a warning), and one that looks like a turn of a known speaker says so, so an
//! author never loses a line silently. Likewise a line inside a turn that opens with another
//! speaker's name in bold and no colon (`**Ben** Right.`): it is read as the turn's words, and
//! the author hears why.

use std::collections::{BTreeMap, HashSet};

use super::Source;
use crate::cast::speaker_key;
use crate::format::ScriptFormat;
use crate::model::{Line, LineKind, Position, Skipped, Warning};

/// Every non-blank source line that is in no turn, with its kind: the kind its parser gave it,
/// metadata for the header (and a JSON document's structure), and otherwise narration with a
/// warning, so a line no rule explains is still reported, never lost.
pub(super) fn account(
    format: ScriptFormat,
    lines: &[Line],
    kinds: &BTreeMap<usize, LineKind>,
    source: &Source<'_, '_>,
    warnings: &mut Vec<Warning>,
) -> Vec<Skipped> {
    let spoken: HashSet<usize> = lines
        .iter()
        .flat_map(|l| l.source_lines.iter().copied())
        .collect();
    let speakers: HashSet<String> = lines.iter().map(|l| speaker_key(&l.speaker)).collect();
    let mut skipped = Vec::new();
    let mut in_unexplained_run = false;
    for (index, line) in source.lines.iter().enumerate() {
        let text = line.text.trim();
        if text.is_empty() || spoken.contains(&line.number) {
            in_unexplained_run = false;
            continue;
        }
        let lead = line.text.len() - line.text.trim_start().len();
        let position = Position::new(line.number, crate::source::column_of(line.text, lead));
        let kind = if index < source.body_start {
            LineKind::Metadata
        } else if let Some(&kind) = kinds.get(&line.number) {
            kind
        } else if format == ScriptFormat::Json {
            LineKind::Metadata
        } else {
            if !in_unexplained_run {
                warnings.push(Warning {
                    position,
                    message: "this text is not part of any turn, so it is not spoken".to_owned(),
                });
            }
            in_unexplained_run = true;
            LineKind::Narration
        };
        let starts_paragraph = index == 0
            || source.lines[index - 1].text.trim().is_empty()
            || skipped
                .last()
                .is_none_or(|s: &Skipped| s.position.line + 1 != line.number);
        if starts_paragraph && matches!(kind, LineKind::Narration | LineKind::Direction) {
            // A cue already written `SFX: …` was read as a cue on purpose (and said so): the
            // advice to write what is written would only confuse.
            let written_as_label = |name: &str| {
                text.strip_prefix(name)
                    .is_some_and(|rest| rest.trim_start().starts_with([':', '：']))
            };
            let suspect = looks_like_a_turn(text, &speakers)
                .filter(|name| kind != LineKind::Direction || !written_as_label(name));
            if let Some(name) = suspect {
                warnings.push(Warning {
                    position,
                    message: format!(
                        "this {kind} starts like a turn of `{name}` but is not spoken; if it is speech, write it as `{name}: …`"
                    ),
                });
            }
        }
        skipped.push(Skipped {
            position,
            kind,
            text: text.to_owned(),
        });
    }
    skipped
}

/// Warns about every line inside a turn (not its first) that opens with another known
/// speaker's name in bold or underline and no colon (`**Ben** Right.`, `__Ben__ Right.`): a
/// label missing its colon, whose words the turn before now says.
pub(super) fn bold_names_inside_turns(
    lines: &[Line],
    source: &Source<'_, '_>,
    warnings: &mut Vec<Warning>,
) {
    let speakers: HashSet<String> = lines.iter().map(|l| speaker_key(&l.speaker)).collect();
    for turn in lines {
        let own = speaker_key(&turn.speaker);
        let mut seen = HashSet::new();
        for &n in turn.source_lines.iter().skip(1) {
            if n == turn.position.line || !seen.insert(n) {
                continue;
            }
            // Source lines are numbered from 1 in order.
            let Some(text) = n
                .checked_sub(1)
                .and_then(|k| source.lines.get(k))
                .filter(|l| l.number == n)
                .map(|l| l.text)
            else {
                continue;
            };
            let Some((name, at)) = emphasised_name(text) else {
                continue;
            };
            let key = speaker_key(name);
            if key == own || !speakers.contains(&key) {
                continue;
            }
            warnings.push(Warning {
                position: Position::new(n, crate::source::column_of(text, at)),
                message: format!(
                    "`{name}` opens this line in bold without a colon, so the line is read as part of `{}`'s turn; if `{name}` speaks here, write `**{name}:**`",
                    turn.speaker
                ),
            });
        }
    }
}

/// `Name` and its byte offset where `text` opens with `**Name**` or `__Name__` (up to 40
/// characters) and no colon follows.
fn emphasised_name(text: &str) -> Option<(&str, usize)> {
    let lead = text.len() - text.trim_start().len();
    let body = &text[lead..];
    let mark = ["**", "__"].into_iter().find(|m| body.starts_with(m))?;
    let rest = &body[mark.len()..];
    let close = rest.find(mark)?;
    let name = rest[..close].trim();
    let after = rest[close + mark.len()..].trim_start();
    let plain = !name.is_empty()
        && name.chars().count() <= 40
        && !name.contains([':', '：', '*', '_'])
        && !after.starts_with([':', '：']);
    plain.then_some((name, lead + mark.len()))
}

/// The speaker a line of unspoken text seems to start a turn of: a known speaker's name, or an
/// upper-case name, followed by what ends a label (`.`, `:`, a bracket, a dash).
fn looks_like_a_turn(text: &str, speakers: &HashSet<String>) -> Option<String> {
    let ends_label = |rest: &str| {
        let rest = rest.trim_start();
        rest.starts_with(['.', ':', '：', '[', '(', '—', '–'])
    };
    for (at, _) in text
        .char_indices()
        .take(48)
        .filter(|&(at, c)| at > 0 && (c.is_whitespace() || ".:：[(—–".contains(c)))
    {
        let name = text[..at].trim_end();
        if speakers.contains(&speaker_key(name)) && ends_label(&text[at..]) {
            return Some(name.to_owned());
        }
    }
    crate::labels::period_candidates(text)
        .next()
        .map(|(name, _)| name)
        .or_else(|| crate::labels::bracket_candidate(text).map(|(name, _)| name))
        .filter(|name| name.chars().filter(|c| c.is_alphabetic()).count() >= 2)
        .map(str::to_owned)
}
