//! Keyboard shortcuts and dropped files.
//!
//! Dropped files: a script (by extension, or any text file that parses) opens as a new project;
//! an audio clip dropped on a speaker in the cast panel asks for a voice match; an audio clip
//! dropped elsewhere, or any other file, gets a message saying what the studio accepts.
//! Several files: the first script opens, each clip on a speaker is matched, the rest reported.

use std::path::{Path, PathBuf};

use eframe::egui::{self, Key, KeyboardShortcut, Modifiers};

use crate::app::{EditorMode, Studio};

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

pub fn handle(studio: &mut Studio, ctx: &egui::Context) {
    drops(studio, ctx);
    let typing = ctx.egui_wants_keyboard_input();
    let cmd = Modifiers::COMMAND;
    let cmd_shift = Modifiers::COMMAND | Modifiers::SHIFT;
    let pressed = |s: KeyboardShortcut| ctx.input_mut(|i| i.consume_shortcut(&s));
    // In a text field other than the raw script, Ctrl+Z belongs to that field.
    let other_field = typing && ctx.memory(egui::Memory::focused) != studio.history.script_field;
    if !other_field {
        if pressed(sc(cmd_shift, Key::Z)) || pressed(sc(cmd, Key::Y)) {
            studio.redo();
        }
        if pressed(sc(cmd, Key::Z)) {
            studio.undo();
        }
    }
    if pressed(sc(cmd, Key::F)) {
        studio.open_find();
    }
    if pressed(sc(cmd_shift, Key::S)) {
        studio.save_as = Some(studio.doc.name.clone());
    }
    if pressed(sc(cmd, Key::S)) {
        studio.save();
    }
    if pressed(sc(cmd, Key::N)) {
        studio.new_project();
    }
    if pressed(sc(cmd, Key::O)) {
        studio.open_dialog = Some(String::new());
        studio
            .library
            .send(crate::work::library::LibCmd::ListProjects);
    }
    if pressed(sc(cmd, Key::E)) {
        studio.export.open = true;
    }
    if pressed(sc(cmd, Key::L)) {
        studio.mode = match studio.mode {
            EditorMode::Lines => EditorMode::Raw,
            EditorMode::Raw => EditorMode::Lines,
        };
    }
    if pressed(sc(cmd_shift, Key::T)) {
        studio.dark = !studio.dark;
    }
    if pressed(sc(cmd, Key::Q)) {
        studio.quit = true;
    }
    if pressed(sc(Modifiers::NONE, Key::F1)) {
        studio.show_help = !studio.show_help;
    }
    if !typing {
        if pressed(sc(Modifiers::NONE, Key::Space)) {
            studio.toggle_play();
        }
        if pressed(sc(Modifiers::NONE, Key::Escape)) {
            if studio.show_help {
                studio.show_help = false;
            } else if studio.export.open && studio.export_job.is_none() {
                studio.export.open = false;
            } else {
                studio.stop();
            }
        }
    }
}

fn drops(studio: &mut Studio, ctx: &egui::Context) {
    let (files, pointer) = ctx.input(|i| {
        (
            i.raw.dropped_files.clone(),
            i.pointer.hover_pos().or(i.pointer.latest_pos()),
        )
    });
    if files.is_empty() {
        return;
    }
    let paths: Vec<PathBuf> = files.iter().map(|f| f.path().to_path_buf()).collect();
    let speaker = pointer.and_then(|p| {
        studio
            .cast_rows
            .iter()
            .find(|(_, r)| r.contains(p))
            .map(|(s, _)| s.clone())
    });
    let mut opened = false;
    let mut skipped = Vec::new();
    for path in paths {
        match classify(&path) {
            DropKind::Script if !opened => {
                studio.import(&path);
                opened = true;
            }
            DropKind::Script => {
                skipped.push(format!("{} (one script opens at a time)", path.display()));
            }
            DropKind::Audio => match &speaker {
                Some(s) => studio.start_voice_match(s.clone(), path),
                None => skipped.push(format!(
                    "{} (drop a voice clip on a speaker in the cast panel)",
                    path.display()
                )),
            },
            DropKind::Unsupported => skipped.push(format!(
                "{}: not a script or a voice clip (scripts: {}; clips: {})",
                path.display(),
                SCRIPT_EXTENSIONS.join(", "),
                AUDIO_EXTENSIONS.join(", ")
            )),
        }
    }
    if !skipped.is_empty() {
        studio.say(format!("not opened: {}", skipped.join("; ")));
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

    #[test]
    fn classifies_by_extension() {
        assert_eq!(classify(Path::new("a/ep.TXT")), DropKind::Script);
        assert_eq!(classify(Path::new("ep.json")), DropKind::Script);
        assert_eq!(classify(Path::new("voice.wav")), DropKind::Audio);
        assert_eq!(classify(Path::new("voice.Mp3")), DropKind::Audio);
        assert_eq!(classify(Path::new("photo.png")), DropKind::Unsupported);
    }
}
