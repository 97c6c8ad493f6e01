//! Stage plays and screenplays: the speaker's name on its own line, the speech below it.
//!
//! Play texts (Project Gutenberg's, a playwright's manuscript) and screenplays share a layout: a
//! name line, usually upper case and often ending in a period (`ALGERNON.`, `JOHN (V.O.)`), then
//! the speech up to a blank line. Between speeches come scene headings (`ACT I`, `INT. KITCHEN -
//! DAY`), which become chapters, and stage directions in brackets or as plain "action"
//! paragraphs, which are not spoken. Gutenberg's `LANE. Yes, sir.` (name and speech on one line)
//! is read too. A speech may be interrupted by a bracketed direction spanning several lines.

use super::cues::whole_line_cue;
use super::draft::Draft;
use super::labelled::whole_line_direction;
use super::labels::{
    cue_after_speech, is_title_line, markdown_heading, persons_heading, play_name, scene_heading,
    title_period_candidate, transition, KnownNames,
};
use super::line_labels::{is_interjection, line_label, start_turn, Found, Layout, LayoutCensus};
use super::model::{LineKind, Position, Warning};
use super::pieces::TextStyle;
use super::source::{column_of, SourceLine, TextSpan};

/// A bracketed direction running over several lines.
struct Pending<'a> {
    segments: Vec<TextSpan<'a>>,
    position: Position,
    depth: isize,
    in_speech: bool,
}

/// Where the reader is in a play's list of characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CastList {
    No,
    /// After its heading, before its first entry.
    Heading,
    /// In the entries, up to the next blank line.
    Entries,
}

pub(crate) fn parse<'a>(
    body: &[SourceLine<'a>],
    known: &KnownNames,
    warnings: &mut Vec<Warning>,
) -> Draft<'a> {
    let mut draft = Draft::new(TextStyle::Play);
    let mut census = LayoutCensus::default();
    let mut in_speech = false;
    let mut speech_has_text = false;
    let mut after_blank = true;
    let mut last_was_action = false;
    // Anything but the title block read yet (a turn, a heading, a description)?
    let mut started = false;
    let mut cast_list = CastList::No;
    let mut pending: Option<Pending<'a>> = None;
    // The last turn began with a transcript's stamped name (`Bob  0:07`): a paragraph after
    // it without a name is more of Bob's speech, not a play's action.
    let mut stamped_turn = false;
    // Inside Fountain's boneyard (`/* … */`): text the writer cut, never spoken.
    let mut in_boneyard = false;
    for (index, &line) in body.iter().enumerate() {
        let text = line.text;
        let trimmed = text.trim();
        let lead = text.len() - text.trim_start().len();
        let here = Position::new(line.number, column_of(text, lead));
        if let Some(p) = pending.as_mut() {
            p.segments.push(TextSpan::rest_of(line, lead));
            if !p.in_speech {
                draft.classify(line.number, LineKind::Direction);
            }
            p.depth += bracket_depth(trimmed);
            if p.depth <= 0 {
                if let Some(p) = pending.take() {
                    finish(&mut draft, p);
                }
            }
            continue;
        }
        if in_boneyard || trimmed.starts_with("/*") {
            draft.classify(line.number, LineKind::Comment);
            let opened = if in_boneyard { 0 } else { 2 };
            in_boneyard = !trimmed[opened..].contains("*/");
            continue;
        }
        if page_furniture(trimmed, lead) {
            // A printed screenplay's page number or `CONTINUED:` across a page break: neither
            // speech nor the end of it.
            draft.classify(line.number, LineKind::Metadata);
            continue;
        }
        if !in_speech && trimmed.starts_with('=') && !trimmed.starts_with("===") {
            // Fountain's synopsis: a note to the writer.
            draft.classify(line.number, LineKind::Comment);
            continue;
        }
        if trimmed.is_empty() {
            after_blank = true;
            last_was_action = false;
            if speech_has_text {
                in_speech = false;
                draft.end_turn();
            }
            if cast_list == CastList::Entries {
                cast_list = CastList::No;
            }
            continue;
        }
        let speaking = in_speech && speech_has_text;
        if !speaking && persons_heading(trimmed) {
            retract_empty_turn(&mut draft, warnings, started);
            draft.classify(line.number, LineKind::Metadata);
            cast_list = CastList::Heading;
            in_speech = false;
            continue;
        }
        if cast_list != CastList::No {
            draft.classify(line.number, LineKind::Metadata);
            cast_list = CastList::Entries;
            continue;
        }
        let upper = !trimmed.chars().any(char::is_lowercase);
        // Scene headings, and Fountain's sections (`# ACT ONE`): the episode's parts.
        let heading = markdown_heading(trimmed)
            .filter(|t| !t.is_empty())
            .or_else(|| ((!in_speech || upper) && scene_heading(trimmed)).then_some(trimmed));
        if let Some(title) = heading {
            retract_empty_turn(&mut draft, warnings, started);
            draft.chapter(title, here);
            draft.end_turn();
            in_speech = false;
            speech_has_text = false;
            after_blank = false;
            last_was_action = true;
            started = true;
            continue;
        }
        if (!speaking && transition(trimmed)) || (speaking && cue_after_speech(trimmed)) {
            retract_empty_turn(&mut draft, warnings, started);
            draft.direction(trimmed, here);
            draft.end_turn();
            in_speech = false;
            speech_has_text = false;
            after_blank = false;
            last_was_action = false;
            started = true;
            continue;
        }
        let stamped = play_name(trimmed, true).is_some_and(|n| n.stamped);
        if !started && !in_speech && !stamped && is_title_line(trimmed, known) {
            let next = body.get(index + 1).map_or("", |l| l.text.trim());
            if play_name(trimmed, true).is_some() && is_speech_like(next) {
                warnings.push(Warning {
                    position: here,
                    message: format!(
                        "`{trimmed}` is read as the title, not a speaker; if it is a speaker, \
                         write it as `{trimmed}: …`"
                    ),
                });
            }
            draft.classify(line.number, LineKind::Metadata);
            after_blank = false;
            continue;
        }
        if trimmed.starts_with(['[', '(']) {
            let depth = bracket_depth(trimmed);
            if depth > 0 {
                if !in_speech {
                    draft.classify(line.number, LineKind::Direction);
                }
                pending = Some(Pending {
                    segments: vec![TextSpan::rest_of(line, lead)],
                    position: here,
                    depth,
                    in_speech,
                });
                continue;
            }
            if whole_line_cue(trimmed).is_some() {
                draft.sound_line(TextSpan::rest_of(line, lead), in_speech);
                after_blank = false;
                continue;
            }
            if let Some(inner) = whole_line_direction(trimmed) {
                if !(in_speech && draft.push_aside(TextSpan::rest_of(line, lead))) {
                    draft.direction(inner, here);
                }
                after_blank = false;
                last_was_action = false;
                continue;
            }
        }
        let awaiting_speech = in_speech && !speech_has_text;
        if !awaiting_speech {
            let next_has_text = body
                .get(index + 1)
                .is_some_and(|l| !l.text.trim().is_empty());
            let allow_title = !in_speech && after_blank;
            if let Some(name) = play_name(trimmed, allow_title) {
                if name.marked || next_has_text {
                    stamped_turn = name.stamped;
                    draft.start_turn(name.name, here);
                    in_speech = true;
                    speech_has_text = false;
                    after_blank = false;
                    last_was_action = false;
                    started = true;
                    continue;
                }
            }
            // Inside a speech, a new name needs the last line to have finished its sentence
            // (speeches often follow each other without a blank line in e-texts).
            let sentence_ended = index
                .checked_sub(1)
                .and_then(|i| body.get(i))
                .is_some_and(|l| ends_sentence(l.text));
            let label = line_label(text, known, false)
                .filter(|(found, _)| {
                    // A name alone is handled above; `CUT TO:` with nothing after is a transition.
                    !matches!(found, Found::Label { rest_at, .. } if text[*rest_at..].trim().is_empty())
                })
                .or_else(|| title_label(text, lead, known).filter(|_| after_blank));
            if !in_speech || sentence_ended {
                if let Some((found, layout)) = label {
                    start_turn(&mut draft, &mut census, line, found, layout);
                    stamped_turn = false;
                    in_speech = true;
                    speech_has_text = true;
                    after_blank = false;
                    last_was_action = false;
                    started = true;
                    continue;
                }
            }
        }
        let resumed =
            !in_speech && stamped_turn && !is_transcript_credit(trimmed) && draft.reopen_turn();
        if in_speech || resumed {
            draft.push(TextSpan::rest_of(line, lead));
            in_speech = true;
            speech_has_text = true;
        } else if !(last_was_action && draft.extend_unspoken(trimmed, line.number)) {
            if is_entrance_or_exit(trimmed) {
                draft.direction(trimmed, here);
            } else {
                draft.narration(trimmed, here);
            }
            last_was_action = true;
            started = true;
        }
        after_blank = false;
    }
    if let Some(p) = pending {
        warnings.push(Warning {
            position: p.position,
            message: "this bracket is never closed; read to the end of the file".to_owned(),
        });
        finish(&mut draft, p);
    }
    retract_empty_turn(&mut draft, warnings, started);
    census.warn(warnings);
    draft
}

/// `Algernon.  Did you hear what I was playing, Lane?`: a title-case name and a full stop
/// opening a paragraph, for a name that opens several paragraphs so.
fn title_label<'a>(text: &'a str, lead: usize, known: &KnownNames) -> Option<(Found<'a>, Layout)> {
    let (name, speech) = title_period_candidate(text.trim())?;
    (known.vouches_for_title_label(name) && !is_interjection(name)).then_some((
        Found::Label {
            name,
            name_at: lead,
            rest_at: lead + speech,
        },
        Layout::Period,
    ))
}

/// `Transcribed by https://otter.ai`: the line a transcription service ends its export with.
fn is_transcript_credit(trimmed: &str) -> bool {
    let lower = trimmed.to_lowercase();
    ["transcribed by", "transcription by", "transcript by"]
        .iter()
        .any(|p| lower.starts_with(p))
}

/// `Enter HORATIO and MARCELLUS`, `Exit`, `Exeunt omnes`: an unbracketed stage direction.
fn is_entrance_or_exit(trimmed: &str) -> bool {
    let first = trimmed
        .split_whitespace()
        .next()
        .unwrap_or("")
        .trim_end_matches(['.', ','])
        .to_lowercase();
    matches!(
        first.as_str(),
        "enter" | "exit" | "exeunt" | "re-enter" | "manet" | "manent" | "exit," | "flourish"
    )
}

/// A printed screenplay's page furniture, as a PDF's text keeps it: a page number pushed to
/// the right margin (`                    13.`) or a `CONTINUED:` line (`CONTINUED: (2)`).
fn page_furniture(trimmed: &str, lead: usize) -> bool {
    let number = trimmed.trim_end_matches('.');
    let page_number =
        lead >= 20 && (1..=4).contains(&number.len()) && number.bytes().all(|b| b.is_ascii_digit());
    let upper = trimmed.to_uppercase();
    let continued = trimmed == upper
        && upper
            .strip_prefix("CONTINUED:")
            .is_some_and(|rest| rest.trim().is_empty() || rest.trim().starts_with('('));
    page_number || continued
}

/// Whether a line after a name-like title reads as speech (not a subtitle, credit or heading).
fn is_speech_like(next: &str) -> bool {
    next.ends_with(['.', '!', '?', '…']) && !scene_heading(next)
}

/// A name that turned out to have no speech (`ARMS AND THE MAN` above `ACT I`, a transition
/// laid out like a name) is taken back: a title before the play starts, else a heading, and
/// the user is told.
fn retract_empty_turn(draft: &mut Draft<'_>, warnings: &mut Vec<Warning>, started: bool) {
    if let Some((name, position)) = draft.take_empty_turn() {
        let kind = if started && !draft.turns.is_empty() {
            LineKind::Heading
        } else {
            LineKind::Metadata
        };
        draft.classify(position.line, kind);
        warnings.push(Warning {
            position,
            message: format!(
                "`{name}` stands alone like a speaker's name but nothing is said after it, so \
                 it is read as a {kind}"
            ),
        });
    }
}

/// Whether a line ends a sentence (or a bracketed direction), so a name may follow it.
fn ends_sentence(text: &str) -> bool {
    text.trim_end()
        .ends_with(['.', '!', '?', '…', '"', '”', '’', ')', ']', '—', '-'])
}

/// Net count of opening minus closing brackets and parentheses.
fn bracket_depth(s: &str) -> isize {
    s.chars()
        .map(|c| match c {
            '[' | '(' => 1,
            ']' | ')' => -1,
            _ => 0,
        })
        .sum()
}

fn finish<'a>(draft: &mut Draft<'a>, p: Pending<'a>) {
    if p.in_speech {
        // Lines of the direction are directions; a last line that goes on after the bracket
        // closes is speech.
        let last = p.segments.len() - 1;
        for (i, segment) in p.segments.into_iter().enumerate() {
            if i == last && !segment.text.trim_end().ends_with([']', ')']) {
                draft.push(segment);
            } else {
                draft.push_aside(segment);
            }
        }
    } else {
        let joined: Vec<&str> = p.segments.iter().map(|s| s.text.trim()).collect();
        let joined = joined.join(" ");
        let inner = joined
            .strip_prefix(['[', '('])
            .unwrap_or(&joined)
            .trim_end()
            .strip_suffix([']', ')'])
            .unwrap_or(&joined);
        draft.direction(inner, p.position);
        for segment in &p.segments {
            draft.mark_covers(segment.position.line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Episode, LineKind, ParseOptions, Position, ScriptFormat};

    fn parse(text: &str) -> Episode {
        let options = ParseOptions {
            format: Some(ScriptFormat::Play),
            ..ParseOptions::default()
        };
        Episode::parse("play.txt", text, &options).unwrap()
    }

    fn said(e: &Episode) -> Vec<(&str, String)> {
        e.lines
            .iter()
            .map(|l| (l.speaker.as_str(), l.spoken_text(false)))
            .collect()
    }

    #[test]
    fn names_on_their_own_lines_with_scenes_and_directions() {
        let e = parse(
            "THE IMPORTANCE OF BEING EARNEST\n\nFIRST ACT\n\nSCENE: Morning-room in Algernon's flat.\n\n[Lane is arranging afternoon tea on the table,\nand after the music has ceased, Algernon enters.]\n\nALGERNON.\nDid you hear what I was playing, Lane?\n\nLANE.\nI didn't think it polite to listen, sir.\n\nALGERNON.\nI'm sorry for that. [Hands them on a salver.]\nI play with wonderful expression.\nLANE.\nYes, sir.\n",
        );
        assert_eq!(
            said(&e),
            [
                (
                    "ALGERNON",
                    "Did you hear what I was playing, Lane?".to_owned()
                ),
                (
                    "LANE",
                    "I didn't think it polite to listen, sir.".to_owned()
                ),
                (
                    "ALGERNON",
                    "I'm sorry for that. I play with wonderful expression.".to_owned()
                ),
                ("LANE", "Yes, sir.".to_owned()),
            ]
        );
        let chapters: Vec<_> = e.chapters.iter().map(|c| c.title.as_str()).collect();
        assert_eq!(
            chapters,
            ["FIRST ACT", "SCENE: Morning-room in Algernon's flat."]
        );
        let directions: Vec<_> = e.directions.iter().map(|d| d.text.as_str()).collect();
        assert_eq!(
            directions,
            ["Lane is arranging afternoon tea on the table, and after the music has ceased, Algernon enters."]
        );
        assert_eq!(e.skipped[0].kind, LineKind::Metadata, "the title");
        assert_eq!(e.lines[1].position, Position::new(13, 1));
    }

    #[test]
    fn screenplay_layout() {
        let e = parse(
            "INT. STUDIO - NIGHT\n\nMaya adjusts her headphones.\nShe leans in.\n\n          MAYA\n     (quietly)\n     We're live.\n\n          SAM (V.O.)\n     Copy that.\n\nCUT TO:\n",
        );
        assert_eq!(
            said(&e),
            [
                ("MAYA", "We're live.".to_owned()),
                ("SAM", "Copy that.".to_owned())
            ]
        );
        assert_eq!(
            e.directions[0].text,
            "Maya adjusts her headphones. She leans in."
        );
        assert_eq!(e.directions.last().unwrap().text, "CUT TO:");
        assert_eq!(e.lines[0].position, Position::new(6, 11));
    }

    #[test]
    fn gutenberg_same_line_and_title_case_names() {
        let e = parse("LANE.  Yes, sir.\n\nMR. WORTHING. Quite so.\nIndeed.\n\nLady Bracknell.\nGood afternoon.\n");
        assert_eq!(
            said(&e),
            [
                ("LANE", "Yes, sir.".to_owned()),
                ("MR. WORTHING", "Quite so. Indeed.".to_owned()),
                ("Lady Bracknell", "Good afternoon.".to_owned()),
            ]
        );
    }

    #[test]
    fn name_without_speech_is_a_warning_not_a_turn() {
        let options = ParseOptions {
            format: Some(ScriptFormat::Play),
            ..ParseOptions::default()
        };
        let e = Episode::parse(
            "play.txt",
            "JACK.\nHello.\n\nGWENDOLEN.\n\nSMASH CUT TO:\n\nJACK.\nBye.\n",
            &options,
        )
        .unwrap();
        assert_eq!(e.lines.len(), 2);
        let w: Vec<_> = e.warnings.iter().map(|w| w.position.line).collect();
        assert_eq!(w, [4], "{:?}", e.warnings);
        assert!(e.warnings[0].message.contains("`GWENDOLEN` stands alone"));
        let kinds: Vec<_> = e
            .skipped
            .iter()
            .map(|s| (s.position.line, s.kind))
            .collect();
        assert_eq!(kinds, [(4, LineKind::Heading), (6, LineKind::Direction)]);
    }
}
