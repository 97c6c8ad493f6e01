//! The optional cast header at the top of a text script.
//!
//! Two spellings, because writers come from two traditions: YAML-like front matter between `---`
//! lines (Markdown and static-site habit), or a `# Cast` heading followed by `Name: voice` lines
//! up to the first blank line (looks right in any Markdown viewer).
//!
//! ```text
//! ---
//! title: The Morning Brief
//! speed: 1.05
//! cast:
//!   Alice: af_heart
//!   Bob: am_michael @1.1
//!   Carol: af_bella:0.7+af_sky:0.3 @0.95
//! ---
//! ```
//!
//! A value is a voice (a stock name or a blend), optionally followed by `@` and a speed. In the
//! front matter a top-level key that is not a setting is read as a speaker if its value names
//! stock voices (so `Alice: af_heart` works without a `cast:` line) and is otherwise ignored with
//! a warning, so metadata such as `author: Jane` does not break the script. Under `cast:` (and in
//! a `# Cast` block) any voice name is accepted, for voices the caller knows and we do not.
//!
//! Settings: `title`, `speed` (0.25 to 4), `gap` (silence between turns: `0.4`, `0.4s`,
//! `400ms`), `keep_stage_directions`, `reuse_voices`, `any_language_voices` (true/false, yes/no),
//! and `format` (pins the format, as `--format` does). Naming a speaker twice with
//! different voices is an error; the header must not contradict itself.

use std::collections::HashMap;

use super::cast::{
    check_voice_spelling, parse_voice_value, speaker_key, CastEntry, VoiceValueError,
};
use super::error::{ScriptError, ScriptErrorKind};
use super::format::ScriptFormat;
use super::model::{Position, Settings, Warning};
use super::pieces::{parse_pause, parse_rate, WRITTEN_SPEED_RANGE};
use super::source::{column_of, SourceLine};

/// What a header says.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Header {
    pub entries: Vec<CastEntry>,
    pub settings: Settings,
    /// `format:` in the front matter.
    pub format: Option<ScriptFormat>,
    /// The character list near the top of the body, if the script has one.
    pub characters: Option<super::characters::CharacterList>,
}

/// Collects cast entries, refusing contradictions.
#[derive(Debug, Default)]
pub(crate) struct CastList {
    pub entries: Vec<CastEntry>,
    index: HashMap<String, usize>,
}

impl CastList {
    pub fn add(
        &mut self,
        file: &str,
        entry: CastEntry,
        warnings: &mut Vec<Warning>,
    ) -> Result<(), ScriptError> {
        let key = speaker_key(&entry.name);
        if let Some(&i) = self.index.get(&key) {
            let first = &self.entries[i];
            if first.voice == entry.voice && first.speed == entry.speed {
                warnings.push(Warning {
                    position: entry.position,
                    message: format!(
                        "`{}` is cast twice (also on line {}), with the same voice",
                        entry.name, first.position.line
                    ),
                });
                return Ok(());
            }
            let show = |e: &CastEntry| match e.speed {
                Some(s) => format!("{} @{s}", e.voice),
                None => e.voice.clone(),
            };
            return Err(ScriptError::new(
                file,
                entry.position,
                ScriptErrorKind::CastConflict {
                    speaker: entry.name.clone(),
                    voice: show(&entry),
                    first_voice: show(first),
                    first_line: first.position.line,
                },
            ));
        }
        self.index.insert(key, self.entries.len());
        self.entries.push(entry);
        Ok(())
    }
}

/// Reads a header at the top of `lines`; returns it and the index of the first body line.
pub(crate) fn parse_header(
    file: &str,
    lines: &[SourceLine<'_>],
    warnings: &mut Vec<Warning>,
) -> Result<(Header, usize), ScriptError> {
    let mut header = Header::default();
    let mut cast = CastList::default();
    let skip_blank = |mut i: usize| {
        while lines.get(i).is_some_and(|l| l.text.trim().is_empty()) {
            i += 1;
        }
        i
    };
    let mut i = skip_blank(0);
    if lines.get(i).is_some_and(|l| l.text.trim() == "---") {
        let open = lines[i];
        let close = lines[i + 1..]
            .iter()
            .position(|l| matches!(l.text.trim(), "---" | "..."))
            .map(|k| i + 1 + k)
            .ok_or_else(|| {
                ScriptError::new(
                    file,
                    Position::new(
                        open.number,
                        column_of(open.text, open.text.find('-').unwrap_or(0)),
                    ),
                    ScriptErrorKind::UnclosedFrontMatter,
                )
            })?;
        front_matter(file, &lines[i + 1..close], &mut header, &mut cast, warnings)?;
        i = skip_blank(close + 1);
    }
    if lines.get(i).is_some_and(|l| is_cast_heading(l.text)) {
        i += 1;
        while let Some(line) = lines.get(i) {
            let t = line.text.trim();
            if t.is_empty() || t.starts_with('#') {
                break;
            }
            let item = t
                .strip_prefix(['-', '*'])
                .map_or(line.text, str::trim_start);
            cast_line(file, *line, item, &mut cast, warnings, true)?;
            i += 1;
        }
        i = skip_blank(i);
    }
    header.entries = cast.entries;
    Ok((header, i))
}

pub(crate) fn is_cast_heading(text: &str) -> bool {
    let t = text.trim();
    t.starts_with('#')
        && matches!(
            t.trim_start_matches('#').trim().to_lowercase().as_str(),
            "cast" | "cast:" | "voices" | "voices:"
        )
}

fn front_matter(
    file: &str,
    lines: &[SourceLine<'_>],
    header: &mut Header,
    cast: &mut CastList,
    warnings: &mut Vec<Warning>,
) -> Result<(), ScriptError> {
    let mut in_cast = false;
    for &line in lines {
        let t = line.text.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let indented = line.text.starts_with([' ', '\t']) || t.starts_with("- ");
        if indented && in_cast {
            let item = t.strip_prefix("- ").unwrap_or(t);
            cast_line(file, line, item, cast, warnings, true)?;
            continue;
        }
        in_cast = false;
        let Some((key, value)) = t.split_once(':') else {
            warn(
                warnings,
                line,
                "this front-matter line has no `key: value`; ignored",
            );
            continue;
        };
        let k = unquote(key).to_ascii_lowercase().replace('-', "_");
        let v = unquote(value);
        let bad = |expected: &str| {
            ScriptError::new(
                file,
                position_of(line, t),
                ScriptErrorKind::BadSetting {
                    key: key.trim().to_owned(),
                    value: v.to_owned(),
                    expected: expected.to_owned(),
                },
            )
        };
        let s = &mut header.settings;
        match k.as_str() {
            "cast" | "voices" | "speakers" if v.is_empty() => in_cast = true,
            "title" => s.title = Some(v.to_owned()),
            "speed" => {
                s.speed = Some(parse_rate(v).ok_or_else(|| {
                    bad(&format!(
                        "a number from {} to {}",
                        WRITTEN_SPEED_RANGE.start(),
                        WRITTEN_SPEED_RANGE.end()
                    ))
                })?);
            }
            "gap" | "pause_between_turns" => {
                s.gap_secs = Some(parse_pause(v).map_err(|e| bad(&e))?);
            }
            "keep_stage_directions" => {
                s.keep_stage_directions = parse_bool(v).ok_or_else(|| bad("true or false"))?;
            }
            "reuse_voices" => {
                s.reuse_voices = parse_bool(v).ok_or_else(|| bad("true or false"))?;
            }
            "any_language_voices" => {
                s.any_language_voices = parse_bool(v).ok_or_else(|| bad("true or false"))?;
            }
            "format" => {
                header.format = Some(
                    v.parse()
                        .map_err(|_| bad(&format!("one of {}", ScriptFormat::names())))?,
                );
            }
            _ => {
                if looks_like_stock_voices(v) {
                    cast_line(file, line, t, cast, warnings, false)?;
                } else {
                    warn(
                        warnings,
                        line,
                        &format!(
                            "`{}` is neither a setting nor a speaker with a voice; ignored",
                            key.trim()
                        ),
                    );
                }
            }
        }
    }
    Ok(())
}

/// One `Name: VOICE [@SPEED]` entry; `strict` makes a malformed value an error.
fn cast_line(
    file: &str,
    line: SourceLine<'_>,
    item: &str,
    cast: &mut CastList,
    warnings: &mut Vec<Warning>,
    strict: bool,
) -> Result<(), ScriptError> {
    let item = item.trim();
    let position = position_of(line, item);
    let Some((name, value)) = item.split_once(':') else {
        if strict {
            return Err(ScriptError::new(
                file,
                position,
                ScriptErrorKind::BadVoice {
                    speaker: item.to_owned(),
                    spec: String::new(),
                    reason: "there is no `:` between the name and the voice".to_owned(),
                },
            ));
        }
        return Ok(());
    };
    let name = unquote(name.trim_matches('*'));
    match parse_voice_value(unquote(value)) {
        Ok((voice, speed)) if !name.is_empty() => cast.add(
            file,
            CastEntry {
                name: name.to_owned(),
                voice,
                speed,
                position,
            },
            warnings,
        ),
        Err(VoiceValueError::Speed(value)) => Err(ScriptError::new(
            file,
            position,
            ScriptErrorKind::BadSpeed {
                speaker: name.to_owned(),
                value,
            },
        )),
        Err(VoiceValueError::Voice(reason)) => Err(ScriptError::new(
            file,
            position,
            ScriptErrorKind::BadVoice {
                speaker: name.to_owned(),
                spec: unquote(value).to_owned(),
                reason,
            },
        )),
        Ok(_) => Err(ScriptError::new(
            file,
            position,
            ScriptErrorKind::BadVoice {
                speaker: String::new(),
                spec: unquote(value).to_owned(),
                reason: "the speaker's name is missing".to_owned(),
            },
        )),
    }
}

/// Where `part` (a subslice of `line.text`) starts.
fn position_of(line: SourceLine<'_>, part: &str) -> Position {
    let at = (part.as_ptr() as usize).saturating_sub(line.text.as_ptr() as usize);
    Position::new(line.number, column_of(line.text, at.min(line.text.len())))
}

fn warn(warnings: &mut Vec<Warning>, line: SourceLine<'_>, message: &str) {
    warnings.push(Warning {
        position: position_of(line, line.text.trim_start()),
        message: message.to_owned(),
    });
}

/// Whether a top-level front-matter value names stock voices (`af_heart`, `bf_emma:0.6+...`),
/// so that metadata such as `author: Jane` is not taken for a speaker with voice `Jane`.
fn looks_like_stock_voices(value: &str) -> bool {
    let voice = value.split_once('@').map_or(value, |(v, _)| v);
    parse_voice_value(value).is_ok()
        && check_voice_spelling(voice.trim()).is_ok_and(|names| {
            names.iter().all(|n| {
                let b = n.as_bytes();
                b.len() > 3
                    && b[0].is_ascii_lowercase()
                    && matches!(b[1], b'f' | b'm')
                    && b[2] == b'_'
            })
        })
}

fn unquote(s: &str) -> &str {
    let t = s.trim();
    for q in ['"', '\''] {
        if let Some(inner) = t.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner.trim();
        }
    }
    t
}

fn parse_bool(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Some(true),
        "false" | "no" | "off" | "0" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::source::split_lines;
    use super::*;

    fn header(text: &str) -> Result<(Header, usize, Vec<Warning>), ScriptError> {
        let lines = split_lines(text);
        let mut w = Vec::new();
        parse_header("ep.txt", &lines, &mut w).map(|(h, i)| (h, i, w))
    }

    #[test]
    fn front_matter_with_settings_and_cast() {
        let (h, body, w) = header(
            "\n---\ntitle: \"Morning Brief\"\nspeed: 1.05\ngap: 400ms\nformat: dia\nauthor: Jane\nreuse-voices: yes\ncast:\n  Alice: af_heart\n  - Bob: am_michael @1.1\nCarol: af_bella:0.7+af_sky:0.3\n---\n\n[S1] hi",
        )
        .unwrap();
        assert_eq!(body, 14);
        assert_eq!(h.settings.title.as_deref(), Some("Morning Brief"));
        assert_eq!(h.settings.speed, Some(1.05));
        assert!((h.settings.gap_secs.unwrap() - 0.4).abs() < 1e-6);
        assert!(h.settings.reuse_voices);
        assert_eq!(h.format, Some(ScriptFormat::Dia));
        let names: Vec<_> = h
            .entries
            .iter()
            .map(|e| (e.name.as_str(), e.voice.as_str(), e.speed))
            .collect();
        assert_eq!(
            names,
            [
                ("Alice", "af_heart", None),
                ("Bob", "am_michael", Some(1.1)),
                ("Carol", "af_bella:0.7+af_sky:0.3", None)
            ]
        );
        assert_eq!(h.entries[1].position, Position::new(11, 5));
        assert_eq!(w.len(), 1, "author is ignored with a warning: {w:?}");
        assert_eq!(w[0].position.line, 7);
    }

    #[test]
    fn cast_heading_block_ends_at_blank_line() {
        let (h, body, _) =
            header("# Cast\nAlice: af_heart @1.2\n- Bob: bm_george\n\nAlice: Hello.").unwrap();
        assert_eq!(h.entries.len(), 2);
        assert_eq!(body, 4);
        let (h, body, _) = header("Alice: Hello.").unwrap();
        assert!(h.entries.is_empty());
        assert_eq!(body, 0);
    }

    #[test]
    fn contradictions_and_bad_values_are_errors_with_positions() {
        let e = header("# cast\nAlice: af_heart\n alice : af_bella\n").unwrap_err();
        assert!(
            e.to_string().starts_with(
                "ep.txt:3:2: `alice` is cast twice: `af_bella` here but `af_heart` on line 2"
            ),
            "{e}"
        );
        let (h, _, w) = header("# cast\nAlice: af_heart\nALICE: af_heart\n").unwrap();
        assert_eq!((h.entries.len(), w.len()), (1, 1));
        let e = header("---\ncast:\n  Bob: am michael\n---\n").unwrap_err();
        assert!(matches!(e.kind, ScriptErrorKind::BadVoice { .. }), "{e}");
        assert_eq!((e.line, e.column), (3, 3));
        let e = header("# cast\nBob: am_adam @quick\n").unwrap_err();
        assert!(matches!(e.kind, ScriptErrorKind::BadSpeed { .. }), "{e}");
        let e = header("---\nspeed: fast\n---\n").unwrap_err();
        assert!(matches!(e.kind, ScriptErrorKind::BadSetting { .. }), "{e}");
        let e = header("\n  ---  \ntitle: x\n").unwrap_err();
        assert_eq!(
            (e.line, e.column, e.kind),
            (2, 3, ScriptErrorKind::UnclosedFrontMatter)
        );
    }
}
