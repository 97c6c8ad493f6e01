//! Podcast scripts: reading what writers write into an [`Episode`] the renderer can voice.
//!
//! Writers bring scripts from everywhere: chat-style `Name: text`, the formats of other speech
//! tools (`VibeVoice`, Dia, podcastfy), Markdown documents, stage plays and screenplays, JSON from
//! programs. All of them parse into one model, an [`Episode`]: a [`Cast`] (speaker → voice), the
//! ordered [`Line`]s (speaker, [`Piece`]s of text and directives, source position), chapter
//! markers, stage directions and [`Settings`]. Nothing downstream needs to know the format.
//!
//! The input is untrusted text, so parsing never panics and runs in linear time; anything it
//! cannot read is a [`ScriptError`] whose message starts with `FILE:LINE:COLUMN: ` and says what
//! to do. Columns count characters, not bytes.
//!
//! A crate of its own below the engine: it depends on nothing of Banter's and on no model,
//! database or audio crate (only `serde`, `serde_json`, `thiserror` and
//! `unicode-normalization`; `scripts/check-layers.sh` holds it to that), so the parsers build
//! and test in seconds, and `fuzz/` builds them with sanitizers without candle or espeak-ng.
//! The engine re-exports it as `engine::script`.
//!
//! ```
//! use script::{Episode, ParseOptions};
//! let episode = Episode::parse("ep.txt", "Alice: Welcome back!\nBob: Glad to be here.", &ParseOptions::default())?;
//! assert_eq!(episode.cast.get("Bob").map(|m| m.voice.as_str()), Some("am_michael"));
//! # Ok::<(), script::ScriptError>(())
//! ```

mod cast;
mod characters;
mod check;
mod csv;
mod cue_places;
mod cues;
mod detect;
mod dia;
mod docx;
mod draft;
mod error;
mod fdx;
mod foreign;
mod format;
mod gender;
mod header;
mod html;
mod json;
mod labelled;
mod labels;
pub mod language;
mod lexicon;
mod line_labels;
mod model;
mod names;
mod odt;
mod office;
mod pieces;
mod play;
mod podcastfy;
#[cfg(test)]
mod properties;
mod prose;
mod rtf;
mod source;
#[cfg(test)]
mod tests;
mod writing_systems;

pub use cast::{
    Cast, CastMember, VoiceSource, ENGLISH_FEMALE, ENGLISH_MALE, OTHER_LANGUAGE_FEMALE,
    OTHER_LANGUAGE_MALE,
};
pub use cues::{
    CueAction, SoundCue, BED_DUCK_DB, BED_FADE_SECS, BED_VOLUME_DB, MAX_DUCK_DB, MAX_FADE_SECS,
    MAX_OVERLAP_SECS, SOUND_FADE_SECS, VOLUME_RANGE_DB,
};
pub use draft::NARRATOR;
pub use error::{ScriptError, ScriptErrorKind};
pub use format::{ScriptFormat, UnknownFormatName};
pub use gender::{Gender, GenderGuess, GuessBasis};
pub use lexicon::{Lexicon, Pronunciation};
pub use model::{
    Chapter, Line, LineKind, Piece, Position, Settings, Skipped, StageDirection, Warning,
};
pub use pieces::{MAX_PAUSE_SECS, WRITTEN_SPEED_RANGE};
pub use source::{decode_script_bytes, Decoded, MAX_SCRIPT_BYTES};

use cast::check_voice_spelling;
use header::{parse_header, Header};
use labels::KnownNames;
use source::{sanitize, split_lines};

/// Choices made by whoever runs the parse (the CLI's flags); the script's own settings add to
/// these.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ParseOptions {
    /// Read the script as this format instead of detecting it.
    pub format: Option<ScriptFormat>,
    /// Speak stage directions (inline ones by the speaker, stand-alone ones by [`NARRATOR`]).
    pub keep_stage_directions: bool,
    /// Let automatically cast speakers share voices (`--reuse-voices`).
    pub reuse_voices: bool,
    /// Let automatic casting use the non-English stock voices (`--any-language-voices`).
    pub any_language_voices: bool,
}

/// A parsed script.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Episode {
    /// The file name used in messages.
    pub source: String,
    pub format: ScriptFormat,
    pub cast: Cast,
    pub lines: Vec<Line>,
    pub chapters: Vec<Chapter>,
    pub directions: Vec<StageDirection>,
    pub settings: Settings,
    pub warnings: Vec<Warning>,
    /// Every non-blank source line that is not part of a turn, in order, with what it was taken
    /// for: together with [`Line::source_lines`] this accounts for every line of the script.
    pub skipped: Vec<Skipped>,
    /// The script as parsed (after sanitising, every line break a `\n`): what every
    /// [`Position`] points into, and where word timing finds each spoken word's line and column.
    #[serde(skip)]
    pub text: std::sync::Arc<str>,
}

impl Episode {
    /// Parses a script's text. `file` names it in errors and warnings.
    pub fn parse(file: &str, text: &str, options: &ParseOptions) -> Result<Self, ScriptError> {
        let mut warnings = Vec::new();
        if text.is_empty() {
            return Err(ScriptError::new(
                file,
                Position::START,
                ScriptErrorKind::Empty,
            ));
        }
        let text = sanitize(file, text, &mut warnings)?;
        if text.trim().is_empty() {
            return Err(ScriptError::new(
                file,
                Position::START,
                ScriptErrorKind::WhitespaceOnly,
            ));
        }
        let lines = split_lines(&text);
        // JSON cannot start with a text header; anything else may (even JSON after front matter).
        let json = detect::looks_like_json(&text);
        let (header, body_start) = if json {
            (Header::default(), 0)
        } else {
            parse_header(file, &lines, &mut warnings)?
        };
        let body = &lines[body_start.min(lines.len())..];
        let first_body = body
            .iter()
            .find(|l| !l.text.trim().is_empty())
            .map_or(Position::START, |l| Position::new(l.number, 1));
        if body.iter().all(|l| l.text.trim().is_empty()) {
            return Err(ScriptError::new(
                file,
                first_body,
                ScriptErrorKind::NoSpeech,
            ));
        }
        // A character list is read before the layouts, which would take its entries for turns.
        let characters = (!json).then(|| characters::take(body)).flatten();
        let body = characters
            .as_ref()
            .map_or(body, |(_, blanked)| &blanked[..]);
        let known = KnownNames::new(header.entries.iter().map(|e| e.name.as_str()), body);
        let body_text = body.first().map_or("", |l| {
            let at = (l.text.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
            text.get(at..).unwrap_or_default()
        });
        let chosen = options.format.or(header.format);
        let mut format = match chosen {
            Some(f) => f,
            None => detected_format(file, body, body_text, &known)?,
        };
        let layout = Layout {
            file,
            body,
            body_text,
            known: &known,
            header: &header,
            detected: chosen.is_none(),
        };
        let warned_before = warnings.len();
        let mut draft = layout.parse(format, &mut warnings)?;
        // A layout seen only in headings (`Chapter 2` above paragraphs) finds no turns, and one
        // seen in a sentence or two of an essay (`Here is the thing: …`) leaves more of the
        // text unspoken than it gives anyone to say: prose.
        if layout.detected
            && format != ScriptFormat::Json
            && (draft.turns.is_empty() || prose::labels_are_incidental(format, &draft))
            && prose::label_like_lines(body).is_none()
        {
            warnings.truncate(warned_before);
            format = ScriptFormat::Prose;
            draft = layout.parse(format, &mut warnings)?;
        }
        let mut header = header;
        if let Some((list, _)) = characters {
            for &line in &list.lines {
                draft.classify(line, LineKind::Metadata);
            }
            warnings.push(list.warning());
            header.characters = Some(list);
        }
        let source = draft::Source {
            lines: &lines,
            body_start,
        };
        let mut episode =
            draft::assemble(file, format, draft, header, &source, *options, warnings)?;
        // Line breaks as `split_lines` counts them, each one `\n`.
        episode.text = std::sync::Arc::from(text.replace("\r\n", "\n").replace('\r', "\n"));
        Ok(episode)
    }

    /// Decodes (see [`decode_script_bytes`]) and parses a script file's bytes.
    pub fn parse_bytes(
        file: &str,
        bytes: &[u8],
        options: &ParseOptions,
    ) -> Result<Self, ScriptError> {
        let decoded = decode_script_bytes(file, bytes)?;
        let mut episode = Self::parse(file, &decoded.text, options)?;
        if let Some(guessed) = decoded.guessed {
            episode.warnings.insert(0, guessed);
        }
        Ok(episode)
    }

    /// Checks every voice in the cast (each term of a blend) with `is_known`; the first unknown
    /// one is an error at the cast entry, or at the speaker's first line if cast automatically.
    pub fn validate_voices(&self, is_known: &dyn Fn(&str) -> bool) -> Result<(), ScriptError> {
        for member in &self.cast.members {
            let names =
                check_voice_spelling(&member.voice).unwrap_or_else(|_| vec![member.voice.as_str()]);
            if let Some(unknown) = names.into_iter().find(|n| !is_known(n)) {
                let position = match member.source {
                    VoiceSource::Cast { position } => position,
                    VoiceSource::Automatic => self
                        .lines
                        .iter()
                        .find(|l| l.speaker == member.name)
                        .map_or(Position::START, |l| l.position),
                };
                return Err(ScriptError::new(
                    &self.source,
                    position,
                    ScriptErrorKind::UnknownVoice {
                        speaker: member.name.clone(),
                        voice: unknown.to_owned(),
                    },
                ));
            }
        }
        Ok(())
    }

    /// Every sound cue, in order, with the index of the line that holds it.
    pub fn sounds(&self) -> impl Iterator<Item = (usize, &SoundCue)> {
        self.lines.iter().enumerate().flat_map(|(i, line)| {
            line.pieces.iter().filter_map(move |p| match p {
                Piece::Sound { cue } => Some((i, cue)),
                _ => None,
            })
        })
    }

    /// What `line` will say, honouring the episode's stage-direction setting.
    #[must_use]
    pub fn spoken_text(&self, line: &Line) -> String {
        line.spoken_text(self.settings.keep_stage_directions)
    }

    /// `FILE:LINE:COLUMN` of a position in this episode's script.
    #[must_use]
    pub fn locate(&self, position: Position) -> String {
        format!("{}:{}:{}", self.source, position.line, position.column)
    }

    /// Replaces words in every line by the lexicon's pronunciations.
    pub fn apply_lexicon(&mut self, lexicon: &Lexicon) {
        for line in &mut self.lines {
            line.pieces = lexicon.apply(&line.pieces);
        }
    }

    /// The JSON `banter script check` prints: `{"format": str, "cast": {name: voice}, "lines":
    /// [{"speaker", "text", "source_line"}], "warnings": [{"line", "message"}]}`, where `text`
    /// is what will be spoken, before normalisation, with stage directions removed (unless kept).
    #[must_use]
    pub fn check_report(&self) -> serde_json::Value {
        check::report(self)
    }
}

/// The layout of a script whose format was not named: JSON by its first character, then what
/// [`detect::detect`] counts, then prose when nothing opens like a label.
fn detected_format(
    file: &str,
    body: &[source::SourceLine<'_>],
    body_text: &str,
    known: &labels::KnownNames,
) -> Result<ScriptFormat, ScriptError> {
    if detect::looks_like_json(body_text) {
        return Ok(ScriptFormat::Json);
    }
    if let Some(format) = detect::detect(body, known) {
        return Ok(format);
    }
    match prose::label_like_lines(body) {
        None => Ok(ScriptFormat::Prose),
        Some(at) => Err(ScriptError::new(
            file,
            at,
            ScriptErrorKind::UnknownFormat {
                formats: ScriptFormat::names(),
            },
        )),
    }
}

/// A script's body and what is known about it, ready for a format's parser.
struct Layout<'s, 'a> {
    file: &'a str,
    body: &'s [source::SourceLine<'a>],
    body_text: &'a str,
    known: &'s labels::KnownNames,
    header: &'s header::Header,
    /// Whether the format was detected rather than named (a guessed prose reading says so).
    detected: bool,
}

impl<'a> Layout<'_, 'a> {
    fn parse(
        &self,
        format: ScriptFormat,
        warnings: &mut Vec<Warning>,
    ) -> Result<draft::Draft<'a>, ScriptError> {
        let (body, known) = (self.body, self.known);
        Ok(match format {
            ScriptFormat::Name | ScriptFormat::VibeVoice => {
                labelled::parse(body, known, false, warnings)
            }
            ScriptFormat::Markdown => labelled::parse(body, known, true, warnings),
            ScriptFormat::Dia => dia::parse(body, warnings),
            ScriptFormat::Podcastfy => podcastfy::parse(body, warnings),
            ScriptFormat::Play => play::parse(body, known, warnings),
            ScriptFormat::Prose => {
                let reader = prose::Reader::of(self.header);
                prose::parse(body, known, &reader, self.detected, warnings)
            }
            ScriptFormat::Json => {
                let base = body
                    .first()
                    .map_or(Position::START, |l| Position::new(l.number, 1));
                json::parse(self.file, self.body_text, base, warnings)?
            }
        })
    }
}
