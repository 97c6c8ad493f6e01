//! The two things a clicked word does in the studio: seek to it, or play from it (at once when it
//! has been rendered, or once its line's words arrive). Where a word is in the shown text, and
//! where a seek to it lands, are [`crate::words`]' pure functions; this file applies them to the
//! studio's waveform and play buffer.

use crate::words::{seek_target, word_index_at, PendingWord};

use super::Studio;

impl Studio {
    /// The text the lines view shows for turn `line`.
    fn shown_text(&self, line: usize) -> Option<String> {
        let ep = self.doc.parsed.as_ref().ok()?;
        ep.lines.get(line).map(|l| ep.spoken_text(l))
    }

    /// Where playing the word at byte `at` of turn `line`'s shown text starts in the rendered
    /// audio ([`seek_target`]).
    #[must_use]
    pub fn word_start(&self, line: usize, at: usize) -> Option<usize> {
        let region = self
            .waveform
            .regions
            .iter()
            .rev()
            .find(|r| r.line == line)?;
        if region.words.is_empty() {
            return None;
        }
        let shown = self.shown_text(line)?;
        let k = word_index_at(&shown, region.words.iter().map(|w| w.text.as_str()), at)?;
        Some(seek_target(&region.words, k, region.start))
    }

    /// A click on the text of turn `line` at byte `at`: the playhead moves to the word there if
    /// it has been rendered (and playing, if it was, goes on from it); otherwise the line is
    /// selected, as a click always did.
    pub(crate) fn seek_word(&mut self, line: usize, at: usize) {
        match self.word_start(line, at) {
            Some(sample) if sample <= self.buffer.len() => self.seek(sample),
            _ => self.selected = line,
        }
    }

    /// "Play from here": plays from the word at byte `at` of turn `line`. A word already in the
    /// audio (of the script as it is now) is a seek. Otherwise playback is rendered from the
    /// line and waits, paused, until the line's words arrive, then starts at the word; that is
    /// simpler and surer than planning the line here to find the word's sentence, and costs no
    /// more than the line's first sentences, which playback renders first anyway. If no words
    /// come (a line the model gave no durations for), it plays from the line's start.
    pub(crate) fn play_from_word(&mut self, line: usize, at: usize) {
        if self.waveform.revision == self.doc.revision {
            if let Some(sample) = self.word_start(line, at).filter(|&s| s < self.buffer.len()) {
                self.seek(sample);
                self.sound_on();
                return;
            }
        }
        self.selected = line;
        self.play();
        if self.tasks.play.is_some() {
            self.buffer.set_playing(false);
            self.pending_word = Some(PendingWord { line, at });
        }
    }

    /// Called after the playback events are drained: starts a pending "Play from here" once its
    /// word (or the end of its line) has arrived.
    pub(crate) fn resolve_pending_word(&mut self) {
        let Some(p) = self.pending_word else {
            return;
        };
        if let Some(sample) = self
            .word_start(p.line, p.at)
            .filter(|&s| s < self.buffer.len())
        {
            self.seek(sample);
        } else {
            let line_over = self.tasks.play.is_none()
                || self.waveform.complete
                || self
                    .waveform
                    .regions
                    .last()
                    .is_some_and(|r| r.line != p.line);
            if !line_over {
                return;
            }
        }
        self.pending_word = None;
        self.sound_on();
    }
}
