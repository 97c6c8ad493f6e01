//! The source lines no turn took: each is still accounted for (metadata, a direction, or
//! narration with a warning), and one that looks like a turn of a known speaker says so, so an
//! author never loses a line silently.

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
            if let Some(name) = looks_like_a_turn(text, &speakers) {
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
