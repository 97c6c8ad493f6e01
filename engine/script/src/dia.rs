//! Dia's `[S1] text [S2] text` scripts.
//!
//! Nari Labs' Dia writes speaker tags inline, so one line may hold several turns and a turn may
//! run over several lines. Speakers are named `S1`, `S2`... as in the tags (a cast header can give
//! `S1: af_heart`). Dia's non-verbal cues such as `(laughs)` are stage directions here, because
//! Kokoro cannot laugh; with stage directions kept they are read out.

use super::draft::Draft;
use super::labels::dia_tag;
use super::model::{LineKind, Position, Warning};
use super::pieces::TextStyle;
use super::source::{Columns, SourceLine, TextSpan};

pub(crate) fn parse<'a>(body: &[SourceLine<'a>], warnings: &mut Vec<Warning>) -> Draft<'a> {
    let mut draft = Draft::new(TextStyle::Plain);
    let mut warned = false;
    for &line in body {
        let text = line.text;
        let mut columns = Columns::new(text);
        let mut start = 0;
        for (at, _) in text.match_indices('[') {
            if at < start {
                continue;
            }
            let Some((number, len)) = dia_tag(text, at) else {
                continue;
            };
            push(
                &mut draft,
                line,
                &mut columns,
                start,
                at,
                warnings,
                &mut warned,
            );
            draft.start_turn(
                &format!("S{number}"),
                Position::new(line.number, columns.at(at)),
            );
            start = at + len;
        }
        push(
            &mut draft,
            line,
            &mut columns,
            start,
            text.len(),
            warnings,
            &mut warned,
        );
    }
    draft
}

fn push<'a>(
    draft: &mut Draft<'a>,
    line: SourceLine<'a>,
    columns: &mut Columns<'_>,
    from: usize,
    to: usize,
    warnings: &mut Vec<Warning>,
    warned: &mut bool,
) {
    let piece = &line.text[from..to];
    let lead = piece.len() - piece.trim_start().len();
    if piece.trim().is_empty() {
        return;
    }
    let segment = TextSpan::slice(line, columns, from + lead, to);
    let position = segment.position;
    if draft.push(segment) {
        return;
    }
    draft.classify(line.number, LineKind::Narration);
    if !*warned {
        *warned = true;
        warnings.push(Warning {
            position,
            message: "this text comes before the first speaker tag, so it is not spoken; start it with a tag such as `[S1]`".to_owned(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Episode, ParseOptions, Position, ScriptFormat};

    #[test]
    fn several_turns_per_line_and_continuations() {
        let options = ParseOptions {
            format: Some(ScriptFormat::Dia),
            ..ParseOptions::default()
        };
        let e = Episode::parse(
            "d.txt",
            "[S1] Dia is open weights. [S2] You get full control (laughs).\nOn a second line. [s1] Wow.",
            &options,
        )
        .unwrap();
        let said: Vec<_> = e
            .lines
            .iter()
            .map(|l| (l.speaker.as_str(), l.spoken_text(false)))
            .collect();
        assert_eq!(
            said,
            [
                ("S1", "Dia is open weights.".to_owned()),
                ("S2", "You get full control. On a second line.".to_owned()),
                ("S1", "Wow.".to_owned()),
            ]
        );
        assert_eq!(e.lines[1].position, Position::new(1, 27));
        assert_eq!(e.lines[2].position, Position::new(2, 19));
        let kept = Episode::parse(
            "d.txt",
            "[S1] Hi (laughs)",
            &ParseOptions {
                keep_stage_directions: true,
                ..options
            },
        )
        .unwrap();
        assert_eq!(kept.lines[0].spoken_text(true), "Hi laughs");
    }

    #[test]
    fn empty_tag_is_an_error_at_the_tag() {
        let options = ParseOptions {
            format: Some(ScriptFormat::Dia),
            ..ParseOptions::default()
        };
        let e = Episode::parse("d.txt", "[S1] Hi. [S2]", &options).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("d.txt:1:10: `S2` has a label but nothing to say"),
            "{e}"
        );
    }
}
