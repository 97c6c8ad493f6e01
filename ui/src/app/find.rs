//! Find in the script, as the studio carries it out: opening the bar and jumping between the
//! matching turns (the bar's state and what matches are [`crate::state::find`]; the bar is drawn
//! by [`crate::view::find`]). Here because jumping selects a turn, which is the studio's state.

use crate::state::find::matching_lines;

use super::Studio;

impl Studio {
    /// Opens the find bar and focuses its field.
    pub fn open_find(&mut self) {
        self.find.open = true;
        self.find.focus = true;
    }

    /// Jumps to the next (or previous) matching turn and selects it.
    pub fn find_step(&mut self, forward: bool) {
        let hits = matching_lines(&self.doc, &self.find);
        if hits.is_empty() {
            return;
        }
        // From the selected turn, so a jump after clicking elsewhere starts there.
        let next = if forward {
            hits.iter().position(|&l| l > self.selected).unwrap_or(0)
        } else {
            hits.iter()
                .rposition(|&l| l < self.selected)
                .unwrap_or(hits.len() - 1)
        };
        self.find.current = next;
        self.selected = hits[next];
        self.find.scroll_to = Some(hits[next]);
    }

    /// The selected turn (episode line index): where Play starts, where Find jumped.
    #[must_use]
    pub fn selected_line(&self) -> usize {
        self.selected
    }

    /// The turns matching the find bar's query.
    #[must_use]
    pub fn find_matches(&self) -> Vec<usize> {
        matching_lines(&self.doc, &self.find)
    }
}
