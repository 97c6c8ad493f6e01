//! The music track: beds started by `[bed: FILE]`, looped or trimmed, crossfaded into the next
//! bed, faded out by `[bed: off]` or at the end of the episode, and ducked under speech.
//!
//! Why a block at a time: a bed may run under the whole episode, so its file is decoded as it
//! is played ([`ClipSource`], looping at its end) and only the block being written is in
//! memory. A block is cut at every cue inside it, so a bed starts on its sample.

use std::f32::consts::FRAC_PI_2;
use std::ops::Range;
use std::path::PathBuf;

use super::duck::Ducker;
use super::{ClipSource, Opener};
use crate::render::RenderError;

/// A bed cue on the timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct BedEvent {
    pub at: u64,
    pub action: BedAction,
}

/// What a bed cue does, its times in samples and its levels as gains.
#[derive(Debug, Clone, PartialEq)]
pub enum BedAction {
    /// Start this bed (fading in over `fade`); the one playing fades out over the same time.
    Start {
        path: PathBuf,
        gain: f32,
        fade: u64,
        duck_db: f32,
    },
    /// Fade the bed out over `fade`.
    Off { fade: u64 },
}

/// A bed that is playing.
struct Voice {
    clip: Box<dyn ClipSource>,
    start: u64,
    gain: f32,
    fade_in: u64,
    /// When it starts to fade out, and over how long.
    stop: (u64, u64),
    duck_db: f32,
}

impl Voice {
    fn envelope(&self, t: u64) -> f32 {
        let rise = ramp(t.saturating_sub(self.start), self.fade_in);
        let (at, len) = self.stop;
        let fall = if t < at { 1.0 } else { 1.0 - ramp(t - at, len) };
        (rise * FRAC_PI_2).sin() * (fall * FRAC_PI_2).sin()
    }

    fn ended(&self, t: u64) -> bool {
        t >= self.stop.0 + self.stop.1
    }
}

/// Progress `done / len`, from 0 to 1 (1 at once for a zero length).
fn ramp(done: u64, len: u64) -> f32 {
    if len == 0 {
        1.0
    } else {
        (done as f64 / len as f64).min(1.0) as f32
    }
}

/// The beds of an episode, written a block at a time.
pub struct Beds<'o> {
    events: Vec<BedEvent>,
    next: usize,
    voices: Vec<Voice>,
    ducker: Ducker,
    total: u64,
    open: &'o Opener<'o>,
    duck: Vec<f32>,
    clip: Vec<f32>,
}

impl<'o> Beds<'o> {
    /// `events` in order of time; `total` is the episode's length, where every bed ends.
    pub fn new(
        mut events: Vec<BedEvent>,
        ducker: Ducker,
        total: u64,
        open: &'o Opener<'o>,
    ) -> Self {
        events.sort_by_key(|e| e.at);
        Self {
            events,
            next: 0,
            voices: Vec::new(),
            ducker,
            total,
            open,
            duck: Vec::new(),
            clip: Vec::new(),
        }
    }

    /// A bed that plays while the timeline is still being walked (the studio's playback): its
    /// events and speech arrive as they are placed ([`Self::push`], [`Self::add_speech`]) and
    /// the episode's end once it is known ([`Self::end_at`]).
    #[must_use]
    pub fn open_ended(ducker: Ducker, open: &'o Opener<'o>) -> Self {
        Self::new(Vec::new(), ducker, u64::MAX, open)
    }

    /// Adds a cue placed after the blocks already filled (the live mix holds its blocks back
    /// until every cue before their end is known).
    pub fn push(&mut self, event: BedEvent) {
        let k = self.next + self.events[self.next..].partition_point(|e| e.at <= event.at);
        self.events.insert(k, event);
    }

    /// Adds the next span of speech to the side-chain ([`Ducker::add`]).
    pub fn add_speech(&mut self, speech: Range<u64>) {
        self.ducker.add(speech);
    }

    /// The episode ends at `total`: every bed still playing to the end fades out by then, as in
    /// the export, except that a fade cannot start before `now` (the first sample not yet
    /// filled), so it may run past `total`.
    pub fn end_at(&mut self, total: u64, now: u64) {
        let open_ended = self.total;
        self.total = total;
        for v in &mut self.voices {
            if v.stop == (open_ended.saturating_sub(v.fade_in).max(v.start), v.fade_in) {
                let fade = v.fade_in;
                v.stop = (total.saturating_sub(fade).max(v.start).max(now), fade);
            }
        }
    }

    /// Where the last bed playing has faded out (0 when none plays).
    #[must_use]
    pub fn end(&self) -> u64 {
        self.voices
            .iter()
            .map(|v| v.stop.0.saturating_add(v.stop.1))
            .max()
            .unwrap_or(0)
    }

    /// Writes the music of samples `start..start + out.len()` into `out` (which it overwrites);
    /// blocks must follow each other.
    pub fn fill(&mut self, start: u64, out: &mut [f32]) -> Result<(), RenderError> {
        out.fill(0.0);
        self.duck.resize(out.len(), 0.0);
        self.ducker.fill(start, &mut self.duck);
        let end = start + out.len() as u64;
        let mut from = start;
        while from < end {
            while self.events.get(self.next).is_some_and(|e| e.at <= from) {
                let event = self.events[self.next].clone();
                self.next += 1;
                self.apply(event)?;
            }
            let to = self
                .events
                .get(self.next)
                .map_or(end, |e| e.at.clamp(from + 1, end));
            let range = (from - start) as usize..(to - start) as usize;
            let duck = std::mem::take(&mut self.duck);
            let played = self.play(from, &mut out[range.clone()], &duck[range]);
            self.duck = duck;
            played?;
            from = to;
        }
        self.voices.retain(|v| !v.ended(end));
        Ok(())
    }

    fn apply(&mut self, event: BedEvent) -> Result<(), RenderError> {
        let fade = match &event.action {
            BedAction::Start { fade, .. } | BedAction::Off { fade } => *fade,
        };
        for v in &mut self.voices {
            if event.at < v.stop.0 {
                v.stop = (event.at, fade);
            }
        }
        if let BedAction::Start {
            path,
            gain,
            fade,
            duck_db,
        } = event.action
        {
            let clip = (self.open)(&path, true)?;
            self.voices.push(Voice {
                clip,
                start: event.at,
                gain,
                fade_in: fade,
                // Every bed still playing at the end fades out with the episode.
                stop: (self.total.saturating_sub(fade).max(event.at), fade),
                duck_db,
            });
        }
        Ok(())
    }

    /// Adds every playing bed to `out` (which starts at sample `from`).
    fn play(&mut self, from: u64, out: &mut [f32], duck: &[f32]) -> Result<(), RenderError> {
        for v in &mut self.voices {
            if v.ended(from) {
                continue;
            }
            self.clip.clear();
            while self.clip.len() < out.len() {
                let want = out.len() - self.clip.len();
                if v.clip.read(&mut self.clip, want)? == 0 {
                    self.clip.resize(out.len(), 0.0);
                }
            }
            let full = 10f32.powf(-v.duck_db / 20.0);
            for (i, (o, s)) in out.iter_mut().zip(&self.clip).enumerate() {
                let t = from + i as u64;
                let ducked = match duck[i] {
                    0.0 => 1.0,
                    1.0 => full,
                    d => 10f32.powf(-v.duck_db * d / 20.0),
                };
                *o += s * v.gain * v.envelope(t) * ducked;
            }
        }
        Ok(())
    }
}
