//! The episode model every script format parses into.
//!
//! Formats differ only in layout; once parsed, a turn is a speaker and a list of [`Piece`]s, so
//! the renderer, the studio and `banter script check` never need to know which format the writer
//! chose. Directives are kept structurally (not as text with brackets in it) so that nothing
//! downstream has to parse brackets a second time, and stage directions are kept too, marked as
//! such, so a view can show them even though they are not spoken.

use std::fmt;

use serde::Serialize;

/// A place in the script: 1-based line, 1-based column counted in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

impl Position {
    /// The start of the file.
    pub const START: Self = Self { line: 1, column: 1 };

    #[must_use]
    pub fn new(line: usize, column: usize) -> Self {
        Self { line, column }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// One piece of a turn's text.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Piece {
    /// Words to speak, as written (whitespace runs collapsed to one space).
    Text { text: String },
    /// `[pause:1.5s]`: this many seconds of silence.
    Pause { secs: f32 },
    /// `[rate:1.2]`: speak at this speed from here to the end of the turn.
    Rate { rate: f32 },
    /// `[word](/wˈɝd/)`: say `text` with this IPA pronunciation.
    Phonemes { text: String, ipa: String },
    /// A word the lexicon respells: `text` as written (captions show it), read as `said`.
    Respelled { text: String, said: String },
    /// `(laughs)`, `[Enter Lane.]`: not spoken unless the episode keeps stage directions.
    Direction { text: String },
    /// `[sound: FILE]`, `[bed: FILE]`, `[bed: off]`: a sound cue (see [`super::SoundCue`]).
    Sound { cue: super::SoundCue },
}

impl Piece {
    pub(crate) fn text(s: impl Into<String>) -> Self {
        Self::Text { text: s.into() }
    }
}

/// One turn: who speaks, what, and where it was written.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Line {
    /// The speaker's name as listed in the episode's cast.
    pub speaker: String,
    pub pieces: Vec<Piece>,
    /// Where the turn starts (its speaker label, or its first word where there is no label).
    pub position: Position,
    /// Every source line (1-based) the turn was read from, in order: its label's line and each
    /// line holding its words or its inline directions. A line may hold several turns (Dia).
    pub source_lines: Vec<usize>,
}

impl Line {
    /// What will be spoken, before normalisation: the text pieces and the words of phoneme
    /// pieces, plus the stage directions if `keep_directions`; whitespace collapsed, trimmed.
    #[must_use]
    pub fn spoken_text(&self, keep_directions: bool) -> String {
        // `gap`: something unspoken (or a direction) stood here, so the words on either side are
        // separate, unless punctuation follows, which then attaches to the word before.
        fn push(out: &mut String, mut s: &str, gap: &mut bool) {
            if *gap {
                let t = s.trim_start();
                if t.starts_with(|c: char| ".,!?;:…)".contains(c)) {
                    out.truncate(out.trim_end().len());
                    s = t;
                } else if !s.starts_with(char::is_whitespace) {
                    out.push(' ');
                }
            }
            *gap = false;
            out.push_str(s);
        }
        let mut out = String::new();
        let mut gap = false;
        for piece in &self.pieces {
            match piece {
                Piece::Text { text }
                | Piece::Phonemes { text, .. }
                | Piece::Respelled { text, .. } => {
                    push(&mut out, text, &mut gap);
                }
                Piece::Direction { text } if keep_directions => {
                    gap = true;
                    push(&mut out, text, &mut gap);
                    gap = true;
                }
                Piece::Direction { .. }
                | Piece::Pause { .. }
                | Piece::Rate { .. }
                | Piece::Sound { .. } => gap = true,
            }
        }
        collapse_whitespace(&out)
    }

    /// Whether anything would be heard: words, a pause, or a sound cue.
    #[must_use]
    pub fn is_audible(&self, keep_directions: bool) -> bool {
        // A turn that holds only a cue (`Host: [sound: intro.wav]`) still plays it.
        self.pieces.iter().any(|p| match p {
            Piece::Text { text } | Piece::Phonemes { text, .. } => !text.trim().is_empty(),
            Piece::Respelled { said, .. } => !said.trim().is_empty(),
            Piece::Pause { .. } | Piece::Sound { .. } => true,
            Piece::Direction { text } => keep_directions && !text.trim().is_empty(),
            Piece::Rate { .. } => false,
        })
    }
}

/// A chapter marker: a Markdown heading, a scene heading, or a JSON `{"chapter": ...}` item.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Chapter {
    pub title: String,
    pub position: Position,
    /// Index into [`super::Episode::lines`] of the first turn of the chapter (may equal the
    /// number of lines for a heading after the last turn).
    pub first_line: usize,
}

/// A stage direction on a line of its own, between turns (`[Enter Lane.]`, screenplay action).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StageDirection {
    pub text: String,
    pub position: Position,
    /// Index into [`super::Episode::lines`] of the turn it comes before.
    pub before_line: usize,
}

/// What a non-blank source line that is not part of any turn was taken for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LineKind {
    /// `[Enter Lane.]`, `(Music fades)`, a screenplay parenthetical on its own line.
    Direction,
    /// A chapter or scene heading: `# Part two`, `ACT I`, `INT. KITCHEN - DAY`.
    Heading,
    /// Prose nobody speaks: a play's scene description, text before the first speaker.
    Narration,
    /// Front matter, the cast block, a JSON episode's structure and settings.
    Metadata,
    /// Markdown comments and rules: notes to the writer, not the listener.
    Comment,
}

impl LineKind {
    /// The name `banter script check` prints.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Direction => "direction",
            Self::Heading => "heading",
            Self::Narration => "narration",
            Self::Metadata => "metadata",
            Self::Comment => "comment",
        }
    }
}

impl fmt::Display for LineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A non-blank source line that is not spoken, and why: every line of a script is either part
/// of a turn or one of these, so nothing the author wrote disappears without a trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// The line and the column of its first non-blank character.
    pub position: Position,
    pub kind: LineKind,
    /// The line as written, trimmed.
    pub text: String,
}

/// Something the writer should know that did not stop the parse.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Warning {
    pub position: Position,
    pub message: String,
}

/// Episode-wide settings, from the front matter or a JSON episode object.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Settings {
    pub title: Option<String>,
    /// Speed for every speaker without a speed of their own (1.0 = normal).
    pub speed: Option<f32>,
    /// Silence between turns, in seconds.
    pub gap_secs: Option<f32>,
    /// Speak stage directions instead of dropping them.
    pub keep_stage_directions: bool,
    /// Let automatically cast speakers share voices once every distinct one is taken.
    pub reuse_voices: bool,
    /// Let automatic casting use the non-English stock voices once the English ones are taken.
    pub any_language_voices: bool,
}

/// Collapses every run of whitespace to one space and trims the ends.
pub(crate) fn collapse_whitespace(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}
