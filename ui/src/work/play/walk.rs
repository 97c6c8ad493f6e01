//! One playback's walk over the export's timeline: each placement turned into what the studio
//! folds in (the speech for the waveform, the live mix for the play buffer, the cues for the
//! sound lane, the words for the highlight), in order.
//!
//! Why apart from the thread that runs it: where a sentence's audio comes from (the studio's
//! cache, the render cache, the model) is the caller's, so the walk and its mix can be tested
//! with any audio at all, no model needed.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use engine::render::mix::{LiveMix, Opener, SoundFiles};
use engine::render::{LinePlan, Placement, SentenceAudio, SentenceSlot, SoundMark, Timeline};
use engine::script::{CueAction, Episode};

use super::PlayEvent;
use crate::work::Failure;

/// A sentence's audio, or `None` when the playback was stopped while it rendered.
pub(super) type Speech<'s> =
    dyn FnMut(&SentenceSlot<'_>) -> Result<Option<Arc<SentenceAudio>>, Failure> + 's;

/// What a walk works with.
pub(super) struct Walk<'a> {
    pub plans: &'a [LinePlan],
    pub episode: &'a Episode,
    /// The cue files, found and measured.
    pub files: &'a SoundFiles,
    /// The line index playback starts from.
    pub from: usize,
    pub open: &'a Opener<'a>,
    pub cancel: &'a AtomicBool,
}

impl Walk<'_> {
    /// Walks the timeline from the start line, asking `speech` for each sentence's audio and
    /// handing every event to `emit`; stops quietly when cancelled.
    pub fn run(
        &self,
        speech: &mut Speech<'_>,
        emit: &mut dyn FnMut(PlayEvent),
    ) -> Result<(), Failure> {
        let mut walk = Timeline::new(self.plans, self.from, self.episode.settings.gap_secs);
        let mut live = LiveMix::new(self.episode, self.files, self.open);
        if let Some(carried) = live.carry_bed(self.plans, self.from)? {
            self.cues(&mut live, vec![carried], emit)?;
        }
        while let Some(placement) = walk.next() {
            if self.cancel.load(Ordering::Relaxed) {
                return Ok(());
            }
            // A cue alone on its line is placed before the silence that is its wait.
            self.cues(&mut live, walk.take_sounds(), emit)?;
            match placement {
                Placement::Silence(n) => {
                    live.silence(n);
                    emit(PlayEvent::Speech(vec![0.0; n]));
                }
                Placement::LineStart { plan, at } => emit(PlayEvent::LineStart {
                    line: plan.index,
                    speaker: plan.speaker.clone(),
                    at: usize::try_from(at).unwrap_or(usize::MAX),
                }),
                Placement::Sentence(slot) => {
                    let Some(audio) = speech(&slot)? else {
                        return Ok(());
                    };
                    let placed = walk.place(&slot, &audio.samples, &audio.durations);
                    let kept = &audio.samples[placed.keep];
                    live.speech(kept);
                    emit(PlayEvent::Speech(kept.to_vec()));
                    // Cues among the words land at their words' times.
                    self.cues(&mut live, walk.take_sounds(), emit)?;
                    if !placed.cue.words.is_empty() {
                        let line = slot.plan.index;
                        let words = placed.cue.words;
                        emit(PlayEvent::Words { line, words });
                    }
                }
                Placement::LineEnd(_) => {}
            }
            let (mut heard, mut cues) = (Vec::new(), Vec::new());
            live.mix(&mut heard, &mut cues)?;
            if !heard.is_empty() {
                emit(PlayEvent::Mixed { heard, cues });
            }
        }
        self.cues(&mut live, walk.take_sounds(), emit)?;
        let (mut heard, mut cues) = (Vec::new(), Vec::new());
        live.finish(&mut heard, &mut cues)?;
        if !heard.is_empty() {
            emit(PlayEvent::Mixed { heard, cues });
        }
        Ok(())
    }

    /// Gives the cues placed to the mix and to the sound lane (a sound with its length).
    fn cues(
        &self,
        live: &mut LiveMix<'_>,
        marks: Vec<SoundMark>,
        emit: &mut dyn FnMut(PlayEvent),
    ) -> Result<(), Failure> {
        if marks.is_empty() {
            return Ok(());
        }
        live.cues(&marks)?;
        let with_len = marks
            .into_iter()
            .map(|m| {
                let len = match &m.cue.action {
                    CueAction::Sound { file, .. } => self.files.get(file).and_then(|f| f.samples),
                    CueAction::Bed { .. } | CueAction::BedOff { .. } => None,
                };
                (m, len)
            })
            .collect();
        emit(PlayEvent::Cues(with_len));
        Ok(())
    }
}
