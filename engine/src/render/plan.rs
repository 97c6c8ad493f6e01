//! From an episode's lines to what Kokoro will be asked to say: sentences as phonemes, silences,
//! and who says them.
//!
//! Planning happens before any audio is made, for three reasons: every error a script can still
//! hold (an unknown voice, a line with nothing speakable) surfaces before minutes of rendering;
//! the total phoneme count gives the progress bar an honest denominator; and the plan is a few
//! kilobytes per minute of audio, so holding it for a 90-minute episode costs nothing.
//!
//! A line's pieces are cut into *runs* at `[pause:]` and `[rate:]` directives. Each run is split
//! into sentences on the author's text (so captions show what was written), and each sentence is
//! normalised (English voices), phonemized, and spliced with the IPA of `[word](/ipa/)` pieces,
//! which stand in the sentence as placeholders until then.

use crate::phonemes::{Language, Phonemizer};
use crate::script::{Episode, Line, Piece, Position};
use crate::segments::{speakable_text, spoken_text};
use crate::synth::SPEED_RANGE;
use crate::text;
use crate::voice::VoiceSpec;

use super::RenderError;

/// One sentence to speak.
#[derive(Debug, Clone, PartialEq)]
pub struct SentencePlan {
    /// The author's words (stage directions removed), for captions.
    pub caption: String,
    /// Phonemes for Kokoro (one pass, split only beyond its input limit).
    pub phonemes: String,
    pub speed: f32,
}

/// What a line does, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Speak(SentencePlan),
    /// Seconds of silence from a `[pause:]` directive.
    Silence(f32),
}

/// A line ready to render.
#[derive(Debug, Clone, PartialEq)]
pub struct LinePlan {
    /// Index of the line in the episode.
    pub index: usize,
    pub speaker: String,
    /// The voice spec in canonical form.
    pub voice: String,
    pub steps: Vec<Step>,
    pub position: Position,
    /// A `[pause:]` before the first words: it replaces the turn gap before this line.
    pub lead_pause: Option<f32>,
    /// The line is cut off by a dash ("I think—"): whoever speaks next interrupts.
    pub cut_off: bool,
    /// The line starts with a dash ("—sorry"): it barges in on the line before.
    pub barges_in: bool,
}

impl LinePlan {
    /// Phoneme characters in the line: the unit of progress.
    #[must_use]
    pub fn phoneme_count(&self) -> usize {
        self.steps
            .iter()
            .map(|s| match s {
                Step::Speak(p) => p.phonemes.chars().count(),
                Step::Silence(_) => 0,
            })
            .sum()
    }

    #[must_use]
    pub fn is_silent(&self) -> bool {
        !self.steps.iter().any(|s| matches!(s, Step::Speak(_)))
    }
}

/// Stands for the k-th `[word](/ipa/)` piece of a run until the sentence is phonemized: a
/// private-use character, which neither the sentence splitter nor a writer would produce.
const PLACEHOLDER_BASE: u32 = 0xF_0000;

fn placeholder(k: usize) -> char {
    char::from_u32(PLACEHOLDER_BASE + k as u32).unwrap_or('\u{F0000}')
}

fn placeholder_index(c: char) -> Option<usize> {
    let v = c as u32;
    (PLACEHOLDER_BASE..PLACEHOLDER_BASE + 0xFFFD)
        .contains(&v)
        .then(|| (v - PLACEHOLDER_BASE) as usize)
}

/// Plans every line of `episode`. Lines with nothing speakable are kept (with no steps) so that
/// line indices stay those of the script; the renderer skips them.
pub fn plan_episode(episode: &Episode) -> Result<Vec<LinePlan>, RenderError> {
    episode
        .lines
        .iter()
        .enumerate()
        .map(|(index, line)| plan_line(episode, index, line))
        .collect()
}

fn plan_line(episode: &Episode, index: usize, line: &Line) -> Result<LinePlan, RenderError> {
    let member = episode
        .cast
        .get(&line.speaker)
        .ok_or_else(|| RenderError::Script {
            at: episode.locate(line.position),
            message: format!("speaker \"{}\" has no voice in the cast", line.speaker),
        })?;
    let spec = VoiceSpec::parse(&member.voice).map_err(|e| RenderError::Script {
        at: episode.locate(line.position),
        message: format!("voice of {}: {e}", member.name),
    })?;
    let language = spec.language();
    let base_speed = member.speed.or(episode.settings.speed).unwrap_or(1.0);
    let keep = episode.settings.keep_stage_directions;

    let mut steps = Vec::new();
    let mut lead_pause = None;
    let mut speed = base_speed;
    let mut run = Run::default();
    for piece in &line.pieces {
        match piece {
            Piece::Text { text } => run.push_text(text),
            Piece::Direction { text } if keep => run.push_text(text),
            Piece::Direction { .. } => run.push_text(" "),
            Piece::Phonemes { text, ipa } => run.push_ipa(text, ipa),
            Piece::Pause { secs } => {
                flush(&mut run, speed, language, &mut steps, episode, line)?;
                if steps.is_empty() {
                    *lead_pause.get_or_insert(0.0) += secs.max(0.0);
                } else {
                    steps.push(Step::Silence(secs.max(0.0)));
                }
            }
            Piece::Rate { rate } => {
                flush(&mut run, speed, language, &mut steps, episode, line)?;
                speed = *rate;
            }
        }
    }
    flush(&mut run, speed, language, &mut steps, episode, line)?;
    // A pause at the end of a line lengthens the gap after it: keep it as silence.
    let spoken = episode.spoken_text(line);
    Ok(LinePlan {
        index,
        speaker: member.name.clone(),
        voice: spec.canonical(),
        steps,
        position: line.position,
        lead_pause,
        cut_off: text::ends_with_interruption(&spoken),
        barges_in: text::starts_with_interruption(&spoken),
    })
}

/// Text and pronunciations between two directives.
#[derive(Default)]
struct Run {
    text: String,
    /// `(word, ipa)` of each placeholder in `text`.
    ipa: Vec<(String, String)>,
}

impl Run {
    fn push_text(&mut self, s: &str) {
        self.text.push_str(s);
    }

    fn push_ipa(&mut self, word: &str, ipa: &str) {
        self.text.push(placeholder(self.ipa.len()));
        self.ipa.push((word.to_owned(), ipa.to_owned()));
    }
}

fn flush(
    run: &mut Run,
    speed: f32,
    language: Language,
    steps: &mut Vec<Step>,
    episode: &Episode,
    line: &Line,
) -> Result<(), RenderError> {
    let run = std::mem::take(run);
    if run.text.trim().is_empty() {
        return Ok(());
    }
    let speed = speed.clamp(*SPEED_RANGE.start(), *SPEED_RANGE.end());
    for range in text::split_sentences(&run.text) {
        let source = &run.text[range];
        let caption = caption_of(source, &run.ipa);
        let phonemes =
            phonemize_sentence(source, &run.ipa, language).map_err(|e| RenderError::Script {
                at: episode.locate(line.position),
                message: format!("cannot phonemize \"{}\": {e}", excerpt(&caption)),
            })?;
        if phonemes.chars().any(char::is_alphabetic) {
            steps.push(Step::Speak(SentencePlan {
                caption,
                phonemes,
                speed,
            }));
        }
    }
    Ok(())
}

/// The sentence as the author wrote it, pronunciation placeholders back to their words.
fn caption_of(source: &str, ipa: &[(String, String)]) -> String {
    let mut out = String::with_capacity(source.len());
    for c in source.chars() {
        match placeholder_index(c).and_then(|k| ipa.get(k)) {
            Some((word, _)) => out.push_str(word),
            None => out.push(c),
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Normalises and phonemizes the text around placeholders, and splices the given IPA in.
fn phonemize_sentence(
    source: &str,
    ipa: &[(String, String)],
    language: Language,
) -> Result<String, crate::phonemes::PhonemeError> {
    let phonemizer = Phonemizer::global()?;
    let mut out: Vec<String> = Vec::new();
    let mut fragment = String::new();
    let say = |fragment: &mut String, out: &mut Vec<String>| {
        let words = std::mem::take(fragment);
        let speakable = speakable_text(&words);
        if !speakable.chars().any(char::is_alphanumeric) {
            // Punctuation alone ("," after a pronounced word) still shapes the prosody.
            let punct: String = speakable.chars().filter(|c| !c.is_whitespace()).collect();
            if let (false, Some(last)) = (punct.is_empty(), out.last_mut()) {
                last.push_str(&punct);
            }
            return Ok(());
        }
        let text = spoken_text(&speakable, language);
        let p = phonemizer.phonemize(&text, language)?;
        if !p.trim().is_empty() {
            out.push(p.trim().to_owned());
        }
        Ok::<(), crate::phonemes::PhonemeError>(())
    };
    for c in source.chars() {
        match placeholder_index(c).and_then(|k| ipa.get(k)) {
            Some((_, pron)) => {
                say(&mut fragment, &mut out)?;
                out.push(pron.trim().to_owned());
            }
            None => fragment.push(c),
        }
    }
    say(&mut fragment, &mut out)?;
    Ok(out.join(" "))
}

fn excerpt(s: &str) -> String {
    let mut e: String = s.chars().take(40).collect();
    if s.chars().count() > 40 {
        e.push('…');
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captions_restore_pronounced_words() {
        let ipa = vec![("Kokoro".to_owned(), "kˈOkəɹO".to_owned())];
        let src = format!("I love {}  a lot.", placeholder(0));
        assert_eq!(caption_of(&src, &ipa), "I love Kokoro a lot.");
    }

    fn plan(script: &str) -> Vec<LinePlan> {
        let e = Episode::parse("t.txt", script, &crate::script::ParseOptions::default())
            .expect("parse");
        plan_episode(&e).expect("plan")
    }

    fn speaks(p: &LinePlan) -> Vec<&SentencePlan> {
        p.steps
            .iter()
            .filter_map(|s| match s {
                Step::Speak(x) => Some(x),
                Step::Silence(_) => None,
            })
            .collect()
    }

    #[test]
    fn lines_become_sentences_pauses_and_rates() {
        let p = plan(
            "# cast\nAnn: af_heart @1.1\n\nAnn: [pause:0.8s] Hello Dr. Smith. It costs $5 (sighs) today. [pause:1s] [rate:1.5] Bye [Kokoro](/kˈOkəɹO/)!\nBen: I think—\nAnn: —sorry.\n",
        );
        assert_eq!(p.len(), 3);
        let ann = &p[0];
        assert_eq!(ann.lead_pause, Some(0.8));
        let s = speaks(ann);
        let captions: Vec<&str> = s.iter().map(|x| x.caption.as_str()).collect();
        assert_eq!(
            captions,
            ["Hello Dr. Smith.", "It costs $5 today.", "Bye Kokoro!"]
        );
        assert!((s[0].speed - 1.1).abs() < 1e-6 && (s[2].speed - 1.5).abs() < 1e-6);
        assert!(matches!(ann.steps[2], Step::Silence(x) if (x - 1.0).abs() < 1e-6));
        // "$5" is read as words, and the IPA is spliced in as given.
        let plain = Phonemizer::global()
            .expect("espeak")
            .phonemize("It costs $5 today.", Language::EnUs)
            .expect("phonemize");
        assert_ne!(s[1].phonemes, plain);
        assert!(
            s[1].phonemes.contains("dˈɑːlɚz") || s[1].phonemes.contains("dˈɑlɚz"),
            "{}",
            s[1].phonemes
        );
        assert!(s[2].phonemes.contains("kˈOkəɹO"), "{}", s[2].phonemes);
        assert!(!s.iter().any(|x| x.caption.contains("sighs")));
        assert!(p[1].cut_off && p[2].barges_in);
    }

    #[test]
    fn placeholders_round_trip() {
        for k in [0, 1, 77, 5000] {
            assert_eq!(placeholder_index(placeholder(k)), Some(k));
        }
        assert_eq!(placeholder_index('a'), None);
    }
}
