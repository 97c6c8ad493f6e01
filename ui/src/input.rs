//! Keyboard shortcuts and dropped files.
//!
//! Dropped files: a script (by extension, or any text file that parses) opens as a new project;
//! an audio file dropped on a turn in the script's lines view is written before it as a sound
//! cue (`[sound: FILE]`, or `[bed: FILE]` with Shift held); an audio clip dropped on a speaker in
//! the cast panel asks for a voice match; an audio clip dropped elsewhere, or any other file,
//! gets a message saying what the studio accepts. Several files: the first script opens, each
//! clip on a speaker is matched, each sound on a turn is cued, the rest reported.
//!
//! Like a view, this only emits [`Command`]s (the decisions that depend on the studio's state,
//! such as what Esc closes, are the commands'); the frame loop applies them before drawing the
//! panels.

use std::path::{Path, PathBuf};

use eframe::egui::{self, Key, KeyboardShortcut, Modifiers};

use crate::command::Command;

/// Extensions read as scripts.
pub const SCRIPT_EXTENSIONS: [&str; 8] = [
    "txt", "md", "markdown", "json", "xml", "text", "script", "fountain",
];
/// Extensions read as voice clips.
pub const AUDIO_EXTENSIONS: [&str; 6] = ["wav", "flac", "mp3", "ogg", "oga", "opus"];

#[derive(Debug, PartialEq, Eq)]
pub enum DropKind {
    Script,
    Audio,
    Unsupported,
}

#[must_use]
pub fn classify(path: &Path) -> DropKind {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if AUDIO_EXTENSIONS.contains(&ext.as_str()) {
        DropKind::Audio
    } else if SCRIPT_EXTENSIONS.contains(&ext.as_str()) || ext.is_empty() {
        DropKind::Script
    } else {
        DropKind::Unsupported
    }
}

const fn sc(modifiers: Modifiers, key: Key) -> KeyboardShortcut {
    KeyboardShortcut::new(modifiers, key)
}

/// Turns this frame's shortcuts and dropped files into commands.
pub fn handle(ctx: &egui::Context, out: &mut Vec<Command>) {
    drops(ctx, out);
    let typing = ctx.egui_wants_keyboard_input();
    let cmd = Modifiers::COMMAND;
    let cmd_shift = Modifiers::COMMAND | Modifiers::SHIFT;
    let pressed = |s: KeyboardShortcut| ctx.input_mut(|i| i.consume_shortcut(&s));
    // In a text field other than the raw script, Ctrl+Z belongs to that field.
    let other_field =
        typing && ctx.memory(egui::Memory::focused) != crate::view::editor::script_field(ctx);
    if !other_field {
        if pressed(sc(cmd_shift, Key::Z)) || pressed(sc(cmd, Key::Y)) {
            out.push(Command::Redo);
        }
        if pressed(sc(cmd, Key::Z)) {
            out.push(Command::Undo);
        }
    }
    let shortcuts = [
        (sc(cmd, Key::F), Command::OpenFind),
        (sc(cmd_shift, Key::S), Command::ShowSaveAs),
        (sc(cmd, Key::S), Command::Save),
        (sc(cmd, Key::N), Command::NewProject),
        (sc(cmd, Key::O), Command::ShowOpen),
        (sc(cmd, Key::E), Command::ShowExport),
        (sc(cmd, Key::L), Command::ToggleMode),
        (sc(cmd_shift, Key::T), Command::ToggleTheme),
        (sc(cmd, Key::Q), Command::Quit),
        (sc(Modifiers::NONE, Key::F1), Command::ToggleHelp),
    ];
    for (shortcut, command) in shortcuts {
        if pressed(shortcut) {
            out.push(command);
        }
    }
    if !typing {
        if pressed(sc(Modifiers::NONE, Key::Space)) {
            out.push(Command::TogglePlay);
        }
        if pressed(sc(Modifiers::NONE, Key::Escape)) {
            out.push(Command::Dismiss);
        }
    }
}

fn drops(ctx: &egui::Context, out: &mut Vec<Command>) {
    let (files, pointer, shift) = ctx.input(|i| {
        (
            i.raw.dropped_files.clone(),
            i.pointer.hover_pos().or(i.pointer.latest_pos()),
            i.modifiers.shift,
        )
    });
    if files.is_empty() {
        return;
    }
    let paths: Vec<PathBuf> = files.iter().map(|f| f.path().to_path_buf()).collect();
    let speaker = pointer.and_then(|p| crate::view::cast::speaker_at(ctx, p));
    let line = pointer.and_then(|p| crate::view::editor::line_at(ctx, p));
    let mut opened = false;
    let mut skipped = Vec::new();
    for path in paths {
        match classify(&path) {
            DropKind::Script if !opened => {
                out.push(Command::Import(path));
                opened = true;
            }
            DropKind::Script => {
                skipped.push(format!("{} (one script opens at a time)", path.display()));
            }
            DropKind::Audio => match (&speaker, line) {
                (Some(s), _) => out.push(Command::MatchVoice {
                    speaker: s.clone(),
                    clip: path,
                }),
                (None, Some(line)) => out.push(Command::InsertCue {
                    line,
                    file: path,
                    bed: shift,
                }),
                (None, None) => skipped.push(format!(
                    "{} (drop a voice clip on a speaker in the cast panel, or a sound on a line \
                     of the script)",
                    path.display()
                )),
            },
            DropKind::Unsupported => skipped.push(format!(
                "{}: not a script or an audio file (scripts: {}; voice clips and sounds: {})",
                path.display(),
                SCRIPT_EXTENSIONS.join(", "),
                AUDIO_EXTENSIONS.join(", ")
            )),
        }
    }
    if !skipped.is_empty() {
        out.push(Command::Say(format!("not opened: {}", skipped.join("; "))));
    }
}

/// A dropped file that is only a path (what tests drop; the window's own come from winit).
#[derive(Debug)]
pub struct PathDrop(pub PathBuf);

impl egui::DroppedFile for PathDrop {
    fn path(&self) -> &Path {
        &self.0
    }

    fn bytes(&self) -> Result<Vec<u8>, String> {
        fs_err::read(&self.0).map_err(|e| e.to_string())
    }
}

/// Drops `path` on the window (for tests and automation).
pub fn drop_file(raw: &mut egui::RawInput, path: &Path) {
    raw.dropped_files
        .push(std::sync::Arc::new(PathDrop(path.to_path_buf())));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::Studio;
    use egui_kittest::kittest::Queryable;
    use egui_kittest::Harness;

    /// The studio with a two-line script, no model and a private library.
    fn studio(dir: &tempfile::TempDir) -> Harness<'static, Studio> {
        let mut h = crate::test_support::studio(dir);
        h.state_mut()
            .apply(Command::EditText("Ann: One.\nBen: Two.\n".into()));
        h.run_steps(2);
        h
    }

    /// Drops `file` with the pointer over the row whose words are `words`, `shift` held or not.
    fn drop_on(h: &mut Harness<'static, Studio>, words: &str, file: &Path, shift: bool) {
        let row = h.get_by_label(words).rect();
        h.hover_at(egui::pos2(row.right() + 60.0, row.center().y));
        let held = if shift {
            Modifiers::SHIFT
        } else {
            Modifiers::NONE
        };
        h.event(egui::Event::ModifiersChanged(held));
        h.run_steps(1);
        drop_file(h.input_mut(), file);
        h.run_steps(1);
        h.event(egui::Event::ModifiersChanged(Modifiers::NONE));
    }

    #[test]
    fn a_sound_dropped_on_a_line_is_cued_before_it_shift_for_a_bed_undoably() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut h = studio(&dir);
        let sting = dir.path().join("sting.wav");
        drop_on(&mut h, "Two.", &sting, false);
        let cue = format!("[sound: {}]", sting.display());
        assert_eq!(
            h.state().document().text,
            format!("Ann: One.\n{cue}\nBen: Two.\n"),
            "{:?}",
            h.state().message()
        );
        let theme = dir.path().join("theme.ogg");
        drop_on(&mut h, "One.", &theme, true);
        let bed = format!("[bed: {}]", theme.display());
        assert_eq!(
            h.state().document().text,
            format!("{bed}\nAnn: One.\n{cue}\nBen: Two.\n")
        );
        h.state_mut().apply(Command::Undo);
        assert_eq!(
            h.state().document().text,
            format!("Ann: One.\n{cue}\nBen: Two.\n"),
            "one undo step per drop"
        );
        // Not audio: the studio's usual answer for a bad drop, and the script is left alone.
        let picture = dir.path().join("cover.png");
        drop_on(&mut h, "One.", &picture, false);
        let said = h.state().message().unwrap_or_default().to_owned();
        assert!(
            said.starts_with("not opened: ")
                && said.contains("cover.png: not a script or an audio file"),
            "{said}"
        );
        assert_eq!(
            h.state().document().text,
            format!("Ann: One.\n{cue}\nBen: Two.\n")
        );
    }

    #[test]
    fn classifies_by_extension() {
        assert_eq!(classify(Path::new("a/ep.TXT")), DropKind::Script);
        assert_eq!(classify(Path::new("ep.json")), DropKind::Script);
        assert_eq!(classify(Path::new("voice.wav")), DropKind::Audio);
        assert_eq!(classify(Path::new("voice.Mp3")), DropKind::Audio);
        assert_eq!(classify(Path::new("photo.png")), DropKind::Unsupported);
    }
}
