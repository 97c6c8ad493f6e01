//! Captions (SRT and `WebVTT`, one cue per sentence) and the chapters/markers JSON written beside
//! an episode.
//!
//! Cue times are where the sentence's audible sound starts and ends in the final audio (the
//! renderer trims Kokoro's padding before placing a sentence, so these are real times, not
//! estimates). Cues never overlap: sentences are placed one after another.

use std::fmt::Write as _;

use serde::Serialize;

/// One sentence on the timeline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cue {
    pub start: f64,
    pub end: f64,
    pub speaker: String,
    pub text: String,
    /// Index of the script line (0-based) and where it was written (1-based).
    pub line: usize,
    pub source_line: usize,
}

/// A line on the timeline, for the markers JSON and stems.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LineMark {
    pub line: usize,
    pub speaker: String,
    pub voice: String,
    pub start: f64,
    pub end: f64,
    pub source_line: usize,
}

/// A chapter: from a heading to the next one (or the end).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChapterSpan {
    pub title: String,
    pub start: f64,
    pub end: f64,
}

/// Caption file flavours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaptionFormat {
    Srt,
    Vtt,
}

impl CaptionFormat {
    #[must_use]
    pub fn extension(self) -> &'static str {
        match self {
            Self::Srt => "srt",
            Self::Vtt => "vtt",
        }
    }
}

/// `HH:MM:SS,mmm` (SRT) or `HH:MM:SS.mmm` (VTT).
fn timestamp(secs: f64, sep: char) -> String {
    let ms = (secs.max(0.0) * 1000.0).round() as u64;
    format!(
        "{:02}:{:02}:{:02}{sep}{:03}",
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000
    )
}

/// Caption text on one line; `-->` would end a VTT cue's timing line early and a blank line
/// would end the cue, so neither may appear.
fn cue_text(text: &str) -> String {
    text.replace("-->", "→")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The whole caption file. Speakers are named the way each format does it: a `NAME: ` prefix in
/// SRT, a `<v NAME>` voice span in VTT.
#[must_use]
pub fn captions(cues: &[Cue], format: CaptionFormat) -> String {
    let mut out = String::new();
    if format == CaptionFormat::Vtt {
        out.push_str("WEBVTT\n\n");
    }
    for (i, cue) in cues.iter().enumerate() {
        let text = cue_text(&cue.text);
        let speaker = cue_text(&cue.speaker);
        // Writing to a String cannot fail.
        let _ = match format {
            CaptionFormat::Srt => writeln!(
                out,
                "{}\n{} --> {}\n{speaker}: {text}\n",
                i + 1,
                timestamp(cue.start, ','),
                timestamp(cue.end, ',')
            ),
            CaptionFormat::Vtt => writeln!(
                out,
                "{}\n{} --> {}\n<v {}>{}\n",
                i + 1,
                timestamp(cue.start, '.'),
                timestamp(cue.end, '.'),
                speaker.replace('>', "›"),
                text.replace('<', "‹")
            ),
        };
    }
    out
}

/// The markers JSON: title, duration, chapters and every line's span.
#[derive(Debug, Serialize)]
pub struct Markers<'a> {
    pub title: &'a str,
    pub duration: f64,
    pub chapters: &'a [ChapterSpan],
    pub lines: &'a [LineMark],
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cue(start: f64, end: f64, text: &str) -> Cue {
        Cue {
            start,
            end,
            speaker: "Ann".into(),
            text: text.into(),
            line: 0,
            source_line: 1,
        }
    }

    #[test]
    fn srt_and_vtt_layout() {
        let cues = [cue(0.02, 1.5, "Hello."), cue(3661.0, 3662.25, "A --> B\nC")];
        let srt = captions(&cues, CaptionFormat::Srt);
        assert_eq!(
            srt,
            "1\n00:00:00,020 --> 00:00:01,500\nAnn: Hello.\n\n2\n01:01:01,000 --> 01:01:02,250\nAnn: A → B C\n\n"
        );
        let vtt = captions(&cues, CaptionFormat::Vtt);
        assert!(vtt.starts_with("WEBVTT\n\n1\n00:00:00.020 --> 00:00:01.500\n<v Ann>Hello.\n"));
    }
}
