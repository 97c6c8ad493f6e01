//! Every change of state the studio's views and shortcuts ask for, as data.
//!
//! The studio has one writer. Views ([`crate::view`]) and the shortcut handler
//! ([`crate::input`]) get `&Studio` and a `&mut Vec<Command>`: they read the state they draw
//! and push a [`Command`] for each change the author asks for; [`crate::Studio::apply`] makes
//! the change. That puts each rule in one place (a cast choice is a [`Document`] change, an edit
//! reparses and joins the undo history, opening the Open dialog asks the library for its
//! projects), lets tests drive the studio without widgets, and keeps undo and autosave seeing
//! every change through one door. Workers' reports are folded in by the frame loop's drain step,
//! not through commands: they are not requests from the author.
//!
//! The rule for widgets that need `&mut` on a value while it is being edited (a text field, a
//! slider, a combo box): the view edits a *copy* (the script text, a speaker's [`CastChoice`],
//! the export settings, a dialog's field) and pushes a command when the copy differs from the
//! state, i.e. when the edit is committed to the widget. A value that is only the UI's own (a
//! line being edited before Apply, the voice search filter, open blend editors, where the cast
//! rows were drawn, which widget is the raw script) stays in egui's memory, owned by the view
//! that uses it, and is never part of [`crate::Studio`].
//!
//! [`crate::view::layout`] applies the commands a panel pushed as soon as that panel is drawn,
//! so the panels drawn after it show the change in the same frame, as when views wrote state
//! directly.
//!
//! [`Document`]: crate::doc::Document

use std::path::PathBuf;

use engine::script::Position;

use crate::doc::{CastChoice, CueOptions};
use crate::state::dialogs::UnsavedAnswer;
use crate::state::export::ExportSettings;
use crate::state::EditorMode;

/// A change of state asked for by a view, a shortcut or a test; see the module docs.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    // --- the script and its cast (undoable) ---
    /// Replace the whole script text (the raw editor).
    EditText(String),
    /// Replace turn `line`'s source lines by `text` (the lines view's editor).
    EditLine { line: usize, text: String },
    /// Start turn `line` with a `[rate:speed]` directive, or none for 1.0 (a line's menu).
    SetLineRate { line: usize, speed: f32 },
    /// Give `speaker` a voice and speed (the cast panel, the blend editor, a line's menu).
    SetCast { speaker: String, choice: CastChoice },
    /// Write a sound cue for `file` on a line of its own before turn `line`: `[sound: FILE]`,
    /// or `[bed: FILE]` when `bed` (an audio file dropped on the turn, Shift held for a bed).
    InsertCue {
        line: usize,
        file: PathBuf,
        bed: bool,
    },
    /// Set the volume and fade of the cue whose `[` is at `at` (the sound lane's cue editor),
    /// rewriting its options in place; refused with the parser's reason when it refuses them.
    SetCueOptions { at: Position, options: CueOptions },
    /// Undo the last script or cast change.
    Undo,
    /// Redo the last undone change.
    Redo,
    /// Select turn `line` (play starts there).
    Select(usize),

    // --- projects ---
    /// Start a new project from the example script (asks first when that would lose work).
    NewProject,
    /// File → Open: the desktop's file dialog, or the Open dialog's typed path where the
    /// desktop has none (and ask the library for its projects).
    ShowOpen,
    /// Show the Open dialog: a typed path and the library's projects.
    ShowOpenPath,
    /// Close the window saying why a file could not be opened.
    DismissOpenError,
    /// What the Open dialog's path field holds now.
    SetOpenPath(String),
    /// Close the Open dialog.
    CloseOpen,
    /// Read a script file and open it as a new project.
    Import(PathBuf),
    /// Open project `name` from the library.
    LoadProject(String),
    /// Save the project in the library under its name.
    Save,
    /// Show the Save as dialog, starting from the project's name.
    ShowSaveAs,
    /// What the Save as dialog's name field holds now.
    SetSaveAsName(String),
    /// Close the Save as dialog.
    CloseSaveAs,
    /// Rename the project and save it (closes the Save as dialog).
    SaveAs(String),
    /// Open the first unsaved script offered after a crash.
    RecoverAutosave,
    /// Forget the first unsaved script offered after a crash.
    DiscardAutosave,
    /// The answer to "Replace the script?": open the script waiting (true) or keep this one.
    ReplaceScript(bool),
    /// Fetch (if needed) and load the model again after a failure.
    RetryLoad,
    /// Close the window (asks Save / Discard / Cancel first when that would lose work).
    Quit,
    /// The author's answer to "Save changes?".
    AnswerUnsaved(UnsavedAnswer),

    // --- playback and previews ---
    /// Pause, resume, or play from the selected line.
    TogglePlay,
    /// Stop playback, its render and any preview.
    Stop,
    /// Move the playhead to this sample of the rendered audio.
    Seek(usize),
    /// A click on turn `line`'s text at byte `at` of what the lines view shows: move the
    /// playhead to the word there once it is rendered, else select the line.
    SeekWord { line: usize, at: usize },
    /// "Play from here": play from the word at byte `at` of turn `line`'s shown text.
    PlayFromWord { line: usize, at: usize },
    /// Speak a sample sentence in `speaker`'s voice and speed.
    PreviewSpeaker(String),
    /// Speak a sample sentence for `speaker` as `voice` (a blend being edited) at `speed`.
    PreviewVoice {
        speaker: String,
        voice: String,
        speed: f32,
    },

    // --- export ---
    /// Show the export dialog.
    ShowExport,
    /// Close the export dialog.
    HideExport,
    /// The export dialog's settings as the author has set them.
    SetExportSettings(ExportSettings),
    /// Render the episode with the dialog's settings, in the background.
    StartExport,
    /// Stop the running export; nothing is written.
    CancelExport,
    /// Open this folder in the file manager.
    ShowInFolder(PathBuf),

    // --- cast tools ---
    /// Match a voice for `speaker` from an audio clip (dropped on the speaker's row).
    MatchVoice { speaker: String, clip: PathBuf },
    /// Tune a voice for `speaker` toward `clip` (the "Tune" action beside a match).
    TuneVoice { speaker: String, clip: PathBuf },
    /// Cancel `speaker`'s running tuning (nothing is saved).
    CancelTune { speaker: String },
    /// Add the Piper voice `onnx` (with its `.onnx.json` beside it) to the library, then cast
    /// `speaker` in it if one is given (a `.onnx` dropped on the window, or on a speaker's row).
    AddPiperVoice {
        onnx: PathBuf,
        speaker: Option<String>,
    },

    // --- find ---
    /// Open the find bar and focus its field.
    OpenFind,
    /// Close the find bar.
    CloseFind,
    /// What the find field holds now (the count starts again from the first match).
    SetFindQuery(String),
    /// Jump to the next (`true`) or previous matching turn and select it.
    FindStep(bool),
    /// Whether the find field should take the keyboard on the next frame.
    FindFocus(bool),
    /// The lines view has scrolled to the turn the find bar jumped to.
    FindScrolled,

    // --- the window ---
    /// Show the parsed lines or the raw text.
    SetMode(EditorMode),
    /// Switch between the lines and the raw text.
    ToggleMode,
    /// Switch between the dark and the light theme.
    ToggleTheme,
    /// Show or hide the keyboard shortcuts overlay.
    SetHelp(bool),
    /// Show the overlay if hidden, hide it if shown.
    ToggleHelp,
    /// Esc: close the shortcuts overlay, else the export dialog (unless exporting), else stop.
    Dismiss,
    /// Show a message in the status bar.
    Say(String),

    // --- devices and the API ---
    /// List the audio output devices again.
    RefreshOutputs,
    /// Move playback to the output device called this.
    ChooseOutput(String),
    /// Switch the loopback API on or off (it serves the studio's engine once loaded).
    SwitchApi(bool),
}
