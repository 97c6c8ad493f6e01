//! Prose: a text with no speaker labels at all (a solo episode, an essay, a story, a chapter
//! pasted from a document), read by one speaker.
//!
//! Why: a solo host's script has nobody's name in it, and refusing it ("cannot tell which
//! script format this is") left the author to write `Narrator:` above it by hand. Each
//! paragraph is a turn of the one speaker, so the studio edits and re-renders a paragraph at a
//! time and the episode pauses between paragraphs as a reader does. Layout that is never speech
//! stays unspoken as in the other formats: Markdown headings and scene headings are chapters, a
//! title block at the top is metadata, comments and rules are comments, whole-line directions
//! and sound cues act as they do elsewhere, and a transcript's bare timestamps (`0:03` alone on
//! a line, as a video's transcript is copied) are metadata.
//!
//! Detection reads a file as prose only when nothing in it looks like any layout and no two
//! lines open like a label it does not trust ([`label_like_lines`]); the episode then carries a
//! warning at its first line saying who reads it, so the guess is never silent.

use super::cues::whole_line_cue;
use super::draft::{Draft, NARRATOR};
use super::format::ScriptFormat;
use super::header::Header;
use super::labelled::{
    after_quote_markers, is_rule, position, unwrap_emphasis, whole_line_direction,
};
use super::labels::{
    is_cue_number, is_cue_timing, is_title_line, is_webvtt_block, markdown_heading, scene_heading,
    timestamp_len, KnownNames,
};
use super::model::{LineKind, Position, Warning};
use super::pieces::directive_key;
use super::pieces::TextStyle;
use super::source::{SourceLine, TextSpan};

/// Who reads a prose script: the cast's `Narrator` if it has one, else its only member, else
/// [`NARRATOR`] (cast automatically).
pub(crate) struct Reader {
    pub name: String,
    /// Whether the cast names the reader (else its voice is chosen automatically).
    pub cast: bool,
}

impl Reader {
    pub fn of(header: &Header) -> Self {
        let entries = &header.entries;
        entries
            .iter()
            .find(|e| e.name.eq_ignore_ascii_case(NARRATOR))
            .or(match entries.as_slice() {
                [only] => Some(only),
                _ => None,
            })
            .map_or_else(
                || Self {
                    name: NARRATOR.to_owned(),
                    cast: false,
                },
                |e| Self {
                    name: e.name.clone(),
                    cast: true,
                },
            )
    }

    /// The warning at the first paragraph of a file detected as prose.
    fn notice(&self) -> String {
        let name = &self.name;
        let voice = if self.cast {
            String::new()
        } else {
            format!(", or cast `{name}` (`{name}: bf_emma` in a cast block) to choose the voice")
        };
        format!(
            "this script has no speaker labels (or too few for a dialogue), so it is read as prose, every paragraph by `{name}`; start each turn with a name and a colon (`Alice: …`) for a dialogue{voice}"
        )
    }
}

/// Parses `body` as paragraphs said by `reader`. `detected` adds the warning that says the
/// file was taken for prose (an explicit `--format prose` needs none).
pub(crate) fn parse<'a>(
    body: &[SourceLine<'a>],
    known: &KnownNames,
    reader: &Reader,
    detected: bool,
    warnings: &mut Vec<Warning>,
) -> Draft<'a> {
    let subtitles = body.iter().any(|l| is_cue_timing(l.text.trim()));
    // Subtitles' inline tags (`<i>`) are markup; elsewhere Markdown's marks and links are.
    let mut draft = Draft::new(if subtitles {
        TextStyle::Plain
    } else {
        TextStyle::Markdown
    });
    let mut in_comment = false;
    let mut in_webvtt_block = false;
    let paragraphs = Paragraphs::of(body);
    for (index, &line) in body.iter().enumerate() {
        let text = line.text;
        let trimmed = text.trim();
        if trimmed.is_empty() {
            in_webvtt_block = false;
            if paragraphs == Paragraphs::Blank {
                draft.end_turn();
            }
            continue;
        }
        // A subtitle file's cue numbers, timings and VTT blocks, and a transcript's bare
        // timestamps (`0:03`, `[00:01:02]`): where the old recording was, not speech.
        let next = body.get(index + 1).map(|l| l.text);
        if in_webvtt_block
            || is_cue_timing(trimmed)
            || is_cue_number(trimmed, next)
            || timestamp_len(trimmed) == trimmed.len()
        {
            draft.classify(line.number, LineKind::Metadata);
            continue;
        }
        if subtitles && is_webvtt_block(trimmed) {
            in_webvtt_block = true;
            draft.classify(line.number, LineKind::Metadata);
            continue;
        }
        let at = text.len() - text.trim_start().len();
        if in_comment || trimmed.starts_with("<!--") {
            in_comment = !trimmed.ends_with("-->");
            draft.classify(line.number, LineKind::Comment);
            continue;
        }
        if let Some(title) = markdown_heading(trimmed) {
            draft.chapter(title, position(line, at));
            draft.end_turn();
            continue;
        }
        if is_rule(trimmed) {
            draft.classify(line.number, LineKind::Comment);
            draft.end_turn();
            continue;
        }
        if scene_heading(trimmed) {
            draft.chapter(trimmed, position(line, at));
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
        let (bare, bare_at) = unwrap_emphasis(text[at..].trim(), at);
        if let Some(inner) = whole_line_direction(bare) {
            draft.direction(inner, position(line, bare_at));
            continue;
        }
        if !draft.open && is_pause(bare) && draft.reopen_turn() {
            // `[pause:2s]` between paragraphs: the silence ends the paragraph above.
            draft.push(TextSpan::rest_of(line, at));
            draft.end_turn();
            continue;
        }
        if !draft.open {
            if detected && draft.turns.is_empty() {
                warnings.push(Warning {
                    position: position(line, at),
                    message: reader.notice(),
                });
            }
            draft.start_turn(&reader.name, position(line, at));
        }
        draft.push(TextSpan::rest_of(line, at));
        let ends_sentence = trimmed
            .trim_end_matches(['"', '\'', '”', '’', ')', '*', '_'])
            .ends_with(['.', '!', '?', '…']);
        match paragraphs {
            Paragraphs::Lines => draft.end_turn(),
            Paragraphs::Sentences if ends_sentence => draft.end_turn(),
            _ => {}
        }
    }
    draft
}

/// Where a paragraph, and so a turn, ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Paragraphs {
    /// At a blank line; a paragraph's lines (hard-wrapped text) are joined.
    Blank,
    /// At every line: the text has no blank line inside it, which is how a document's
    /// paragraphs arrive (a word processor's file or a web page gives one line each) and how
    /// many editors save text.
    Lines,
    /// After a line that ends a sentence: subtitles and timestamped transcripts, whose cues cut
    /// sentences wherever the screen was full.
    Sentences,
}

impl Paragraphs {
    fn of(body: &[SourceLine<'_>]) -> Self {
        let trimmed = || body.iter().map(|l| l.text.trim());
        if trimmed().any(|t| is_cue_timing(t) || (!t.is_empty() && timestamp_len(t) == t.len())) {
            return Self::Sentences;
        }
        let text = |t: &str| !t.is_empty();
        let (Some(first), Some(last)) = (trimmed().position(text), trimmed().rposition(text))
        else {
            return Self::Lines;
        };
        if trimmed().skip(first).take(last - first).any(str::is_empty) {
            Self::Blank
        } else {
            Self::Lines
        }
    }
}

/// `[pause:2s]` or `[break:500ms]` alone: a directive, not a paragraph of its own.
fn is_pause(bare: &str) -> bool {
    bare.strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .is_some_and(|inner| directive_key(inner) == Some("pause"))
}

/// Whether a `Name: text` layout's few turns are an essay's colons (`Here is the key idea: …`,
/// `Grandma: a woman who never stopped`): at most three turns, no speaker twice, none in
/// capitals (a script's names often are), and at least as many lines of text left unspoken as
/// turns. A dialogue's speakers come back; a dialogue with a paragraph of preamble has more
/// turns than preamble.
pub(crate) fn labels_are_incidental(format: ScriptFormat, draft: &Draft<'_>) -> bool {
    if !matches!(format, ScriptFormat::Name | ScriptFormat::Markdown)
        || draft
            .turns
            .iter()
            .any(|t| !t.speaker.chars().any(char::is_lowercase))
    {
        return false;
    }
    let mut speakers: Vec<String> = draft
        .turns
        .iter()
        .map(|t| super::cast::speaker_key(&t.speaker))
        .collect();
    let turns = speakers.len();
    speakers.sort();
    speakers.dedup();
    let unspoken = draft
        .kinds
        .values()
        .filter(|k| **k == LineKind::Narration)
        .count();
    (1..=3).contains(&turns) && speakers.len() == turns && unspoken >= turns
}

/// Lines that open like a speaker label of a kind detection does not trust on its own
/// (`alice: hi` used once or twice, a chat log's `<alice> hi`): where the first of them is,
/// when there are at least two. Such a file is not read as prose, since its labels would be
/// spoken; a single `Note: …` in an essay does not stop it.
pub(crate) fn label_like_lines(body: &[SourceLine<'_>]) -> Option<Position> {
    let mut found = body.iter().filter_map(|line| {
        let at = line.text.len() - line.text.trim_start().len();
        let trimmed = line.text.trim();
        label_like(&trimmed[timestamp_len(trimmed)..]).then(|| position(*line, at))
    });
    let first = found.next()?;
    found.next().map(|_| first)
}

/// `alice: hi`, `Dr Who: hi`, `<alice> hi`: one to three short words before a colon (or in
/// angle brackets) with speech after them.
fn label_like(trimmed: &str) -> bool {
    if let Some(rest) = trimmed.strip_prefix('<') {
        return rest.split_once('>').is_some_and(|(name, after)| {
            (1..=32).contains(&name.chars().count())
                && !name.contains(char::is_whitespace)
                && after.starts_with(' ')
                && !after.trim().is_empty()
        });
    }
    let Some((lead, after)) = trimmed.split_once(':') else {
        return false;
    };
    let words: Vec<&str> = lead.split_whitespace().collect();
    (1..=3).contains(&words.len())
        && words.iter().all(|w| {
            w.chars().count() <= 24
                && !w.contains(['.', ',', ';', '!', '?', '"', '(', ')', '/'])
                && !w.starts_with(|c: char| c.is_ascii_digit())
        })
        && after.starts_with([' ', '\t'])
        && !after.trim().is_empty()
}

#[cfg(test)]
mod tests {
    use super::super::source::split_lines;
    use super::super::{Episode, LineKind, ParseOptions, ScriptFormat};
    use super::*;

    fn parse(text: &str) -> Episode {
        Episode::parse("solo.txt", text, &ParseOptions::default()).expect("parses")
    }

    #[test]
    fn paragraphs_without_labels_are_one_readers_turns_and_the_guess_is_told() {
        let ep = parse(
            "Why We Sleep\nby Jane Doe\n\nWelcome to a solo episode.\nIt runs on.\n\n\
             Chapter 2\n\n<!-- cut? -->\nThe *second* part.\n[pause:2s]\n\nThe end.\n",
        );
        assert_eq!(ep.format, ScriptFormat::Prose);
        let said: Vec<(&str, String)> = ep
            .lines
            .iter()
            .map(|l| (l.speaker.as_str(), ep.spoken_text(l)))
            .collect();
        assert_eq!(said.len(), 3, "{said:?}");
        assert!(said.iter().all(|(who, _)| *who == NARRATOR), "{said:?}");
        assert_eq!(said[0].1, "Welcome to a solo episode. It runs on.");
        assert!(said[1].1.starts_with("The second part."), "{said:?}");
        assert_eq!(
            ep.lines[1].source_lines,
            vec![10, 11],
            "the pause joins its paragraph"
        );
        let kinds: Vec<(usize, LineKind)> = ep
            .skipped
            .iter()
            .map(|k| (k.position.line, k.kind))
            .collect();
        assert_eq!(
            kinds,
            [
                (1, LineKind::Metadata),
                (2, LineKind::Metadata),
                (7, LineKind::Heading),
                (9, LineKind::Comment)
            ]
        );
        assert_eq!(ep.chapters.len(), 1);
        let notice = &ep.warnings[0];
        assert_eq!((notice.position.line, notice.position.column), (4, 1));
        assert!(
            notice
                .message
                .contains("read as prose, every paragraph by `Narrator`"),
            "{}",
            notice.message
        );
    }

    #[test]
    fn subtitles_and_timestamped_transcripts_run_on_to_the_end_of_a_sentence() {
        let srt = "1\n00:00:01,000 --> 00:00:03,000\nwelcome back to the show, today we're\n\n\
                   2\n00:00:03,000 --> 00:00:05,000\ntalking about sleep.\n\n\
                   3\n00:00:05,000 --> 00:00:06,000\n<i>Why?</i>\n";
        let ep = parse(srt);
        let said: Vec<String> = ep.lines.iter().map(|l| ep.spoken_text(l)).collect();
        assert_eq!(
            said,
            [
                "welcome back to the show, today we're talking about sleep.",
                "Why?"
            ]
        );
        assert_eq!(
            ep.skipped.len(),
            6,
            "cue numbers and timings: {:?}",
            ep.skipped
        );
        let ep = parse("0:00\nso today\n0:02\nwe sleep. Yes.\n[00:00:05]\nAnd dream.\n");
        let said: Vec<String> = ep.lines.iter().map(|l| ep.spoken_text(l)).collect();
        assert_eq!(said, ["so today we sleep. Yes.", "And dream."]);
    }

    #[test]
    fn an_essays_colons_do_not_make_it_a_dialogue() {
        for text in [
            "Sleep matters.\n\nHere is the key idea: sleep clears the brain.\n\nThanks.\n",
            "Today, my grandmother.\n\nGrandma: a woman who never stopped.\n\nShe raised six.\n",
        ] {
            let ep = parse(text);
            assert_eq!(ep.format, ScriptFormat::Prose, "{text}");
            assert_eq!(ep.lines.len(), 3, "{text}");
        }
        // A preamble before a dialogue, and a play's action between its speeches, stay so.
        let ep = parse("Recorded live.\n\nAlice: Hi.\nBob: Hello.\n");
        assert_eq!(ep.format, ScriptFormat::Name);
        let ep = parse("Ann enters.\nShe sits.\n\nANN: Tea?\nBEN: Please.\n");
        assert_eq!(ep.format, ScriptFormat::Name);
    }

    #[test]
    fn without_blank_lines_each_line_is_a_paragraph() {
        let ep = parse("One paragraph, as a document gives it.\nAnother one.\n");
        assert_eq!(ep.lines.len(), 2);
        let ep = parse("A hard-wrapped\nparagraph.\n\nAnother one.\n");
        assert_eq!(ep.lines.len(), 2);
        assert_eq!(ep.spoken_text(&ep.lines[0]), "A hard-wrapped paragraph.");
    }

    #[test]
    fn a_cast_of_one_names_the_reader_and_a_named_format_needs_no_notice() {
        let ep = parse("---\ncast:\n  Host: am_adam\n---\nJust me today.\n");
        assert_eq!(ep.lines[0].speaker, "Host");
        assert!(
            !ep.warnings[0].message.contains("to choose the voice"),
            "{:?}",
            ep.warnings
        );
        let named = ParseOptions {
            format: Some(ScriptFormat::Prose),
            ..ParseOptions::default()
        };
        let ep = Episode::parse("s.txt", "Alice: read as written.\n", &named).unwrap();
        assert_eq!(ep.spoken_text(&ep.lines[0]), "Alice: read as written.");
        assert!(ep.warnings.is_empty(), "{:?}", ep.warnings);
    }

    #[test]
    fn labels_it_does_not_trust_stop_prose_when_two_lines_have_them() {
        let at = |text: &str| label_like_lines(&split_lines(text)).map(|p| (p.line, p.column));
        assert_eq!(at("alice: hi\nbob: yo\n"), Some((1, 1)));
        assert_eq!(
            at("[3/12/24, 9:05] al: hi\n[3/12/24, 9:06] bo: yo\n"),
            Some((1, 1))
        );
        assert_eq!(at("Intro.\n  <alice> hi there\n<bob> yo\n"), Some((2, 3)));
        assert_eq!(at("Note: this is prose.\nIt goes on.\n"), None);
        assert_eq!(
            at("At 10:30 we met. Here is the thing, though: nothing.\nThen 11:15: lunch.\n"),
            None
        );
        assert_eq!(at("<b>bold</b> text\n<i>more</i>\n"), None);
    }
}
