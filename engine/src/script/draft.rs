//! From what a format parser found to an [`Episode`]: pieces, speakers, voices.
//!
//! Format parsers only find layout (who starts talking where, which lines are headings); they
//! fill a [`Draft`]. Everything that must behave the same in every format happens here once:
//! inline directives, empty turns, stage-direction-only turns, matching speakers to the cast,
//! and automatic casting.

use std::collections::{HashMap, HashSet};

use super::cast::{
    assign_voices, speaker_key, Cast, CastEntry, CastMember, CastingRules, VoiceSource,
};
use super::error::{ScriptError, ScriptErrorKind};
use super::format::ScriptFormat;
use super::header::Header;
use super::model::{Chapter, Line, Piece, Position, StageDirection, Warning};
use super::pieces::{parse_pieces, TextStyle};
use super::source::Segment;
use super::{Episode, ParseOptions};

/// Who speaks the stage directions when an episode keeps them.
pub const NARRATOR: &str = "Narrator";

/// A speaker's turn as laid out in the file.
#[derive(Debug, Clone)]
pub(crate) struct Turn<'a> {
    pub speaker: String,
    pub position: Position,
    pub segments: Vec<Segment<'a>>,
}

#[derive(Debug, Clone)]
pub(crate) enum Mark {
    Chapter(String),
    Direction(String),
}

/// What a format parser found.
#[derive(Debug, Default)]
pub(crate) struct Draft<'a> {
    pub turns: Vec<Turn<'a>>,
    /// Chapters and stand-alone directions, each before the turn with the given index.
    pub marks: Vec<(usize, Position, Mark)>,
    /// Whether unlabelled text continues the last turn.
    pub open: bool,
    pub style: TextStyle,
    /// Cast and settings found in the body itself (a JSON episode object).
    pub header: Header,
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
        });
        self.open = true;
    }

    /// Adds text to the open turn; returns `false` (and adds nothing) if no turn is open.
    pub fn push(&mut self, segment: Segment<'a>) -> bool {
        match self.turns.last_mut() {
            Some(turn) if self.open => {
                if !segment.text.trim().is_empty() {
                    turn.segments.push(segment);
                }
                true
            }
            _ => false,
        }
    }

    pub fn end_turn(&mut self) {
        self.open = false;
    }

    pub fn chapter(&mut self, title: &str, position: Position) {
        self.marks.push((
            self.turns.len(),
            position,
            Mark::Chapter(title.trim().to_owned()),
        ));
    }

    pub fn direction(&mut self, text: &str, position: Position) {
        let text = super::pieces::clean_direction(text);
        if !text.is_empty() {
            self.marks
                .push((self.turns.len(), position, Mark::Direction(text)));
        }
    }
}

/// Builds the episode. `header` is the cast header of a text script (empty for JSON).
pub(crate) fn assemble(
    file: &str,
    format: ScriptFormat,
    draft: Draft<'_>,
    header: Header,
    options: ParseOptions,
    mut warnings: Vec<Warning>,
) -> Result<Episode, ScriptError> {
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
    for entry in header.entries.into_iter().chain(draft.header.entries) {
        cast_list.add(file, entry, &mut warnings)?;
    }
    let entries = cast_list.entries;

    let mut lines: Vec<Line> = Vec::with_capacity(draft.turns.len());
    let mut chapters = Vec::new();
    let mut directions = Vec::new();
    let mut marks = draft.marks.into_iter().peekable();
    for (index, turn) in draft.turns.into_iter().enumerate() {
        while let Some((_, position, mark)) = marks.next_if(|(before, _, _)| *before <= index) {
            place_mark(
                mark,
                position,
                keep,
                &mut lines,
                &mut chapters,
                &mut directions,
            );
        }
        let pieces = parse_pieces(file, &turn.segments, draft.style, &mut warnings)?;
        if pieces.is_empty() {
            return Err(ScriptError::new(
                file,
                turn.position,
                ScriptErrorKind::EmptyTurn {
                    speaker: turn.speaker,
                },
            ));
        }
        let line = Line {
            speaker: turn.speaker,
            pieces,
            position: turn.position,
        };
        if line.is_audible(keep) {
            lines.push(line);
        } else {
            warnings.push(Warning {
                position: line.position,
                message: format!(
                    "`{}` has only stage directions here, so nothing is spoken; the turn is skipped",
                    line.speaker
                ),
            });
        }
    }
    for (_, position, mark) in marks {
        place_mark(
            mark,
            position,
            keep,
            &mut lines,
            &mut chapters,
            &mut directions,
        );
    }
    if lines.is_empty() {
        return Err(ScriptError::new(
            file,
            Position::START,
            ScriptErrorKind::NoSpeech,
        ));
    }
    let cast = cast_speakers(file, &mut lines, &entries, &settings, &mut warnings)?;
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
    })
}

fn place_mark(
    mark: Mark,
    position: Position,
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
        }),
        Mark::Direction(text) => directions.push(StageDirection {
            text,
            position,
            before_line: lines.len(),
        }),
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
    for line in lines.iter_mut() {
        let key = speaker_key(&line.speaker);
        let index = *display.entry(key.clone()).or_insert_with(|| {
            let name = listed
                .get(&key)
                .map_or_else(|| collapse_name(&line.speaker), |e| e.name.clone());
            speakers.push(name);
            first_line.push(line.position);
            speakers.len() - 1
        });
        line.speaker.clone_from(&speakers[index]);
    }
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
        .map(|(name, (voice, speed, source))| CastMember {
            name,
            voice,
            speed,
            source,
        })
        .collect();
    for entry in entries {
        if !display.contains_key(&speaker_key(&entry.name)) {
            warnings.push(Warning {
                position: entry.position,
                message: format!("`{}` is in the cast but never speaks", entry.name),
            });
            members.push(CastMember {
                name: entry.name.clone(),
                voice: entry.voice.clone(),
                speed: entry.speed,
                source: VoiceSource::Cast {
                    position: entry.position,
                },
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

/// A speaker's name as written, without a trailing `.`/`:` and with single spaces.
fn collapse_name(name: &str) -> String {
    let collapsed = name
        .trim()
        .trim_end_matches(['.', ':', '：'])
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if collapsed.is_empty() {
        name.trim().to_owned()
    } else {
        collapsed
    }
}
