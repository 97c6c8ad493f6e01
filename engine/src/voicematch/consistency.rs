//! Consistency check after a render: does every line still sound like its speaker's voice?
//!
//! Each line's audio (cut from the rendered file at the times in the markers JSON) is embedded
//! and compared with its voice's probe embedding. A line is flagged when its similarity falls
//! below an absolute floor ([`SCORE_FLOOR`]) or far below the episode's own typical score:
//! more than [`OUTLIER_SPREADS`] robust standard deviations (median absolute deviation ×
//! 1.4826) under the median, which one bad line cannot drag along as it would a mean and a
//! standard deviation. Lines shorter than [`MIN_LINE_SECS`] give unreliable embeddings and are
//! listed unscored.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::embed::VoiceEmbedder;
use super::VoiceMatchError;
use crate::audio::decode::{decode_file, DecodeOptions};
use crate::library::Library;
use crate::speaker::{Embedding, SAMPLE_RATE as ENCODER_RATE};
use crate::voice::VoiceSpec;
use crate::Engine;

/// Below this similarity a line is flagged whatever the rest scores. Measured: a voice's own
/// speech scores about 0.97 against its probe (10 s; a few seconds score lower), two different
/// stock voices 0.46–0.89 (median 0.65); so a line under 0.75 sounds like another voice.
pub const SCORE_FLOOR: f32 = 0.75;
/// Robust standard deviations under the median that make a line an outlier.
pub const OUTLIER_SPREADS: f32 = 3.0;
/// Lines shorter than this are not scored.
pub const MIN_LINE_SECS: f64 = 1.0;

/// One line of the markers JSON `render_episode` writes.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct MarkedLine {
    pub line: usize,
    pub speaker: String,
    pub voice: String,
    pub start: f64,
    pub end: f64,
    pub source_line: usize,
}

/// A sound cue's span in the markers JSON (beds and one-shots; a `bed_off` has none of its own).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct MarkedSound {
    pub kind: String,
    pub start: f64,
    pub end: f64,
}

#[derive(Deserialize)]
struct MarkersFile {
    lines: Vec<MarkedLine>,
    /// Absent in files written before sound cues existed.
    #[serde(default)]
    sounds: Vec<MarkedSound>,
}

/// What a markers file says: every line, and every sound cue's span.
#[derive(Debug, Clone, PartialEq)]
pub struct Markers {
    pub lines: Vec<MarkedLine>,
    pub sounds: Vec<MarkedSound>,
}

impl Markers {
    /// Indices of the lines that a sound cue (music or an effect) plays under, even in part.
    #[must_use]
    pub fn under_sound(&self) -> Vec<usize> {
        self.lines
            .iter()
            .enumerate()
            .filter(|(_, l)| {
                self.sounds
                    .iter()
                    .any(|s| s.kind != "bed_off" && s.start < l.end && s.end > l.start)
            })
            .map(|(i, _)| i)
            .collect()
    }
}

/// A line's score.
#[derive(Debug, Clone, PartialEq)]
pub struct LineScore {
    pub line: MarkedLine,
    /// Cosine similarity to the voice's probe embedding; `None` when the line is too short.
    pub similarity: Option<f32>,
}

/// Every line's score and which are flagged.
#[derive(Debug, Clone, PartialEq)]
pub struct ConsistencyReport {
    pub scores: Vec<LineScore>,
    /// Median and robust standard deviation of the scored lines.
    pub median: f32,
    pub spread: f32,
    /// Lines below this were flagged.
    pub threshold: f32,
    /// Indices into `scores`.
    pub flagged: Vec<usize>,
    /// Lines a sound cue plays under, scored from their speaker's stem (the voice alone);
    /// and those scored from the mix with the music or effect in them (no fresh stem).
    pub from_stems: Vec<usize>,
    pub with_sound: Vec<usize>,
}

/// Flags the outliers among `scores` (see the module docs).
#[must_use]
pub fn flag_outliers(scores: Vec<LineScore>, floor: f32) -> ConsistencyReport {
    let mut values: Vec<f32> = scores.iter().filter_map(|s| s.similarity).collect();
    let median = median_of(&mut values);
    let mut deviations: Vec<f32> = values.iter().map(|v| (v - median).abs()).collect();
    let spread = median_of(&mut deviations) * 1.4826;
    // With fewer than three scored lines there is no distribution to compare with.
    let threshold = if values.len() >= 3 {
        floor.max(median - OUTLIER_SPREADS * spread)
    } else {
        floor
    };
    let flagged = scores
        .iter()
        .enumerate()
        .filter(|(_, s)| s.similarity.is_some_and(|v| v < threshold))
        .map(|(i, _)| i)
        .collect();
    ConsistencyReport {
        scores,
        median,
        spread,
        threshold,
        flagged,
        from_stems: Vec::new(),
        with_sound: Vec::new(),
    }
}

fn median_of(values: &mut [f32]) -> f32 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f32::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        f32::midpoint(values[n / 2 - 1], values[n / 2])
    }
}

/// Reads the `lines` of a markers JSON file.
pub fn read_markers(path: &Path) -> Result<Vec<MarkedLine>, VoiceMatchError> {
    read_markers_file(path).map(|m| m.lines)
}

/// Reads a markers JSON file: its lines and its sound cues.
pub fn read_markers_file(path: &Path) -> Result<Markers, VoiceMatchError> {
    let bytes = fs_err::read(path).map_err(|source| VoiceMatchError::Io {
        path: path.to_owned(),
        source,
    })?;
    let file: MarkersFile =
        serde_json::from_slice(&bytes).map_err(|e| VoiceMatchError::Markers {
            path: path.to_owned(),
            detail: e.to_string(),
        })?;
    Ok(Markers {
        lines: file.lines,
        sounds: file.sounds,
    })
}

/// Scores each line of 16 kHz `audio` against its voice's probe embedding.
pub fn score_lines(
    embedder: &VoiceEmbedder,
    engine: &Engine,
    library: &Library,
    audio_16k: &[f32],
    lines: &[MarkedLine],
) -> Result<Vec<LineScore>, VoiceMatchError> {
    let mut voices: HashMap<String, Embedding> = HashMap::new();
    let rate = f64::from(ENCODER_RATE);
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        let similarity = if line.end - line.start < MIN_LINE_SECS {
            None
        } else {
            let reference = if let Some(e) = voices.get(&line.voice) {
                *e
            } else {
                let spec =
                    VoiceSpec::parse(&line.voice).map_err(crate::speech::SynthError::from)?;
                let (e, _) = embedder.voice_embedding(library, engine, &spec)?;
                voices.insert(line.voice.clone(), e);
                e
            };
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // clamped
            let at = |secs: f64| ((secs.max(0.0) * rate) as usize).min(audio_16k.len());
            let slice = &audio_16k[at(line.start)..at(line.end)];
            match embedder.embed_audio(slice, ENCODER_RATE) {
                Ok(e) => Some(e.cosine(&reference)),
                // A line with no detectable speech at all scores 0: that is what to flag.
                Err(VoiceMatchError::Speaker(crate::speaker::SpeakerError::NoSpeech {
                    ..
                })) => Some(0.0),
                Err(e) => return Err(e),
            }
        };
        out.push(LineScore {
            line: line.clone(),
            similarity,
        });
    }
    Ok(out)
}

/// Checks a rendered episode: `audio` and the markers JSON written beside it.
pub fn check_render(
    embedder: &VoiceEmbedder,
    engine: &Engine,
    library: &Library,
    audio: &Path,
    markers: &Path,
) -> Result<ConsistencyReport, VoiceMatchError> {
    let marks = read_markers_file(markers)?;
    let lines = &marks.lines;
    let mut scores = score_lines(embedder, engine, library, &decode_16k(audio)?, lines)?;
    // A bed or an effect under a line is part of the mix, not of the voice: those lines are
    // scored again from their speaker's stem where `--stems` wrote one with this render.
    let under = marks.under_sound();
    let mut from_stems = Vec::new();
    let mut with_sound = Vec::new();
    let mut speakers: Vec<&str> = under.iter().map(|&i| lines[i].speaker.as_str()).collect();
    speakers.sort_unstable();
    speakers.dedup();
    for speaker in speakers {
        let mine: Vec<usize> = under
            .iter()
            .copied()
            .filter(|&i| lines[i].speaker == speaker)
            .collect();
        match fresh_stem(audio, speaker) {
            Some(stem) => {
                let picked: Vec<MarkedLine> = mine.iter().map(|&i| lines[i].clone()).collect();
                let again = score_lines(embedder, engine, library, &decode_16k(&stem)?, &picked)?;
                for (&i, score) in mine.iter().zip(again) {
                    scores[i] = score;
                }
                from_stems.extend(mine);
            }
            None => with_sound.extend(mine),
        }
    }
    let mut report = flag_outliers(scores, SCORE_FLOOR);
    from_stems.sort_unstable();
    with_sound.sort_unstable();
    report.from_stems = from_stems;
    report.with_sound = with_sound;
    Ok(report)
}

/// A whole file decoded at the speaker encoder's rate.
fn decode_16k(path: &Path) -> Result<Vec<f32>, VoiceMatchError> {
    let options = DecodeOptions {
        target_rate: Some(ENCODER_RATE),
        max_secs: None,
    };
    Ok(decode_file(path, &options)?.samples)
}

/// `speaker`'s stem beside `audio`, when it was written with it (not older than the mix: a
/// stem left by an earlier render would score other audio).
fn fresh_stem(audio: &Path, speaker: &str) -> Option<PathBuf> {
    let ext = audio.extension()?.to_str()?;
    let stem = crate::render::speaker_stem(audio, speaker, ext);
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let (mix, own) = (modified(audio)?, modified(&stem)?);
    // The stems are written after the mix in the same pass; allow a second for coarse clocks.
    (own + std::time::Duration::from_secs(1) >= mix).then_some(stem)
}

/// The markers file `render_episode` writes beside `audio`.
#[must_use]
pub fn markers_beside(audio: &Path) -> PathBuf {
    crate::render::beside(audio, "chapters", "json")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marked(line: usize, speaker: &str, start: f64, end: f64) -> MarkedLine {
        MarkedLine {
            line,
            speaker: speaker.into(),
            voice: "af_bella".into(),
            start,
            end,
            source_line: line + 1,
        }
    }

    fn sound(kind: &str, start: f64, end: f64) -> MarkedSound {
        MarkedSound {
            kind: kind.into(),
            start,
            end,
        }
    }

    /// A line is under a sound when any part of it overlaps a bed's or a sound's span; a
    /// `bed_off` marks no audio of its own; lines clear of every cue are not listed.
    #[test]
    fn lines_under_a_bed_or_a_sound_are_found() {
        let marks = Markers {
            lines: vec![
                marked(0, "Ann", 0.0, 2.0),
                marked(1, "Bob", 2.5, 5.0),
                marked(2, "Ann", 6.0, 8.0),
                marked(3, "Bob", 9.0, 10.0),
            ],
            sounds: vec![
                sound("bed", 1.5, 5.5),
                sound("bed_off", 5.5, 8.5),
                sound("sound", 9.9, 10.4),
            ],
        };
        assert_eq!(marks.under_sound(), vec![0, 1, 3]);
        let none = Markers {
            sounds: Vec::new(),
            ..marks
        };
        assert!(none.under_sound().is_empty());
    }

    /// Markers files written before sound cues existed have no `sounds` and still read.
    #[test]
    fn markers_without_sounds_still_read() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("ep.chapters.json");
        let line = r#"{"line":0,"speaker":"Ann","voice":"af_bella","start":0.0,"end":2.0,"source_line":1}"#;
        std::fs::write(&path, format!(r#"{{"lines":[{line}]}}"#)).expect("write");
        let marks = read_markers_file(&path).expect("markers");
        assert_eq!(marks.lines.len(), 1);
        assert!(marks.sounds.is_empty());
        let with = format!(
            r#"{{"lines":[{line}],"sounds":[{{"kind":"bed","file":"m.wav","start":0.5,"end":3.0,"line":0,"source_line":1,"source_column":1}}]}}"#
        );
        std::fs::write(&path, with).expect("write");
        assert_eq!(
            read_markers_file(&path).expect("markers").under_sound(),
            vec![0]
        );
    }

    /// A speaker's stem is used only when it sits where `--stems` writes it and is not older
    /// than the mix (a stem left by an earlier render would score other audio).
    #[test]
    fn only_a_stem_written_with_the_mix_is_used() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mix = dir.path().join("ep.wav");
        std::fs::write(&mix, b"mix").expect("write");
        assert_eq!(fresh_stem(&mix, "Ann Lee"), None, "no stem written");
        let stem = crate::render::speaker_stem(&mix, "Ann Lee", "wav");
        std::fs::write(&stem, b"stem").expect("write");
        assert_eq!(fresh_stem(&mix, "Ann Lee"), Some(stem.clone()));
        let old = std::time::SystemTime::now() - std::time::Duration::from_hours(1);
        std::fs::File::options()
            .write(true)
            .open(&stem)
            .and_then(|f| f.set_modified(old))
            .expect("age the stem");
        assert_eq!(
            fresh_stem(&mix, "Ann Lee"),
            None,
            "a stale stem is not used"
        );
    }

    fn score(line: usize, similarity: Option<f32>) -> LineScore {
        LineScore {
            line: MarkedLine {
                line,
                speaker: "Ann".into(),
                voice: "af_bella".into(),
                start: 0.0,
                end: 2.0,
                source_line: line + 1,
            },
            similarity,
        }
    }

    #[test]
    fn one_odd_line_among_consistent_ones_is_flagged() {
        let mut scores: Vec<LineScore> = [0.88, 0.90, 0.86, 0.89, 0.87, 0.91, 0.70]
            .iter()
            .enumerate()
            .map(|(i, &v)| score(i, Some(v)))
            .collect();
        scores.push(score(7, None));
        let report = flag_outliers(scores, SCORE_FLOOR);
        assert_eq!(report.flagged, [6]);
        assert!((report.median - 0.88).abs() < 1e-6, "{}", report.median);
        assert!(report.threshold > 0.70 && report.threshold < 0.86);
    }

    #[test]
    fn the_floor_applies_even_with_few_lines() {
        let report = flag_outliers(vec![score(0, Some(0.5)), score(1, Some(0.9))], 0.6);
        assert_eq!(report.flagged, [0]);
        assert!((report.threshold - 0.6).abs() < 1e-6);
    }

    #[test]
    fn consistent_lines_are_not_flagged() {
        let scores = (0..10)
            .map(|i| score(i, Some(0.85 + 0.005 * i as f32)))
            .collect();
        assert!(flag_outliers(scores, SCORE_FLOOR).flagged.is_empty());
        assert!(flag_outliers(Vec::new(), SCORE_FLOOR).flagged.is_empty());
    }

    #[test]
    fn markers_json_is_read() {
        let dir = tempfile::tempdir().expect("tmp");
        let p = dir.path().join("ep.chapters.json");
        std::fs::write(
            &p,
            r#"{"title":"t","duration":3.0,"chapters":[],"lines":[{"line":0,"speaker":"A",
               "voice":"af_bella","start":0.1,"end":2.5,"source_line":3}]}"#,
        )
        .expect("write");
        let lines = read_markers(&p).expect("parse");
        assert_eq!(lines[0].speaker, "A");
        std::fs::write(&p, "{").expect("write");
        assert!(matches!(
            read_markers(&p),
            Err(VoiceMatchError::Markers { .. })
        ));
    }
}
