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
//! which stand in the sentence as placeholders until then. Every sentence also gets its words
//! ([`PlannedWord`]): the author's spelling, the phonemes that say it (so the model's durations
//! can time it, see [`crate::words`]) and its line and column in the script.

use std::ops::Range;

use crate::phonemes::Language;
use crate::script::{Episode, Line, Piece, Position};
use crate::speech::SPEED_RANGE;
use crate::text;
use crate::voice::VoiceSpec;
use crate::words::phonemize_words;

use super::RenderError;

/// One sentence to speak.
#[derive(Debug, Clone, PartialEq)]
pub struct SentencePlan {
    /// The author's words (stage directions removed), for captions.
    pub caption: String,
    /// Phonemes for Kokoro (one pass, split only beyond its input limit).
    pub phonemes: String,
    pub speed: f32,
    /// Its words, in order.
    pub words: Vec<PlannedWord>,
}

/// A word of a sentence, as planned: see [`crate::words`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedWord {
    /// As the author wrote it (`$4.1 billion` is one word; a lexicon respelling is not shown).
    pub text: String,
    /// Character range of its phonemes in [`SentencePlan::phonemes`].
    pub phonemes: Range<usize>,
    /// Where it is in the script (the turn's position when it cannot be found there).
    pub at: Position,
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
    let source: Vec<&str> = episode.text.split('\n').collect();
    episode
        .lines
        .iter()
        .enumerate()
        .map(|(index, line)| plan_line(episode, &source, index, line))
        .collect()
}

fn plan_line(
    episode: &Episode,
    source: &[&str],
    index: usize,
    line: &Line,
) -> Result<LinePlan, RenderError> {
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
    let mut finder = WordFinder::new(source, line);
    let mut flush = |run: &mut Run, speed: f32, steps: &mut Vec<Step>| {
        flush(run, speed, language, steps, episode, line, &mut finder)
    };
    for piece in &line.pieces {
        match piece {
            Piece::Text { text } => run.push_text(text),
            Piece::Direction { text } if keep => run.push_text(text),
            Piece::Direction { .. } => run.push_text(" "),
            Piece::Phonemes { text, ipa } => run.push_ipa(text, ipa),
            Piece::Respelled { text, said } => run.push_respelled(text, said),
            Piece::Pause { secs } => {
                flush(&mut run, speed, &mut steps)?;
                if steps.is_empty() {
                    *lead_pause.get_or_insert(0.0) += secs.max(0.0);
                } else {
                    steps.push(Step::Silence(secs.max(0.0)));
                }
            }
            Piece::Rate { rate } => {
                flush(&mut run, speed, &mut steps)?;
                speed = *rate;
            }
        }
    }
    flush(&mut run, speed, &mut steps)?;
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
    /// Byte ranges of `text` holding a lexicon respelling, and the word the author wrote.
    respelled: Vec<(Range<usize>, String)>,
}

impl Run {
    fn push_text(&mut self, s: &str) {
        self.text.push_str(s);
    }

    fn push_ipa(&mut self, word: &str, ipa: &str) {
        self.text.push(placeholder(self.ipa.len()));
        let ipa = ipa.split_whitespace().collect::<Vec<_>>().join(" ");
        self.ipa.push((word.to_owned(), ipa));
    }

    /// The respelling is read in place, among its neighbours, as it always was; only captions
    /// and word timing put the author's word back.
    fn push_respelled(&mut self, word: &str, said: &str) {
        let start = self.text.len();
        self.text.push_str(said);
        self.respelled
            .push((start..self.text.len(), word.to_owned()));
    }

    /// The author's word for a respelled stretch overlapping `range` of `text`.
    fn author_word(&self, range: &Range<usize>) -> Option<(&Range<usize>, &str)> {
        self.respelled
            .iter()
            .find(|(r, _)| r.start < range.end && range.start < r.end)
            .map(|(r, w)| (r, w.as_str()))
    }
}

fn flush(
    run: &mut Run,
    speed: f32,
    language: Language,
    steps: &mut Vec<Step>,
    episode: &Episode,
    line: &Line,
    finder: &mut WordFinder<'_>,
) -> Result<(), RenderError> {
    let run = std::mem::take(run);
    if run.text.trim().is_empty() {
        return Ok(());
    }
    let speed = speed.clamp(*SPEED_RANGE.start(), *SPEED_RANGE.end());
    for range in text::split_sentences(&run.text) {
        let caption = caption_of(&run, range.clone());
        let (phonemes, words) =
            phonemize_sentence(&run, range, language).map_err(|e| RenderError::Script {
                at: episode.locate(line.position),
                message: format!("cannot phonemize \"{}\": {e}", excerpt(&caption)),
            })?;
        if phonemes.chars().any(char::is_alphabetic) {
            let words = words
                .into_iter()
                .map(|(text, phonemes)| PlannedWord {
                    at: finder.find(&text),
                    text,
                    phonemes,
                })
                .collect();
            steps.push(Step::Speak(SentencePlan {
                caption,
                phonemes,
                speed,
                words,
            }));
        }
    }
    Ok(())
}

/// The sentence `range` of the run as the author wrote it: pronunciation placeholders and
/// respellings back to their words.
fn caption_of(run: &Run, range: Range<usize>) -> String {
    let mut out = String::with_capacity(range.len());
    let mut at = range.start;
    while at < range.end {
        if let Some((r, word)) = run.author_word(&(at..at + 1)) {
            out.push_str(word);
            at = r.end.max(at + 1);
            continue;
        }
        let Some(c) = run.text[at..].chars().next() else {
            break;
        };
        match placeholder_index(c).and_then(|k| run.ipa.get(k)) {
            Some((word, _)) => out.push_str(word),
            None => out.push(c),
        }
        at += c.len_utf8();
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Written words and the character ranges of the phonemes that say them.
type WordPhonemes = Vec<(String, Range<usize>)>;

/// Normalises and phonemizes the sentence `range` of the run around placeholders, splices the
/// given IPA in, and says which phonemes (a character range) each written word became.
fn phonemize_sentence(
    run: &Run,
    range: Range<usize>,
    language: Language,
) -> Result<(String, WordPhonemes), crate::phonemes::PhonemeError> {
    let mut out = Assembly::default();
    let mut from = range.start;
    for (i, c) in run.text[range.clone()].char_indices() {
        let at = range.start + i;
        if let Some((word, pron)) = placeholder_index(c).and_then(|k| run.ipa.get(k)) {
            out.say(run, from..at, language)?;
            let base = out.push(pron);
            out.words
                .push((word.clone(), base..base + pron.chars().count()));
            out.last_respelled = None;
            from = at + c.len_utf8();
        }
    }
    out.say(run, from..range.end, language)?;
    Ok((out.phonemes, out.words))
}

/// A sentence's phonemes as they are put together, piece by piece.
#[derive(Default)]
struct Assembly {
    phonemes: String,
    /// Characters in `phonemes`.
    chars: usize,
    words: WordPhonemes,
    /// The respelled range the last word came from, if it came from one.
    last_respelled: Option<Range<usize>>,
}

impl Assembly {
    /// Appends a piece after a space; returns the character where it starts.
    fn push(&mut self, p: &str) -> usize {
        if !self.phonemes.is_empty() {
            self.phonemes.push(' ');
            self.chars += 1;
        }
        let base = self.chars;
        self.phonemes.push_str(p);
        self.chars += p.chars().count();
        base
    }

    /// Phonemizes the run's text in `range` (no placeholder inside) and records its words.
    fn say(
        &mut self,
        run: &Run,
        range: Range<usize>,
        language: Language,
    ) -> Result<(), crate::phonemes::PhonemeError> {
        let fragment = &run.text[range.clone()];
        if !fragment.chars().any(char::is_alphanumeric) {
            // Punctuation alone ("," after a pronounced word) still shapes the prosody.
            let punct: String = crate::segments::speakable_text(fragment)
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect();
            if !self.phonemes.is_empty() {
                self.phonemes.push_str(&punct);
                self.chars += punct.chars().count();
            }
            return Ok(());
        }
        let (p, spans) = phonemize_words(fragment, language)?;
        let trimmed = p.trim();
        if trimmed.is_empty() {
            return Ok(());
        }
        let lead = p[..p.len() - p.trim_start().len()].chars().count();
        let base = self.push(trimmed);
        for span in spans {
            let source = range.start + span.source.start..range.start + span.source.end;
            let phon = base + span.phonemes.start.saturating_sub(lead)
                ..base + span.phonemes.end.saturating_sub(lead);
            let respelled = run.author_word(&source);
            match (respelled, self.words.last_mut()) {
                // A respelling said as several words is one written word.
                (Some((r, _)), Some((_, p))) if self.last_respelled.as_ref() == Some(r) => {
                    p.end = phon.end;
                }
                (Some((_, word)), _) => self.words.push((word.to_owned(), phon)),
                (None, _) => self.words.push((span.text, phon)),
            }
            self.last_respelled = respelled.map(|(r, _)| r.clone());
        }
        Ok(())
    }
}

/// Finds each word of a turn in the script, in order: its line and column. Words are searched
/// from where the last one was found, within the turn's own lines; one that cannot be found
/// (text the parser rewrote) gets the place of the word before it, or the turn's start.
struct WordFinder<'a> {
    lines: Vec<(usize, &'a str)>,
    /// Index into `lines` and byte offset in that line where the search goes on.
    line: usize,
    byte: usize,
    last: Position,
}

impl<'a> WordFinder<'a> {
    fn new(source: &[&'a str], turn: &Line) -> Self {
        let mut numbers = turn.source_lines.clone();
        numbers.sort_unstable();
        numbers.dedup();
        let lines = numbers
            .into_iter()
            .filter_map(|n| Some((n, *source.get(n.checked_sub(1)?)?)))
            .collect();
        Self {
            lines,
            line: 0,
            byte: 0,
            last: turn.position,
        }
    }

    fn find(&mut self, word: &str) -> Position {
        let probe = word.split_whitespace().next().unwrap_or(word);
        if probe.is_empty() {
            return self.last;
        }
        for k in self.line..self.lines.len() {
            let (number, text) = self.lines[k];
            let from = if k == self.line { self.byte } else { 0 };
            let Some(hit) = text.get(from..).and_then(|t| t.find(probe)) else {
                continue;
            };
            let at = from + hit;
            self.line = k;
            self.byte = at + probe.len();
            self.last = Position::new(number, text[..at].chars().count() + 1);
            return self.last;
        }
        self.last
    }
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
    use crate::phonemes::Phonemizer;

    #[test]
    fn captions_restore_pronounced_and_respelled_words() {
        let mut run = Run::default();
        run.push_text("I love ");
        run.push_ipa("Kokoro", "kˈOkəɹO");
        run.push_text("  and ");
        run.push_respelled("Nguyen", "win");
        run.push_text(" a lot.");
        assert_eq!(
            caption_of(&run, 0..run.text.len()),
            "I love Kokoro and Nguyen a lot."
        );
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
    fn words_keep_the_authors_spelling_and_place() {
        let mut e = Episode::parse(
            "t.txt",
            "Ann: Ask Nguyen about\n  [Kokoro](/kˈOkəɹO/) and $4.1 billion.\n",
            &crate::script::ParseOptions::default(),
        )
        .expect("parse");
        e.apply_lexicon(&crate::script::Lexicon::parse("lex", "Nguyen: win").expect("lexicon"));
        let p = plan_episode(&e).expect("plan");
        let s = speaks(&p[0]);
        let words: Vec<(&str, usize, usize)> = s[0]
            .words
            .iter()
            .map(|w| (w.text.as_str(), w.at.line, w.at.column))
            .collect();
        assert_eq!(
            words,
            [
                ("Ask", 1, 6),
                ("Nguyen", 1, 10),
                ("about", 1, 17),
                ("Kokoro", 2, 4),
                ("and", 2, 23),
                ("$4.1 billion", 2, 27)
            ]
        );
        // Each word's phonemes are its own, in order.
        let chars: Vec<char> = s[0].phonemes.chars().collect();
        let said = |k: usize| {
            chars[s[0].words[k].phonemes.clone()]
                .iter()
                .collect::<String>()
        };
        assert_eq!(said(3), "kˈOkəɹO");
        assert!(said(1).starts_with('w'), "{}", said(1));
        assert!(s[0]
            .words
            .windows(2)
            .all(|w| w[0].phonemes.end <= w[1].phonemes.start));
    }

    #[test]
    fn a_respelling_said_as_two_words_is_one_word_and_two_of_them_are_two() {
        let mut run = Run::default();
        run.push_text("Ask ");
        run.push_respelled("Siobhan", "shiv awn");
        run.push_text(" ");
        run.push_respelled("Siobhan", "shiv awn");
        run.push_text(".");
        let (_, words) = phonemize_sentence(&run, 0..run.text.len(), Language::EnUs).unwrap();
        let written: Vec<&str> = words.iter().map(|(w, _)| w.as_str()).collect();
        assert_eq!(written, ["Ask", "Siobhan", "Siobhan"]);
        assert!(words.windows(2).all(|w| w[0].1.end <= w[1].1.start));
    }

    #[test]
    fn placeholders_round_trip() {
        for k in [0, 1, 77, 5000] {
            assert_eq!(placeholder_index(placeholder(k)), Some(k));
        }
        assert_eq!(placeholder_index('a'), None);
    }
}
