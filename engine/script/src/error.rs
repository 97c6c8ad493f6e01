//! Errors of the script parsers.
//!
//! Every error points at a place in the script (`FILE:LINE:COLUMN: `, like a compiler) and says
//! what to do about it, because the person reading it is a podcast writer fixing a text file,
//! not a programmer reading a backtrace. The place is kept as structured fields so the studio can
//! jump to it; the kind says what went wrong, with the offending names and values as fields.

/// A script could not be read: where, and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}:{line}:{column}: {kind}")]
pub struct ScriptError {
    /// The script's name as the user gave it (a path, or `-` for standard input).
    pub file: String,
    /// 1-based line number.
    pub line: usize,
    /// 1-based column, counted in characters (Unicode scalar values), not bytes.
    pub column: usize,
    pub kind: ScriptErrorKind,
}

impl ScriptError {
    pub(crate) fn new(file: &str, pos: super::Position, kind: ScriptErrorKind) -> Self {
        Self {
            file: file.to_owned(),
            line: pos.line,
            column: pos.column,
            kind,
        }
    }
}

/// What went wrong, with the names and values involved.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScriptErrorKind {
    #[error("the script is {size} bytes, more than the limit of {limit}; split it into several episodes")]
    TooLarge { size: usize, limit: usize },
    #[error(
        "invalid UTF-8 at byte {offset}; save the file as UTF-8 (or UTF-16 with a byte-order mark)"
    )]
    InvalidUtf8 { offset: usize },
    #[error("invalid UTF-16 at byte {offset}: {reason}; save the file as UTF-8")]
    InvalidUtf16 { offset: usize, reason: String },
    #[error("this looks like binary data ({evidence}), not a script; check that this is the right file (UTF-16 text needs a byte-order mark, or save it as UTF-8)")]
    Binary { evidence: String },
    #[error("this file is {what}")]
    Document { what: String },
    #[error("the script is empty; write one line per turn, such as `Alice: Welcome to the show.`")]
    Empty,
    #[error("the script contains only whitespace; write one line per turn, such as `Alice: Welcome to the show.`")]
    WhitespaceOnly,
    #[error("cannot tell which script format this is: this line and others open like speaker labels, but not ones Banter can trust; start each turn with a capitalised name such as `Alice: Welcome to the show.`, list the speakers in a cast block, or pass --format with one of: {formats} (`prose` has one narrator read every line as written)")]
    UnknownFormat { formats: String },
    #[error("no speaker says anything in this script; start each turn with a speaker label such as `Alice: Welcome to the show.`")]
    NoSpeech,
    #[error("`{speaker}` has a label but nothing to say; write the words after the label, or delete the line")]
    EmptyTurn { speaker: String },
    #[error("`{speaker}` is cast twice: `{voice}` here but `{first_voice}` on line {first_line}; keep one of them")]
    CastConflict {
        speaker: String,
        voice: String,
        first_voice: String,
        first_line: usize,
    },
    #[error("`{spec}` is not a voice for `{speaker}`: {reason}; write a stock voice such as `af_heart`, a blend such as `af_bella:0.7+af_sky:0.3`, and optionally a speed such as `@1.1`")]
    BadVoice {
        speaker: String,
        spec: String,
        reason: String,
    },
    #[error("`{value}` is not a speed for `{speaker}`; write a number from 0.25 to 4 after `@`, such as `af_heart @1.1`")]
    BadSpeed { speaker: String, value: String },
    #[error("setting `{key}` cannot be `{value}`; expected {expected}")]
    BadSetting {
        key: String,
        value: String,
        expected: String,
    },
    #[error("the front matter opened here with `---` is never closed; add a line `---` after the cast and settings")]
    UnclosedFrontMatter,
    #[error("`[{directive}]` is not a valid directive: {reason}")]
    BadDirective { directive: String, reason: String },
    #[error("`[{cue}]` is not a sound cue Banter can play: {reason}")]
    BadCue { cue: String, reason: String },
    #[error("invalid JSON: {message}")]
    Json { message: String },
    #[error("this JSON does not describe an episode: {message}; write an array of {{\"speaker\": ..., \"text\": ...}} objects, or an object with \"cast\" and \"lines\"")]
    JsonShape { message: String },
    #[error("`{speaker}` is speaker number {count}, but there are only {available} distinct voices to give out; give speakers voices in the cast header, or pass --reuse-voices (setting `reuse_voices: true`) to let speakers share voices, or --any-language-voices (setting `any_language_voices: true`) to use the other-language voices too")]
    TooManySpeakers {
        speaker: String,
        count: usize,
        available: usize,
    },
    #[error("`{speaker}` is cast as `{voice}`, which is not an installed voice; run `banter voices` to list the voices")]
    UnknownVoice { speaker: String, voice: String },
}
