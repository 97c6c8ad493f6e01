//! The small dialogs' state: which are open and what has been typed in them.

/// Open, Save as and the keyboard shortcuts overlay. A dialog with a text field is open while
/// its buffer is `Some`; the buffer is what the author has typed so far (the view edits a copy
/// and sends it back with [`crate::command::Command::SetOpenPath`] or
/// [`crate::command::Command::SetSaveAsName`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dialogs {
    /// The Open dialog's path field.
    pub open: Option<String>,
    /// Why the Open dialog's typed path stands in for the desktop's file dialog.
    pub no_dialog: Option<crate::files::NoDialog>,
    /// A file that could not be opened as a script, shown until dismissed.
    pub open_error: Option<crate::files::OpenError>,
    /// The Save as dialog's name field.
    pub save_as: Option<String>,
    /// The keyboard shortcuts overlay (F1).
    pub help: bool,
    /// "Save changes?" (Save / Discard / Cancel) before an action that would close the
    /// document with work the author made.
    pub unsaved: Option<Leaving>,
}

/// What the author asked for that would close a document with unsaved work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leaving {
    /// Quit the studio (Ctrl+Q, the menu, the window's close button).
    Quit,
    /// Start a new project.
    NewProject,
}

/// The answer to "Save changes?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnsavedAnswer {
    /// Save the project in the library, then go on.
    Save,
    /// Forget the changes (and their autosave), then go on.
    Discard,
    /// Stay: nothing is closed.
    Cancel,
}
