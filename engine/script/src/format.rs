//! The script formats Banter reads, by name.
//!
//! Each format is what some other tool or tradition already writes, so a writer can bring a
//! script from there unchanged: plain `Name: text` chat logs, `VibeVoice`'s `Speaker 1:`, Dia's
//! `[S1]`, podcastfy's `<Person1>` transcripts, Markdown documents, stage plays and screenplays,
//! JSON from programs, and plain prose that one speaker reads. FORMATS.md has an example of
//! each and the rules they are read by.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

/// A script layout. Parsing detects it unless the caller names one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ScriptFormat {
    /// `Alice: text`, one turn per line; unlabelled lines continue the previous turn.
    Name,
    /// `Speaker 1: text` (Microsoft `VibeVoice`'s script format).
    VibeVoice,
    /// `[S1] text [S2] text` (Nari Labs' Dia), several turns per line allowed.
    Dia,
    /// `<Person1>text</Person1>` (podcastfy transcripts).
    Podcastfy,
    /// `**Alice:** text`, headings are chapters.
    Markdown,
    /// Speaker name on its own line (`ALGERNON.`), speech below; scene headings are chapters.
    Play,
    /// An array of `{"speaker", "text"}` or an episode object with cast and settings.
    Json,
    /// Paragraphs with no speaker labels at all (a solo episode, an essay), read by one speaker.
    Prose,
}

impl ScriptFormat {
    pub const ALL: [Self; 8] = [
        Self::Name,
        Self::VibeVoice,
        Self::Dia,
        Self::Podcastfy,
        Self::Markdown,
        Self::Play,
        Self::Json,
        Self::Prose,
    ];

    /// The name `--format` takes and `banter script check` prints.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Name => "name",
            Self::VibeVoice => "vibevoice",
            Self::Dia => "dia",
            Self::Podcastfy => "podcastfy",
            Self::Markdown => "markdown",
            Self::Play => "play",
            Self::Json => "json",
            Self::Prose => "prose",
        }
    }

    /// All names, comma-separated, for messages.
    #[must_use]
    pub fn names() -> String {
        Self::ALL
            .iter()
            .map(|f| f.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for ScriptFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A `--format` value that names no format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown script format `{name}`; choose one of: {}",
    ScriptFormat::names()
)]
pub struct UnknownFormatName {
    pub name: String,
}

impl FromStr for ScriptFormat {
    type Err = UnknownFormatName;

    /// Accepts the names of [`ScriptFormat::as_str`] and a few aliases (`md`, `screenplay`, ...).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase().replace(['-', '_', ' '], "");
        Ok(match lower.as_str() {
            "name" | "names" | "labelled" | "labeled" | "colon" | "text" | "txt" => Self::Name,
            "vibevoice" | "speaker" | "speakern" => Self::VibeVoice,
            "dia" => Self::Dia,
            "podcastfy" | "xml" | "person" => Self::Podcastfy,
            "markdown" | "md" => Self::Markdown,
            "play" | "screenplay" | "stageplay" => Self::Play,
            "json" => Self::Json,
            "prose" | "plain" | "narration" | "narrator" | "monologue" | "solo" => Self::Prose,
            _ => return Err(UnknownFormatName { name: s.to_owned() }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_aliases_parse() {
        for f in ScriptFormat::ALL {
            assert_eq!(f.as_str().parse::<ScriptFormat>(), Ok(f));
            assert_eq!(f.to_string(), f.as_str());
        }
        assert_eq!("MD".parse(), Ok(ScriptFormat::Markdown));
        assert_eq!("Screen-Play".parse(), Ok(ScriptFormat::Play));
        assert_eq!("vibe_voice".parse(), Ok(ScriptFormat::VibeVoice));
        let e = "yaml".parse::<ScriptFormat>().unwrap_err();
        assert!(e.to_string().contains("name, vibevoice, dia"), "{e}");
    }
}
