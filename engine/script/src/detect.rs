//! Guessing a script's format from its first few hundred lines.
//!
//! Most scripts announce themselves: JSON starts with a bracket, podcastfy and Dia have their
//! tags. The rest are told apart by counting, over the first 400 non-blank lines, lines that look
//! like each layout, and taking the layout that explains the most lines; on a tie the plain
//! `Name: text` wins, being the most common. Writers can always override with `--format` or a
//! `format:` line in the front matter.

use super::format::ScriptFormat;
use super::labels::{
    bold_label, bracket_candidate, dia_tag, markdown_heading, play_name, play_same_line_name,
    scene_heading, title_period_candidate, KnownNames,
};
use super::line_labels::{line_label, Found, Layout};
use super::source::SourceLine;

const SAMPLE_LINES: usize = 400;

/// Whether the text (after any header) starts like JSON.
///
/// A file whose first line is a whole JSON object but which does not parse as one JSON document
/// is a script with JSON lines in it (JSON Lines, or one pasted line among others), read line by
/// line; any other text that starts like JSON is JSON, so its syntax errors are reported.
pub(crate) fn looks_like_json(body: &str) -> bool {
    let t = body.trim_start();
    let starts = t.starts_with('{')
        || t.strip_prefix('[').is_some_and(|rest| {
            dia_tag(t, 0).is_none() && rest.trim_start().starts_with(['{', '"', ']'])
        });
    if !starts || serde_json::from_str::<serde::de::IgnoredAny>(t).is_ok() {
        return starts;
    }
    let first = t.lines().next().unwrap_or_default().trim_end();
    let first = first.strip_suffix(',').unwrap_or(first);
    !(first.starts_with('{') && serde_json::from_str::<serde::de::IgnoredAny>(first).is_ok())
}

#[derive(Debug, Default)]
struct Counts {
    dia: usize,
    tags: usize,
    bold: usize,
    headings: usize,
    labelled: usize,
    numbered: usize,
    play: usize,
}

/// The format of `body`, or `None` if nothing in it looks like a script.
pub(crate) fn detect(body: &[SourceLine<'_>], known: &KnownNames) -> Option<ScriptFormat> {
    let first = body.iter().position(|l| !l.text.trim().is_empty())?;
    let mut c = Counts::default();
    let mut after_blank = true;
    let mut sampled = 0;
    for (i, line) in body.iter().enumerate().skip(first) {
        let t = line.text.trim();
        if t.is_empty() {
            after_blank = true;
            continue;
        }
        sampled += 1;
        if sampled > SAMPLE_LINES {
            break;
        }
        if dia_tag(t, 0).is_some() {
            c.dia += 1;
        }
        if has_person_tag(t) {
            c.tags += 1;
        }
        if bold_label(t).is_some() {
            c.bold += 1;
        }
        if markdown_heading(t).is_some() {
            c.headings += 1;
        }
        let mut play_cue = false;
        match line_label(t, known, false) {
            Some((_, Layout::Period | Layout::Bracket | Layout::Bold)) | None => {}
            // Synge's `NORA.--Where is she?`: a play's e-text, not a chat's `Name — text`
            Some((Found::Label { rest_at, .. }, Layout::Dash))
                if t[..rest_at].trim_end().ends_with("--") || t[..rest_at].contains(".—") =>
            {
                play_cue = true;
            }
            Some((found, _)) => {
                c.labelled += 1;
                if matches!(found, Found::Label { name, .. } if is_numbered_speaker(name)) {
                    c.numbered += 1;
                }
            }
        }
        let next_has_text = body.get(i + 1).is_some_and(|l| !l.text.trim().is_empty());
        let own_line = play_name(t, after_blank).is_some_and(|n| n.marked || next_has_text);
        let same_line = play_same_line_name(t, known).is_some()
            || bracket_candidate(t).is_some()
            || (after_blank
                && title_period_candidate(t)
                    .is_some_and(|(n, _)| known.vouches_for_title_label(n)));
        if play_cue || own_line || same_line || scene_heading(t) {
            c.play += 1;
        }
        after_blank = false;
    }
    if c.tags > 0 && c.tags >= c.dia {
        return Some(ScriptFormat::Podcastfy);
    }
    if c.dia > 0 && c.dia >= c.labelled {
        return Some(ScriptFormat::Dia);
    }
    if c.bold > 0 || (c.headings > 0 && c.labelled > 0 && c.labelled >= c.play) {
        return Some(ScriptFormat::Markdown);
    }
    if c.labelled > 0 && c.labelled >= c.play {
        return Some(if c.numbered == c.labelled {
            ScriptFormat::VibeVoice
        } else {
            ScriptFormat::Name
        });
    }
    (c.play > 0).then_some(ScriptFormat::Play)
}

/// `<Person1>`-style tags anywhere, or a line opening with a simple `<Tag>` and closing it.
fn has_person_tag(t: &str) -> bool {
    let lower = t.to_ascii_lowercase();
    if lower.match_indices("<person").any(|(i, _)| {
        lower[i + 7..]
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .starts_with('>')
            && lower[i + 7..].starts_with(|c: char| c.is_ascii_digit())
    }) {
        return true;
    }
    let Some(rest) = t.strip_prefix('<') else {
        return false;
    };
    let Some(end) = rest.find('>') else {
        return false;
    };
    let name = &rest[..end];
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && t.contains(&format!("</{name}>"))
}

/// `Speaker 1`, `Speaker 12` (`VibeVoice`).
fn is_numbered_speaker(name: &str) -> bool {
    name.strip_prefix("Speaker")
        .or_else(|| name.strip_prefix("speaker"))
        .is_some_and(|n| {
            let n = n.trim_start();
            !n.is_empty() && n.len() <= 3 && n.chars().all(|c| c.is_ascii_digit())
        })
}

#[cfg(test)]
mod tests {
    use super::super::source::split_lines;
    use super::*;

    fn detect_text(text: &str) -> Option<ScriptFormat> {
        let lines = split_lines(text);
        detect(&lines, &KnownNames::new([], &lines))
    }

    #[test]
    fn each_layout_is_recognised() {
        use ScriptFormat as F;
        let cases = [
            ("Alice: Hi.\nBob: Hello.\n", F::Name),
            ("Speaker 1: Hi.\nSpeaker 2: Hello.\n", F::VibeVoice),
            ("Speaker 1: Hi.\nBob: Hello.\n", F::Name),
            ("[S1] Hi. [S2] Hello.\n", F::Dia),
            ("<Person1>Hi.</Person1><Person2>Yo.</Person2>", F::Podcastfy),
            ("<Host>Hi.</Host>\n", F::Podcastfy),
            ("**Alice:** Hi.\n**Bob:** Hello.\n", F::Markdown),
            ("# Intro\n\nAlice: Hi.\nBob: Hello.\n", F::Markdown),
            ("ALICE.\nHi.\n\nBOB.\nHello.\n", F::Play),
            ("INT. ROOM - DAY\n\nALICE\nHi.\n", F::Play),
            ("LANE.  Yes, sir.\n\nALGERNON.  Quite.\n", F::Play),
        ];
        for (text, want) in cases {
            assert_eq!(detect_text(text), Some(want), "{text:?}");
        }
    }

    #[test]
    fn prose_and_blank_are_not_scripts() {
        assert_eq!(
            detect_text("Just a paragraph of prose, with no speakers at all.\n"),
            None
        );
        assert_eq!(detect_text("\n\n"), None);
    }

    #[test]
    fn json_starts() {
        assert!(looks_like_json("  {\"lines\": []}"));
        assert!(looks_like_json("[\n  {\"speaker\": \"A\"}]"));
        assert!(looks_like_json("[]"));
        assert!(!looks_like_json("[S1] Hello"));
        assert!(!looks_like_json("[Music plays] Alice: hi"));
        assert!(
            looks_like_json("{\"lines\": [}"),
            "broken JSON is still JSON"
        );
        assert!(!looks_like_json(
            "{\"speaker\": \"A\", \"text\": \"Hi.\"}\nBOB: Hello.\n"
        ));
    }
}
