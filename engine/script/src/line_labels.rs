//! A turn's label at the start of a line, in whichever layout that line is written.
//!
//! Real scripts mix layouts: a draft pasted together from a chat log, a Markdown list, a play
//! and a program's JSON output. Reading such a file by its majority layout alone merges the
//! other lines into the turn before them, and the listener hears labels and braces spoken. So
//! each line is read by the layout it is in ([`line_label`]), and the parser reports the lines
//! whose layout differs from the rest (see [`LayoutCensus`]) instead of guessing in silence.

use std::collections::BTreeMap;
use std::fmt;

use super::cues::{parse_cue, whole_line_cue};
use super::draft::Draft;
use super::labels::{
    bold_label, bracket_candidate, bracketed_name, chat_stamp_len, dash_candidate,
    is_chat_placeholder, is_interview_letter, is_numbered_heading, is_sound_cue,
    is_weak_label_name, line_prefix_len, plain_label, play_same_line_name, tab_candidate,
    timestamp_len, voice_tag, KnownNames,
};
use super::model::{LineKind, Position, Warning};
use super::pieces::directive_key;
use super::source::{column_of, SourceLine, TextSpan};

/// How a turn's speaker was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Layout {
    /// `Name: text`
    Colon,
    /// `**Name:** text`
    Bold,
    /// `NAME. text`
    Period,
    /// `NAME [direction] text`
    Bracket,
    /// `[Name] text`
    InBrackets,
    /// `NAME — text`
    Dash,
    /// `{"speaker": "Name", "text": "..."}` on one line
    JsonLine,
    /// `- Name: text` (a list item)
    ListItem,
    /// `> Name: text` (a quote)
    Quote,
    /// `<v Name>text` (a VTT cue's voice)
    VoiceTag,
    /// `Name<TAB>text` (a two-column table)
    Tab,
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Colon => "`Name: text`",
            Self::Bold => "`**Name:** text`",
            Self::Period => "`NAME. text`",
            Self::Bracket => "`NAME [direction] text`",
            Self::InBrackets => "`[Name] text`",
            Self::Dash => "`NAME — text`",
            Self::JsonLine => "`{\"speaker\": …, \"text\": …}`",
            Self::ListItem => "`- Name: text` list items",
            Self::Quote => "`> Name: text` quotes",
            Self::VoiceTag => "`<v Name>` voice tags",
            Self::Tab => "`Name<TAB>text` table rows",
        })
    }
}

/// What a line's label says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Found<'a> {
    /// A label in the line's own text: the speech starts at byte `rest_at`.
    Label {
        name: &'a str,
        name_at: usize,
        rest_at: usize,
    },
    /// A JSON object with the speaker and the (decoded) text.
    Json { speaker: String, text: String },
}

/// The label at the start of `text` (a whole source line), if any, and its layout. `markdown`
/// makes quote markers part of the layout rather than a layout of their own.
pub(crate) fn line_label<'a>(
    text: &'a str,
    known: &KnownNames,
    markdown: bool,
) -> Option<(Found<'a>, Layout)> {
    // `Episode 3: Fog` is a heading, whatever the layout
    any_line_label(text, known, markdown).filter(
        |(found, _)| !matches!(found, Found::Label { name, .. } if is_numbered_heading(name)),
    )
}

fn any_line_label<'a>(
    text: &'a str,
    known: &KnownNames,
    markdown: bool,
) -> Option<(Found<'a>, Layout)> {
    let lead = text.len() - text.trim_start().len();
    // `[00:00:02] Priya: Okay…`: a transcript's timestamp before the label is not part of it
    let stamp = timestamp_len(&text[lead..]);
    if stamp > 0 {
        return label_at(text, lead + stamp, known);
    }
    // `[Cold Open] BOB: Coffee is up.`: a cue in brackets before a label is the show's, and
    // the label still starts the turn (the bracket is dropped, like any inline direction).
    if let Some(close) = text[lead..].strip_prefix('[').and_then(|t| t.find(']')) {
        let inner = &text[lead + 1..lead + 1 + close];
        let after = lead + 1 + close + 1;
        let gap = text[after..].len() - text[after..].trim_start().len();
        // A sound or a directive acts where it stands, so it stays in the line as written.
        let acts = parse_cue(inner).is_some() || directive_key(inner).is_some();
        if gap > 0 && !acts {
            if let Some(found @ (_, Layout::Colon | Layout::Bold)) =
                label_at(text, after + gap, known)
            {
                return Some(found);
            }
        }
    }
    let prefix = line_prefix_len(text);
    if prefix > 0 {
        if let Some((found, layout)) = label_at(text, prefix, known) {
            let quoted = text[lead..prefix].trim_start().starts_with('>');
            let layout = match (quoted, markdown) {
                (true, false) => Layout::Quote,
                (false, _) if matches!(layout, Layout::Colon | Layout::Bold) => Layout::ListItem,
                _ => layout,
            };
            return Some((found, layout));
        }
    }
    if let Some(found) = json_line(text[lead..].trim_end()) {
        return Some((found, Layout::JsonLine));
    }
    label_at(text, lead, known)
}

/// A label starting exactly at byte `at` of `text`.
fn label_at<'a>(text: &'a str, at: usize, known: &KnownNames) -> Option<(Found<'a>, Layout)> {
    let rest = &text[at..];
    let found = |name: &'a str, name_at: usize, rest_at: usize| Found::Label {
        name,
        name_at: at + name_at,
        rest_at: at + rest_at,
    };
    if let Some(l) = bold_label(rest) {
        return Some((found(l.name, l.name_at, l.rest_at), Layout::Bold));
    }
    if let Some((name_at, name_end, speech_at)) = voice_tag(rest) {
        return Some((
            found(&rest[name_at..name_end], name_at, speech_at),
            Layout::VoiceTag,
        ));
    }
    if let Some(l) = plain_label(rest, known) {
        return Some((found(l.name, l.name_at, l.rest_at), Layout::Colon));
    }
    let trimmed = rest.trim_end();
    if !speech_can_follow(trimmed) {
        return None;
    }
    if let Some((name_at, name_end, speech_at)) = bracketed_name(trimmed) {
        // `[Cold Open] HOST: …`: a section's name before a label, not a speaker.
        let labelled_after = plain_label(&trimmed[speech_at..], known).is_some();
        if known.vouches_for_bracketed(&trimmed[name_at..name_end]) && !labelled_after {
            return Some((
                found(&trimmed[name_at..name_end], name_at, speech_at),
                Layout::InBrackets,
            ));
        }
    }
    if let Some((name, speech)) = bracket_candidate(trimmed) {
        if is_weak_label_name(name, known) && !is_interjection(name) {
            return Some((found(name, 0, speech), Layout::Bracket));
        }
    }
    if let Some((name, speech)) = play_same_line_name(trimmed, known) {
        // `Q.`/`A.` come back only from an interview that uses both.
        if is_weak_label_name(name, known) && (is_interview_letter(name) || !is_interjection(name))
        {
            let layout = if trimmed[..speech].trim_end().ends_with(':') {
                Layout::Colon
            } else {
                Layout::Period
            };
            return Some((found(name, 0, speech), layout));
        }
    }
    if let Some((name, speech)) = dash_candidate(trimmed) {
        if is_weak_label_name(name, known) && !is_interjection(name) {
            return Some((found(name, 0, speech), Layout::Dash));
        }
    }
    // A table's rows (a tab after a name is no sentence's); its header row names no one.
    if let Some((name, speech)) = tab_candidate(trimmed) {
        if !is_table_header(trimmed) && !is_interjection(name) {
            return Some((found(name, 0, speech), Layout::Tab));
        }
    }
    None
}

/// A two-column table's header row (`Speaker<TAB>Line`): not a turn, and not words of the
/// turn above when the table follows one.
pub(crate) fn is_table_header(trimmed: &str) -> bool {
    tab_candidate(trimmed).is_some_and(|(_, speech)| {
        matches!(
            trimmed[speech..].trim().to_lowercase().as_str(),
            "line" | "lines" | "dialogue" | "text" | "speech" | "script" | "words"
        )
    })
}

/// Weak layouts need more than a bare name: some speech after it.
fn speech_can_follow(trimmed: &str) -> bool {
    trimmed.chars().count() >= 4
}

/// Upper-case words that start sentences far more often than they name a speaker
/// (`OK. Let's go.`).
pub(crate) fn is_interjection(name: &str) -> bool {
    const WORDS: [&str; 24] = [
        "ok", "okay", "no", "yes", "oh", "ah", "hi", "hey", "wow", "um", "uh", "hmm", "mm", "so",
        "and", "but", "well", "right", "sure", "fine", "note", "ps", "q", "a",
    ];
    WORDS.contains(&name.to_lowercase().as_str())
}

/// `{"speaker": "Ana", "text": "Hi."}` as one line (JSON Lines, or a line pasted from a
/// program's output).
fn json_line(trimmed: &str) -> Option<Found<'static>> {
    #[derive(serde::Deserialize)]
    struct Item {
        speaker: String,
        text: String,
    }
    let inner = trimmed.strip_suffix(',').unwrap_or(trimmed);
    if !(inner.starts_with('{') && inner.ends_with('}')) {
        return None;
    }
    let item: Item = serde_json::from_str(inner).ok()?;
    (!item.speaker.trim().is_empty()).then_some(Found::Json {
        speaker: item.speaker,
        text: item.text,
    })
}

/// Starts the turn `found` on `line` announces, with the speech after its label, and counts its
/// layout in `census`: the one way every parser turns a recognised label into a turn.
pub(crate) fn start_turn<'a>(
    draft: &mut Draft<'a>,
    census: &mut LayoutCensus,
    line: SourceLine<'a>,
    found: Found<'a>,
    layout: Layout,
) {
    let text = line.text;
    match found {
        Found::Label {
            name,
            name_at,
            rest_at,
        } => {
            let at = Position::new(line.number, column_of(text, name_at));
            if is_note_label(name) {
                // `Producer note: trim this`, `TODO: …`: the writers' own notes.
                draft.end_turn();
                draft.classify(line.number, LineKind::Comment);
                census
                    .notes
                    .entry(name.trim().to_owned())
                    .or_default()
                    .push(at);
                return;
            }
            if is_sound_cue(name) {
                draft.end_turn();
                let rest = text[rest_at..].trim();
                let rest_col = column_of(
                    text,
                    rest_at + (text[rest_at..].len() - text[rest_at..].trim_start().len()),
                );
                if let Some(inner) = whole_line_cue(rest) {
                    // `SFX: [sound: door.wav]`: the cue, as written.
                    let bracket = Position::new(line.number, rest_col);
                    draft.sound_mark(
                        inner,
                        bracket,
                        Some(Position::new(line.number, rest_col + 1)),
                    );
                } else if let Some(inner) = label_cue(name, rest) {
                    // `SFX: door.wav`: the line names a file, so it plays it (with a notice).
                    census.played(name, at, &inner);
                    draft.sound_mark(&inner, at, None);
                } else {
                    census.cue(name, at);
                    draft.direction(rest, at);
                }
                return;
            }
            let rest = &text[rest_at..];
            if chat_stamp_len(text.trim_start()) > 0 && is_chat_placeholder(rest) {
                // `[…] Bob: <Media omitted>`: what the chat could not export.
                draft.end_turn();
                draft.classify(line.number, LineKind::Direction);
                census.placeholders.push(at);
                return;
            }
            census.record(layout, at);
            draft.start_turn(name, at);
            draft.push(TextSpan::rest_of(
                line,
                rest_at + (rest.len() - rest.trim_start().len()),
            ));
        }
        Found::Json {
            speaker,
            text: said,
        } => {
            let lead = text.len() - text.trim_start().len();
            let at = Position::new(line.number, column_of(text, lead));
            census.record(layout, at);
            draft.start_turn(&speaker, at);
            draft.push(TextSpan::decoded(at, said));
        }
    }
}

/// A label that introduces a writer's note rather than a speaker: `Note`, `Producer note`,
/// `Editor's notes`, `Note to self`, `TODO`, `FIXME`, `NB`.
fn is_note_label(name: &str) -> bool {
    let lower = name.trim().trim_end_matches('.').to_lowercase();
    let last = lower.rsplit(char::is_whitespace).next().unwrap_or("");
    matches!(last, "note" | "notes")
        || lower.starts_with("note to ")
        || matches!(lower.as_str(), "todo" | "to do" | "fixme" | "nb" | "n.b")
}

/// The cue an audio-drama label that names a file stands for: `SFX: door.wav` plays a sound,
/// `MUSIC: theme.mp3` (and ambience) starts a bed. `None` when `rest` is not one file name.
fn label_cue(name: &str, rest: &str) -> Option<String> {
    let key = match name.trim().to_lowercase().as_str() {
        "music" | "music cue" | "music in" | "ambience" | "ambiance" | "atmos" | "atmosphere" => {
            "bed"
        }
        "music out" => return None,
        _ => "sound",
    };
    let inner = format!("{key}: {}", rest.trim_end_matches('.'));
    let file = rest.trim_end_matches('.');
    (!file.contains(char::is_whitespace) && matches!(parse_cue(&inner), Some(Ok(_))))
        .then_some(inner)
}

/// `line(s) 4, 14, …`: up to twelve line numbers.
fn line_list(at: &[Position]) -> String {
    let lines: Vec<String> = at.iter().take(12).map(|p| p.line.to_string()).collect();
    let more = if at.len() > 12 { ", …" } else { "" };
    format!("{}{more}", lines.join(", "))
}

/// Which layouts the turns of a file were written in, to report the minority ones.
#[derive(Debug, Default)]
pub(crate) struct LayoutCensus {
    seen: BTreeMap<Layout, Vec<Position>>,
    /// Sound cues written as labels (`SFX:`), by name as first written.
    cues: BTreeMap<String, Vec<Position>>,
    /// Cue labels that name a file (`SFX: door.wav`), and the cue each was read as.
    played: BTreeMap<String, Vec<(Position, String)>>,
    /// Writers' notes written as labels (`Producer note:`, `TODO:`), by label.
    notes: BTreeMap<String, Vec<Position>>,
    /// A chat's messages it could not export (`<Media omitted>`, a deleted message).
    placeholders: Vec<Position>,
}

impl LayoutCensus {
    pub fn record(&mut self, layout: Layout, position: Position) {
        let layout = if layout == Layout::Bold {
            Layout::Colon // Markdown writes both; neither is odd beside the other
        } else {
            layout
        };
        self.seen.entry(layout).or_default().push(position);
    }

    /// A sound cue written like a label was read as a direction.
    pub fn cue(&mut self, name: &str, position: Position) {
        let key = name.trim().to_uppercase();
        self.cues.entry(key).or_default().push(position);
    }

    /// A cue label that names a file was read as the cue `inner` (`sound: door.wav`).
    pub fn played(&mut self, name: &str, position: Position, inner: &str) {
        let key = name.trim().to_uppercase();
        self.played
            .entry(key)
            .or_default()
            .push((position, inner.to_owned()));
    }

    /// One warning per layout other than the most used, at its first line, listing the rest;
    /// one notice per sound cue label.
    pub fn warn(self, warnings: &mut Vec<Warning>) {
        for (name, played) in &self.played {
            let at: Vec<Position> = played.iter().map(|(p, _)| *p).collect();
            let (_, first) = &played[0];
            warnings.push(Warning {
                position: at[0],
                message: format!(
                    "`{name}:` lines ({}) name a file, so they play it: line {} reads as `[{first}]`; write the cue in brackets to choose `[sound: …]` or `[bed: …]` yourself",
                    line_list(&at),
                    at[0].line,
                ),
            });
        }
        for (name, at) in &self.notes {
            warnings.push(Warning {
                position: at[0],
                message: format!(
                    "`{name}:` lines ({}) are the writers' notes, not speech, so they are not spoken",
                    line_list(at)
                ),
            });
        }
        if let Some(first) = self.placeholders.first() {
            warnings.push(Warning {
                position: *first,
                message: format!(
                    "line(s) {} hold what the chat could not export (`<Media omitted>`, a deleted message, a missed call), not speech, so they are not spoken",
                    line_list(&self.placeholders)
                ),
            });
        }
        for (name, at) in &self.cues {
            warnings.push(Warning {
                position: at[0],
                message: format!(
                    "`{name}:` lines ({}) are read as sound cues, not spoken; use --keep-stage-directions to have the narrator read them",
                    line_list(at)
                ),
            });
        }
        let Some(main) = self
            .seen
            .iter()
            .max_by_key(|(layout, at)| (at.len(), **layout == Layout::Colon))
            .map(|(layout, _)| *layout)
        else {
            return;
        };
        for (layout, at) in &self.seen {
            if *layout == main {
                continue;
            }
            warnings.push(Warning {
                position: at[0],
                message: format!(
                    "{} turn(s) are written as {layout} (line(s) {}) while most of the script uses {main}; each is read as its own turn: check the speakers",
                    at.len(),
                    line_list(at),
                ),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(text: &str) -> Option<(String, Layout)> {
        line_label(text, &KnownNames::default(), false).map(|(found, layout)| match found {
            Found::Label { name, .. } => (name.to_owned(), layout),
            Found::Json { speaker, .. } => (speaker, layout),
        })
    }

    #[test]
    fn every_layout_on_its_own_line() {
        let cases = [
            ("Ana: Hi.", "Ana", Layout::Colon),
            ("Ana (Annie) 🌍: Hi.", "Ana (Annie) 🌍", Layout::Colon),
            ("- BOB: Hi.", "BOB", Layout::ListItem),
            ("1. Bob: Hi.", "Bob", Layout::ListItem),
            ("> BOB: Hi.", "BOB", Layout::Quote),
            ("KAI — We're live.", "KAI", Layout::Dash),
            ("KAI. We're live.", "KAI", Layout::Period),
            (
                "THE AUNT [at the window] It rains.",
                "THE AUNT",
                Layout::Bracket,
            ),
            (
                r#"{"speaker": "Zoe", "text": "Hi."},"#,
                "Zoe",
                Layout::JsonLine,
            ),
        ];
        for (text, name, layout) in cases {
            assert_eq!(label(text), Some((name.to_owned(), layout)), "{text}");
        }
        for text in [
            "OK. Let's go.",
            "Well — I think so.",
            "- a plain list item",
            "He said this: fine",
        ] {
            assert_eq!(label(text), None, "{text}");
        }
    }

    #[test]
    fn minority_layouts_are_reported_once_each() {
        let mut census = LayoutCensus::default();
        for line in 1..=5 {
            census.record(Layout::Colon, Position::new(line, 1));
        }
        census.record(Layout::Dash, Position::new(7, 1));
        census.record(Layout::Dash, Position::new(9, 1));
        let mut warnings = Vec::new();
        census.warn(&mut warnings);
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].position, Position::new(7, 1));
        assert!(
            warnings[0].message.contains("line(s) 7, 9"),
            "{}",
            warnings[0].message
        );
    }
}
