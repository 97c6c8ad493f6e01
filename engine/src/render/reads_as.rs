//! What a line will sound like, in words, before anything is rendered.
//!
//! Authors catch a misreading ("$4.1 billion" read with a break in it, "FY2025" spelled out)
//! far sooner in text than in audio, and far more cheaply: `banter script check --spoken` and
//! the studio's "reads as" panel show this. It follows the render's own path (the cast voice's
//! language picks the normaliser's dialect, the lexicon's pronunciations and the directives are
//! shown where they act) but stops before phonemes, so it needs no model and costs microseconds.

use crate::script::{CueAction, Episode, Line, Piece};
use crate::segments::speakable_text;
use crate::text::{self, Dialect};
use crate::voice::VoiceSpec;

/// The line as it will be read: normalised words (English voices), `word /ipa/` for a given
/// pronunciation, `[pause 1.5 s]` and `[rate 1.2]` where directives act, stage directions only
/// if the episode keeps them. `None` for a speaker the cast does not know.
#[must_use]
pub fn reads_as(episode: &Episode, line: &Line) -> Option<String> {
    let member = episode.cast.get(&line.speaker)?;
    let dialect = VoiceSpec::parse(&member.voice)
        .ok()
        .and_then(|spec| Dialect::from_language(spec.language().espeak_code()));
    let keep = episode.settings.keep_stage_directions;
    let mut out: Vec<String> = Vec::new();
    let mut run = String::new();
    let say = |run: &mut String, out: &mut Vec<String>| {
        let words = speakable_text(&std::mem::take(run));
        if words.trim().is_empty() {
            return;
        }
        let spoken = match dialect {
            Some(d) => text::normalize(&words, d).text.replace("\n\n", " "),
            None => words.split_whitespace().collect::<Vec<_>>().join(" "),
        };
        if !spoken.is_empty() {
            out.push(spoken);
        }
    };
    for piece in &line.pieces {
        match piece {
            Piece::Text { text } => run.push_str(text),
            Piece::Respelled { said, .. } => run.push_str(said),
            Piece::Direction { text } if keep => {
                run.push(' ');
                run.push_str(text);
                run.push(' ');
            }
            Piece::Direction { .. } => run.push(' '),
            Piece::Phonemes { text, ipa } => {
                say(&mut run, &mut out);
                out.push(format!("{text} /{ipa}/"));
            }
            Piece::Pause { secs } => {
                say(&mut run, &mut out);
                out.push(format!("[pause {secs} s]"));
            }
            Piece::Rate { rate } => {
                say(&mut run, &mut out);
                out.push(format!("[rate {rate}]"));
            }
            // Among the words a cue does not cut the sentence, so it is not shown there.
            Piece::Sound { cue } if !cue.alone => run.push(' '),
            Piece::Sound { cue } => {
                say(&mut run, &mut out);
                out.push(match &cue.action {
                    CueAction::Sound { file, .. } => format!("[sound {file}]"),
                    CueAction::Bed { file, .. } => format!("[bed {file}]"),
                    CueAction::BedOff { .. } => "[bed off]".to_owned(),
                });
            }
        }
    }
    say(&mut run, &mut out);
    Some(out.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::ParseOptions;

    #[test]
    fn shows_normalised_words_pronunciations_and_directives() {
        let e = Episode::parse(
            "t.txt",
            "# cast\nAna: bf_emma\n\nAna: It cost $5 (laughs) [pause:1s] [rate:1.2] at [Kokoro](/kˈOkəɹO/) HQ.\nBob: 3 cats.",
            &ParseOptions::default(),
        )
        .unwrap();
        assert_eq!(
            reads_as(&e, &e.lines[0]).as_deref(),
            Some("It cost five dollars [pause 1 s] [rate 1.2] at Kokoro /kˈOkəɹO/ H-Q.")
        );
        assert_eq!(reads_as(&e, &e.lines[1]).as_deref(), Some("Three cats."));
    }
}
