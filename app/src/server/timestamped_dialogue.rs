//! The characters of ElevenLabs' text to dialogue, timed: all at once for
//! `POST /v1/text-to-dialogue/with-timestamps` ([`timestamps`]) and as the audio is made for
//! `…/stream/with-timestamps` ([`DialogueLines`], the lines of a
//! [`TimestampedBody`](super::timestamped::TimestampedBody)).
//!
//! Why one module for both: the characters are the inputs' texts concatenated as sent (audio
//! tags included), and both answers find each spoken word in its own input, in order, as
//! written ([`InputText`]), then spread the words' times over the characters
//! ([`engine::follow::char_times`]); the two answers must never disagree on where a word is.
//!
//! Streaming: the dialogue driver sends each sentence's cue (its words on the timeline) before
//! its audio, so the characters up to a sentence's last word are timed when its cue arrives
//! (those between two sentences share the silence between them) and held until the audio sent
//! reaches their start: a character is never ahead of its audio, and each goes once, in order.
//! The characters after the last word (a closing quote, a trailing tag) go with the last line.
//! An input's voice segment goes with the first line after its last sentence's audio, when its
//! end is known; every line carries `voice_segments`, most of them empty.

use std::ops::Range;

use engine::follow::{char_times, CharTime};
use engine::render::LineMark;
use engine::words::TimedWord;
use engine::SAMPLE_RATE;

use super::backend::DialogueEvent;
use super::routes::elevenlabs::alignment_json;
use super::timestamped::{line_json, to_line, Chars, Lines, Step};
use super::ws::ElevenLabsEncoder;

/// A word's characters in the concatenated text, and its start and end in samples.
type Span = (Range<usize>, u64, u64);

/// The inputs' texts as the client sent them, and where the next word of each is looked for.
pub(crate) struct InputText {
    /// Each input's text and voice id.
    inputs: Vec<(String, String)>,
    /// Each input's first character in the concatenation.
    offsets: Vec<usize>,
    /// Bytes into each input: its words are found in order.
    cursors: Vec<usize>,
}

impl InputText {
    pub fn new(inputs: Vec<(String, String)>) -> Self {
        let mut offsets = Vec::with_capacity(inputs.len());
        let mut chars = 0usize;
        for (text, _) in &inputs {
            offsets.push(chars);
            chars += text.chars().count();
        }
        let cursors = vec![0; inputs.len()];
        Self {
            inputs,
            offsets,
            cursors,
        }
    }

    /// The inputs' texts, concatenated.
    pub fn text(&self) -> String {
        self.inputs.iter().map(|(t, _)| t.as_str()).collect()
    }

    /// The input a script line came from: one turn a line after the opening `[`.
    fn input_of(&self, source_line: usize) -> Option<usize> {
        source_line
            .checked_sub(2)
            .filter(|&i| i < self.inputs.len())
    }

    /// `words`, spoken in the input at `source_line`, found in its text in order from where the
    /// last found one ended. A word not found (nothing should be) is left out: its characters
    /// share the time around them.
    pub fn locate(&mut self, source_line: usize, words: &[TimedWord]) -> Vec<Span> {
        let Some(index) = self.input_of(source_line) else {
            return Vec::new();
        };
        let input = &self.inputs[index].0;
        let at_sample = |secs: f64| (secs.max(0.0) * f64::from(SAMPLE_RATE)).round() as u64;
        let mut spans = Vec::with_capacity(words.len());
        for word in words {
            let cursor = self.cursors[index];
            let Some(found) = input[cursor..].find(word.word.as_str()) else {
                continue;
            };
            let byte = cursor + found;
            let first = self.offsets[index] + input[..byte].chars().count();
            let range = first..first + word.word.chars().count();
            spans.push((range, at_sample(word.start), at_sample(word.end)));
            self.cursors[index] = byte + word.word.len();
        }
        spans
    }

    /// ElevenLabs' voice segment for a spoken line: its input, voice id, time and characters.
    pub fn segment(&self, mark: &LineMark) -> Option<serde_json::Value> {
        let index = self.input_of(mark.source_line)?;
        let (text, voice_id) = &self.inputs[index];
        Some(serde_json::json!({
            "voice_id": voice_id,
            "start_time_seconds": mark.start,
            "end_time_seconds": mark.end,
            "character_start_index": self.offsets[index],
            "character_end_index": self.offsets[index] + text.chars().count(),
            "dialogue_input_index": index,
        }))
    }
}

/// The characters of the inputs' texts, concatenated, timed from each line's words, and a voice
/// segment per spoken input. An input with nothing spoken (only an audio tag) has no segment;
/// its characters share the time around them.
pub(crate) fn timestamps(
    inputs: Vec<(String, String)>,
    marks: &[LineMark],
    samples: usize,
) -> (serde_json::Value, Vec<serde_json::Value>) {
    let mut text = InputText::new(inputs);
    let mut spans = Vec::new();
    let mut segments = Vec::new();
    for mark in marks {
        spans.extend(text.locate(mark.source_line, &mark.words));
        segments.extend(text.segment(mark));
    }
    let times = char_times(&text.text(), &spans, 0, samples as u64);
    (alignment_json(&times), segments)
}

/// The dialogue driver's events as `…/stream/with-timestamps` lines (see the module docs).
pub(crate) struct DialogueLines {
    encoder: ElevenLabsEncoder,
    text: InputText,
    all: Vec<char>,
    held: Chars,
    /// Characters timed so far, and the sample their times reach.
    timed: usize,
    timed_to: u64,
    /// Voice segments of lines whose audio is out, not yet sent.
    segments: Vec<serde_json::Value>,
}

impl DialogueLines {
    pub fn new(encoder: ElevenLabsEncoder, inputs: Vec<(String, String)>) -> Self {
        let text = InputText::new(inputs);
        let all = text.text().chars().collect();
        Self {
            encoder,
            text,
            all,
            held: Chars::default(),
            timed: 0,
            timed_to: 0,
            segments: Vec::new(),
        }
    }

    /// Times the characters from the last timed one to the end of `spans`' last word (or to the
    /// end of the text at `end`), and holds them for their audio.
    fn time_up_to(&mut self, spans: &[Span], end: Option<u64>) {
        let (upto, until) = match (spans.last(), end) {
            (_, Some(end)) => (self.all.len(), end),
            (Some((range, _, word_end)), None) => (range.end, *word_end),
            (None, None) => return,
        };
        if upto <= self.timed {
            return;
        }
        let piece: String = self.all[self.timed..upto].iter().collect();
        let shift = self.timed;
        let relative: Vec<Span> = spans
            .iter()
            .filter(|(range, ..)| range.start >= shift)
            .map(|(range, s, e)| (range.start - shift..range.end - shift, *s, *e))
            .collect();
        let times = char_times(&piece, &relative, self.timed_to, until.max(self.timed_to));
        self.timed_to = times.last().map_or(self.timed_to, |c| c.end);
        self.timed = upto;
        self.held.hold(times);
    }

    fn line(&mut self, audio: &[u8], chars: &[CharTime]) -> Vec<u8> {
        if audio.is_empty() && chars.is_empty() && self.segments.is_empty() {
            return Vec::new();
        }
        let mut value = line_json(audio, chars);
        value["voice_segments"] = serde_json::Value::Array(std::mem::take(&mut self.segments));
        to_line(&value)
    }
}

impl Lines for DialogueLines {
    type Event = DialogueEvent;

    fn step(&mut self, event: DialogueEvent) -> Result<Step, String> {
        let (audio, chars, last) = match event {
            DialogueEvent::Sentence { cue, .. } => {
                let spans = self.text.locate(cue.source_line, &cue.words);
                self.time_up_to(&spans, None);
                return Ok(Step {
                    bytes: Vec::new(),
                    last: false,
                });
            }
            DialogueEvent::Line(mark) => {
                self.segments.extend(self.text.segment(&mark));
                return Ok(Step {
                    bytes: Vec::new(),
                    last: false,
                });
            }
            DialogueEvent::Audio { samples, .. } => {
                let chars = self.held.chunk(samples.len(), Vec::new(), false);
                (self.encoder.encode(&samples), chars, false)
            }
            DialogueEvent::Done { .. } => {
                self.time_up_to(&[], Some(self.held.samples));
                (self.encoder.finish(), self.held.finish(), true)
            }
            DialogueEvent::Failed(e) => return Err(e.to_string()),
        };
        let audio = audio.map_err(|e| format!("encoding: {e}"))?;
        Ok(Step {
            bytes: self.line(&audio, &chars),
            last,
        })
    }

    fn samples(&self) -> u64 {
        self.held.samples
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::ws::ElevenLabsFormat;
    use engine::render::Cue;

    fn word(w: &str, start: f64, end: f64) -> TimedWord {
        TimedWord {
            word: w.to_owned(),
            start,
            end,
            source_line: 0,
            source_column: 0,
        }
    }

    fn mark(source_line: usize, start: f64, end: f64, words: Vec<TimedWord>) -> LineMark {
        LineMark {
            line: 0,
            speaker: String::new(),
            voice: String::new(),
            start,
            end,
            source_line,
            words,
        }
    }

    fn inputs() -> Vec<(String, String)> {
        vec![
            ("Hi, Ann.".to_owned(), "af_heart".to_owned()),
            ("[laughs]".to_owned(), "am_adam".to_owned()),
            ("Hello \"you\".".to_owned(), "am_adam".to_owned()),
        ]
    }

    fn marks() -> [LineMark; 2] {
        [
            mark(
                2,
                0.0,
                1.0,
                vec![word("Hi", 0.1, 0.4), word("Ann", 0.5, 0.9)],
            ),
            mark(
                4,
                1.5,
                2.5,
                vec![word("Hello", 1.6, 2.0), word("you", 2.1, 2.4)],
            ),
        ]
    }

    fn strings(value: &serde_json::Value) -> String {
        value
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect()
    }

    fn numbers(value: &serde_json::Value) -> Vec<f64> {
        value
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_f64().unwrap())
            .collect()
    }

    #[test]
    fn timestamps_place_each_word_in_its_input_and_skip_unspoken_inputs() {
        let (alignment, segments) = timestamps(inputs(), &marks(), 60_000);
        assert_eq!(
            strings(&alignment["characters"]),
            "Hi, Ann.[laughs]Hello \"you\"."
        );
        let starts = numbers(&alignment["character_start_times_seconds"]);
        // `H` of Hi at 0.1 s, `A` of Ann (index 4) at 0.5 s, `y` of you (index 23) at 2.1 s.
        assert_eq!((starts[0], starts[4], starts[23]), (0.1, 0.5, 2.1));
        let indexed: Vec<(u64, u64, u64)> = segments
            .iter()
            .map(|s| {
                let n = |k: &str| s[k].as_u64().unwrap();
                (
                    n("dialogue_input_index"),
                    n("character_start_index"),
                    n("character_end_index"),
                )
            })
            .collect();
        assert_eq!(indexed, [(0, 0, 8), (2, 16, 28)]);
    }

    /// The driver's events for `marks()`: each line's cue, its audio in two chunks (the silence
    /// before it included), then its mark.
    fn events() -> Vec<DialogueEvent> {
        let mut out = Vec::new();
        let mut at = 0usize;
        for m in marks() {
            out.push(DialogueEvent::Sentence {
                cue: Cue {
                    start: m.start,
                    end: m.end,
                    speaker: String::new(),
                    text: String::new(),
                    line: 0,
                    source_line: m.source_line,
                    words: m.words.clone(),
                },
                voice: String::new(),
            });
            let end = (m.end * f64::from(SAMPLE_RATE)) as usize;
            let middle = usize::midpoint(at, end);
            for (from, to) in [(at, middle), (middle, end)] {
                out.push(DialogueEvent::Audio {
                    samples: vec![0.0; to - from],
                    start: from as f64 / f64::from(SAMPLE_RATE),
                });
            }
            at = end;
            out.push(DialogueEvent::Line(m));
        }
        out.push(DialogueEvent::Done {
            lines: 2,
            sentences: 2,
            duration: at as f64 / f64::from(SAMPLE_RATE),
        });
        out
    }

    #[test]
    fn streamed_characters_go_once_in_order_never_ahead_of_their_audio_as_the_whole_answer() {
        let format = ElevenLabsFormat::parse("pcm_24000").unwrap();
        let mut lines = DialogueLines::new(ElevenLabsEncoder::new(format).unwrap(), inputs());
        let (mut chars, mut starts, mut ends, mut segments) =
            (String::new(), Vec::new(), Vec::new(), Vec::new());
        let mut sent = 0f64;
        let mut count = 0;
        let mut finished = false;
        for event in events() {
            let step = lines.step(event).expect("no failure");
            finished |= step.last;
            if step.bytes.is_empty() {
                continue;
            }
            count += 1;
            let v: serde_json::Value = serde_json::from_slice(&step.bytes).expect("one JSON line");
            assert_eq!(
                step.bytes.iter().position(|&b| b == b'\n'),
                Some(step.bytes.len() - 1)
            );
            sent += v["audio_base64"].as_str().unwrap().len() as f64 * 3.0
                / 4.0
                / 2.0
                / f64::from(SAMPLE_RATE);
            segments.extend(
                v["voice_segments"]
                    .as_array()
                    .expect("always a list")
                    .clone(),
            );
            if v["alignment"].is_null() {
                continue;
            }
            let these = numbers(&v["alignment"]["character_start_times_seconds"]);
            if !step.last {
                assert!(
                    these.iter().all(|&s| s < sent + 1e-3),
                    "{these:?} ahead of {sent} s of audio"
                );
            }
            chars.push_str(&strings(&v["alignment"]["characters"]));
            starts.extend(these);
            ends.extend(numbers(&v["alignment"]["character_end_times_seconds"]));
        }
        assert!(finished, "the last line says so");
        assert!(
            count >= 4,
            "the characters came with the audio, not at the end"
        );
        let (whole, whole_segments) = timestamps(inputs(), &marks(), 60_000);
        assert_eq!(
            chars,
            strings(&whole["characters"]),
            "each character once, in order"
        );
        assert!(starts.windows(2).all(|w| w[0] <= w[1]));
        assert!(starts.iter().zip(&ends).all(|(s, e)| s <= e));
        assert_eq!(
            ends.last().copied(),
            Some(2.5),
            "the last ends with the audio"
        );
        // The words start where the whole answer puts them.
        let whole_starts = numbers(&whole["character_start_times_seconds"]);
        for i in [0, 4, 16, 23] {
            assert!((starts[i] - whole_starts[i]).abs() < 1e-9, "character {i}");
        }
        assert_eq!(segments, whole_segments);
    }
}
