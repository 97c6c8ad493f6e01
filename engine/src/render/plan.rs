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
use crate::script::{Episode, Line, Piece, Position, SoundCue};
use crate::speech::SPEED_RANGE;
use crate::text;
use crate::voice::{PiperVoice, VoiceSpec};
use crate::words::phonemize_words;
use std::sync::Arc;

use super::RenderError;

mod sounds;

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
    /// Cues written among its words: each plays when its word starts.
    pub sounds: Vec<InlineSound>,
}

/// A cue written among a sentence's words (`the door [sound: creak.wav] opened`).
#[derive(Debug, Clone, PartialEq)]
pub struct InlineSound {
    /// Index into [`SentencePlan::words`] of the word it plays at: the first written after it.
    pub word: usize,
    pub cue: SoundCue,
}

/// A cue between a line's sentences: alone on its line (speech waits for a sound), or written
/// after the last word of a stretch of speech (it plays there and speech goes on).
#[derive(Debug, Clone, PartialEq)]
pub struct SoundStep {
    pub cue: SoundCue,
    /// Seconds speech waits once a sound alone on its line starts: its length less its
    /// overlap, known once the file is found and measured ([`super::mix::resolve`](fn@super::mix::resolve)); `None`
    /// before then and for beds (the studio's playback and the API place no sound).
    pub wait: Option<f32>,
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
    /// A sound cue.
    Sound(SoundStep),
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
                Step::Silence(_) | Step::Sound(_) => 0,
            })
            .sum()
    }

    /// Nothing to place: no words and no sound (a line of stage directions).
    #[must_use]
    pub fn is_silent(&self) -> bool {
        !self
            .steps
            .iter()
            .any(|s| matches!(s, Step::Speak(_) | Step::Sound(_)))
    }

    /// Whether the line says anything (a line may only hold sound cues).
    #[must_use]
    pub fn speaks(&self) -> bool {
        self.steps.iter().any(|s| matches!(s, Step::Speak(_)))
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
    plan_episode_with(episode, &|_| None)
}

/// [`plan_episode`] for a cast that may hold Piper voices: `piper` gives the registered voice
/// a spec names (the engine's, [`crate::Engine::piper_voice`]), whose lines are read as
/// piper-tts reads them.
pub fn plan_episode_with(
    episode: &Episode,
    piper: &dyn Fn(&VoiceSpec) -> Option<Arc<PiperVoice>>,
) -> Result<Vec<LinePlan>, RenderError> {
    let source: Vec<&str> = episode.text.split('\n').collect();
    episode
        .lines
        .iter()
        .enumerate()
        .map(|(index, line)| plan_line(episode, &source, index, line, piper))
        .collect()
}

/// How a line's sentences become phonemes.
#[derive(Clone)]
enum Reader {
    /// Banter's pipeline in the voice's language (Kokoro).
    Kokoro(Language),
    /// piper-tts's pipeline for this voice.
    Piper(Arc<PiperVoice>),
}

fn plan_line(
    episode: &Episode,
    source: &[&str],
    index: usize,
    line: &Line,
    piper: &dyn Fn(&VoiceSpec) -> Option<Arc<PiperVoice>>,
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
    let reader = match spec.piper_key() {
        Some(key) => Reader::Piper(piper(&spec).ok_or_else(|| RenderError::Script {
            at: episode.locate(line.position),
            message: format!(
                "the voice of {} is a Piper voice ({key}) this engine does not know; add it with `banter voices add`",
                member.name
            ),
        })?),
        None => Reader::Kokoro(spec.language()),
    };
    let base_speed = member.speed.or(episode.settings.speed).unwrap_or(1.0);
    let keep = episode.settings.keep_stage_directions;

    let mut steps = Vec::new();
    let mut lead_pause = None;
    let mut speed = base_speed;
    let mut run = Run::default();
    let mut finder = WordFinder::new(source, line);
    // Cues among the words, waiting for the sentence that holds the word after them.
    let mut inline: Vec<SoundCue> = Vec::new();
    let mut flush =
        |run: &mut Run, speed: f32, steps: &mut Vec<Step>, inline: &mut Vec<SoundCue>| {
            let from = steps.len();
            flush(run, speed, &reader, steps, episode, line, &mut finder)?;
            sounds::attach_inline(steps, from, inline);
            Ok::<(), RenderError>(())
        };
    for piece in &line.pieces {
        match piece {
            Piece::Text { text } => run.push_text(text),
            Piece::Direction { text } if keep => run.push_text(text),
            Piece::Direction { .. } => run.push_text(" "),
            Piece::Phonemes { text, ipa } => run.push_ipa(text, ipa),
            Piece::Respelled { text, said } => run.push_respelled(text, said),
            Piece::Pause { secs } => {
                flush(&mut run, speed, &mut steps, &mut inline)?;
                if steps.is_empty() {
                    *lead_pause.get_or_insert(0.0) += secs.max(0.0);
                } else {
                    steps.push(Step::Silence(secs.max(0.0)));
                }
            }
            Piece::Rate { rate } => {
                flush(&mut run, speed, &mut steps, &mut inline)?;
                speed = *rate;
            }
            Piece::Sound { cue } if cue.alone => {
                flush(&mut run, speed, &mut steps, &mut inline)?;
                steps.push(Step::Sound(SoundStep {
                    cue: cue.clone(),
                    wait: None,
                }));
            }
            Piece::Sound { cue } => inline.push(cue.clone()),
        }
    }
    flush(&mut run, speed, &mut steps, &mut inline)?;
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
    reader: &Reader,
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
        let cannot = |e: &dyn std::fmt::Display| RenderError::Script {
            at: episode.locate(line.position),
            message: format!("cannot phonemize \"{}\": {e}", excerpt(&caption)),
        };
        let (phonemes, words) = match reader {
            Reader::Kokoro(language) => {
                phonemize_sentence(&run, range, *language).map_err(|e| cannot(&e))?
            }
            // piper-tts reads the author's words; its sentences of one of ours are one pass,
            // and its words are runs between spaces mapped onto its phonemes.
            Reader::Piper(voice) => {
                let (phonemes, words) =
                    crate::segments::piper_words(&caption, voice).map_err(|e| cannot(&e))?;
                let words = words.into_iter().map(|w| (w.text, w.phonemes)).collect();
                (phonemes, words)
            }
        };
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
                sounds: Vec::new(),
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
mod tests;
