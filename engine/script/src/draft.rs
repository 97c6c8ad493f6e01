//! From what a format parser found to an [`Episode`]: pieces, speakers, voices.
//!
//! Format parsers only find layout (who starts talking where, which lines are headings); they
//! fill a [`Draft`]. Everything that must behave the same in every format happens here once:
//! inline directives, empty turns, stage-direction-only turns, matching speakers to the cast,
//! and automatic casting.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::cast::{
    assign_voices, speaker_key, Cast, CastEntry, CastMember, CastingRules, VoiceSource,
};
use super::cue_places::standalone_sound;
use super::error::{ScriptError, ScriptErrorKind};
use super::format::ScriptFormat;
use super::header::Header;
use super::model::{Chapter, Line, LineKind, Piece, Position, Skipped, StageDirection, Warning};
use super::names::{display_name, how_they_differ};
use super::pieces::{parentheses_look_like_directions, parse_turn, TextStyle};
use super::source::{Segment, SourceLine};
use super::{Episode, ParseOptions};

/// Who speaks the stage directions when an episode keeps them.
pub const NARRATOR: &str = "Narrator";

/// A speaker's turn as laid out in the file.
#[derive(Debug, Clone)]
pub(crate) struct Turn<'a> {
    pub speaker: String,
    pub position: Position,
    pub segments: Vec<Segment<'a>>,
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
    pub fn push(&mut self, segment: Segment<'a>) -> bool {
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
    pub fn push_aside(&mut self, segment: Segment<'a>) -> bool {
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
    header: Header,
    source: &Source<'_, '_>,
    options: ParseOptions,
    mut warnings: Vec<Warning>,
) -> Result<Episode, ScriptError> {
    let mut kinds = std::mem::take(&mut draft.kinds);
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
    let cast = cast_speakers(file, &mut lines, &entries, &settings, &mut warnings)?;
    super::writing_systems::drop_unsayable(&mut lines, &cast, &mut warnings);
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

/// Every non-blank source line that is in no turn, with its kind: the kind its parser gave it,
/// metadata for the header (and a JSON document's structure), and otherwise narration with a
/// warning, so a line no rule explains is still reported, never lost.
fn account(
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
        let position = Position::new(line.number, super::source::column_of(line.text, lead));
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
    super::labels::period_candidates(text)
        .next()
        .map(|(name, _)| name)
        .or_else(|| super::labels::bracket_candidate(text).map(|(name, _)| name))
        .filter(|name| name.chars().filter(|c| c.is_alphabetic()).count() >= 2)
        .map(str::to_owned)
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

/// A speaker heard once whose name is another speaker's name plus more (`HENRIETTA MARLOWE. I`
/// beside `HENRIETTA MARLOWE`) is most likely that speaker with the first word of the speech
/// read into the name; say so where it happened.
fn warn_extended_names(
    speakers: &[String],
    turns: &[usize],
    first_line: &[Position],
    warnings: &mut Vec<Warning>,
) {
    let keys: Vec<String> = speakers.iter().map(|s| speaker_key(s)).collect();
    for (i, key) in keys.iter().enumerate() {
        if turns[i] != 1 {
            continue;
        }
        let base = keys.iter().enumerate().find(|&(j, other)| {
            j != i
                && key.len() > other.len()
                && key.starts_with(other.as_str())
                && key[other.len()..].starts_with(|c: char| !c.is_alphanumeric())
        });
        if let Some((j, _)) = base {
            warnings.push(Warning {
                position: first_line[i],
                message: format!(
                    "`{}` speaks only here and the name extends `{}`'s; if this is {} speaking, the start of the speech was read as part of the name: put it on its own line or after a colon",
                    speakers[i], speakers[j], speakers[j]
                ),
            });
        }
    }
}

/// Matches speakers to cast entries, casts the rest, and renames each line's speaker to the
/// cast's spelling of the name.
fn cast_speakers(
    file: &str,
    lines: &mut [Line],
    entries: &[CastEntry],
    settings: &super::model::Settings,
    warnings: &mut Vec<Warning>,
) -> Result<Cast, ScriptError> {
    let listed: HashMap<String, &CastEntry> =
        entries.iter().map(|e| (speaker_key(&e.name), e)).collect();
    let mut display: HashMap<String, usize> = HashMap::new();
    let mut speakers: Vec<String> = Vec::new();
    let mut first_line: Vec<Position> = Vec::new();
    let mut first_spelling: Vec<String> = Vec::new();
    let mut turns: Vec<usize> = Vec::new();
    let mut noticed: HashSet<String> = HashSet::new();
    for line in lines.iter_mut() {
        let key = speaker_key(&line.speaker);
        let spelling = display_name(&line.speaker);
        let index = *display.entry(key.clone()).or_insert_with(|| {
            let name = listed
                .get(&key)
                .map_or_else(|| spelling.clone(), |e| display_name(&e.name));
            speakers.push(name);
            first_line.push(line.position);
            first_spelling.push(spelling.clone());
            turns.push(0);
            speakers.len() - 1
        });
        turns[index] += 1;
        if spelling != first_spelling[index] && noticed.insert(spelling.clone()) {
            warnings.push(Warning {
                position: line.position,
                message: format!(
                    "`{spelling}` is taken as `{}` (first at {}): the names differ {}, so they are one speaker",
                    first_spelling[index],
                    first_line[index],
                    how_they_differ(&spelling, &first_spelling[index])
                ),
            });
        }
        line.speaker.clone_from(&speakers[index]);
    }
    warn_extended_names(&speakers, &turns, &first_line, warnings);
    let rules = CastingRules {
        reuse_voices: settings.reuse_voices,
        any_language_voices: settings.any_language_voices,
    };
    let reserved: Vec<&CastEntry> = entries.iter().collect();
    let voices = assign_voices(&speakers, &listed, &reserved, rules).map_err(|out| {
        ScriptError::new(
            file,
            first_line[out.index],
            ScriptErrorKind::TooManySpeakers {
                speaker: speakers[out.index].clone(),
                count: out.index + 1,
                available: out.available,
            },
        )
    })?;
    let mut members: Vec<CastMember> = speakers
        .into_iter()
        .zip(voices)
        .map(|(name, a)| CastMember {
            name,
            voice: a.voice,
            speed: a.speed,
            source: a.source,
            guess: a.guess,
        })
        .collect();
    for entry in entries {
        if !display.contains_key(&speaker_key(&entry.name)) {
            warnings.push(Warning {
                position: entry.position,
                message: format!("`{}` is in the cast but never speaks", entry.name),
            });
            members.push(CastMember {
                name: display_name(&entry.name),
                voice: entry.voice.clone(),
                speed: entry.speed,
                source: VoiceSource::Cast {
                    position: entry.position,
                },
                guess: None,
            });
        }
    }
    let mut seen: HashMap<&str, &str> = HashMap::new();
    let mut shared: HashSet<&str> = HashSet::new();
    for m in &members {
        if let Some(other) = seen.insert(&m.voice, &m.name) {
            if !settings.reuse_voices && shared.insert(&m.voice) {
                if let VoiceSource::Cast { position } = m.source {
                    warnings.push(Warning {
                        position,
                        message: format!(
                            "`{}` and `{other}` are both cast as `{}`; listeners may not tell them apart",
                            m.name, m.voice
                        ),
                    });
                }
            }
        }
    }
    Ok(Cast { members })
}
