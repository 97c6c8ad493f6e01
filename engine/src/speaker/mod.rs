//! Speaker embeddings (GE2E d-vectors) for the voice library: match a reference clip to a
//! voice, check that a cast's voices are distinct, check that a render still sounds like
//! the voice it was asked for.
//!
//! This is resemblyzer 0.1.4's `VoiceEncoder`, ported to candle (its `hparams.py`,
//! `audio.py` and `voice_encoder.py` are the reference):
//!
//! 1. [`preprocess`]: 16 kHz mono, volume raised (never lowered) to −30 dBFS, long silences
//!    trimmed by a voice-activity detector. resemblyzer uses WebRTC's GMM VAD; ours is an
//!    energy detector smoothed and dilated exactly like the reference (see that module for
//!    why and how far the results differ).
//! 2. [`mel`]: 40-channel mel power spectrogram, 25 ms Hann window, 10 ms hop, as
//!    `librosa.feature.melspectrogram` computes it (Slaney mel scale and area normalisation,
//!    centred frames with zero padding).
//! 3. [`encoder`]: the utterance cut into 160-frame partials at 1.3 per second; each partial
//!    through a 3-layer LSTM (40 → 256), the last layer's final hidden state through
//!    `Linear` 256→256, `ReLU` and L2 normalisation; the utterance embedding is the L2-normalised
//!    mean of the partial embeddings.
//!
//! Weights come from the model store (`ge2e/pretrained.safetensors`, converted at fetch time
//! by [`checkpoint`] from resemblyzer's legacy `PyTorch` file).

pub mod checkpoint;
pub mod encoder;
pub mod mel;
pub mod preprocess;

use std::path::PathBuf;

pub use encoder::{partial_slices, SpeakerEncoder};

/// Identifies the encoder whose embeddings are comparable; the voice library keys cached
/// embeddings by it together with [`ENCODER_VERSION`].
pub const ENCODER_ID: &str = "resemblyzer-0.1.4-ge2e";
/// Bumped whenever the pipeline changes in a way that moves embeddings (preprocessing, VAD,
/// features), so cached embeddings are recomputed.
pub const ENCODER_VERSION: u32 = 1;
/// Sample rate the encoder works at.
pub const SAMPLE_RATE: u32 = 16_000;
/// Embedding dimension.
pub const EMBEDDING_DIM: usize = 256;

/// Everything that can go wrong while loading or running the speaker encoder.
#[derive(Debug, thiserror::Error)]
pub enum SpeakerError {
    #[error("cannot read the speaker encoder checkpoint {}: {detail}", path.display())]
    Checkpoint { path: PathBuf, detail: String },

    #[error(
        "cannot load the speaker encoder weights {}: {source}. Run `banter models fetch` to \
         fetch them",
        path.display()
    )]
    Load {
        path: PathBuf,
        #[source]
        source: candle_core::Error,
    },

    /// A weight the network needs is missing or misshapen.
    #[error("building the speaker encoder: {0}")]
    Build(#[source] candle_core::Error),

    #[error("speaker encoder forward pass failed at {stage}: {source}")]
    Forward {
        stage: &'static str,
        #[source]
        source: candle_core::Error,
    },

    #[error("the clip is at {rate} Hz; the speaker encoder needs {SAMPLE_RATE} Hz mono audio")]
    WrongRate { rate: u32 },

    #[error("the clip holds no speech to embed ({samples} samples after silence trimming)")]
    NoSpeech { samples: usize },
}

/// Wraps a candle error with the stage it happened in.
pub(crate) fn at(stage: &'static str) -> impl Fn(candle_core::Error) -> SpeakerError {
    move |source| SpeakerError::Forward { stage, source }
}

/// An L2-normalised 256-dimensional speaker embedding.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Embedding(pub [f32; EMBEDDING_DIM]);

impl Embedding {
    /// Normalises `values` to unit length; `None` when they are all zero or not finite.
    #[must_use]
    pub fn from_unnormalised(values: [f32; EMBEDDING_DIM]) -> Option<Self> {
        let norm = values.iter().map(|v| v * v).sum::<f32>().sqrt();
        if !norm.is_finite() || norm <= 0.0 {
            return None;
        }
        Some(Self(values.map(|v| v / norm)))
    }

    /// Cosine similarity in [-1, 1] (GE2E embeddings are non-negative, so in practice [0, 1]).
    #[must_use]
    pub fn cosine(&self, other: &Self) -> f32 {
        let dot: f32 = self.0.iter().zip(&other.0).map(|(a, b)| a * b).sum();
        let na = self.0.iter().map(|v| v * v).sum::<f32>().sqrt();
        let nb = other.0.iter().map(|v| v * v).sum::<f32>().sqrt();
        dot / (na * nb).max(f32::MIN_POSITIVE)
    }

    #[must_use]
    pub fn as_slice(&self) -> &[f32] {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_of_normalised_vectors() {
        let mut a = [0.0; EMBEDDING_DIM];
        a[0] = 3.0;
        a[1] = 4.0;
        let a = Embedding::from_unnormalised(a).expect("non-zero");
        assert!((a.0[0] - 0.6).abs() < 1e-6 && (a.0[1] - 0.8).abs() < 1e-6);
        assert!((a.cosine(&a) - 1.0).abs() < 1e-6);
        let mut b = [0.0; EMBEDDING_DIM];
        b[1] = 2.0;
        let b = Embedding::from_unnormalised(b).expect("non-zero");
        assert!((a.cosine(&b) - 0.8).abs() < 1e-6);
        assert!(Embedding::from_unnormalised([0.0; EMBEDDING_DIM]).is_none());
    }
}
