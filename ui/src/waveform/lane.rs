//! The sound lane under the speech: where each sound cue of the rendered audio plays (a sound
//! from its start to its last sample, a bed until the next bed cue's fade is done or to the end)
//! and the envelope of the beds and sounds together, as the listener hears them (ducked under
//! the voices, faded), so the author sees what each cue does before exporting.
//!
//! Why here, beside the speech's [`super::Waveform`]: it grows the same way, from the playback
//! worker's reports, and is thrown away with it when the script changes.

use engine::render::SoundMark;
use engine::script::{CueAction, SoundCue};
use engine::SAMPLE_RATE;

use super::Envelope;

/// One cue on the lane, in samples of the playback.
#[derive(Debug, Clone, PartialEq)]
pub struct LaneCue {
    /// The cue as the script wrote it (its file, options and place).
    pub cue: SoundCue,
    /// Index of the script line that holds it.
    pub line: usize,
    pub start: usize,
    /// Where it falls silent; `None` for a bed still playing at the end of what is rendered.
    pub end: Option<usize>,
}

impl LaneCue {
    /// What the lane writes on it: the file's name (its folder is in the hover), or `bed off`.
    #[must_use]
    pub fn label(&self) -> String {
        self.cue.action.file().map_or_else(
            || "bed off".to_owned(),
            |f| f.rsplit(['/', '\\']).next().unwrap_or(f).to_owned(),
        )
    }

    /// Whether it is a bed (or a bed's end).
    #[must_use]
    pub fn is_bed(&self) -> bool {
        !matches!(self.cue.action, CueAction::Sound { .. })
    }
}

/// The cues of the rendered audio and the envelope of their sound.
#[derive(Debug, Clone, Default)]
pub struct SoundLane {
    pub cues: Vec<LaneCue>,
    pub envelope: Envelope,
}

impl SoundLane {
    /// Whether any cue plays in the rendered audio.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.cues.is_empty()
    }

    /// A cue placed at `mark.at`; `len` is a sound's length in samples. A bed cue ends the bed
    /// playing before it once its fade (the crossfade) is done.
    pub fn add(&mut self, mark: &SoundMark, len: Option<u64>) {
        let at = to_usize(mark.at);
        let end = match &mark.cue.action {
            CueAction::Sound { .. } => Some(at + to_usize(len.unwrap_or(0))),
            CueAction::Bed { fade_secs, .. } | CueAction::BedOff { fade_secs } => {
                let faded = at + fade_samples(*fade_secs);
                for open in self
                    .cues
                    .iter_mut()
                    .filter(|c| c.is_bed() && c.end.is_none())
                {
                    open.end = Some(faded);
                }
                matches!(mark.cue.action, CueAction::BedOff { .. }).then_some(faded)
            }
        };
        self.cues.push(LaneCue {
            cue: mark.cue.clone(),
            line: mark.line,
            start: at,
            end,
        });
    }

    /// The beds and sounds as heard (what the envelope draws).
    pub fn push(&mut self, samples: &[f32]) {
        self.envelope.push(samples);
    }

    /// The audio ends at `end`: a bed still playing ends there.
    pub fn finish(&mut self, end: usize) {
        for open in self.cues.iter_mut().filter(|c| c.end.is_none()) {
            open.end = Some(end.max(open.start));
        }
    }
}

fn fade_samples(secs: f32) -> usize {
    (secs.max(0.0) * SAMPLE_RATE as f32).round() as usize
}

fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::script::{Episode, ParseOptions};

    #[test]
    fn sounds_span_their_length_and_beds_run_to_the_next_bed_cue_or_the_end() {
        let text = "[bed: music/a.mp3 fade=1s]\nAnn: Hi.\n[sound: door.wav]\n[bed: b.mp3 fade=0.5s]\nBen: Yo.\n[bed: off fade=2s]\n[bed: c.ogg]\nAnn: Bye.\n";
        let ep = Episode::parse("ep", text, &ParseOptions::default()).expect("parses");
        let sr = SAMPLE_RATE as u64;
        let mut lane = SoundLane::default();
        let ats = [0, 2 * sr, 3 * sr, 5 * sr, 7 * sr];
        for ((line, cue), at) in ep.sounds().zip(ats) {
            let mark = SoundMark {
                cue: cue.clone(),
                at,
                line,
            };
            lane.add(&mark, (at == 2 * sr).then_some(sr / 2));
        }
        lane.finish(9 * SAMPLE_RATE as usize);
        let spans: Vec<(String, usize, Option<usize>)> = lane
            .cues
            .iter()
            .map(|c| (c.label(), c.start, c.end))
            .collect();
        let s = SAMPLE_RATE as usize;
        assert_eq!(
            spans,
            [
                ("a.mp3".to_owned(), 0, Some(3 * s + s / 2)),
                ("door.wav".to_owned(), 2 * s, Some(2 * s + s / 2)),
                ("b.mp3".to_owned(), 3 * s, Some(7 * s)),
                ("bed off".to_owned(), 5 * s, Some(7 * s)),
                ("c.ogg".to_owned(), 7 * s, Some(9 * s)),
            ]
        );
        assert!(lane.cues[0].is_bed() && !lane.cues[1].is_bed());
    }
}
