//! Finding and measuring the files an episode's cues name, before any speech is rendered.
//!
//! Why first: a misspelt file name or a clip that is not audio should stop the render in a
//! second with `FILE:LINE:COLUMN`, not after twenty minutes of Kokoro. And speech that waits for
//! a sound alone on its line needs the sound's length to know where to start, so the plan's
//! waits are filled in here ([`SoundStep::wait`]). Each file is opened once whatever the number
//! of cues naming it; a sound is decoded through once to count its samples (in blocks, never
//! whole), a bed only far enough to know it holds audio (it is looped or trimmed to fit).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::audio::decode::{ClipStream, DecodeError};
use crate::script::{CueAction, Episode, SoundCue};
use crate::speech::SAMPLE_RATE;

use super::super::plan::{LinePlan, SoundStep, Step};
use super::super::RenderError;

/// A one-shot longer than this is a mistake (music under the lines is a bed).
pub const MAX_SOUND_SECS: f64 = 600.0;
/// A bed shorter than this cannot loop into music.
pub const MIN_BED_SECS: f64 = 0.1;

/// The files an episode's cues play, found and measured.
#[derive(Debug, Default)]
pub struct SoundFiles {
    /// By the name the script wrote.
    files: HashMap<String, SoundFile>,
}

/// One file a cue names.
#[derive(Debug, Clone)]
pub struct SoundFile {
    pub path: PathBuf,
    /// Its length at the model's rate, when it is played as a sound (beds loop instead).
    pub samples: Option<u64>,
}

impl SoundFiles {
    /// The file a cue names (every cue of a resolved plan has one).
    #[must_use]
    pub fn get(&self, written: &str) -> Option<&SoundFile> {
        self.files.get(written)
    }

    /// Whether any cue plays anything.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

/// Finds every cue's file under `dir` (names are relative to the script; an absolute one is
/// taken as it is), checks it plays, measures sounds and fills in how long speech waits after
/// a sound alone on its line. Problems worth knowing that do not stop the render (a damaged
/// file, an overlap longer than its sound) are added to `notices`.
pub fn resolve(
    plans: &mut [LinePlan],
    episode: &Episode,
    dir: &Path,
    notices: &mut Vec<String>,
) -> Result<SoundFiles, RenderError> {
    let mut found = SoundFiles::default();
    let mut bed_on = false;
    for plan in plans.iter_mut() {
        for step in &mut plan.steps {
            match step {
                Step::Sound(SoundStep { cue, wait }) => {
                    note_ignored(cue, &mut bed_on, episode, notices);
                    let samples = found.check(cue, episode, dir, notices)?;
                    if let (Some(samples), CueAction::Sound { overlap_secs, .. }) =
                        (samples, &cue.action)
                    {
                        let secs = samples as f64 / f64::from(SAMPLE_RATE);
                        if f64::from(*overlap_secs) > secs && cue.alone {
                            notices.push(format!(
                                "{}: overlap={overlap_secs}s is longer than the sound ({secs:.2} s), so the speech after it starts with it",
                                episode.locate(cue.position)
                            ));
                        }
                        *wait = Some((secs - f64::from(*overlap_secs)).max(0.0) as f32);
                    }
                }
                Step::Speak(sentence) => {
                    for inline in &sentence.sounds {
                        note_ignored(&inline.cue, &mut bed_on, episode, notices);
                        found.check(&inline.cue, episode, dir, notices)?;
                    }
                }
                Step::Silence(_) => {}
            }
        }
    }
    Ok(found)
}

/// Says when a cue asks for something that will not happen: `[bed: off]` with no bed playing,
/// an `overlap` on a sound among the words (speech does not wait for it anyway). `bed_on`
/// follows the cues in order.
fn note_ignored(cue: &SoundCue, bed_on: &mut bool, episode: &Episode, notices: &mut Vec<String>) {
    let at = || episode.locate(cue.position);
    match &cue.action {
        CueAction::Bed { .. } => *bed_on = true,
        CueAction::BedOff { .. } if !*bed_on => notices.push(format!(
            "{}: `[bed: off]` but no bed is playing here, so it does nothing",
            at()
        )),
        CueAction::BedOff { .. } => *bed_on = false,
        CueAction::Sound { overlap_secs, .. } if *overlap_secs > 0.0 && !cue.alone => {
            notices.push(format!(
                "{}: overlap={overlap_secs}s does nothing here: speech waits only for a sound alone on its line",
                at()
            ));
        }
        CueAction::Sound { .. } => {}
    }
}

impl SoundFiles {
    /// Checks the file `cue` names (once per file and use); a sound's length in samples.
    fn check(
        &mut self,
        cue: &SoundCue,
        episode: &Episode,
        dir: &Path,
        notices: &mut Vec<String>,
    ) -> Result<Option<u64>, RenderError> {
        let (file, sound) = match &cue.action {
            CueAction::Sound { file, .. } => (file, true),
            CueAction::Bed { file, .. } => (file, false),
            CueAction::BedOff { .. } => return Ok(None),
        };
        let at = || episode.locate(cue.position);
        let entry = self.files.entry(file.clone()).or_insert_with(|| SoundFile {
            path: dir.join(file),
            samples: None,
        });
        if !sound {
            if entry.samples.is_none() {
                check_bed(&entry.path, file, notices)
                    .map_err(|message| RenderError::Script { at: at(), message })?;
            }
            return Ok(None);
        }
        if let Some(n) = entry.samples {
            return Ok(Some(n));
        }
        let n = measure_sound(&entry.path, file, notices)
            .map_err(|message| RenderError::Script { at: at(), message })?;
        entry.samples = Some(n);
        Ok(Some(n))
    }
}

/// The sound's length at the model's rate, decoding it block by block.
fn measure_sound(path: &Path, file: &str, notices: &mut Vec<String>) -> Result<u64, String> {
    let mut clip = ClipStream::open(path, SAMPLE_RATE).map_err(|e| cannot_play(file, &e))?;
    let max = (MAX_SOUND_SECS * f64::from(SAMPLE_RATE)) as u64;
    let mut block = Vec::with_capacity(1 << 14);
    let mut n = 0u64;
    loop {
        block.clear();
        let k = clip
            .read(&mut block, 1 << 14)
            .map_err(|e| cannot_play(file, &e))?;
        if k == 0 {
            break;
        }
        n += k as u64;
        if n > max {
            return Err(format!(
                "`{file}` is longer than {} minutes; a sound plays once and speech waits for it: put long music under the lines with `[bed: {file}]`",
                MAX_SOUND_SECS / 60.0
            ));
        }
    }
    if n == 0 {
        return Err(format!("`{file}` holds no audio"));
    }
    damaged_notice(&clip, file, notices);
    Ok(n)
}

/// A bed must hold at least [`MIN_BED_SECS`] of audio; only that much is decoded here.
fn check_bed(path: &Path, file: &str, notices: &mut Vec<String>) -> Result<(), String> {
    let mut clip = ClipStream::open(path, SAMPLE_RATE).map_err(|e| cannot_play(file, &e))?;
    let want = (MIN_BED_SECS * f64::from(SAMPLE_RATE)) as usize;
    let mut block = Vec::with_capacity(want);
    while block.len() < want {
        let more = want - block.len();
        if clip
            .read(&mut block, more)
            .map_err(|e| cannot_play(file, &e))?
            == 0
        {
            return Err(format!(
                "`{file}` holds {:.2} s of audio, too little to loop under the lines (a bed needs {MIN_BED_SECS} s)",
                block.len() as f64 / f64::from(SAMPLE_RATE)
            ));
        }
    }
    damaged_notice(&clip, file, notices);
    Ok(())
}

fn damaged_notice(clip: &ClipStream, file: &str, notices: &mut Vec<String>) {
    if let Some(detail) = clip.damaged() {
        notices.push(format!(
            "`{file}` is damaged ({detail}); what decodes is played"
        ));
    }
}

fn cannot_play(file: &str, e: &DecodeError) -> String {
    format!("cannot play `{file}`: {e}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audio::{write_wav_file, SampleFormat};
    use crate::render::plan_episode;
    use crate::script::ParseOptions;

    fn episode(text: &str) -> Episode {
        Episode::parse("ep.txt", text, &ParseOptions::default()).expect("parses")
    }

    fn tone(dir: &Path, name: &str, secs: f32, rate: u32) {
        let n = (secs * rate as f32) as usize;
        let samples: Vec<f32> = (0..n).map(|k| (k as f32 * 0.05).sin() * 0.3).collect();
        write_wav_file(&dir.join(name), &samples, rate, SampleFormat::Pcm16).expect("wav");
    }

    #[test]
    fn files_are_found_beside_the_script_and_speech_waits_for_each_sound_less_its_overlap() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::create_dir(dir.path().join("sfx")).expect("sfx dir");
        tone(dir.path(), "sfx/sting.wav", 1.5, 44_100);
        tone(dir.path(), "bed.wav", 2.0, 48_000);
        let e = episode(
            "[bed: bed.wav]\n[sound: sfx/sting.wav overlap=0.5s]\nAnn: Hi [sound: sfx/sting.wav] there.\n[sound: sfx/sting.wav overlap=3s]\n",
        );
        let mut plans = plan_episode(&e).expect("plans");
        let mut notices = Vec::new();
        let files = resolve(&mut plans, &e, dir.path(), &mut notices).expect("resolves");
        assert_eq!(
            files.get("sfx/sting.wav").and_then(|f| f.samples),
            Some(36_000)
        );
        assert_eq!(files.get("bed.wav").and_then(|f| f.samples), None);
        let waits: Vec<Option<f32>> = plans[0]
            .steps
            .iter()
            .filter_map(|s| match s {
                Step::Sound(s) => Some(s.wait),
                _ => None,
            })
            .collect();
        assert_eq!(waits, [None, Some(1.0), Some(0.0)]);
        // The overlap longer than its sound is said, at its place.
        assert_eq!(notices.len(), 1, "{notices:?}");
        assert!(
            notices[0].starts_with("ep.txt:4:1: overlap=3s"),
            "{}",
            notices[0]
        );
        // Cues that would do nothing are said too.
        let e = episode("[bed: off]\nAnn: Hi [sound: sfx/sting.wav overlap=1s] there.\n");
        let mut plans = plan_episode(&e).expect("plans");
        let mut notices = Vec::new();
        resolve(&mut plans, &e, dir.path(), &mut notices).expect("resolves");
        assert_eq!(notices.len(), 2, "{notices:?}");
        assert!(
            notices[0].starts_with("ep.txt:1:1: `[bed: off]` but no bed"),
            "{notices:?}"
        );
        assert!(
            notices[1].contains("speech waits only for a sound alone"),
            "{notices:?}"
        );
    }

    #[test]
    fn a_file_that_cannot_play_is_an_error_at_its_cue() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(dir.path().join("notes.wav"), "not audio").expect("write");
        tone(dir.path(), "blip.wav", 0.05, 24_000);
        for (script, at, says) in [
            (
                "Ann: Hi.\n  [sound: missing.wav]\n",
                "ep.txt:2:3",
                "cannot play `missing.wav`",
            ),
            (
                "Ann: Hi [bed: notes.wav] there.\n",
                "ep.txt:1:9",
                "not an audio file",
            ),
            (
                "[bed: blip.wav]\nAnn: Hi.\n",
                "ep.txt:1:1",
                "too little to loop",
            ),
        ] {
            let e = episode(script);
            let mut plans = plan_episode(&e).expect("plans");
            let err = resolve(&mut plans, &e, dir.path(), &mut Vec::new())
                .expect_err("an error")
                .to_string();
            assert!(err.starts_with(at) && err.contains(says), "{err}");
        }
    }
}
