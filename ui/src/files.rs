//! Choosing and opening a script file: the desktop's own file dialog where the desktop has one,
//! the Open window's typed path where it does not, and what the studio says when a file is not
//! a script.
//!
//! File → Open used to be a box to type a path into. Authors expect their desktop's dialog, so
//! [`DesktopChooser`] asks for it through `rfd`'s XDG portal backend (libdbus is loaded at run
//! time and zenity is its fallback: nothing to link, nothing to install). A desktop without a
//! session bus and a portal, or zenity, has no dialog to show (a headless machine, a bare window
//! manager): [`ScriptChooser::available`] says so before anything is tried, and the studio shows
//! the typed path instead. `rfd` cannot tell a cancelled dialog from one that failed to open,
//! so a dialog that comes back empty faster than anyone can cancel one
//! ([`NO_DIALOG_WITHIN`]) counts as not shown, and the typed path appears then too: the author
//! is never left with nothing happening.
//!
//! A file that is not a script (an MP3, a picture, any binary) is an [`OpenError`], shown in the
//! window until dismissed, saying what the studio opens.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::input::{AUDIO_EXTENSIONS, SCRIPT_EXTENSIONS};

/// A dialog that returns nothing sooner than this after it was asked for was never shown.
pub const NO_DIALOG_WITHIN: Duration = Duration::from_millis(300);

/// Shows a file dialog for a script to open.
pub trait ScriptChooser: Send + Sync {
    /// Whether a dialog can be shown on this desktop, and if not, why.
    fn available(&self) -> Result<(), NoDialog>;
    /// Shows the dialog and waits for the author (called on a worker thread): the file chosen,
    /// or `None` when the dialog was cancelled (or could not be shown).
    fn choose(&self, start: Option<&Path>) -> Option<PathBuf>;
}

/// Why there is no file dialog to show.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoDialog {
    #[error("this desktop has no file dialog (no desktop portal on a session bus, and no zenity)")]
    NoPortal,
    #[error("the file dialog did not open")]
    DidNotOpen,
    #[error("this studio was started without a file dialog")]
    NotWired,
}

/// No dialog: the typed path only (tests, and studios nobody gave a desktop).
#[derive(Debug, Default)]
pub struct NoChooser;

impl ScriptChooser for NoChooser {
    fn available(&self) -> Result<(), NoDialog> {
        Err(NoDialog::NotWired)
    }

    fn choose(&self, _start: Option<&Path>) -> Option<PathBuf> {
        None
    }
}

/// The desktop's dialog, through the XDG desktop portal (or zenity).
#[derive(Debug, Default)]
pub struct DesktopChooser;

impl ScriptChooser for DesktopChooser {
    fn available(&self) -> Result<(), NoDialog> {
        desktop_has_dialog(&|name| std::env::var_os(name), &|p| p.exists())
    }

    fn choose(&self, start: Option<&Path>) -> Option<PathBuf> {
        let mut dialog = rfd::FileDialog::new()
            .set_title("Open a script")
            .add_filter("Scripts", &SCRIPT_EXTENSIONS)
            .add_filter("All files", &["*"]);
        if let Some(dir) = start {
            dialog = dialog.set_directory(dir);
        }
        dialog.pick_file()
    }
}

/// Whether `rfd` can show a dialog here: a session bus with the desktop portal installed, or
/// zenity on the `PATH`. `env` reads a variable and `exists` a path, so tests can pose as any
/// desktop.
pub fn desktop_has_dialog(
    env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
    exists: &dyn Fn(&Path) -> bool,
) -> Result<(), NoDialog> {
    let bus = env("DBUS_SESSION_BUS_ADDRESS").is_some_and(|a| !a.is_empty())
        || env("XDG_RUNTIME_DIR").is_some_and(|d| exists(&Path::new(&d).join("bus")));
    let portal = [
        "/usr/share/dbus-1/services/org.freedesktop.portal.Desktop.service",
        "/usr/libexec/xdg-desktop-portal",
        "/usr/lib/xdg-desktop-portal",
    ]
    .iter()
    .any(|p| exists(Path::new(p)));
    let zenity = env("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| exists(&dir.join("zenity"))));
    if (bus && portal) || zenity {
        Ok(())
    } else {
        Err(NoDialog::NoPortal)
    }
}

/// Why a file could not be opened as a script.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpenError {
    #[error("{name} is audio, not a script. {ACCEPTED}")]
    Audio { name: String },
    #[error("{name} is not a script: {reason}. {ACCEPTED}")]
    NotText { name: String, reason: String },
    #[error("{name} cannot be read: {reason}")]
    Unreadable { name: String, reason: String },
}

/// What the studio opens, said wherever a file is refused.
pub const ACCEPTED: &str = "The studio opens scripts written as text (UTF-8 or UTF-16): .txt, \
    .md, .markdown, .json, .xml, .text, .script, .fountain, .fdx (Final Draft), .srt, .vtt, or any text file that \
    reads as one, Word documents (.docx), OpenDocument texts (.odt), Rich Text (.rtf, what TextEdit saves), web pages (.html, or Google Docs' zipped one) and spreadsheets saved as .csv or .tsv. An audio file (.wav, .flac, .mp3, .m4a, .aiff, \
    .ogg, .opus) is dropped on a speaker in the cast (a voice clip) or on a line of the script (a \
    sound cue) instead.";

/// Reads `path` as a script: its name and its text, or why it is not one.
pub fn read_script(path: &Path) -> Result<Opened, OpenError> {
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if AUDIO_EXTENSIONS.contains(&ext.as_str()) {
        return Err(OpenError::Audio { name });
    }
    let bytes = fs_err::read(path).map_err(|e| OpenError::Unreadable {
        name: name.clone(),
        reason: e.to_string(),
    })?;
    if looks_like_audio(&bytes) {
        return Err(OpenError::Audio { name });
    }
    let decoded =
        engine::script::decode_script_bytes(&name, &bytes).map_err(|e| OpenError::NotText {
            name: name.clone(),
            reason: e.kind.to_string(),
        })?;
    let note = decoded.guessed.map(|w| {
        format!(
            "{name}:{}:{}: {}",
            w.position.line, w.position.column, w.message
        )
    });
    let text = decoded.text;
    if text.contains('\0') {
        return Err(OpenError::NotText {
            name,
            reason: "it holds binary data (NUL bytes), not text".into(),
        });
    }
    Ok(Opened { name, text, note })
}

/// A script file as read: its name, its text, and what was guessed to read it, if anything.
#[derive(Debug, PartialEq, Eq)]
pub struct Opened {
    pub name: String,
    pub text: String,
    /// Said when the file opens (`FILE:LINE:COLUMN: …`): a guess is never silent.
    pub note: Option<String>,
}

/// The first bytes of a WAV, FLAC, MP3 (ID3 tag or frame sync) or Ogg file.
fn looks_like_audio(bytes: &[u8]) -> bool {
    bytes.starts_with(b"RIFF")
        || bytes.starts_with(b"fLaC")
        || bytes.starts_with(b"ID3")
        || bytes.starts_with(b"OggS")
        || bytes
            .get(..2)
            .is_some_and(|b| b[0] == 0xFF && b[1] & 0xE0 == 0xE0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn a_dialog_needs_a_portal_on_a_bus_or_zenity() {
        let none = |_: &str| None::<OsString>;
        let nothing = |_: &Path| false;
        assert_eq!(
            desktop_has_dialog(&none, &nothing),
            Err(NoDialog::NoPortal),
            "a headless machine has no dialog"
        );
        let bus = |n: &str| (n == "DBUS_SESSION_BUS_ADDRESS").then(|| "unix:path=/b".into());
        let portal = |p: &Path| p.ends_with("org.freedesktop.portal.Desktop.service");
        assert_eq!(desktop_has_dialog(&bus, &portal), Ok(()));
        assert_eq!(
            desktop_has_dialog(&bus, &nothing),
            Err(NoDialog::NoPortal),
            "a bus without a portal"
        );
        let path = |n: &str| (n == "PATH").then(|| "/usr/bin:/bin".into());
        let zenity = |p: &Path| p == Path::new("/usr/bin/zenity");
        assert_eq!(desktop_has_dialog(&path, &zenity), Ok(()));
    }

    #[test]
    fn audio_and_binary_files_are_refused_saying_what_is_accepted() {
        let dir = tempfile::tempdir().expect("temp dir");
        let write = |name: &str, bytes: &[u8]| {
            let p = dir.path().join(name);
            std::fs::write(&p, bytes).expect("write");
            p
        };
        let mp3 = write("episode.mp3", b"ID3\x04\0\0\0\0\0\x21\xff\xfb\x90\x64");
        let err = read_script(&mp3).expect_err("audio");
        assert!(matches!(err, OpenError::Audio { .. }));
        assert!(err.to_string().contains(".txt"), "{err}");
        // An MP3 under another name is still audio.
        let renamed = write("episode.txt", b"ID3\x04\0\0\0\0\0\x21\xff\xfb\x90\x64");
        assert!(matches!(
            read_script(&renamed),
            Err(OpenError::Audio { .. })
        ));
        let binary = write(
            "blob.bin",
            &[0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0xff, 0xfe, 0x00],
        );
        let err = read_script(&binary).expect_err("binary");
        assert!(matches!(err, OpenError::NotText { .. }), "{err}");
        assert!(err.to_string().contains("scripts written as text"), "{err}");
        let nul = write("nul.txt", b"Ann: hi\0\0\0");
        assert!(matches!(read_script(&nul), Err(OpenError::NotText { .. })));
        let script = write("fine.txt", b"Ann: Hello.\n");
        assert_eq!(
            read_script(&script),
            Ok(Opened {
                name: "fine.txt".into(),
                text: "Ann: Hello.\n".into(),
                note: None
            })
        );
        // Excel's CSV on a Western Windows: read, and the guess said where.
        let ansi = write("cast.csv", b"Ann,Caf\xe9 time.\n");
        let opened = read_script(&ansi).expect("windows-1252");
        assert_eq!(opened.text, "Ann\tCafé time.\n");
        let note = opened.note.expect("the guess is said");
        assert!(
            note.starts_with("cast.csv:1:8: ") && note.contains("Windows-1252"),
            "{note}"
        );
    }
}
