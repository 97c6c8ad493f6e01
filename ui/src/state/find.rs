//! Find in the script (Ctrl+F): a bar above the editor whose query highlights every matching
//! line (in the lines view: turns whose speaker or spoken text contains it; in the raw view:
//! source lines) and jumps between them with Enter / Shift+Enter or the arrows, selecting the
//! turn so Play starts there. Matching ignores case. This is the bar's state and what matches;
//! the jump is carried out by the studio (`app::find`) and the bar drawn by [`crate::view::find`].

use crate::doc::Document;

#[derive(Debug, Default)]
pub struct FindBar {
    pub open: bool,
    pub query: String,
    /// Index into the matches of the one jumped to last.
    pub current: usize,
    /// Focus the query field on the next frame (Ctrl+F).
    pub(crate) focus: bool,
    /// Scroll the lines view to this turn on the next frame.
    pub(crate) scroll_to: Option<usize>,
}

impl FindBar {
    /// True when `text` contains the (non-empty) query, ignoring case.
    #[must_use]
    pub fn hits(&self, text: &str) -> bool {
        self.open
            && !self.query.is_empty()
            && text.to_lowercase().contains(&self.query.to_lowercase())
    }
}

/// The turns (episode line indices) that match `query`, in order.
#[must_use]
pub fn matching_lines(doc: &Document, bar: &FindBar) -> Vec<usize> {
    let Ok(ep) = &doc.parsed else {
        return Vec::new();
    };
    ep.lines
        .iter()
        .enumerate()
        .filter(|(_, l)| bar.hits(&l.speaker) || bar.hits(&ep.spoken_text(l)))
        .map(|(i, _)| i)
        .collect()
}
