//! The sound-effects track: every `[sound: FILE]` played once from its place, faded in and out
//! (a few milliseconds by default, so no start or stop clicks), several at once when they
//! overlap.
//!
//! Why a block at a time: a file is opened only when its sound starts and dropped when it ends,
//! so memory is one block per sound playing, however many cues the episode has.

use std::f32::consts::FRAC_PI_2;
use std::path::PathBuf;

use super::{ClipSource, Opener};
use crate::render::RenderError;

/// A sound on the timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct SoundEvent {
    pub at: u64,
    pub path: PathBuf,
    /// Its length, as measured when the script was checked.
    pub len: u64,
    pub gain: f32,
    /// Fade in and out, in samples (at most half the sound each).
    pub fade: u64,
}

struct Voice {
    clip: Box<dyn ClipSource>,
    event: SoundEvent,
}

impl Voice {
    /// The fade envelope at sample `k` of the sound.
    fn envelope(&self, k: u64) -> f32 {
        let fade = self.event.fade.min(self.event.len / 2);
        if fade == 0 {
            return 1.0;
        }
        let edge = k.min(self.event.len.saturating_sub(k + 1));
        if edge >= fade {
            1.0
        } else {
            ((edge as f32 + 0.5) / fade as f32 * FRAC_PI_2).sin()
        }
    }
}

/// The sounds of an episode, written a block at a time.
pub struct Sounds<'o> {
    events: Vec<SoundEvent>,
    next: usize,
    voices: Vec<Voice>,
    open: &'o Opener<'o>,
    clip: Vec<f32>,
}

impl<'o> Sounds<'o> {
    #[must_use]
    pub fn new(mut events: Vec<SoundEvent>, open: &'o Opener<'o>) -> Self {
        events.sort_by_key(|e| e.at);
        Self {
            events,
            next: 0,
            voices: Vec::new(),
            open,
            clip: Vec::new(),
        }
    }

    /// Adds a sound placed after the blocks already filled (the studio's live mix holds its
    /// blocks back until every cue before their end is known).
    pub fn push(&mut self, event: SoundEvent) {
        let k = self.next + self.events[self.next..].partition_point(|e| e.at <= event.at);
        self.events.insert(k, event);
    }

    /// Where the last sound ends (the episode must last at least that long).
    #[must_use]
    pub fn end(&self) -> u64 {
        self.events.iter().map(|e| e.at + e.len).max().unwrap_or(0)
    }

    /// Writes the sounds of samples `start..start + out.len()` into `out` (which it
    /// overwrites); blocks must follow each other.
    pub fn fill(&mut self, start: u64, out: &mut [f32]) -> Result<(), RenderError> {
        out.fill(0.0);
        let end = start + out.len() as u64;
        while let Some(event) = self.events.get(self.next).filter(|e| e.at < end) {
            let clip = (self.open)(&event.path, false)?;
            self.voices.push(Voice {
                clip,
                event: event.clone(),
            });
            self.next += 1;
        }
        for v in &mut self.voices {
            let e = &v.event;
            let from = e.at.max(start);
            let to = (e.at + e.len).min(end);
            if from >= to {
                continue;
            }
            let n = (to - from) as usize;
            self.clip.clear();
            while self.clip.len() < n {
                let more = n - self.clip.len();
                if v.clip.read(&mut self.clip, more)? == 0 {
                    self.clip.resize(n, 0.0);
                }
            }
            let base = (from - start) as usize;
            for (i, s) in self.clip.iter().enumerate() {
                let k = from - e.at + i as u64;
                out[base + i] += s * e.gain * v.envelope(k);
            }
        }
        self.voices.retain(|v| v.event.at + v.event.len > end);
        Ok(())
    }
}
