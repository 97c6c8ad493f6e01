//! The reference clips of a tuning: each one embedded (cached in the library by its bytes'
//! hash), checked to hold enough speech of one speaker, and their embeddings averaged into the
//! target the search climbs toward.
//!
//! A clip of two people would tune toward a voice that is neither, silently; so each clip long
//! enough to tell is cut into windows of speech, and a window unlike the rest of its clip (or
//! a clip unlike the other clips) stops the tuning with the place named.

use std::path::{Path, PathBuf};

use super::MIN_SPEECH_SECS;
use crate::library::Library;
use crate::speaker::preprocess::preprocess;
use crate::speaker::{Embedding, EMBEDDING_DIM, SAMPLE_RATE as ENCODER_RATE};
use crate::voicematch::embed::{clip_hash, decode_clip, CacheUse, ClipEmbedding, VoiceEmbedder};
use crate::voicematch::VoiceMatchError;

/// Windows of speech compared for a second speaker, in seconds.
const WINDOW_SECS: f64 = 5.0;
/// A clip is checked for a second speaker only with at least this many windows.
const MIN_WINDOWS: usize = 3;
/// Two parts of one speaker's speech score above this (GE2E, 5 s windows); different speakers
/// mostly below. Parts of two similar voices (two diphone voices of one lab) can pass.
pub const SAME_SPEAKER: f32 = 0.7;

/// One reference clip as the tuning used it.
#[derive(Debug, Clone, PartialEq)]
pub struct TuneClip {
    pub path: PathBuf,
    /// sha256 of the file's bytes: the key of its embedding in the library.
    pub hash: String,
    pub embedding: ClipEmbedding,
    /// Seconds of speech after trimming silences (of the part embedded).
    pub speech_secs: f64,
}

/// The clips, and the mean of their embeddings.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub clips: Vec<TuneClip>,
    pub embedding: Embedding,
}

impl Target {
    /// The target as one [`ClipEmbedding`] (what the blend match takes).
    #[must_use]
    pub fn as_clip(&self) -> ClipEmbedding {
        let first = &self.clips[0].embedding;
        ClipEmbedding {
            embedding: self.embedding,
            cache: if self
                .clips
                .iter()
                .all(|c| c.embedding.cache == CacheUse::Hit)
            {
                CacheUse::Hit
            } else {
                CacheUse::Miss
            },
            embedded_secs: self.clips.iter().map(|c| c.embedding.embedded_secs).sum(),
            truncated: self.clips.iter().any(|c| c.embedding.truncated),
            speech_secs: Some(self.clips.iter().map(|c| c.speech_secs).sum()),
            damaged: first.damaged.clone(),
        }
    }
}

/// Embeds and checks every clip (see the module docs).
pub fn target(
    embedder: &VoiceEmbedder,
    library: &Library,
    paths: &[PathBuf],
) -> Result<Target, VoiceMatchError> {
    if paths.is_empty() {
        return Err(VoiceMatchError::NoCandidates {
            reason: "no reference clip was given".to_owned(),
        });
    }
    let mut clips = Vec::with_capacity(paths.len());
    for path in paths {
        let speech_secs = check_speech(embedder, path)?;
        let embedding = embedder.embed_clip(library, path)?;
        clips.push(TuneClip {
            path: path.clone(),
            hash: clip_hash(path)?,
            embedding,
            speech_secs,
        });
    }
    for (i, a) in clips.iter().enumerate() {
        for b in &clips[i + 1..] {
            let s = a.embedding.embedding.cosine(&b.embedding.embedding);
            if s < SAME_SPEAKER {
                return Err(VoiceMatchError::SeveralSpeakers(format!(
                    "{} and {} sound like different speakers (similarity {s:.2}); give clips of \
                     one speaker only",
                    a.path.display(),
                    b.path.display()
                )));
            }
        }
    }
    let mut sum = [0.0f32; EMBEDDING_DIM];
    for c in &clips {
        for (s, v) in sum.iter_mut().zip(c.embedding.embedding.as_slice()) {
            *s += v;
        }
    }
    let embedding = Embedding::from_unnormalised(sum).ok_or_else(|| VoiceMatchError::Silence {
        path: paths[0].clone(),
    })?;
    Ok(Target { clips, embedding })
}

/// Decodes `path`, requires [`MIN_SPEECH_SECS`] of speech, and looks for a second speaker;
/// returns the seconds of speech.
fn check_speech(embedder: &VoiceEmbedder, path: &Path) -> Result<f64, VoiceMatchError> {
    let clip = decode_clip(path)?;
    let speech = preprocess(&clip.samples);
    let speech_secs = speech.len() as f64 / f64::from(ENCODER_RATE);
    if speech.is_empty() {
        return Err(VoiceMatchError::Silence {
            path: path.to_owned(),
        });
    }
    if speech_secs < MIN_SPEECH_SECS {
        return Err(VoiceMatchError::TooLittleSpeechToTune {
            path: path.to_owned(),
            speech_secs,
        });
    }
    let window = (WINDOW_SECS * f64::from(ENCODER_RATE)) as usize;
    let windows: Vec<&[f32]> = speech.chunks_exact(window).collect();
    if windows.len() < MIN_WINDOWS {
        return Ok(speech_secs);
    }
    let embeddings = windows
        .iter()
        .map(|w| embedder.embed_audio(w, ENCODER_RATE))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some((part, similarity)) = odd_one_out(&embeddings) {
        return Err(VoiceMatchError::SeveralSpeakers(format!(
            "{}: part {} of {} of its speech (about {:.0}–{:.0} s after trimming silences) \
             sounds like a different speaker from the rest (similarity {similarity:.2}); give \
             a clip of one speaker only",
            path.display(),
            part + 1,
            embeddings.len(),
            part as f64 * WINDOW_SECS,
            (part + 1) as f64 * WINDOW_SECS
        )));
    }
    Ok(speech_secs)
}

/// The window least like the mean of the others, if it is below [`SAME_SPEAKER`].
fn odd_one_out(embeddings: &[Embedding]) -> Option<(usize, f32)> {
    let mut worst: Option<(usize, f32)> = None;
    for (i, e) in embeddings.iter().enumerate() {
        let mut rest = [0.0f32; EMBEDDING_DIM];
        for (j, o) in embeddings.iter().enumerate() {
            if j != i {
                for (r, v) in rest.iter_mut().zip(o.as_slice()) {
                    *r += v;
                }
            }
        }
        let Some(rest) = Embedding::from_unnormalised(rest) else {
            continue;
        };
        let s = e.cosine(&rest);
        if worst.is_none_or(|(_, w)| s < w) {
            worst = Some((i, s));
        }
    }
    worst.filter(|(_, s)| *s < SAME_SPEAKER)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(i: usize, j: usize, mix: f32) -> Embedding {
        let mut v = [0.0f32; EMBEDDING_DIM];
        v[i] = 1.0;
        v[j] = mix;
        Embedding::from_unnormalised(v).unwrap()
    }

    #[test]
    fn a_window_of_another_speaker_is_found() {
        let same: Vec<Embedding> = (0..4).map(|k| unit(0, 1 + k, 0.3)).collect();
        assert_eq!(odd_one_out(&same), None);
        let mut mixed = same.clone();
        mixed[2] = unit(100, 101, 0.2);
        let (part, s) = odd_one_out(&mixed).expect("the stranger");
        assert_eq!(part, 2);
        assert!(s < 0.1);
    }
}
