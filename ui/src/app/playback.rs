//! Playback as the studio carries it out: play from the selected line (rendered through the
//! scheduler and heard as it arrives), pause and resume, stop, seek. The render itself is
//! [`crate::work::play`]; the samples cross to the sound card through [`crate::audio`].

use std::sync::Arc;

use crate::waveform::Waveform;
use crate::work::play;

use super::{EngineState, Studio};

impl Studio {
    /// Plays from the selected line: renders through the scheduler and plays as audio arrives.
    pub fn play(&mut self) {
        let EngineState::Ready(engine) = &self.engine else {
            self.say("the model is not loaded yet");
            return;
        };
        let handle = engine.engine.clone();
        let Some(episode) = self.doc.episode() else {
            self.say("fix the script's error first");
            return;
        };
        self.stop();
        self.buffer.clear();
        self.waveform = Waveform::new(self.doc.revision, self.selected);
        self.tasks.play = Some(play::start(
            handle,
            episode,
            self.selected,
            self.doc.project_dir(),
            Arc::clone(&self.sentences),
            self.config.library.clone(),
            self.waker.clone(),
        ));
        self.sound_on();
    }

    /// Whether there is an audio output to hear playback on. Without one, Play and "Play from
    /// here" still render to the timeline (and export works), but nothing is set playing: a
    /// playhead that cannot move is never shown as moving, and the transport says why once,
    /// beside the Play button.
    #[must_use]
    pub fn can_sound(&self) -> bool {
        self.audio_error.is_none()
    }

    /// Why nothing can be heard, while that is so (the transport shows it).
    #[must_use]
    pub fn audio_problem(&self) -> Option<&str> {
        self.audio_error.as_deref()
    }

    /// Sets the rendered audio playing, if there is an output to hear it on.
    pub(crate) fn sound_on(&self) {
        if self.can_sound() {
            self.buffer.set_playing(true);
        }
    }

    /// Pauses playback if it is running (or about to start at a word); resumes (or starts) it
    /// otherwise. It resumes where the playhead is when the selected line is the one playback
    /// started from or the one under the playhead (a word clicked while paused).
    pub fn toggle_play(&mut self) {
        let position = self.buffer.position();
        let at_selected = self.waveform.start_line == self.selected
            || self
                .waveform
                .region_at(position)
                .is_some_and(|r| r.line == self.selected);
        if !self.can_sound() {
            // Nothing to pause or resume: render (again, from the cache, if the timeline is
            // stale) unless a render is already under way.
            if self.tasks.play.is_none() {
                self.play();
            }
        } else if self.pending_word.take().is_some() || self.buffer.is_playing() {
            self.buffer.set_playing(false);
        } else if !self.buffer.is_empty()
            && self.waveform.revision == self.doc.revision
            && at_selected
            && position < self.buffer.len()
        {
            self.sound_on();
        } else {
            self.play();
        }
    }

    /// Stops playback and its render.
    pub fn stop(&mut self) {
        self.buffer.set_playing(false);
        self.pending_word = None;
        if let Some(job) = self.tasks.play.take() {
            job.stop();
        }
        if let Some(job) = self.tasks.preview.take() {
            job.stop();
        }
    }

    /// Moves the playhead to `sample` of the rendered audio.
    pub fn seek(&mut self, sample: usize) {
        self.buffer.seek(sample);
        if let Some(r) = self.waveform.region_at(sample) {
            self.selected = r.line;
        }
    }
}
