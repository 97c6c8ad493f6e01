//! A cue already in the script, changed from the studio: the volume and fade of a `[sound: …]`
//! or `[bed: …]` (the fade of a `[bed: off]`), rewritten inside its own bracket.
//!
//! Why in the text, in place: the script is the project, so the studio writes what an author
//! would type, beside the file name and the options already written (`overlap=`, `duck=`), and
//! leaves the rest of the line and its line ending alone. An option already written is replaced
//! where it stands (under any of the names the parser reads for it, `vol=` and `gain=` too); a
//! missing one is added after the last. Whether a value is allowed is the parser's call, not the
//! studio's: the new text is parsed before it is kept, and a value the parser refuses comes
//! back with the parser's own reason while the script stays as it was.

use std::ops::Range;

use engine::script::{CueAction, Episode, ParseOptions, Position, ScriptErrorKind, SoundCue};

use super::cues::line_offset;
use super::{CueEditError, Document};

/// What the cue editor asks of a cue: each option to set as the author typed it (`-6`, `-6dB`,
/// `500ms`; a bare number gets the option's unit), or `None` to leave it as written.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CueOptions {
    pub volume: Option<String>,
    pub fade: Option<String>,
}

/// The names the parser reads as a cue's volume.
const VOLUME_KEYS: &[&str] = &["volume", "vol", "gain"];
/// The names the parser reads as a cue's fade.
const FADE_KEYS: &[&str] = &["fade"];

/// One option to write: the keys the parser reads as it (each replaced where written) and the
/// word written (`volume=-6dB`).
struct Setting {
    keys: &'static [&'static str],
    word: String,
}

impl Document {
    /// Sets the options `options` asks for on the cue whose `[` is at `at`, rewriting it in
    /// place, and reparses; returns the cue as now written. The script is unchanged on error.
    ///
    /// # Errors
    /// No cue is at `at` in the script as it is now, a value is not one word, the parser
    /// refuses the new cue (its reason), or the cue cannot be rewritten where it is.
    pub fn set_cue_options(
        &mut self,
        at: Position,
        options: &CueOptions,
    ) -> Result<String, CueEditError> {
        let ep = self
            .parsed
            .as_ref()
            .map_err(|_| CueEditError::NoCue { at })?;
        let old = cue_at(ep, at).ok_or(CueEditError::NoCue { at })?;
        let mut settings = Vec::new();
        if let Some(v) = &options.volume {
            settings.push(Setting {
                keys: VOLUME_KEYS,
                word: format!("volume={}", option_value(v, "dB")?),
            });
        }
        if let Some(v) = &options.fade {
            settings.push(Setting {
                keys: FADE_KEYS,
                word: format!("fade={}", option_value(v, "s")?),
            });
        }
        let (range, text) =
            rewrite(&self.text, at, &settings).ok_or(CueEditError::NotInPlace { at })?;
        let cue = text[range].to_owned();
        if text == self.text {
            return Ok(cue);
        }
        let new = Episode::parse(&self.name, &text, &ParseOptions::default()).map_err(|e| {
            CueEditError::Refused {
                reason: match e.kind {
                    ScriptErrorKind::BadCue { reason, .. } => reason,
                    _ => e.to_string(),
                },
            }
        })?;
        // The same turns and cues, and this cue still where it was, of its kind, on its file.
        let kept = new.lines.len() == ep.lines.len()
            && new.sounds().count() == ep.sounds().count()
            && cue_at(&new, at).is_some_and(|c| {
                std::mem::discriminant(&c.action) == std::mem::discriminant(&old.action)
                    && c.action.file() == old.action.file()
            });
        if !kept {
            return Err(CueEditError::NotInPlace { at });
        }
        self.text = text;
        self.edited();
        Ok(cue)
    }
}

/// The cue whose `[` is at `at` in `ep`.
#[must_use]
pub fn cue_at(ep: &Episode, at: Position) -> Option<&SoundCue> {
    ep.sounds().map(|(_, c)| c).find(|c| c.position == at)
}

/// The values the editor shows for `action`: its volume in dB (none for `[bed: off]`) and its
/// fade in seconds, as the parser reads them (its defaults where the cue sets none).
#[must_use]
pub fn shown_values(action: &CueAction) -> (Option<String>, String) {
    match action {
        CueAction::Sound {
            volume_db,
            fade_secs,
            ..
        }
        | CueAction::Bed {
            volume_db,
            fade_secs,
            ..
        } => (Some(number(*volume_db)), number(*fade_secs)),
        CueAction::BedOff { fade_secs } => (None, number(*fade_secs)),
    }
}

/// `-15`, `0.01`: the shortest text that reads back as `x` (and never `-0`).
fn number(x: f32) -> String {
    format!("{}", x + 0.0)
}

/// The value part of an option as typed (`-6`, `-6 dB`, `500ms`): blanks dropped, a bare
/// number given `unit`. Refused when it would split the cue (a comma, `=`, a bracket, a quote);
/// whether the value is allowed is left to the parser.
fn option_value(typed: &str, unit: &str) -> Result<String, CueEditError> {
    let value: String = typed.split_whitespace().collect();
    if value.contains([',', '=', '[', ']', '"', '\'']) {
        return Err(CueEditError::BadValue {
            value: typed.trim().to_owned(),
        });
    }
    Ok(if value.parse::<f64>().is_ok() {
        format!("{value}{unit}")
    } else {
        value
    })
}

/// `text` with the cue whose `[` is at `at` (1-based line, character column) given
/// `settings`, and the byte range of the new cue (brackets included); `None` when no bracket is
/// there or it does not close on its line.
fn rewrite(text: &str, at: Position, settings: &[Setting]) -> Option<(Range<usize>, String)> {
    if at.line == 0 || at.line > text.split('\n').count() {
        return None;
    }
    let start = line_offset(text, at.line);
    let end = text[start..].find('\n').map_or(text.len(), |k| start + k);
    let line = &text[start..end];
    let open = start + line.char_indices().nth(at.column.checked_sub(1)?)?.0;
    if !text[open..].starts_with('[') {
        return None;
    }
    let close = open + text[open..end].find(']')?;
    let inner = rewrite_inside(&text[open + 1..close], settings)?;
    let new = format!("{}[{inner}{}", &text[..open], &text[close..]);
    Some((open..open + inner.len() + 2, new))
}

/// The inside of a cue's bracket (`sound: a.wav overlap=2s`) with `settings`: every word that
/// sets one of a setting's keys replaced by its word, else the word added after the last one
/// (after a comma when the cue separates its words with commas).
fn rewrite_inside(inside: &str, settings: &[Setting]) -> Option<String> {
    let value_at = inside.find(':')? + 1;
    let value = &inside[value_at..];
    let words = words(value);
    let first_option = words
        .iter()
        .position(|w| value[w.clone()].contains('='))
        .unwrap_or(words.len());
    let last_end = value_at + words.last()?.end;
    let separator = if value.contains(',') { ", " } else { " " };
    let mut replaced: Vec<(Range<usize>, &str)> = Vec::new();
    let mut added = String::new();
    for setting in settings {
        let mut found = false;
        for w in &words[first_option..] {
            let word = &value[w.clone()];
            let key = word.split_once('=').map_or(word, |(k, _)| k);
            if setting
                .keys
                .contains(&key.trim().to_ascii_lowercase().as_str())
            {
                replaced.push((value_at + w.start..value_at + w.end, &setting.word));
                found = true;
            }
        }
        if !found {
            added.push_str(separator);
            added.push_str(&setting.word);
        }
    }
    let mut out = inside.to_owned();
    out.insert_str(last_end, &added);
    replaced.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
    for (range, word) in replaced {
        out.replace_range(range, word);
    }
    Some(out)
}

/// Byte ranges of the words of a cue's value, split where the parser splits them (blanks and
/// commas).
fn words(value: &str) -> Vec<Range<usize>> {
    let mut words = Vec::new();
    let mut start = None;
    for (k, c) in value.char_indices() {
        let separator = c.is_whitespace() || c == ',';
        match (separator, start) {
            (true, Some(s)) => {
                words.push(s..k);
                start = None;
            }
            (false, None) => start = Some(k),
            _ => {}
        }
    }
    if let Some(s) = start {
        words.push(s..value.len());
    }
    words
}

#[cfg(test)]
mod tests;
