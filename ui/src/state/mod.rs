//! State the views draw but do not own: each panel's or dialog's settings and buffers, kept in
//! [`crate::Studio`] and changed only by [`crate::Studio::apply`]. A view file reads these and
//! emits [`crate::command::Command`]s. The rules that keep them consistent (Opus has no
//! 44.1 kHz, a destination gets the format's extension, a blend needs a weight above zero) live
//! here, beside the state, so a view and a test see the same rules.

pub mod blend;
pub mod dialogs;
pub mod export;
pub mod find;

/// How the script editor shows the script: as parsed lines or as raw text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditorMode {
    Lines,
    Raw,
}
