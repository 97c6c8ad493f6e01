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

#[derive(Deserialize)]
struct MarkersFile {
    lines: Vec<MarkedLine>,
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
    let bytes = fs_err::read(path).map_err(|source| VoiceMatchError::Io {
        path: path.to_owned(),
        source,
    })?;
    let file: MarkersFile =
        serde_json::from_slice(&bytes).map_err(|e| VoiceMatchError::Markers {
            path: path.to_owned(),
            detail: e.to_string(),
        })?;
    Ok(file.lines)
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
    let lines = read_markers(markers)?;
    let decoded = decode_file(
        audio,
        &DecodeOptions {
            target_rate: Some(ENCODER_RATE),
            max_secs: None,
        },
    )?;
    let scores = score_lines(embedder, engine, library, &decoded.samples, &lines)?;
    Ok(flag_outliers(scores, SCORE_FLOOR))
}

/// The markers file `render_episode` writes beside `audio`.
#[must_use]
pub fn markers_beside(audio: &Path) -> PathBuf {
    crate::render::beside(audio, "chapters", "json")
}

#[cfg(test)]
mod tests {
    use super::*;

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
