//! Keyboard shortcuts and dropped files.
//!
//! Dropped files: a script (by extension, or any text file that parses) opens as a new project;
//! an audio file dropped on a turn in the script's lines view is written before it as a sound
//! cue (`[sound: FILE]`, or `[bed: FILE]` with Shift held); an audio clip dropped on a speaker in
//! the cast panel asks for a voice match; a Piper voice (`NAME.onnx`, or its `NAME.onnx.json`)
//! is added to the library, and cast for the speaker it was dropped on, if any (the drop is the
//! studio's way to bring one, as `banter voices add` is the CLI's); an audio clip dropped
//! elsewhere, or any other file, gets a message saying what the studio accepts. Several files:
//! the first script opens, each clip on a speaker is matched, each sound on a turn is cued, each
//! Piper model is added once (its `.onnx` and `.onnx.json` dropped together are one voice), the
//! rest reported.
//!
//! Like a view, this only emits [`Command`]s (the decisions that depend on the studio's state,
//! such as what Esc closes, are the commands'); the frame loop applies them before drawing the
//! panels.

use std::path::{Path, PathBuf};

use eframe::egui::{self, Key, KeyboardShortcut, Modifiers};

use crate::command::Command;

/// Extensions read as scripts (subtitles too: a transcript with speakers exported as SRT or
/// VTT reads as a script, its timings dropped).
pub const SCRIPT_EXTENSIONS: [&str; 18] = [
    "txt", "md", "markdown", "json", "xml", "text", "script", "fountain", "fdx", "srt", "vtt",
    "docx", "odt", "rtf", "html", "htm", "csv", "tsv",
];
/// Extensions read as voice clips.
pub const AUDIO_EXTENSIONS: [&str; 11] = [
    "wav", "flac", "mp3", "ogg", "oga", "opus", "m4a", "aac", "mp4", "aif", "aiff",
];

#[derive(Debug, PartialEq, Eq)]
pub enum DropKind {
    Script,
    Audio,
    /// A Piper voice: the `.onnx` model (its `.onnx.json` classifies as the model it names).
    PiperVoice(PathBuf),
    Unsupported,
}

/// What a dropped file is, by its name.
#[must_use]
pub fn classify(path: &Path) -> DropKind {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let stem_ext = || {
        Path::new(path.file_stem().unwrap_or_default())
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
    };
    if ext == "onnx" {
        DropKind::PiperVoice(path.to_path_buf())
    } else if ext == "json" && stem_ext().as_deref() == Some("onnx") {
        DropKind::PiperVoice(path.with_extension(""))
    } else if AUDIO_EXTENSIONS.contains(&ext.as_str()) {
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
    let mut models: Vec<PathBuf> = Vec::new();
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
            DropKind::PiperVoice(onnx) => {
                if !models.contains(&onnx) {
                    models.push(onnx.clone());
                    out.push(Command::AddPiperVoice {
                        onnx,
                        speaker: speaker.clone(),
                    });
                }
            }
            DropKind::Unsupported => skipped.push(format!(
                "{}: not a script, an audio file or a Piper voice (scripts: {}; voice clips and \
                 sounds: {}; Piper voices: NAME.onnx with NAME.onnx.json beside it)",
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
                && said.contains("cover.png: not a script, an audio file or a Piper voice"),
            "{said}"
        );
        assert_eq!(
            h.state().document().text,
            format!("Ann: One.\n{cue}\nBen: Two.\n")
        );
    }

    /// Runs frames until the status line says something containing `what` (at most 20 s).
    fn wait_for_status(h: &mut Harness<'static, Studio>, what: &str) -> String {
        let start = std::time::Instant::now();
        loop {
            h.run_steps(1);
            let said = h.state().message().unwrap_or_default().to_owned();
            if said.contains(what) || start.elapsed() > std::time::Duration::from_secs(20) {
                return said;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// The library voices the cast offers, asked of the library afresh.
    fn library_voices(h: &mut Harness<'static, Studio>) -> Vec<String> {
        h.state()
            .library
            .send(crate::work::library::LibCmd::ListVoices);
        assert!(h.state().library.flush(std::time::Duration::from_secs(5)));
        h.run_steps(1);
        h.state().library_voices.clone()
    }

    #[test]
    fn a_piper_voice_without_its_json_is_refused_with_the_reason_and_nothing_is_added() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut h = studio(&dir);
        let onnx = dir.path().join("en_US-joe-medium.onnx");
        fs_err::write(&onnx, b"not a model").expect("write");
        drop_on(&mut h, "One.", &onnx, false);
        let said = wait_for_status(&mut h, "not added");
        assert!(
            said.starts_with("not added: Piper voice en_US-joe-medium.onnx")
                && said.contains("en_US-joe-medium.onnx.json is missing or unreadable"),
            "{said}"
        );
        assert!(library_voices(&mut h).is_empty());
        assert_eq!(h.state().document().text, "Ann: One.\nBen: Two.\n");
    }

    #[test]
    fn a_piper_voice_dropped_on_a_speaker_is_added_named_from_its_file_and_cast() {
        let store = match engine::assets::ModelStore::open_default() {
            Ok(store) if store.piper_test_voice_ready() => store,
            _ => {
                eprintln!("skipped: the Piper test voice is not fetched");
                return;
            }
        };
        let dir = tempfile::tempdir().expect("temp dir");
        let mut h = studio(&dir);
        let row = h
            .query_all_by_label("Ben")
            .map(|n| n.rect())
            .min_by(|a, b| a.left().total_cmp(&b.left()))
            .expect("Ben is in the cast panel");
        h.hover_at(row.center());
        h.run_steps(1);
        drop_file(h.input_mut(), &store.piper_test_voice());
        h.run_steps(1);
        let said = wait_for_status(&mut h, "added Piper voice");
        assert!(
            said.starts_with("added Piper voice joe (22050 Hz")
                && said.contains("licence: ")
                && said.ends_with("Ben now speaks as joe"),
            "{said}"
        );
        assert_eq!(library_voices(&mut h), ["joe"]);
        let ben = |h: &Harness<'static, Studio>| {
            h.state()
                .document()
                .speakers()
                .into_iter()
                .find(|(s, _)| s == "Ben")
                .map(|(_, c)| c.voice)
        };
        assert_eq!(ben(&h).as_deref(), Some("joe"));
        h.state_mut().apply(Command::Undo);
        assert_ne!(
            ben(&h).as_deref(),
            Some("joe"),
            "one undo step, like a choice"
        );
        // Dropped again away from the cast: the name is taken, so it is "joe 2", cast to nobody.
        h.hover_at(egui::pos2(1270.0, 790.0));
        h.run_steps(1);
        drop_file(h.input_mut(), &store.piper_test_voice());
        let said = wait_for_status(&mut h, "joe 2");
        assert!(said.starts_with("added Piper voice joe 2 ("), "{said}");
        assert!(!said.contains("now speaks as"), "{said}");
        assert_eq!(library_voices(&mut h), ["joe", "joe 2"]);
    }

    #[test]
    fn classifies_by_extension() {
        assert_eq!(classify(Path::new("a/ep.TXT")), DropKind::Script);
        assert_eq!(classify(Path::new("ep.json")), DropKind::Script);
        assert_eq!(classify(Path::new("voice.wav")), DropKind::Audio);
        assert_eq!(classify(Path::new("voice.Mp3")), DropKind::Audio);
        assert_eq!(classify(Path::new("photo.png")), DropKind::Unsupported);
        assert_eq!(
            classify(Path::new("v/en_US-joe-medium.ONNX")),
            DropKind::PiperVoice("v/en_US-joe-medium.ONNX".into())
        );
        assert_eq!(
            classify(Path::new("v/en_US-joe-medium.onnx.json")),
            DropKind::PiperVoice("v/en_US-joe-medium.onnx".into())
        );
    }
}
