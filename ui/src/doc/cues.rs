//! Sound cues written into the script from the studio: an audio file dropped on a turn becomes
//! `[sound: FILE]` (with Shift, `[bed: FILE]`) on a line of its own just before that turn.
//!
//! Why through the text: the script is the project (FORMATS.md says what a cue does), so the
//! studio writes the cue an author would type, named relative to the project's folder when the
//! file is inside it (the script still plays when the folder moves) and by its full path when it
//! is not. The new text is parsed before it replaces the old: a file name a cue cannot hold, or
//! a layout without cues on lines of their own (JSON), is refused with why and where to write
//! the cue instead, and the script is left as it was.

use std::path::Path;

use engine::script::{Episode, ParseOptions, Position};

use super::Document;

/// Why a cue could not be written into the script.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CueEditError {
    /// `line` counts from 0; the message counts from 1, as the author does.
    #[error("line {} is not in the script", line + 1)]
    NoSuchLine { line: usize },
    #[error(
        "`{name}` cannot be named in a cue: a cue's file name holds no comma, `=`, bracket, \
         line break or run of spaces, and does not start or end with a space or a quote; \
         rename the file"
    )]
    BadName { name: String },
    #[error(
        "a cue on a line of its own does not work in a {format} script; write `{cue}` into the \
         text of line {} instead", line + 1
    )]
    Layout {
        format: String,
        cue: String,
        line: usize,
    },
    /// The cue an editor was opened on is not where it was (the script changed since).
    #[error(
        "there is no sound cue at line {}, column {} of the script now; press Play to see the \
         cues as the script has them", at.line, at.column
    )]
    NoCue { at: Position },
    #[error(
        "`{value}` is not one value: write a number, such as -6 for a volume in dB or 2 for a \
         fade in seconds, without commas, quotes, brackets or `=`"
    )]
    BadValue { value: String },
    /// The parser refused the rewritten cue: its reason.
    #[error("{reason}")]
    Refused { reason: String },
    #[error(
        "the cue at line {}, column {} cannot be rewritten in place; change it in the script's \
         text", at.line, at.column
    )]
    NotInPlace { at: Position },
}

impl Document {
    /// Writes `[sound: FILE]` (`bed`: `[bed: FILE]`) on a line of its own before turn `line`
    /// and reparses; the script is unchanged when it cannot be done.
    ///
    /// # Errors
    /// The turn is not in the script, the file's name cannot be written in a cue, or the
    /// script's layout has no cues on lines of their own.
    pub fn insert_cue(
        &mut self,
        line: usize,
        file: &Path,
        bed: bool,
    ) -> Result<String, CueEditError> {
        let ep = self
            .parsed
            .as_ref()
            .map_err(|_| CueEditError::NoSuchLine { line })?;
        let turn = ep
            .lines
            .get(line)
            .ok_or(CueEditError::NoSuchLine { line })?;
        let name =
            cue_name(file, self.folder().as_deref()).ok_or_else(|| CueEditError::BadName {
                name: file.display().to_string(),
            })?;
        let cue = format!("[{}: {name}]", if bed { "bed" } else { "sound" });
        let at = turn.position.line;
        let newline = if self.text.contains("\r\n") {
            "\r\n"
        } else {
            "\n"
        };
        let offset = line_offset(&self.text, at);
        let mut text = self.text.clone();
        text.insert_str(offset, &format!("{cue}{newline}"));
        let written = Episode::parse(&self.name, &text, &ParseOptions::default())
            .ok()
            .is_some_and(|new| {
                // The same turns in the same layout, and the cue alone on its new line.
                new.format == ep.format
                    && new.lines.len() == ep.lines.len()
                    && new.sounds().any(|(_, c)| {
                        c.alone && c.position.line == at && c.action.file() == Some(name.as_str())
                    })
            });
        if !written {
            return Err(CueEditError::Layout {
                format: ep.format.as_str().to_owned(),
                cue,
                line,
            });
        }
        self.text = text;
        self.edited();
        Ok(cue)
    }
}

/// The name a cue gives `file`: relative to `folder` (with `/`) when the file is inside it, else
/// its whole path; `None` when a cue cannot hold it.
fn cue_name(file: &Path, folder: Option<&Path>) -> Option<String> {
    let relative = folder.and_then(|f| file.strip_prefix(f).ok());
    let name = match relative {
        Some(rel) => {
            let parts: Option<Vec<&str>> = rel.iter().map(std::ffi::OsStr::to_str).collect();
            parts?.join("/")
        }
        None => file.to_str()?.to_owned(),
    };
    let bad_char = name.contains([',', '=', '[', ']', '\n', '\r', '\t']);
    let bad_edge = name.starts_with([' ', '"', '\'']) || name.ends_with([' ', '"', '\'']);
    (!name.is_empty() && !bad_char && !bad_edge && !name.contains("  ")).then_some(name)
}

/// Byte offset of the start of 1-based line `line` in `text` (its end when there are fewer).
pub(super) fn line_offset(text: &str, line: usize) -> usize {
    if line <= 1 {
        return 0;
    }
    text.match_indices('\n')
        .nth(line - 2)
        .map_or(text.len(), |(k, _)| k + 1)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use engine::script::CueAction;

    fn doc(text: &str, path: Option<&str>) -> Document {
        Document::new("ep", text.to_owned(), path.map(PathBuf::from))
    }

    #[test]
    fn a_dropped_file_becomes_a_cue_line_before_its_turn_named_from_the_project() {
        let mut d = doc(
            "---\ntitle: T\n---\nAnn: Hello.\n\nBen: Hi.\n",
            Some("/show/ep1.txt"),
        );
        let cue = d
            .insert_cue(1, Path::new("/show/sfx/door slam.wav"), false)
            .expect("inserted");
        assert_eq!(cue, "[sound: sfx/door slam.wav]");
        assert_eq!(
            d.text,
            "---\ntitle: T\n---\nAnn: Hello.\n\n[sound: sfx/door slam.wav]\nBen: Hi.\n"
        );
        let ep = d.parsed.as_ref().expect("parses");
        let (_, c) = ep.sounds().next().expect("a cue");
        assert!(
            c.alone
                && matches!(&c.action, CueAction::Sound { file, .. } if file == "sfx/door slam.wav")
        );
        assert_eq!(ep.lines.len(), 2, "no turn was added or lost");
        // With Shift: a bed; outside the project's folder: its whole path.
        d.insert_cue(0, Path::new("/music/theme.mp3"), true)
            .expect("inserted");
        assert!(
            d.text.contains("---\n[bed: /music/theme.mp3]\nAnn: Hello."),
            "{}",
            d.text
        );
        // CRLF scripts stay CRLF.
        let mut d = doc("Ann: Hello.\r\nBen: Hi.\r\n", None);
        d.insert_cue(1, Path::new("/x/a.wav"), false)
            .expect("inserted");
        assert_eq!(d.text, "Ann: Hello.\r\n[sound: /x/a.wav]\r\nBen: Hi.\r\n");
    }

    #[test]
    fn what_a_cue_cannot_hold_is_refused_and_the_script_is_left_alone() {
        let text = "Ann: Hello.\n";
        let mut d = doc(text, Some("/show/ep.txt"));
        for bad in [
            "/show/a,b.wav",
            "/show/x=1.wav",
            "/show/[1].wav",
            "/show/a  b.wav",
        ] {
            let e = d.insert_cue(0, Path::new(bad), false).expect_err(bad);
            assert!(matches!(e, CueEditError::BadName { .. }), "{bad}: {e}");
        }
        assert_eq!(
            d.insert_cue(3, Path::new("/show/a.wav"), false),
            Err(CueEditError::NoSuchLine { line: 3 })
        );
        // JSON has no cue lines of its own: the error says where to write it.
        let json = "[{\"speaker\": \"Ann\", \"text\": \"Hello.\"}]\n";
        let mut j = doc(json, None);
        let e = j
            .insert_cue(0, Path::new("/x/a.wav"), false)
            .expect_err("json");
        assert!(e.to_string().contains("into the text of line 1"), "{e}");
        assert_eq!(j.text, json);
        assert_eq!(d.text, text);
        assert_eq!(d.revision, 0, "nothing changed");
    }
}
