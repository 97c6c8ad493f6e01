//! The side-chain that ducks a bed under speech: how far down the bed is at every sample.
//!
//! Why from the timeline rather than a level detector on the voices: the renderer knows to the
//! sample where every sentence is (it placed them), so the key is exact and does not depend on
//! a threshold, a voice's loudness or a breath. The envelope is the one a side-chain compressor
//! with look-ahead draws: it starts falling [`ATTACK_SECS`] before a sentence (so the first
//! syllable is never masked; offline, looking ahead is free) and reaches the full depth as the
//! voice starts; it holds through the short gaps between sentences and turns ([`HOLD_SECS`]), so
//! the music does not pump, then rises over [`RELEASE_SECS`] in a real pause, a sound, the
//! intro. Ramps are straight lines in decibels, which is how the ear hears a fade.
//!
//! [`Ducker::fill`] writes the envelope as a fraction of the depth (0: the bed at its level, 1:
//! down by the cue's `duck=`), a block at a time; its state is a position in the sentence list
//! and the current level, so the episode's length costs nothing.

use std::ops::Range;

/// The bed reaches its ducked level over this long, ending as the voice starts.
pub const ATTACK_SECS: f64 = 0.05;
/// It rises back over this long once the speech has stopped for [`HOLD_SECS`].
pub const RELEASE_SECS: f64 = 0.4;
/// Speech gaps shorter than this (between sentences, between turns) keep the bed down.
pub const HOLD_SECS: f64 = 0.5;

/// The ducking envelope over a sorted list of speech spans.
pub struct Ducker {
    /// Where the bed must be down: each span of speech widened by the attack before it and the
    /// hold after it, overlapping ones merged.
    keyed: Vec<Range<u64>>,
    next: usize,
    level: f64,
    /// The attack's look-ahead and the hold, in samples.
    lead: u64,
    hold: u64,
    attack_step: f64,
    release_step: f64,
}

impl Ducker {
    /// `speech`: the samples (at `rate`) where a voice sounds, in order.
    #[must_use]
    pub fn new(speech: &[Range<u64>], rate: u32) -> Self {
        let rate = f64::from(rate.max(1));
        let mut ducker = Self {
            keyed: Vec::with_capacity(speech.len()),
            next: 0,
            level: 0.0,
            lead: (ATTACK_SECS * rate).round() as u64,
            hold: (HOLD_SECS * rate).round() as u64,
            attack_step: 1.0 / (ATTACK_SECS * rate).max(1.0),
            release_step: 1.0 / (RELEASE_SECS * rate).max(1.0),
        };
        for r in speech {
            ducker.add(r.clone());
        }
        ducker
    }

    /// Adds the next span of speech (after every span added before), for a timeline that is
    /// still being walked (the studio's playback). The envelope before `lead()` samples ahead of
    /// the span's start is already final, so blocks up to there may be filled before it is known.
    pub fn add(&mut self, speech: Range<u64>) {
        if speech.is_empty() {
            return;
        }
        let widened = speech.start.saturating_sub(self.lead)..speech.end + self.hold;
        match self.keyed.last_mut() {
            Some(last) if widened.start <= last.end => last.end = last.end.max(widened.end),
            _ => self.keyed.push(widened),
        }
    }

    /// How far ahead of the speech the envelope starts to fall, in samples: a live mix holds
    /// back this much so the bed is already down when the voice starts.
    #[must_use]
    pub fn lead(&self) -> u64 {
        self.lead
    }

    /// Writes the level (0 to 1) of samples `start..start + out.len()`; blocks must follow each
    /// other.
    pub fn fill(&mut self, start: u64, out: &mut [f32]) {
        for (i, o) in out.iter_mut().enumerate() {
            let t = start + i as u64;
            while self.keyed.get(self.next).is_some_and(|r| r.end <= t) {
                self.next += 1;
            }
            let down = self.keyed.get(self.next).is_some_and(|r| r.start <= t);
            self.level = if down {
                (self.level + self.attack_step).min(1.0)
            } else {
                (self.level - self.release_step).max(0.0)
            };
            *o = self.level as f32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RATE: u32 = 1000;

    fn envelope(speech: &[Range<u64>], len: usize, block: usize) -> Vec<f32> {
        let mut d = Ducker::new(speech, RATE);
        let mut out = vec![0.0; len];
        for (k, chunk) in out.chunks_mut(block).enumerate() {
            d.fill((k * block) as u64, chunk);
        }
        out
    }

    #[test]
    #[allow(clippy::float_cmp)] // the envelope clamps to exactly 0 and 1
    fn down_before_the_voice_held_through_short_gaps_up_in_pauses() {
        // Speech 1.0–2.0 s, 2.3–3.0 s (a 0.3 s gap), then 5.0–6.0 s after a 2 s pause.
        let e = envelope(&[1000..2000, 2300..3000, 5000..6000], 8000, 333);
        assert_eq!(e[900], 0.0, "not yet");
        assert!(e[951] > 0.0 && e[990] < 1.0, "the attack's look-ahead");
        assert_eq!(e[1000], 1.0, "fully down as the voice starts");
        assert!(
            e[2000..3000].iter().all(|&x| x == 1.0),
            "held through the gap"
        );
        assert_eq!(e[3499], 1.0, "still held");
        assert!((e[3700] - 0.5).abs() < 0.01, "half way up the release");
        assert!(e[3901..4950].iter().all(|&x| x == 0.0), "up in the pause");
        assert_eq!(e[5000], 1.0);
        assert_eq!(e[7999], 0.0);
    }

    #[test]
    fn blocks_of_any_size_draw_the_same_envelope() {
        let speech = [100..400, 420..900, 3000..3100];
        let whole = envelope(&speech, 5000, 5000);
        for block in [1, 7, 64, 1024] {
            assert_eq!(envelope(&speech, 5000, block), whole, "block {block}");
        }
    }
}
