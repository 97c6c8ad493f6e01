//! From what a format parser found to an [`Episode`]: pieces, speakers, voices.
//!
//! Format parsers only find layout (who starts talking where, which lines are headings); they
//! fill a [`Draft`]. Everything that must behave the same in every format happens here once:
//! inline directives, empty turns, stage-direction-only turns, matching speakers to the cast,
//! and automatic casting.

use std::collections::BTreeMap;

use super::cue_places::standalone_sound;
use super::error::{ScriptError, ScriptErrorKind};
use super::format::ScriptFormat;
use super::header::Header;
use super::model::{Chapter, Line, LineKind, Piece, Position, StageDirection, Warning};
use super::pieces::{parentheses_look_like_directions, parse_turn, TextStyle};
use super::source::{SourceLine, TextSpan};
use super::{Episode, ParseOptions};

mod details;
mod speakers;
mod unspoken;

use speakers::cast_speakers;
use unspoken::account;

/// Who speaks the stage directions when an episode keeps them.
pub const NARRATOR: &str = "Narrator";

/// A speaker's turn as laid out in the file.
#[derive(Debug, Clone)]
pub(crate) struct Turn<'a> {
    pub speaker: String,
    pub position: Position,
    pub segments: Vec<TextSpan<'a>>,
    /// Source lines the turn was read from (see [`Line::source_lines`]).
    pub lines: Vec<usize>,
}

#[derive(Debug, Clone)]
pub(crate) enum Mark {
    Chapter(String),
    Direction(String),
    /// A sound cue alone on its line with no turn open: the inside of its bracket, and where
    /// that inside starts when it was written verbatim (so an option's column can be named).
    Sound {
        inner: String,
        inner_at: Option<Position>,
    },
}

/// A chapter or stand-alone direction, placed before the turn with index `before`.
#[derive(Debug, Clone)]
pub(crate) struct Placed {
    pub before: usize,
    pub position: Position,
    pub mark: Mark,
    /// The source lines it was read from.
    pub lines: Vec<usize>,
}

/// What a format parser found.
#[derive(Debug, Default)]
pub(crate) struct Draft<'a> {
    pub turns: Vec<Turn<'a>>,
    /// Chapters and stand-alone directions, in order.
    pub marks: Vec<Placed>,
    /// Whether unlabelled text continues the last turn.
    pub open: bool,
    pub style: TextStyle,
    /// Cast and settings found in the body itself (a JSON episode object).
    pub header: Header,
    /// What the parser took each unspoken line for (the first kind given wins).
    pub kinds: BTreeMap<usize, LineKind>,
}

impl<'a> Draft<'a> {
    pub fn new(style: TextStyle) -> Self {
        Self {
            style,
            ..Self::default()
        }
    }

    pub fn start_turn(&mut self, speaker: &str, position: Position) {
        self.turns.push(Turn {
            speaker: speaker.trim().to_owned(),
            position,
            segments: Vec::new(),
            lines: vec![position.line],
        });
        self.open = true;
    }

    /// Adds text to the open turn; returns `false` (and adds nothing) if no turn is open.
    pub fn push(&mut self, segment: TextSpan<'a>) -> bool {
        match self.turns.last_mut() {
            Some(turn) if self.open => {
                if !segment.text.trim().is_empty() {
                    cover(&mut turn.lines, segment.position.line);
                    turn.segments.push(segment);
                }
                true
            }
            _ => false,
        }
    }

    /// Adds a whole-line stage direction (`(beat)`, `[Exit C.]`) inside the open turn: the turn
    /// keeps it as a direction piece, where it still acts (a pause), but the line is counted as
    /// a direction rather than speech. `false` (and nothing added) if no turn is open.
    pub fn push_aside(&mut self, segment: TextSpan<'a>) -> bool {
        match self.turns.last_mut() {
            Some(turn) if self.open => {
                if !segment.text.trim().is_empty() {
                    self.kinds
                        .entry(segment.position.line)
                        .or_insert(LineKind::Direction);
                    turn.segments.push(segment);
                }
                true
            }
            _ => false,
        }
    }

    /// Takes back the last turn if nothing was said in it yet (a title or transition that was
    /// laid out like a speaker's name): its speaker and position.
    pub fn take_empty_turn(&mut self) -> Option<(String, Position)> {
        if !self.open || self.turns.last().is_none_or(|t| !t.segments.is_empty()) {
            return None;
        }
        self.open = false;
        self.turns.pop().map(|t| (t.speaker, t.position))
    }

    /// Counts `lines` as part of the last turn (a JSON item spread over several lines).
    pub fn cover_lines(&mut self, lines: std::ops::RangeInclusive<usize>) {
        if let Some(turn) = self.turns.last_mut() {
            for line in lines {
                cover(&mut turn.lines, line);
            }
        }
    }

    /// Records what an unspoken line was taken for (the first kind given to a line stays).
    pub fn classify(&mut self, line: usize, kind: LineKind) {
        self.kinds.entry(line).or_insert(kind);
    }

    pub fn end_turn(&mut self) {
        self.open = false;
    }

    /// Opens the last turn again, so a paragraph without a name goes on with it (a
    /// transcript's speaker who spoke for two paragraphs); `false` if there is no turn or
    /// something unspoken was placed after it.
    pub fn reopen_turn(&mut self) -> bool {
        let after_last = self.marks.iter().any(|m| m.before == self.turns.len());
        if self.turns.is_empty() || after_last {
            return false;
        }
        self.open = true;
        true
    }

    pub fn chapter(&mut self, title: &str, position: Position) {
        self.classify(position.line, LineKind::Heading);
        self.marks.push(Placed {
            before: self.turns.len(),
            position,
            mark: Mark::Chapter(title.trim().to_owned()),
            lines: vec![position.line],
        });
    }

    /// A stand-alone stage direction (spoken by [`NARRATOR`] when directions are kept).
    pub fn direction(&mut self, text: &str, position: Position) {
        self.classify(position.line, LineKind::Direction);
        self.unspoken(text, position);
    }

    /// A scene description or other prose between turns: kept like a stand-alone direction, but
    /// classified as narration.
    pub fn narration(&mut self, text: &str, position: Position) {
        self.classify(position.line, LineKind::Narration);
        self.unspoken(text, position);
    }

    fn unspoken(&mut self, text: &str, position: Position) {
        let text = super::pieces::clean_direction(text);
        if !text.is_empty() {
            self.marks.push(Placed {
                before: self.turns.len(),
                position,
                mark: Mark::Direction(text),
                lines: vec![position.line],
            });
        }
    }

    /// Counts `line` as part of the last chapter or stand-alone direction.
    pub fn mark_covers(&mut self, line: usize) {
        if let Some(mark) = self.marks.last_mut() {
            cover(&mut mark.lines, line);
        }
    }

    /// Continues the last stand-alone direction or narration with `text` from `line` (a
    /// paragraph of action over several lines); `false` if the last mark is not a direction.
    pub fn extend_unspoken(&mut self, text: &str, line: usize) -> bool {
        let kind = self
            .marks
            .last()
            .and_then(|m| self.kinds.get(&m.position.line).copied());
        match self.marks.last_mut() {
            Some(Placed {
                mark: Mark::Direction(prev),
                lines,
                ..
            }) => {
                prev.push(' ');
                prev.push_str(text.trim());
                cover(lines, line);
                self.kinds
                    .entry(line)
                    .or_insert(kind.unwrap_or(LineKind::Direction));
                true
            }
            _ => false,
        }
    }
}

/// Adds `line` to a turn's ordered, duplicate-free list of lines.
fn cover(lines: &mut Vec<usize>, line: usize) {
    if lines.last().is_none_or(|&last| last < line) {
        lines.push(line);
    } else if let Err(at) = lines.binary_search(&line) {
        lines.insert(at, line);
    }
}

/// The whole source, for accounting for every line: all lines and where the body starts.
pub(crate) struct Source<'s, 'a> {
    pub lines: &'s [SourceLine<'a>],
    pub body_start: usize,
}

/// Builds the episode. `header` is the cast header of a text script (empty for JSON).
pub(crate) fn assemble(
    file: &str,
    format: ScriptFormat,
    mut draft: Draft<'_>,
    mut header: Header,
    source: &Source<'_, '_>,
    options: ParseOptions,
    mut warnings: Vec<Warning>,
) -> Result<Episode, ScriptError> {
    let mut kinds = std::mem::take(&mut draft.kinds);
    details::take_leading_details(&mut draft, &mut header, &mut kinds, &mut warnings);
    let mut settings = header.settings;
    let body = draft.header.settings;
    settings.title = settings.title.or(body.title);
    settings.speed = settings.speed.or(body.speed);
    settings.gap_secs = settings.gap_secs.or(body.gap_secs);
    settings.keep_stage_directions |= body.keep_stage_directions || options.keep_stage_directions;
    settings.reuse_voices |= body.reuse_voices || options.reuse_voices;
    settings.any_language_voices |= body.any_language_voices || options.any_language_voices;
    let keep = settings.keep_stage_directions;

    let mut cast_list = super::header::CastList::default();
    for entry in header
        .entries
        .into_iter()
        .chain(std::mem::take(&mut draft.header.entries))
    {
        cast_list.add(file, entry, &mut warnings)?;
    }
    let entries = cast_list.entries;

    let mut lines: Vec<Line> = Vec::with_capacity(draft.turns.len());
    let mut chapters = Vec::new();
    let mut directions = Vec::new();
    let mut skipped_turn_lines = Vec::new();
    let mut marks = std::mem::take(&mut draft.marks).into_iter().peekable();
    // Decided once for the file (a play has decided already): are its parentheses directions?
    let directions_in_parentheses = draft.style != TextStyle::Play
        && parentheses_look_like_directions(draft.turns.iter().map(|t| t.segments.as_slice()))
            .map(|(position, excerpt)| {
                warnings.push(Warning {
                    position,
                    message: format!(
                        "parentheses in this script are read as stage directions, like `{excerpt}` here: one that opens a turn or stands as a sentence of its own is not spoken (--keep-stage-directions reads them)"
                    ),
                });
            })
            .is_some();
    // Cues alone on their lines between turns, waiting for the next turn to lead.
    let mut waiting: Vec<(Piece, usize)> = Vec::new();
    for (index, turn) in std::mem::take(&mut draft.turns).into_iter().enumerate() {
        while let Some(mark) = marks.next_if(|m| m.before <= index) {
            if let Some(sound) = standalone_sound(file, &mark)? {
                waiting.push(sound);
            } else {
                place_mark(mark, keep, &mut lines, &mut chapters, &mut directions);
            }
        }
        let mut pieces = parse_turn(
            file,
            &turn.segments,
            draft.style,
            directions_in_parentheses,
            turn.position.line,
            &mut warnings,
        )?;
        if pieces.is_empty() {
            return Err(ScriptError::new(
                file,
                turn.position,
                ScriptErrorKind::EmptyTurn {
                    speaker: turn.speaker,
                },
            ));
        }
        let mut source_lines = turn.lines;
        if !pieces.is_empty() {
            for (piece, at) in waiting.drain(..).rev() {
                pieces.insert(0, piece);
                cover(&mut source_lines, at);
            }
        }
        let line = Line {
            speaker: turn.speaker,
            pieces,
            position: turn.position,
            source_lines,
        };
        if line.is_audible(keep) {
            lines.push(line);
        } else {
            for &n in &line.source_lines {
                skipped_turn_lines.push(n);
            }
            warnings.push(Warning {
                position: line.position,
                message: format!(
                    "`{}` has only stage directions here, so nothing is spoken; the turn is skipped",
                    line.speaker
                ),
            });
        }
    }
    for mark in marks {
        if let Some(sound) = standalone_sound(file, &mark)? {
            waiting.push(sound);
        } else {
            place_mark(mark, keep, &mut lines, &mut chapters, &mut directions);
        }
    }
    // Cues after the last turn (the outro) close it.
    if let Some(last) = lines.last_mut() {
        for (piece, at) in waiting.drain(..) {
            last.pieces.push(piece);
            cover(&mut last.source_lines, at);
        }
    }
    if lines.is_empty() {
        return Err(ScriptError::new(
            file,
            Position::START,
            ScriptErrorKind::NoSpeech,
        ));
    }
    for n in skipped_turn_lines {
        kinds.entry(n).or_insert(LineKind::Direction);
    }
    let skipped = account(format, &lines, &kinds, source, &mut warnings);
    unspoken::bold_names_inside_turns(&lines, source, &mut warnings);
    let (cast, languages) = cast_speakers(
        file,
        &mut lines,
        &entries,
        header.characters.as_ref(),
        &settings,
        &mut warnings,
    )?;
    super::writing_systems::drop_unsayable(&mut lines, &cast, &mut warnings);
    super::writing_systems::warn_wordless(&lines, &mut warnings);
    super::language::warn_foreign_lines(&lines, &cast, &languages, &mut warnings);
    warnings.sort_by_key(|w| w.position);
    Ok(Episode {
        source: file.to_owned(),
        format,
        cast,
        lines,
        chapters,
        directions,
        settings,
        warnings,
        skipped,
        text: std::sync::Arc::from(""),
    })
}

fn place_mark(
    Placed {
        position,
        mark,
        lines: lines_of,
        ..
    }: Placed,
    keep: bool,
    lines: &mut Vec<Line>,
    chapters: &mut Vec<Chapter>,
    directions: &mut Vec<StageDirection>,
) {
    match mark {
        Mark::Chapter(title) => chapters.push(Chapter {
            title,
            position,
            first_line: lines.len(),
        }),
        Mark::Direction(text) if keep => lines.push(Line {
            speaker: NARRATOR.to_owned(),
            pieces: vec![Piece::text(text)],
            position,
            source_lines: lines_of,
        }),
        Mark::Direction(text) => directions.push(StageDirection {
            text,
            position,
            before_line: lines.len(),
        }),
        // Taken by `standalone_sound` before a mark is placed.
        Mark::Sound { .. } => {}
    }
}
