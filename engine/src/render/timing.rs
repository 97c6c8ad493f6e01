//! How long the silences are: between turns, between sentences, around interruptions.
//!
//! Kokoro pads each pass with a variable amount of near-silence, so the renderer trims every
//! sentence to its audible extent plus a short fixed margin and then places it. Gaps are then
//! exactly what this module says, which is what makes them configurable and captions exact.
//!
//! Turn gaps default to 250–450 ms, varied per line (deterministically, so a re-render is the
//! same file) because identical gaps sound mechanical: an answer to a question comes a little
//! quicker, a speaker resuming after their own line a little slower. An interruption ("I think—"
//! then "—sorry") gets almost none. The script can set one gap for the whole episode (`gap:`)
//! and any line can set its own with a leading `[pause:]`.

use super::plan::LinePlan;

/// Audible threshold for trimming: about -54 dBFS.
const SILENCE: f32 = 0.002;
/// Kept before a sentence's first audible sample (the onset of a consonant is quiet).
pub const LEAD_MARGIN_SECS: f32 = 0.02;
/// Kept after its last audible sample (the decay of the last phoneme).
pub const TAIL_MARGIN_SECS: f32 = 0.05;
/// Silence between two sentences of one line, at speed 1.
pub const SENTENCE_GAP_SECS: f32 = 0.22;
/// The turn gap range when the script does not set one.
pub const TURN_GAP_RANGE: (f32, f32) = (0.25, 0.45);
/// The gap before a line that interrupts the one before it.
pub const INTERRUPTION_GAP_SECS: f32 = 0.03;

/// The audible part of `samples`, with margins, as a sample range.
#[must_use]
pub fn audible_range(samples: &[f32], sample_rate: u32, cut_off: bool) -> std::ops::Range<usize> {
    let first = samples.iter().position(|s| s.abs() > SILENCE);
    let last = samples.iter().rposition(|s| s.abs() > SILENCE);
    let (Some(first), Some(last)) = (first, last) else {
        return 0..0;
    };
    let lead = (LEAD_MARGIN_SECS * sample_rate as f32) as usize;
    // A cut-off line stops dead: the next speaker talks over its decay.
    let tail = if cut_off {
        lead
    } else {
        (TAIL_MARGIN_SECS * sample_rate as f32) as usize
    };
    first.saturating_sub(lead)..(last + 1 + tail).min(samples.len())
}

/// Seconds of silence before `next`, which follows `prev`.
#[must_use]
pub fn turn_gap(prev: &LinePlan, next: &LinePlan, episode_gap: Option<f32>) -> f32 {
    if let Some(lead) = next.lead_pause {
        return lead;
    }
    if prev.cut_off || next.barges_in {
        return INTERRUPTION_GAP_SECS;
    }
    if let Some(gap) = episode_gap {
        return gap.max(0.0);
    }
    let (lo, hi) = TURN_GAP_RANGE;
    let mut gap = 0.35;
    if ends_with_question(prev) && prev.speaker != next.speaker {
        gap -= 0.06;
    }
    if prev.speaker == next.speaker {
        gap += 0.06;
    }
    // ±40 ms of jitter, the same for the same line every time.
    let jitter = (hash(next.index) % 81) as f32 / 1000.0 - 0.04;
    (gap + jitter).clamp(lo, hi)
}

/// Silence between sentences of one line: a little longer when the line is slow.
#[must_use]
pub fn sentence_gap(speed: f32) -> f32 {
    SENTENCE_GAP_SECS / speed.max(0.25)
}

fn ends_with_question(line: &LinePlan) -> bool {
    line.steps.iter().rev().find_map(|s| match s {
        super::plan::Step::Speak(p) => Some(p.caption.trim_end().ends_with('?')),
        super::plan::Step::Silence(_) | super::plan::Step::Sound(_) => None,
    }) == Some(true)
}

/// A small integer hash (splitmix64) so gaps vary without a random number generator.
fn hash(i: usize) -> u64 {
    let mut z = (i as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::super::plan::{SentencePlan, Step};
    use super::*;
    use crate::script::Position;

    fn line(index: usize, speaker: &str, caption: &str) -> LinePlan {
        LinePlan {
            index,
            speaker: speaker.into(),
            voice: "af_heart".into(),
            steps: vec![Step::Speak(SentencePlan {
                caption: caption.into(),
                phonemes: "a".into(),
                speed: 1.0,
                words: Vec::new(),
                sounds: Vec::new(),
            })],
            position: Position::START,
            lead_pause: None,
            cut_off: false,
            barges_in: false,
        }
    }

    #[test]
    fn gaps_stay_in_range_and_vary() {
        let gaps: Vec<f32> = (1..200)
            .map(|i| turn_gap(&line(i - 1, "A", "Hi."), &line(i, "B", "Yes."), None))
            .collect();
        assert!(gaps
            .iter()
            .all(|g| (TURN_GAP_RANGE.0..=TURN_GAP_RANGE.1).contains(g)));
        let distinct: std::collections::BTreeSet<u32> =
            gaps.iter().map(|g| (g * 1000.0) as u32).collect();
        assert!(distinct.len() > 20, "gaps barely vary: {distinct:?}");
    }

    #[test]
    fn interruptions_and_overrides() {
        let mut a = line(0, "A", "I think—");
        a.cut_off = true;
        let b = line(1, "B", "Sorry.");
        assert!(turn_gap(&a, &b, Some(0.4)) < 0.05);
        let mut c = line(2, "A", "Go on.");
        c.lead_pause = Some(1.5);
        assert!((turn_gap(&b, &c, Some(0.4)) - 1.5).abs() < 1e-6);
        assert!((turn_gap(&b, &line(3, "A", "x"), Some(0.3)) - 0.3).abs() < 1e-6);
        // An answer comes quicker than a speaker resuming after their own line.
        let q = line(4, "A", "Ready?");
        let answer = turn_gap(&q, &line(5, "B", "Yes."), None);
        let resume = turn_gap(&line(4, "B", "Yes."), &line(5, "B", "Go."), None);
        assert!(answer < resume);
    }

    #[test]
    fn trims_to_audible_with_margins() {
        let mut s = vec![0.0f32; 24_000];
        for x in &mut s[6000..12_000] {
            *x = 0.5;
        }
        let r = audible_range(&s, 24_000, false);
        assert_eq!(r.start, 6000 - 480);
        assert_eq!(r.end, 12_000 + 1200);
        let cut = audible_range(&s, 24_000, true);
        assert!(cut.end < r.end);
        assert_eq!(audible_range(&[0.0; 100], 24_000, false), 0..0);
    }
}
