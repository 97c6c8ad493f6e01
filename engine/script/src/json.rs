//! JSON scripts, for programs that generate episodes.
//!
//! Two shapes: an array of turns, `[{"speaker": "Alice", "text": "Hi"}, ...]` (what most LLM
//! pipelines emit), or an episode object with settings and a cast:
//!
//! ```json
//! {"title": "Morning Brief", "settings": {"speed": 1.05, "gap": 0.4},
//!  "cast": {"Alice": "af_heart", "Bob": {"voice": "am_michael", "speed": 1.1}},
//!  "lines": [{"chapter": "Headlines"}, {"speaker": "Alice", "text": "Good morning."}]}
//! ```
//!
//! A turn may carry its own `"voice"` and `"speed"`; `{"chapter": ...}` and `{"direction": ...}`
//! items mark chapters and stage directions. Positions are those of each item's opening brace
//! (found through borrowed raw values, so the file is read once); a directive error inside a
//! turn's text is reported at its item.

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::marker::PhantomData;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::cast::{parse_voice_value, speaker_key, CastEntry, VoiceValueError};
use super::draft::Draft;
use super::error::{ScriptError, ScriptErrorKind};
use super::model::{LineKind, Position, Warning};
use super::pieces::{parse_pause, TextStyle, WRITTEN_SPEED_RANGE};
use super::source::TextSpan;

/// Maps byte offsets of the JSON text to positions in the file.
///
/// Offsets are asked for in increasing order (items in file order), so the last answer is kept
/// and the next column is counted on from it: a minified file with every item on one long line
/// still costs linear time.
struct Locator<'a> {
    text: &'a str,
    base: Position,
    /// Byte offset where each line starts.
    line_starts: Vec<usize>,
    /// The last answer: (offset, line index, column).
    last: Cell<(usize, usize, usize)>,
}

impl<'a> Locator<'a> {
    fn new(text: &'a str, base: Position) -> Self {
        let bytes = text.as_bytes();
        let mut line_starts = vec![0];
        for (i, &b) in bytes.iter().enumerate() {
            if (b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n')))
                && i + 1 < bytes.len()
            {
                line_starts.push(i + 1);
            }
        }
        Self {
            text,
            base,
            line_starts,
            last: Cell::new((0, 0, 1)),
        }
    }

    fn at(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let k = self
            .line_starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1);
        let start = self.line_starts[k];
        let (last_offset, last_k, last_column) = self.last.get();
        let (from, column) = if last_k == k && last_offset <= offset && last_offset >= start {
            (last_offset, last_column)
        } else {
            (start, 1)
        };
        // Line ends are not columns: an offset on one counts as the end of its line.
        let column = column
            + self.text[from..offset]
                .chars()
                .filter(|&c| c != '\n' && c != '\r')
                .count();
        self.last.set((offset, k, column));
        if k == 0 {
            Position::new(self.base.line, self.base.column + column - 1)
        } else {
            Position::new(self.base.line + k, column)
        }
    }

    /// The position of the last character of `raw`.
    fn end_of(&self, raw: &RawValue) -> Position {
        let offset = (raw.get().as_ptr() as usize).saturating_sub(self.text.as_ptr() as usize);
        self.at(offset + raw.get().len().saturating_sub(1))
    }

    fn of(&self, raw: &RawValue) -> Position {
        let offset = (raw.get().as_ptr() as usize).saturating_sub(self.text.as_ptr() as usize);
        self.at(offset)
    }

    /// `serde_json`'s 1-based line (counting `\n` only) and byte column.
    fn of_serde(&self, line: usize, column: usize) -> Position {
        let mut start = 0;
        for _ in 1..line {
            match self.text[start..].find('\n') {
                Some(i) => start += i + 1,
                None => break,
            }
        }
        self.at(start + column.saturating_sub(1))
    }
}

/// A JSON object's members in order, duplicates kept (a cast naming someone twice must be seen).
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct MembersVisitor<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for MembersVisitor<'a> {
            type Value = Members<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Members<'a>, M::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, &'de RawValue>()? {
                    out.push((k, v));
                }
                Ok(Members(out))
            }
        }
        d.deserialize_map(MembersVisitor(PhantomData))
    }
}

/// Keys a transcript's segments carry beside the speech (Whisper's, `WhisperX`'s, `AssemblyAI`'s,
/// a diarizer's): timings and scores, which a rendering makes anew, so they are not speech.
const TRANSCRIPT_KEYS: &[&str] = &[
    "start",
    "end",
    "start_time",
    "end_time",
    "time",
    "timestamp",
    "duration",
    "id",
    "seek",
    "words",
    "tokens",
    "confidence",
    "temperature",
    "avg_logprob",
    "compression_ratio",
    "no_speech_prob",
    "language",
    "channel",
];

#[derive(Deserialize)]
struct Item {
    #[serde(
        alias = "name",
        alias = "role",
        alias = "character",
        alias = "speaker_name",
        alias = "speaker_id"
    )]
    speaker: Option<SpeakerName>,
    #[serde(
        alias = "content",
        alias = "line",
        alias = "utterance",
        alias = "dialogue"
    )]
    text: Option<String>,
    voice: Option<String>,
    speed: Option<f32>,
    chapter: Option<String>,
    direction: Option<String>,
    #[serde(flatten)]
    other: BTreeMap<String, serde_json::Value>,
}

/// A speaker as a name, or as a diarizer's number (`"speaker_id": 0` is "Speaker 0").
#[derive(Deserialize)]
#[serde(untagged)]
enum SpeakerName {
    Name(String),
    Number(u64),
}

impl SpeakerName {
    fn into_name(self) -> String {
        match self {
            SpeakerName::Name(name) => name,
            SpeakerName::Number(n) => format!("Speaker {n}"),
        }
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum JsonVoice {
    Spec(String),
    Full { voice: String, speed: Option<f32> },
}

#[derive(Deserialize)]
struct NamedVoice {
    #[serde(alias = "speaker")]
    name: String,
    voice: String,
    speed: Option<f32>,
}

struct Parser<'a, 'w> {
    file: &'a str,
    loc: Locator<'a>,
    draft: Draft<'a>,
    warnings: &'w mut Vec<Warning>,
    item_voices: HashMap<String, (String, Option<f32>)>,
}

/// Parses `text`, which starts at `base` in the file.
pub(crate) fn parse<'a>(
    file: &'a str,
    text: &'a str,
    base: Position,
    warnings: &mut Vec<Warning>,
) -> Result<Draft<'a>, ScriptError> {
    let mut p = Parser {
        file,
        loc: Locator::new(text, base),
        draft: Draft::new(TextStyle::Plain),
        warnings,
        item_voices: HashMap::new(),
    };
    let root: &RawValue = serde_json::from_str(text).map_err(|e| {
        ScriptError::new(
            file,
            p.loc.of_serde(e.line(), e.column()),
            ScriptErrorKind::Json {
                message: strip_serde_position(&e.to_string()),
            },
        )
    })?;
    match root.get().as_bytes().first() {
        Some(b'[') => p.items(root)?,
        Some(b'{') => p.episode(root)?,
        _ => return Err(p.shape(root, "the top level is neither an array nor an object")),
    }
    Ok(p.draft)
}

/// `serde_json` appends " at line L column C"; we print our own position first.
fn strip_serde_position(message: &str) -> String {
    message
        .rfind(" at line ")
        .map_or(message, |i| &message[..i])
        .to_owned()
}

impl<'a> Parser<'a, '_> {
    fn shape(&self, at: &RawValue, message: &str) -> ScriptError {
        ScriptError::new(
            self.file,
            self.loc.of(at),
            ScriptErrorKind::JsonShape {
                message: message.to_owned(),
            },
        )
    }

    fn read<T: Deserialize<'a>>(&self, raw: &'a RawValue, what: &str) -> Result<T, ScriptError> {
        serde_json::from_str(raw.get()).map_err(|e| {
            self.shape(
                raw,
                &format!("{what}: {}", strip_serde_position(&e.to_string())),
            )
        })
    }

    fn episode(&mut self, root: &'a RawValue) -> Result<(), ScriptError> {
        let Members(members) = self.read(root, "the episode object")?;
        let mut lines = None;
        for (key, value) in members {
            match key.as_str() {
                "lines" | "turns" | "script" | "dialogue" | "dialog" | "transcript"
                | "segments" | "utterances" | "conversation" | "messages" => lines = Some(value),
                "cast" | "voices" | "speakers" => self.cast(value)?,
                "settings" => {
                    let Members(settings) = self.read(value, "\"settings\"")?;
                    for (k, v) in settings {
                        self.setting(&k, v)?;
                    }
                }
                _ => self.setting(&key, value)?,
            }
        }
        match lines {
            Some(lines) => self.items(lines),
            None => Err(self.shape(root, "the object has no \"lines\" array")),
        }
    }

    fn setting(&mut self, key: &str, value: &'a RawValue) -> Result<(), ScriptError> {
        let bad = |this: &Self, expected: &str| {
            ScriptError::new(
                this.file,
                this.loc.of(value),
                ScriptErrorKind::BadSetting {
                    key: key.to_owned(),
                    value: value.get().to_owned(),
                    expected: expected.to_owned(),
                },
            )
        };
        let flag = |this: &Self| -> Result<bool, ScriptError> {
            serde_json::from_str(value.get()).map_err(|_| bad(this, "true or false"))
        };
        match key {
            "title" => {
                self.draft.header.settings.title =
                    Some(serde_json::from_str(value.get()).map_err(|_| bad(self, "a string"))?);
            }
            "speed" => {
                let speed: f32 = serde_json::from_str(value.get())
                    .ok()
                    .filter(|s| WRITTEN_SPEED_RANGE.contains(s))
                    .ok_or_else(|| bad(self, "a number from 0.25 to 4"))?;
                self.draft.header.settings.speed = Some(speed);
            }
            "gap" | "pause_between_turns" => {
                let gap = match serde_json::from_str::<f32>(value.get()) {
                    Ok(secs) => parse_pause(&secs.to_string()),
                    Err(_) => serde_json::from_str::<String>(value.get())
                        .map_err(|e| e.to_string())
                        .and_then(|s| parse_pause(&s)),
                };
                self.draft.header.settings.gap_secs = Some(gap.map_err(|e| bad(self, &e))?);
            }
            "keep_stage_directions" => {
                self.draft.header.settings.keep_stage_directions = flag(self)?;
            }
            "reuse_voices" => self.draft.header.settings.reuse_voices = flag(self)?,
            "any_language_voices" => {
                self.draft.header.settings.any_language_voices = flag(self)?;
            }
            _ => self.warnings.push(Warning {
                position: self.loc.of(value),
                message: format!("unknown key \"{key}\"; ignored"),
            }),
        }
        Ok(())
    }

    fn cast(&mut self, value: &'a RawValue) -> Result<(), ScriptError> {
        if value.get().starts_with('[') {
            let list: Vec<&'a RawValue> = self.read(value, "\"cast\"")?;
            for raw in list {
                let v: NamedVoice = self.read(raw, "a cast entry")?;
                self.add_voice(raw, &v.name, &v.voice, v.speed)?;
            }
            return Ok(());
        }
        let Members(members) = self.read(value, "\"cast\"")?;
        for (name, raw) in members {
            let v: JsonVoice = self.read(raw, &format!("the voice of \"{name}\""))?;
            match v {
                JsonVoice::Spec(spec) => self.add_voice(raw, &name, &spec, None)?,
                JsonVoice::Full { voice, speed } => self.add_voice(raw, &name, &voice, speed)?,
            }
        }
        Ok(())
    }

    fn add_voice(
        &mut self,
        at: &RawValue,
        name: &str,
        spec: &str,
        speed: Option<f32>,
    ) -> Result<(), ScriptError> {
        let position = self.loc.of(at);
        let error = |kind| ScriptError::new(self.file, position, kind);
        let (voice, inline_speed) = parse_voice_value(spec).map_err(|e| match e {
            VoiceValueError::Voice(reason) => error(ScriptErrorKind::BadVoice {
                speaker: name.to_owned(),
                spec: spec.to_owned(),
                reason,
            }),
            VoiceValueError::Speed(value) => error(ScriptErrorKind::BadSpeed {
                speaker: name.to_owned(),
                value,
            }),
        })?;
        if let Some(s) = speed.filter(|s| !WRITTEN_SPEED_RANGE.contains(s)) {
            return Err(error(ScriptErrorKind::BadSpeed {
                speaker: name.to_owned(),
                value: s.to_string(),
            }));
        }
        self.draft.header.entries.push(CastEntry {
            name: name.trim().to_owned(),
            voice,
            speed: speed.or(inline_speed),
            position,
        });
        Ok(())
    }

    fn items(&mut self, list: &'a RawValue) -> Result<(), ScriptError> {
        let items: Vec<&'a RawValue> = self.read(list, "the list of lines")?;
        let mut timed = None;
        for (n, raw) in items.into_iter().enumerate() {
            if !raw.get().starts_with('{') {
                return Err(self.shape(raw, &format!("item {} is not an object", n + 1)));
            }
            let mut item: Item = self.read(raw, &format!("item {}", n + 1))?;
            let position = self.loc.of(raw);
            let last_line = self.loc.end_of(raw).line;
            let before = item.other.len();
            item.other
                .retain(|key, _| !TRANSCRIPT_KEYS.contains(&key.as_str()));
            if item.other.len() < before && timed.is_none() {
                timed = Some(position);
            }
            if let Some(key) = item.other.keys().next() {
                self.warnings.push(Warning {
                    position,
                    message: format!("unknown key \"{key}\" in item {}; ignored", n + 1),
                });
            }
            if let Some(title) = &item.chapter {
                self.draft.chapter(title, position);
            }
            if let Some(text) = &item.direction {
                self.draft.direction(text, position);
            }
            let kind = if item.chapter.is_some() {
                LineKind::Heading
            } else {
                LineKind::Direction
            };
            for line in position.line..=last_line {
                self.draft.classify(line, kind);
            }
            match (item.speaker.map(SpeakerName::into_name), item.text) {
                (Some(speaker), Some(text)) => {
                    if let Some(voice) = item.voice {
                        let key = speaker_key(&speaker);
                        let seen = self.item_voices.get(&key) == Some(&(voice.clone(), item.speed));
                        if !seen {
                            self.item_voices.insert(key, (voice.clone(), item.speed));
                            self.add_voice(raw, &speaker, &voice, item.speed)?;
                        }
                    }
                    self.draft.start_turn(&speaker, position);
                    self.draft.push(TextSpan::decoded(position, text));
                    self.draft.cover_lines(position.line..=last_line);
                    self.draft.end_turn();
                }
                (Some(_), None) => {
                    return Err(self.shape(
                        raw,
                        &format!("item {} has a \"speaker\" but no \"text\"", n + 1),
                    ))
                }
                (None, Some(_)) => {
                    return Err(self.shape(
                        raw,
                        &format!("item {} has a \"text\" but no \"speaker\"", n + 1),
                    ))
                }
                (None, None) if item.chapter.is_none() && item.direction.is_none() => {
                    return Err(self.shape(
                        raw,
                        &format!(
                            "item {} has neither \"speaker\" and \"text\" nor \"chapter\"",
                            n + 1
                        ),
                    ))
                }
                (None, None) => {}
            }
        }
        if let Some(position) = timed {
            self.warnings.push(Warning {
                position,
                message:
                    "the transcript's timings and scores (\"start\", \"end\", \"words\"…) are \
                          not used: the rendering times its own speech"
                        .to_owned(),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Episode, ParseOptions, Position, ScriptErrorKind, ScriptFormat};

    fn parse(text: &str) -> Result<Episode, super::ScriptError> {
        Episode::parse("e.json", text, &ParseOptions::default())
    }

    #[test]
    fn array_of_turns() {
        let e = parse("[\n  {\"speaker\": \"Alice\", \"text\": \"Hi [pause:1s] there.\"},\n  {\"speaker\": \"Bob\", \"text\": \"Hello!\", \"voice\": \"bm_george @1.1\"}\n]").unwrap();
        assert_eq!(e.format, ScriptFormat::Json);
        assert_eq!(e.lines.len(), 2);
        assert_eq!(e.lines[1].position, Position::new(3, 3));
        let bob = e.cast.get("bob").unwrap();
        assert_eq!((bob.voice.as_str(), bob.speed), ("bm_george", Some(1.1)));
    }

    #[test]
    fn other_tools_keys_and_transcript_segments() {
        // A generator's `character`/`line` under `dialogue`.
        let e = parse(r#"{"title": "Ep 1", "dialogue": [{"character": "Ana", "line": "Hi."}, {"character": "Bo", "line": "Yo."}]}"#).unwrap();
        let said: Vec<(String, String)> = e
            .lines
            .iter()
            .map(|l| (l.speaker.clone(), l.spoken_text(false)))
            .collect();
        let want = [("Ana", "Hi."), ("Bo", "Yo.")].map(|(a, b)| (a.to_owned(), b.to_owned()));
        assert_eq!(said, want);
        // A diarized transcript: numbered speakers, timings and scores that are not speech,
        // said once rather than as an unknown key per segment.
        let e = parse(r#"{"segments": [{"speaker_id": 0, "text": "First.", "start": 0.0, "end": 1.2, "words": []}, {"speaker_id": 1, "text": "Second.", "start": 1.3, "end": 2.0}]}"#).unwrap();
        let speakers: Vec<&str> = e.lines.iter().map(|l| l.speaker.as_str()).collect();
        assert_eq!(speakers, ["Speaker 0", "Speaker 1"]);
        assert_eq!(e.warnings.len(), 1, "{:?}", e.warnings);
        assert!(
            e.warnings[0].message.contains("timings"),
            "{:?}",
            e.warnings
        );
    }

    #[test]
    fn episode_object_with_cast_settings_and_chapters() {
        let e = parse(r#"{"title": "Brief", "settings": {"speed": 1.05, "gap": "300ms", "reuse_voices": true},
            "cast": {"Alice": "af_heart", "Bob": {"voice": "am_michael", "speed": 0.9}},
            "lines": [{"chapter": "News"}, {"speaker": "Alice", "text": "Morning."}, {"direction": "Jingle"}, {"name": "Bob", "text": "Hi."}]}"#).unwrap();
        assert_eq!(e.settings.title.as_deref(), Some("Brief"));
        assert_eq!(e.settings.speed, Some(1.05));
        assert!(e.settings.reuse_voices);
        assert_eq!(e.cast.get("Bob").unwrap().speed, Some(0.9));
        assert_eq!(
            (e.chapters[0].title.as_str(), e.chapters[0].first_line),
            ("News", 0)
        );
        assert_eq!(e.directions[0].before_line, 1);
    }

    #[test]
    fn errors_point_into_the_file() {
        let e =
            parse("[\n {\"speaker\": \"A\", \"text\": \"x\"},\n {\"speaker\": }\n]").unwrap_err();
        assert!(matches!(e.kind, ScriptErrorKind::Json { .. }), "{e}");
        assert_eq!(e.line, 3);
        let e = parse("[{\"speaker\": \"A\"}]").unwrap_err();
        assert!(e.to_string().starts_with("e.json:1:2: this JSON does not describe an episode: item 1 has a \"speaker\" but no \"text\""), "{e}");
        let e = parse(r#"{"cast": {"A": "af_heart", "A": "af_bella"}, "lines": [{"speaker": "A", "text": "x"}]}"#).unwrap_err();
        assert!(
            matches!(e.kind, ScriptErrorKind::CastConflict { .. }),
            "{e}"
        );
        let e = parse(r#"[{"speaker": "A", "text": "x", "voice": "af_heart"}, {"speaker": "A", "text": "y", "voice": "af_sky"}]"#).unwrap_err();
        assert!(
            matches!(e.kind, ScriptErrorKind::CastConflict { .. }),
            "{e}"
        );
        assert!(parse("[1, 2]").is_err());
        assert!(parse("{\"lines\": 3}").is_err());
        assert!(parse("[{\"speaker\": \"A\", \"text\": \"\"}]").is_err());
    }
}
