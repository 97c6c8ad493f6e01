//! `Name: text`, `VibeVoice`'s `Speaker 1: text`, and Markdown (`**Name:** text`, headings).
//!
//! The three share one rule: a labelled line starts a turn, and an unlabelled line continues the
//! last one, across blank lines, so a speaker can have several paragraphs. Markdown adds bold
//! labels, headings as chapter markers (a heading also ends the turn: text right under a heading
//! is not anyone's), and ignores rules and comments. Quote markers (`> `) are layout in all three.

use super::cues::whole_line_cue;
use super::draft::Draft;
use super::header::is_cast_heading;
use super::labels::{
    chat_stamp_len, is_cue_number, is_cue_timing, is_title_line, is_webvtt_block, markdown_heading,
    scene_heading, transition, KnownNames,
};
use super::line_labels::{is_table_header, line_label, start_turn, LayoutCensus};
use super::model::{LineKind, Position, Warning};
use super::pieces::TextStyle;
use super::source::{column_of, SourceLine, TextSpan};

/// Parses a labelled script; `markdown` switches on the Markdown extras.
pub(crate) fn parse<'a>(
    body: &[SourceLine<'a>],
    known: &KnownNames,
    markdown: bool,
    warnings: &mut Vec<Warning>,
) -> Draft<'a> {
    let mut draft = Draft::new(if markdown {
        TextStyle::Markdown
    } else {
        TextStyle::Plain
    });
    let mut in_comment = false;
    let mut warned_run = false;
    let mut census = LayoutCensus::default();
    let mut in_webvtt_block = false;
    // The show's own cue (`[OUTRO MUSIC]`, `[SEGMENT 2]`) since the last label, if any.
    let mut after_show_cue: Option<String> = None;
    let mut chat_notices: Vec<Position> = Vec::new();
    // A chat's export: its messages carry a date and time before the sender. Only there is a
    // stamped line without a sender the chat's own notice rather than speech.
    let chat_export = body
        .iter()
        .filter(|l| {
            chat_stamp_len(l.text.trim_start()) > 0 && line_label(l.text, known, markdown).is_some()
        })
        .nth(1)
        .is_some();
    for (index, &line) in body.iter().enumerate() {
        let text = line.text;
        let trimmed = text.trim();
        if trimmed.is_empty() {
            in_webvtt_block = false;
            continue;
        }
        let after_blank = index == 0 || body[index - 1].text.trim().is_empty();
        let last = body[index + 1..].iter().all(|l| l.text.trim().is_empty());
        // A subtitle file's cue numbers, timings and VTT blocks are not speech.
        let next = body.get(index + 1).map(|l| l.text);
        if in_webvtt_block || is_cue_timing(trimmed) || is_cue_number(trimmed, next) {
            draft.classify(line.number, LineKind::Metadata);
            continue;
        }
        if is_webvtt_block(trimmed) && !trimmed.contains("-->") {
            in_webvtt_block = true;
            draft.classify(line.number, LineKind::Metadata);
            continue;
        }
        let at = text.len() - text.trim_start().len();
        if markdown {
            if in_comment || trimmed.starts_with("<!--") {
                in_comment = !trimmed.ends_with("-->");
                draft.classify(line.number, LineKind::Comment);
                continue;
            }
            if let Some(title) = markdown_heading(trimmed) {
                if is_cast_heading(trimmed) {
                    warnings.push(Warning {
                        position: position(line, at),
                        message: "a cast block only counts at the top of the script (or in the front matter); here its lines are read as speech".to_owned(),
                    });
                }
                draft.chapter(title, position(line, at));
                draft.end_turn();
                warned_run = false;
                continue;
            }
            if is_rule(trimmed) {
                // A section break: the turn above ends here.
                draft.classify(line.number, LineKind::Comment);
                draft.end_turn();
                continue;
            }
        }
        if is_note_definition(trimmed) {
            draft.classify(line.number, LineKind::Comment);
            continue;
        }
        if let Some((found, layout)) = line_label(text, known, markdown) {
            start_turn(&mut draft, &mut census, line, found, layout);
            warned_run = false;
            after_show_cue = None;
            continue;
        }
        if (after_blank || last) && transition(trimmed) {
            // `THE END`, `END OF EPISODE`, `FADE OUT.` set apart: the script's, not a line's.
            draft.direction(trimmed, position(line, at));
            draft.end_turn();
            continue;
        }
        if scene_heading(trimmed) {
            // `Episode 3: Fog`, `ACT II`: a part of the show, not a speaker
            draft.chapter(trimmed, position(line, at));
            draft.end_turn();
            warned_run = false;
            continue;
        }
        if is_table_header(trimmed) {
            draft.classify(line.number, LineKind::Metadata);
            draft.end_turn();
            continue;
        }
        if draft.turns.is_empty() && is_title_line(trimmed, known) {
            draft.classify(line.number, LineKind::Metadata);
            continue;
        }
        let at = after_quote_markers(text, at);
        if text[at..].trim().is_empty() {
            draft.classify(line.number, LineKind::Comment);
            continue;
        }
        if whole_line_cue(trimmed).is_some() {
            draft.sound_line(TextSpan::rest_of(line, at), true);
            continue;
        }
        // `**[INTRO MUSIC]**`: a direction in bold is still a direction (it was read as
        // narration before the first turn, and vanished into the turn above after it).
        let (bare, bare_at) = if markdown {
            unwrap_emphasis(trimmed, at)
        } else {
            (trimmed, at)
        };
        if let Some(inner) = whole_line_direction(bare) {
            if is_show_cue(inner) {
                after_show_cue = Some(bare.to_owned());
            }
            draft.direction(inner, position(line, bare_at));
            continue;
        }
        if chat_export && chat_stamp_len(trimmed) > 0 {
            // `12/03/2024, 10:34 - Bob left`: the chat's own notice, nobody's message.
            draft.classify(line.number, LineKind::Metadata);
            draft.end_turn();
            chat_notices.push(position(line, at));
            continue;
        }
        if draft.push(TextSpan::rest_of(line, at)) {
            if let Some(cue) = after_show_cue.take() {
                warnings.push(Warning {
                    position: position(line, at),
                    message: format!(
                        "this line has no speaker and comes after `{cue}`, so it is read as more of the turn before that cue; if someone else says it, start it with their name"
                    ),
                });
            }
            if let Some(name) = unvouched_dash_label(trimmed) {
                warnings.push(Warning {
                    position: position(line, at),
                    message: format!(
                        "this line opens like a turn of `{name}` (`{name} — …`), but the script names no such speaker elsewhere, so it is read as part of the turn above; write `{name}: …` to make it a turn"
                    ),
                });
            }
            continue;
        }
        draft.classify(line.number, LineKind::Narration);
        if !warned_run {
            warned_run = true;
            warnings.push(Warning {
                position: position(line, at),
                message: "this text has no speaker, so it is not spoken; start the line with a name and a colon, such as `Alice: ...`".to_owned(),
            });
        }
    }
    census.warn(warnings);
    if let Some(first) = chat_notices.first() {
        let lines: Vec<String> = chat_notices
            .iter()
            .take(12)
            .map(|p| p.line.to_string())
            .collect();
        warnings.push(Warning {
            position: *first,
            message: format!(
                "line(s) {}{} have a chat's date and time but no sender (the chat's own notices: encryption, who joined or left), so they are not spoken",
                lines.join(", "),
                if chat_notices.len() > 12 { ", …" } else { "" }
            ),
        });
    }
    draft
}

/// `Guest — Thanks for coming.` in a line that continues a turn: a name of one or two
/// capitalised words, a dash, then a capitalised sentence, which is how a dash-labelled turn
/// reads when its speaker is heard only once (a weak label needs the script to vouch for it).
fn unvouched_dash_label(trimmed: &str) -> Option<&str> {
    let (name, speech) = super::labels::dash_candidate(trimmed)?;
    let words: Vec<&str> = name.split_whitespace().collect();
    let capitalised = |w: &&str| w.starts_with(char::is_uppercase);
    let starts_sentence = trimmed[speech..].starts_with(char::is_uppercase);
    ((1..=2).contains(&words.len()) && words.iter().all(capitalised) && starts_sentence)
        .then_some(name)
}

/// Where the text of `text` starts after any quote markers from byte `at` on. Quote markers
/// (`> `, and captions' `>>` for a new voice) are layout in every format: a lone `>` continuing
/// a quoted turn was read as "greater than".
pub(crate) fn after_quote_markers(text: &str, mut at: usize) -> usize {
    while text[at..].starts_with('>') {
        at += 1;
        at += text[at..].len() - text[at..].trim_start().len();
    }
    at
}

pub(crate) fn position(line: SourceLine<'_>, at: usize) -> Position {
    Position::new(line.number, column_of(line.text, at))
}

/// `---`, `***`, `___` (with optional spaces): a Markdown horizontal rule.
pub(crate) fn is_rule(trimmed: &str) -> bool {
    let marks: String = trimmed.chars().filter(|c| !c.is_whitespace()).collect();
    marks.len() >= 3
        && ["-", "*", "_"]
            .iter()
            .any(|m| marks.chars().all(|c| c.to_string() == *m))
}

/// A line that is one bracketed stage direction, such as `(Music fades in)`; not a directive.
/// A direction that marks the show's own structure (music, a sound, a segment or a break)
/// rather than how a line is said (`(laughs)`, `[beat]`): a turn seldom runs on across it.
fn is_show_cue(inner: &str) -> bool {
    const WORDS: [&str; 13] = [
        "music",
        "sfx",
        "sound",
        "segment",
        "outro",
        "intro",
        "break",
        "transition",
        "sting",
        "jingle",
        "theme",
        "commercial",
        "fade",
    ];
    let lower = inner.to_lowercase();
    WORDS.iter().any(|w| lower.contains(w))
}

/// A whole line inside one pair of emphasis marks (`**…**`, `*…*`, `__…__`, `_…_`): its
/// inside and where that starts (`at` is where `trimmed` starts in its line).
pub(crate) fn unwrap_emphasis(trimmed: &str, at: usize) -> (&str, usize) {
    for mark in ["**", "__", "*", "_"] {
        if let Some(inner) = trimmed
            .strip_prefix(mark)
            .and_then(|rest| rest.strip_suffix(mark))
        {
            let inner_trimmed = inner.trim();
            if !inner_trimmed.is_empty() && !inner_trimmed.contains(mark) {
                let lead = inner.len() - inner.trim_start().len();
                return (inner_trimmed, at + mark.len() + lead);
            }
        }
    }
    (trimmed, at)
}

pub(crate) fn whole_line_direction(trimmed: &str) -> Option<&str> {
    let (open, close) = match trimmed.chars().next()? {
        '(' => ('(', ')'),
        '[' => ('[', ']'),
        _ => return None,
    };
    let mut depth = 0usize;
    for (i, c) in trimmed.char_indices() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                let inner = &trimmed[1..i];
                let is_last = i + c.len_utf8() == trimmed.len();
                let directive = super::pieces::directive_key(inner).is_some()
                    || super::cues::parse_cue(inner).is_some();
                let is_dia = super::labels::dia_tag(trimmed, 0).is_some();
                return (is_last && !directive && !is_dia).then_some(inner);
            }
        }
    }
    None
}

/// A footnote's or a link reference's definition (`[1]: Show notes at …`, `[^note]: …`), as
/// Markdown and show notes write them: what a reader looks up, not what a host says (it was
/// read as ": Show notes…" at the end of the last turn).
fn is_note_definition(trimmed: &str) -> bool {
    let Some(rest) = trimmed.strip_prefix('[') else {
        return false;
    };
    let Some((label, after)) = rest.split_once("]:") else {
        return false;
    };
    let label = label.strip_prefix('^').unwrap_or(label);
    (1..=12).contains(&label.len())
        && (label.chars().all(|c| c.is_ascii_digit()) || rest.starts_with('^'))
        && !label.contains(char::is_whitespace)
        && (after.is_empty() || after.starts_with(char::is_whitespace))
}

#[cfg(test)]
mod tests {
    use super::super::{Episode, ParseOptions, Piece, ScriptFormat};

    fn parse(text: &str, format: ScriptFormat) -> Episode {
        let options = ParseOptions {
            format: Some(format),
            ..ParseOptions::default()
        };
        Episode::parse("t.txt", text, &options).unwrap()
    }

    fn said(e: &Episode) -> Vec<(String, String)> {
        e.lines
            .iter()
            .map(|l| (l.speaker.clone(), l.spoken_text(false)))
            .collect()
    }

    #[test]
    fn name_turns_and_continuations() {
        let e = parse(
            "Alice: Welcome back.\nBob: Thanks (laughs) for having me.\nIt has been a while.\n\nAnd a second paragraph.\n(Music)\nAlice:\n  Indeed.\n",
            ScriptFormat::Name,
        );
        assert_eq!(
            said(&e),
            [
                ("Alice".into(), "Welcome back.".into()),
                (
                    "Bob".into(),
                    "Thanks for having me. It has been a while. And a second paragraph.".into()
                ),
                ("Alice".into(), "Indeed.".into()),
            ]
        );
        assert_eq!(e.lines[1].position.line, 2);
        assert_eq!(e.directions.len(), 1);
        assert_eq!(
            (e.directions[0].text.as_str(), e.directions[0].before_line),
            ("Music", 2)
        );
    }

    #[test]
    fn text_before_any_label_is_warned_not_spoken() {
        let e = parse(
            "Episode 12 notes\nmore notes\nAlice: Hi.",
            ScriptFormat::Name,
        );
        assert_eq!(e.lines.len(), 1);
        assert_eq!(e.warnings.len(), 1);
        assert_eq!(e.warnings[0].position.line, 1);
    }

    #[test]
    fn a_dash_label_heard_once_is_read_into_the_turn_above_with_a_warning() {
        let e = parse(
            "Host — Welcome to the show.\nGuest — Thanks for having me.\nHost — Let's begin.\nParis — the city — was lovely.\n",
            ScriptFormat::Name,
        );
        assert_eq!(e.lines.len(), 2);
        let found: Vec<(usize, &str)> = e
            .warnings
            .iter()
            .filter(|w| w.message.contains("opens like a turn"))
            .map(|w| (w.position.line, w.message.as_str()))
            .collect();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, 2);
        assert!(found[0].1.contains("`Guest: …`"), "{}", found[0].1);
    }

    #[test]
    fn vibevoice_speakers() {
        let e = parse(
            "Speaker 1: Hello.\nSpeaker 2: Hi there.\n",
            ScriptFormat::VibeVoice,
        );
        assert_eq!(e.cast.members.len(), 2);
        assert_eq!(e.lines[1].speaker, "Speaker 2");
    }

    #[test]
    fn markdown_labels_headings_and_cleanup() {
        let e = parse(
            "# Cold open\n\nIntro prose nobody says.\n\n**Alice:** This is *really* good.\n> **Bob**: Agreed.\n\n---\n<!-- a\ncomment -->\n## Part two\nAlice: Onwards [to victory](https://x.invalid).\n",
            ScriptFormat::Markdown,
        );
        assert_eq!(
            said(&e),
            [
                ("Alice".into(), "This is really good.".into()),
                ("Bob".into(), "Agreed.".into()),
                ("Alice".into(), "Onwards to victory.".into()),
            ]
        );
        let chapters: Vec<_> = e
            .chapters
            .iter()
            .map(|c| (c.title.as_str(), c.first_line))
            .collect();
        assert_eq!(chapters, [("Cold open", 0), ("Part two", 2)]);
        assert_eq!(e.lines[1].position.column, 5, "column of Bob inside `> **`");
        assert_eq!(e.warnings.len(), 1, "{:?}", e.warnings);
    }

    #[test]
    fn pause_alone_on_a_line_stays_in_the_turn() {
        let e = parse("Alice: One.\n[pause:2s]\nTwo.", ScriptFormat::Name);
        assert_eq!(e.lines.len(), 1);
        assert!(e.lines[0].pieces.contains(&Piece::Pause { secs: 2.0 }));
    }
}
