//! Undo and redo as the studio carries them out: the [`crate::history::History`] puts the
//! document back and the status bar says what happened. Here, beside the other `impl Studio`
//! files, because it changes the studio's document and message.

use super::Studio;

impl Studio {
    /// Undoes the last script or cast change (Ctrl+Z).
    pub fn undo(&mut self) {
        if self.history.undo(&mut self.doc) {
            self.say("undone");
        } else {
            self.say("nothing to undo");
        }
    }

    /// Redoes the last undone change (Ctrl+Shift+Z, Ctrl+Y).
    pub fn redo(&mut self) {
        if self.history.redo(&mut self.doc) {
            self.say("redone");
        } else {
            self.say("nothing to redo");
        }
    }
}
