//! Captions (SRT and `WebVTT`, one cue per sentence, or timed word by word) and the
//! chapters/markers JSON written beside an episode.
//!
//! Cue times are where the sentence's audible sound starts and ends in the final audio (the
//! renderer trims Kokoro's padding before placing a sentence, so these are real times, not
//! estimates). Cues never overlap: sentences are placed one after another.
//!
//! With word timing ([`CaptionFormat::WordVtt`], [`CaptionFormat::WordSrt`]) the `WebVTT` file
//! keeps one cue per sentence and marks each word's start with an inline `<HH:MM:SS.mmm>`
//! timestamp (players highlight the words as they are spoken), and the SRT file, which has no
//! such marks, has one cue per short phrase: a few words, cut at punctuation.

use std::fmt::Write as _;

use serde::Serialize;

use crate::words::TimedWord;

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
    /// When each word is spoken, inside `start..end` (empty when the audio came without the
    /// model's durations).
    pub words: Vec<TimedWord>,
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
    /// Every word of the line, in order, with its time in the file.
    pub words: Vec<TimedWord>,
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
    /// One cue per sentence.
    Srt,
    Vtt,
    /// One cue per short phrase, timed from the words.
    WordSrt,
    /// One cue per sentence with an inline timestamp before each word.
    WordVtt,
}

impl CaptionFormat {
    #[must_use]
    pub fn extension(self) -> &'static str {
        match self {
            Self::Srt | Self::WordSrt => "srt",
            Self::Vtt | Self::WordVtt => "vtt",
        }
    }
}

/// A phrase of an SRT file with word timing holds at most this many words...
const PHRASE_WORDS: usize = 5;
/// ...and lasts at most this long (seconds), unless one word alone is longer.
const PHRASE_SECS: f64 = 2.5;

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
/// SRT, a `<v NAME>` voice span in VTT. SRT's prefix is text on the screen, so an episode with
/// one speaker (a solo show, prose read by a narrator) has none: a viewer does not want
/// "Narrator:" before every sentence.
#[must_use]
pub fn captions(cues: &[Cue], format: CaptionFormat) -> String {
    let named = cues.iter().any(|c| c.speaker != cues[0].speaker);
    match format {
        CaptionFormat::Srt => sentence_srt(cues, named),
        CaptionFormat::WordSrt => phrase_srt(cues, named),
        CaptionFormat::Vtt => vtt(cues, false),
        CaptionFormat::WordVtt => vtt(cues, true),
    }
}

/// SRT with one cue per sentence, each named `NAME: ` when `named`.
fn sentence_srt(cues: &[Cue], named: bool) -> String {
    let mut out = String::new();
    for (i, cue) in cues.iter().enumerate() {
        let who = if named {
            format!("{}: ", cue_text(&cue.speaker))
        } else {
            String::new()
        };
        // Writing to a String cannot fail.
        let _ = writeln!(
            out,
            "{}\n{} --> {}\n{who}{}\n",
            i + 1,
            timestamp(cue.start, ','),
            timestamp(cue.end, ','),
            cue_text(&cue.text)
        );
    }
    out
}

/// Where each word's text starts in the caption text (byte offsets, in order); `None` for a
/// word not found there.
fn word_offsets(text: &str, cue: &Cue) -> Vec<Option<usize>> {
    let mut from = 0;
    cue.words
        .iter()
        .map(|w| {
            let probe = cue_text(&w.word);
            let at = text.get(from..)?.find(probe.as_str())? + from;
            from = at + probe.len();
            Some(at)
        })
        .collect()
}

/// `WebVTT` with one cue per sentence, the speaker in a `<v NAME>` span (metadata players do
/// not show, so it stays for one speaker too); with `mark_words`, a
/// `<HH:MM:SS.mmm>` before every word (the marks strictly increasing and inside the cue, as the
/// format requires: a word starting with its cue has none).
fn vtt(cues: &[Cue], mark_words: bool) -> String {
    let mut out = String::from("WEBVTT\n\n");
    for (i, cue) in cues.iter().enumerate() {
        let text = cue_text(&cue.text).replace('<', "‹");
        let offsets = if mark_words {
            word_offsets(&text, cue)
        } else {
            Vec::new()
        };
        let mut marked = String::with_capacity(text.len() + 16 * offsets.len());
        let mut copied = 0;
        let mut last = cue.start;
        for (w, at) in cue.words.iter().zip(offsets) {
            let Some(at) = at else { continue };
            // Whole milliseconds, as written: equal ones would not be increasing.
            let ms = (w.start * 1000.0).round() / 1000.0;
            if ms <= last || ms >= cue.end || at < copied {
                continue;
            }
            marked.push_str(&text[copied..at]);
            marked.push('<');
            marked.push_str(&timestamp(ms, '.'));
            marked.push('>');
            copied = at;
            last = ms;
        }
        marked.push_str(&text[copied..]);
        let _ = writeln!(
            out,
            "{}\n{} --> {}\n<v {}>{}\n",
            i + 1,
            timestamp(cue.start, '.'),
            timestamp(cue.end, '.'),
            cue_text(&cue.speaker).replace('>', "›"),
            marked
        );
    }
    out
}

/// SRT with one cue per short phrase: words run together up to [`PHRASE_WORDS`] or
/// [`PHRASE_SECS`], and a phrase ends at punctuation. The speaker's name starts the first phrase
/// after a change of speaker. A sentence without word times is one cue, as in plain SRT.
fn phrase_srt(cues: &[Cue], named: bool) -> String {
    let mut out = String::new();
    let mut n = 0;
    // With one speaker, nobody is named: as if they had always been speaking.
    let mut speaker: Option<&str> = (!named)
        .then(|| cues.first().map(|c| c.speaker.as_str()))
        .flatten();
    for cue in cues {
        let text = cue_text(&cue.text);
        let offsets = word_offsets(&text, cue);
        let mut phrases: Vec<(f64, f64, String)> = Vec::new();
        if cue.words.is_empty() || offsets.iter().any(Option::is_none) {
            phrases.push((cue.start, cue.end, text.clone()));
        } else {
            let starts: Vec<usize> = offsets.iter().map(|o| o.unwrap_or(0)).collect();
            let mut first = 0;
            for k in 0..cue.words.len() {
                let next = starts.get(k + 1).copied().unwrap_or(text.len());
                let between = &text[starts[k]..next];
                let after = between
                    .get(cue_text(&cue.words[k].word).len()..)
                    .unwrap_or("");
                let full = k + 1 - first >= PHRASE_WORDS
                    || cue
                        .words
                        .get(k + 1)
                        .is_some_and(|w| w.end - cue.words[first].start > PHRASE_SECS);
                let pause = after.contains(|c: char| ",.;:!?—…".contains(c));
                if k + 1 == cue.words.len() || full || pause {
                    let from = if first == 0 { 0 } else { starts[first] };
                    phrases.push((
                        cue.words[first].start,
                        cue.words[k].end,
                        text[from..next].trim().to_owned(),
                    ));
                    first = k + 1;
                }
            }
        }
        for (start, end, phrase) in phrases {
            n += 1;
            let who = if speaker == Some(cue.speaker.as_str()) {
                String::new()
            } else {
                format!("{}: ", cue_text(&cue.speaker))
            };
            speaker = Some(&cue.speaker);
            let _ = writeln!(
                out,
                "{n}\n{} --> {}\n{who}{phrase}\n",
                timestamp(start, ','),
                timestamp(end, ',')
            );
        }
    }
    out
}

/// The markers JSON: title, duration, chapters, every line's span, and every sound cue's
/// (a sound is never a caption, so it is listed here and only here).
#[derive(Debug, Serialize)]
pub struct Markers<'a> {
    pub title: &'a str,
    pub duration: f64,
    pub chapters: &'a [ChapterSpan],
    pub lines: &'a [LineMark],
    pub sounds: &'a [super::mix::SoundSpan],
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
            words: Vec::new(),
        }
    }

    #[test]
    fn srt_and_vtt_layout() {
        let mut cues = [cue(0.02, 1.5, "Hello."), cue(3661.0, 3662.25, "A --> B\nC")];
        let srt = captions(&cues, CaptionFormat::Srt);
        assert_eq!(
            srt,
            "1\n00:00:00,020 --> 00:00:01,500\nHello.\n\n2\n01:01:01,000 --> 01:01:02,250\nA → B C\n\n",
            "one speaker is named nowhere on screen"
        );
        let vtt = captions(&cues, CaptionFormat::Vtt);
        assert!(vtt.starts_with("WEBVTT\n\n1\n00:00:00.020 --> 00:00:01.500\n<v Ann>Hello.\n"));
        cues[1].speaker = "Bo".into();
        assert_eq!(
            captions(&cues, CaptionFormat::Srt),
            "1\n00:00:00,020 --> 00:00:01,500\nAnn: Hello.\n\n2\n01:01:01,000 --> 01:01:02,250\nBo: A → B C\n\n"
        );
    }

    fn timed(text: &str, words: &[(&str, f64, f64)]) -> Cue {
        let mut c = cue(words[0].1 - 0.02, words[words.len() - 1].2 + 0.05, text);
        c.words = words
            .iter()
            .map(|&(w, start, end)| TimedWord {
                word: w.into(),
                start,
                end,
                source_line: 1,
                source_column: 1,
            })
            .collect();
        c
    }

    #[test]
    fn word_vtt_marks_every_word_with_its_start() {
        let c = timed(
            "It cost $4.1 billion, or so.",
            &[
                ("It", 1.0, 1.1),
                ("cost", 1.1, 1.4),
                ("$4.1 billion", 1.4, 2.9),
                ("or", 3.2, 3.3),
                ("so", 3.3, 3.6),
            ],
        );
        let vtt = captions(&[c], CaptionFormat::WordVtt);
        assert!(
            vtt.contains("<v Ann><00:00:01.000>It <00:00:01.100>cost <00:00:01.400>$4.1 billion, <00:00:03.200>or <00:00:03.300>so.\n"),
            "{vtt}"
        );
    }

    #[test]
    fn word_srt_cuts_phrases_at_punctuation_and_length() {
        let c = timed(
            "Well, one two three four five six seven.",
            &[
                ("Well", 0.1, 0.4),
                ("one", 0.6, 0.8),
                ("two", 0.8, 1.0),
                ("three", 1.0, 1.2),
                ("four", 1.2, 1.4),
                ("five", 1.4, 1.6),
                ("six", 1.6, 1.8),
                ("seven", 1.8, 2.1),
            ],
        );
        let srt = captions(std::slice::from_ref(&c), CaptionFormat::WordSrt);
        assert_eq!(
            srt,
            "1\n00:00:00,100 --> 00:00:00,400\nWell,\n\n\
             2\n00:00:00,600 --> 00:00:01,600\none two three four five\n\n\
             3\n00:00:01,600 --> 00:00:02,100\nsix seven.\n\n"
        );
        // Without word times a sentence is one cue.
        let mut plain = c;
        plain.words.clear();
        assert_eq!(
            captions(&[plain.clone()], CaptionFormat::WordSrt),
            captions(&[plain], CaptionFormat::Srt)
        );
    }
}
