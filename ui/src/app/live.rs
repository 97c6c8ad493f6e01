//! Editing while playing: when the script or cast changes during playback, playback restarts
//! from the line being heard once the edits settle ([`SETTLE`]), so the author hears the change
//! at once. Every sentence that did not change comes from the playback sentence cache
//! ([`crate::work::sentences`]): only the edited line is rendered again.

use std::time::{Duration, Instant};

use crate::app::Studio;

/// Edits must rest this long before playback follows them (typing restarts nothing).
pub const SETTLE: Duration = Duration::from_millis(400);

impl Studio {
    /// Called every frame after the panels: restarts playback after an edit (see module docs).
    pub(crate) fn follow_edits(&mut self) {
        let revision = self.doc.revision;
        if self.edit_seen.0 != revision {
            self.edit_seen = (revision, Instant::now());
        }
        // Only while audible: a paused playback waits for Play, which renders the edit then.
        if !self.buffer.is_playing()
            || self.tasks.preview.is_some()
            || self.waveform.revision == revision
            || self.waveform.revision == u64::MAX
            || self.edit_seen.1.elapsed() < SETTLE
        {
            return;
        }
        let Ok(episode) = &self.doc.parsed else {
            // Wait for the script to parse again; the old audio plays on meanwhile.
            return;
        };
        let lines = episode.lines.len();
        let line = self
            .waveform
            .region_at(self.buffer.position())
            .map_or(self.waveform.start_line, |r| r.line);
        self.selected = line.min(lines.saturating_sub(1));
        self.play();
        self.say("playing the edit: only changed lines are rendered again");
    }

    /// Sentences played from the cache and sentences rendered, since the studio started.
    #[must_use]
    pub fn sentence_stats(&self) -> (usize, usize) {
        self.sentences.stats()
    }
}
