//! The mix as the studio's playback hears it: the export's own beds, sounds and side-chain
//! ([`Beds`], [`Sounds`], [`Ducker`]) fed while the timeline is still being walked, so what the
//! author hears is the export's mix (before loudness normalisation) without a second mixer.
//!
//! Why it holds audio back: the export knows every sentence before it writes the music, but
//! playback hears the episode as it is rendered. The side-chain starts to duck a bed
//! [`Ducker::lead`] samples before a voice starts, and a cue is known only once the walk has
//! placed it, so a sample is final once the walk has placed everything up to `lead` samples
//! after it: [`LiveMix::mix`] gives out exactly those, a block at a time. That is 50 ms, not a
//! pause in playback. An episode without cues passes its speech straight through.
//!
//! Two differences from the export, both at the edges of what playback renders. Playing from a
//! line under a bed started earlier starts that bed at the first sample (from the file's start,
//! fading in), since the walk never reaches the earlier cue; and a bed still playing at the end
//! fades out as the export's does, except that a fade that would start before the samples
//! already heard starts there and runs past the end.

use std::collections::VecDeque;

use crate::script::{CueAction, Episode};

use super::super::plan::{LinePlan, Step};
use super::super::timeline::SoundMark;
use super::super::RenderError;
use super::bed::Beds;
use super::duck::Ducker;
use super::sfx::Sounds;
use super::{event, Event, Opener, SoundFiles, BLOCK};
use crate::speech::SAMPLE_RATE;

/// The live mix of one playback (see the module docs).
pub struct LiveMix<'o> {
    episode: &'o Episode,
    files: &'o SoundFiles,
    sounds: Sounds<'o>,
    beds: Beds<'o>,
    /// Whether any cue plays: without one the speech passes straight through.
    active: bool,
    /// Speech and silence placed but not yet mixed: samples `mixed..mixed + pending.len()`.
    pending: VecDeque<f32>,
    mixed: u64,
    lead: u64,
    music: Vec<f32>,
    sfx: Vec<f32>,
}

impl<'o> LiveMix<'o> {
    /// A mix of the cues of `episode`, their files found in `files` (by
    /// [`resolve`](fn@super::resolve)) and opened with `open`.
    #[must_use]
    pub fn new(episode: &'o Episode, files: &'o SoundFiles, open: &'o Opener<'o>) -> Self {
        let ducker = Ducker::new(&[], SAMPLE_RATE);
        let lead = if files.is_empty() { 0 } else { ducker.lead() };
        Self {
            episode,
            files,
            sounds: Sounds::new(Vec::new(), open),
            beds: Beds::open_ended(ducker, open),
            active: !files.is_empty(),
            pending: VecDeque::new(),
            mixed: 0,
            lead,
            music: Vec::new(),
            sfx: Vec::new(),
        }
    }

    /// Samples placed so far (the walk's position).
    #[must_use]
    pub fn placed(&self) -> u64 {
        self.mixed + self.pending.len() as u64
    }

    /// Plays the bed that is on at line `from` of `plans` from the first sample, when playback
    /// starts there: the walk from `from` never meets the cue that started it.
    ///
    /// The bed's cue, placed at the first sample, when there is one (what a sound lane shows).
    ///
    /// # Errors
    /// The bed's file was not checked (see [`Self::cues`]).
    pub fn carry_bed(
        &mut self,
        plans: &[LinePlan],
        from: usize,
    ) -> Result<Option<SoundMark>, RenderError> {
        let mut on = None;
        for plan in plans.iter().filter(|p| p.index < from) {
            for step in &plan.steps {
                let cues: Vec<_> = match step {
                    Step::Sound(s) => vec![&s.cue],
                    Step::Speak(s) => s.sounds.iter().map(|i| &i.cue).collect(),
                    Step::Silence(_) => Vec::new(),
                };
                for cue in cues {
                    match cue.action {
                        CueAction::Bed { .. } => on = Some((cue, plan.index)),
                        CueAction::BedOff { .. } => on = None,
                        CueAction::Sound { .. } => {}
                    }
                }
            }
        }
        let Some((cue, line)) = on else {
            return Ok(None);
        };
        let mark = SoundMark {
            cue: cue.clone(),
            at: self.placed(),
            line,
        };
        self.cues(std::slice::from_ref(&mark))?;
        Ok(Some(mark))
    }

    /// Silence placed by the walk.
    pub fn silence(&mut self, n: usize) {
        self.pending.extend(std::iter::repeat_n(0.0, n));
    }

    /// A sentence placed by the walk: it sounds, and ducks the beds.
    pub fn speech(&mut self, samples: &[f32]) {
        let at = self.placed();
        self.beds.add_speech(at..at + samples.len() as u64);
        self.pending.extend(samples);
    }

    /// Cues the walk placed ([`super::super::Timeline::take_sounds`]); none is earlier than the
    /// samples already mixed.
    ///
    /// # Errors
    /// A cue whose file `files` does not hold (it was not checked), at the cue.
    pub fn cues(&mut self, marks: &[SoundMark]) -> Result<(), RenderError> {
        for mark in marks {
            let mut mark = mark.clone();
            mark.at = mark.at.max(self.mixed);
            match event(&mark, self.files, self.episode)? {
                Event::Sound(e) => self.sounds.push(e),
                Event::Bed(e) => self.beds.push(e),
            }
            self.active = true;
        }
        Ok(())
    }

    /// Appends to `heard` the mix (speech, beds and sounds) of every sample that is final, and
    /// to `cues` the beds and sounds alone (what the timeline's sound lane draws; nothing when
    /// no cue plays).
    ///
    /// # Errors
    /// A sound file that no longer decodes.
    pub fn mix(&mut self, heard: &mut Vec<f32>, cues: &mut Vec<f32>) -> Result<(), RenderError> {
        let ready = self.placed().saturating_sub(self.lead);
        self.mix_to(ready, heard, cues)
    }

    /// The walk has ended: mixes everything left, and on until the last sound has played and
    /// the last bed has faded out.
    ///
    /// # Errors
    /// A sound file that no longer decodes.
    pub fn finish(&mut self, heard: &mut Vec<f32>, cues: &mut Vec<f32>) -> Result<(), RenderError> {
        let total = self.placed().max(self.sounds.end());
        self.beds.end_at(total, self.mixed);
        loop {
            let end = total.max(self.sounds.end()).max(self.beds.end());
            if self.mixed >= end {
                return Ok(());
            }
            let to = end.min(self.mixed + BLOCK as u64);
            let more = usize::try_from(to.saturating_sub(self.placed())).unwrap_or(0);
            self.silence(more);
            self.mix_to(to, heard, cues)?;
        }
    }

    fn mix_to(
        &mut self,
        to: u64,
        heard: &mut Vec<f32>,
        cues: &mut Vec<f32>,
    ) -> Result<(), RenderError> {
        if !self.active {
            heard.extend(self.pending.drain(..));
            self.mixed = self.placed();
            return Ok(());
        }
        while self.mixed < to {
            let n = usize::try_from(to - self.mixed).map_or(BLOCK, |left| left.min(BLOCK));
            self.music.resize(n, 0.0);
            self.sfx.resize(n, 0.0);
            self.beds.fill(self.mixed, &mut self.music)?;
            self.sounds.fill(self.mixed, &mut self.sfx)?;
            for ((speech, music), sfx) in self.pending.drain(..n).zip(&self.music).zip(&self.sfx) {
                heard.push(speech + music + sfx);
                cues.push(music + sfx);
            }
            self.mixed += n as u64;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
