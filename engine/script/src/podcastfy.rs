//! podcastfy transcripts: `<Person1>text</Person1><Person2>text</Person2>`.
//!
//! podcastfy (and similar LLM podcast generators) emit XML-like tags per turn, often all on one
//! line. Any simple tag name is a speaker (`<Host>` works as well as `<Person1>`); entities such as
//! `&amp;` are decoded. The format is produced by language models, so it is read leniently:
//! a missing or mismatched closing tag is a warning, not an error.

use super::draft::Draft;
use super::model::{LineKind, Position, Warning};
use super::pieces::TextStyle;
use super::source::{Columns, SourceLine, TextSpan};

pub(crate) fn parse<'a>(body: &[SourceLine<'a>], warnings: &mut Vec<Warning>) -> Draft<'a> {
    let mut draft = Draft::new(TextStyle::Xml);
    let mut open: Option<(String, Position)> = None;
    let mut warned_outside = false;
    for &line in body {
        let text = line.text;
        let mut columns = Columns::new(text);
        let mut start = 0;
        for (at, _) in text.match_indices('<') {
            if at < start {
                continue;
            }
            let Some((closing, name, len)) = tag(text, at) else {
                continue;
            };
            text_between(
                &mut draft,
                line,
                &mut columns,
                start,
                at,
                warnings,
                &mut warned_outside,
            );
            start = at + len;
            if is_inline_markup(name) {
                // `<i>last</i>`: emphasis inside a turn, not a speaker; the words stay.
                continue;
            }
            let position = Position::new(line.number, columns.at(at));
            if closing {
                match open.take() {
                    Some((o, _)) if o.eq_ignore_ascii_case(name) => {}
                    Some((o, p)) => warnings.push(Warning {
                        position,
                        message: format!(
                            "`</{name}>` closes `<{o}>` opened at {p}; read as its end"
                        ),
                    }),
                    None => warnings.push(Warning {
                        position,
                        message: format!("`</{name}>` closes nothing; ignored"),
                    }),
                }
                draft.end_turn();
            } else {
                if let Some((o, p)) = open.take() {
                    warnings.push(Warning {
                        position: p,
                        message: format!(
                            "`<{o}>` is not closed before `<{name}>`; read as ending there"
                        ),
                    });
                }
                draft.start_turn(name, position);
                open = Some((name.to_owned(), position));
            }
        }
        text_between(
            &mut draft,
            line,
            &mut columns,
            start,
            text.len(),
            warnings,
            &mut warned_outside,
        );
    }
    if let Some((o, p)) = open {
        warnings.push(Warning {
            position: p,
            message: format!("`<{o}>` is never closed; read to the end of the file"),
        });
    }
    draft
}

/// HTML's inline formatting tags, which language models put inside turns.
fn is_inline_markup(name: &str) -> bool {
    const TAGS: [&str; 16] = [
        "i", "b", "u", "s", "em", "strong", "emphasis", "br", "br/", "span", "small", "mark",
        "sup", "sub", "del", "ins",
    ];
    TAGS.contains(&name.to_ascii_lowercase().as_str())
}

/// `<Name>` or `</Name>` at byte `at`: `(closing, name, length in bytes)`.
fn tag(text: &str, at: usize) -> Option<(bool, &str, usize)> {
    let rest = text.get(at + 1..)?;
    let (closing, rest) = match rest.strip_prefix('/') {
        Some(r) => (true, r),
        None => (false, rest),
    };
    // A name has at most 40 characters: look no further, or a line of `<`s costs a square.
    let end = rest
        .char_indices()
        .take(42)
        .find(|&(_, c)| c == '>')
        .map(|(i, _)| i)?;
    // `<br/>`: a self-closing tag is only ever markup
    let name = rest[..end]
        .strip_suffix('/')
        .unwrap_or(&rest[..end])
        .trim_end();
    let ok = (1..=40).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    ok.then_some((closing, name, end + 2 + usize::from(closing)))
}

fn text_between<'a>(
    draft: &mut Draft<'a>,
    line: SourceLine<'a>,
    columns: &mut Columns<'_>,
    from: usize,
    to: usize,
    warnings: &mut Vec<Warning>,
    warned: &mut bool,
) {
    let piece = &line.text[from..to];
    if piece.trim().is_empty() {
        return;
    }
    let lead = piece.len() - piece.trim_start().len();
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
            message: "this text is outside any `<Person1>`-style tag, so it is not spoken"
                .to_owned(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Episode, ParseOptions, Position, ScriptFormat};

    fn parse(text: &str) -> Episode {
        let options = ParseOptions {
            format: Some(ScriptFormat::Podcastfy),
            ..ParseOptions::default()
        };
        Episode::parse("p.xml", text, &options).unwrap()
    }

    fn said(e: &Episode) -> Vec<(&str, String)> {
        e.lines
            .iter()
            .map(|l| (l.speaker.as_str(), l.spoken_text(false)))
            .collect()
    }

    #[test]
    fn tags_on_one_line_and_across_lines() {
        let e = parse("<Person1>\"Welcome to Q&amp;A!\"</Person1><Person2>Thanks,\nglad to be here.</Person2>\n<Person1>Bye.</Person1>");
        assert_eq!(
            said(&e),
            [
                ("Person1", "\"Welcome to Q&A!\"".to_owned()),
                ("Person2", "Thanks, glad to be here.".to_owned()),
                ("Person1", "Bye.".to_owned()),
            ]
        );
        assert_eq!(e.lines[1].position, Position::new(1, 41));
        assert!(e.warnings.is_empty(), "{:?}", e.warnings);
    }

    #[test]
    fn sloppy_tags_are_warnings() {
        let e = parse("stray <Person1>One.<Person2>Two.</Person1> x <Guest>Three.");
        assert_eq!(e.lines.len(), 3, "{:?}", e.lines);
        assert_eq!(e.lines[2].speaker, "Guest");
        assert_eq!(e.warnings.len(), 4, "{:?}", e.warnings);
        let e = parse("<Person1>1 < 2 and a<b</Person1>");
        assert_eq!(e.lines[0].spoken_text(false), "1 < 2 and a<b");
    }

    #[test]
    fn inline_markup_and_named_entities_stay_in_the_turn() {
        let e = parse("<Person1>It's the <i>last</i> page &mdash; honestly.<br/></Person1>\n<Person2>Caf&eacute;?</Person2>");
        assert_eq!(
            said(&e),
            [
                ("Person1", "It's the last page — honestly.".to_owned()),
                ("Person2", "Café?".to_owned()),
            ]
        );
    }
}
