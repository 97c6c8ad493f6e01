//! Uses of speaker embeddings over the voice library: match a reference clip to a stock voice,
//! a blend of stock voices or a Piper voice of the library, warn when a cast's voices are hard
//! to tell apart, and check that every rendered line still sounds like its speaker's voice.
//!
//! What "match" means here, honestly: Kokoro speaks only in its stock voices and their
//! weighted blends, and a Piper voice only as its model was trained. Matching finds the voice
//! whose speech the GE2E encoder places closest to the clip's speaker; it does not clone the
//! voice in the clip, and the similarity it reports says how close it got. Piper voices are
//! compared as they are, never blended (see [`matching`]).
//!
//! A voice is compared through its *probe embedding*: the embedding of a fixed passage
//! ([`PROBE_TEXT`], `assets/passages/probe.txt`, about 9 s of neutral English) rendered in that
//! voice. Both clip and probe embeddings are cached in the library: a clip under the hash of its
//! bytes, a probe under the hash of everything that determines its audio (model, engine,
//! probe text, language, the voice's style table; for a Piper voice, its model file's sha256
//! and speaker), each with the encoder's id and version. So the encoder runs once per clip and
//! the model once per voice, ever.
//!
//! Files: [`embed`] (clip and probe embeddings with their caches), [`search`] (the blend
//! search's bookkeeping, pure), [`matching`] (the match itself), [`tune`] (searching beyond
//! the blends, toward the clip), [`cast`] (cast check),
//! [`consistency`] (per-line check after a render), [`resolve`] (library voice names to
//! what the synthesizer renders).

pub mod cast;
pub mod consistency;
pub mod embed;
pub mod matching;
pub mod resolve;
pub mod search;
pub mod tune;

use std::path::PathBuf;

use crate::audio::decode::DecodeError;
use crate::audio::AudioError;
use crate::library::LibraryError;
use crate::speaker::SpeakerError;
use crate::speech::SynthError;

pub use cast::{close_voices, CastPair, CAST_WARN_SIMILARITY};
pub use consistency::{flag_outliers, ConsistencyReport, LineScore};
pub use embed::{CacheUse, ClipEmbedding, VoiceEmbedder};
pub use matching::{
    match_embedding, match_voice, MatchEvent, MatchOptions, PiperScore, SkippedVoice, VoiceMatch,
};
pub use search::BlendSearch;

/// The passage every voice reads for its probe embedding.
pub const PROBE_TEXT: &str = include_str!("../../../assets/passages/probe.txt");
/// Only this much of a clip is embedded (the rest is ignored, and the result says so): a few
/// minutes already give a stable embedding; an hour would cost minutes of encoder time.
pub const MAX_CLIP_SECS: f64 = 180.0;
/// A clip needs at least this much speech (after trimming silences) to be embedded reliably.
pub const MIN_SPEECH_SECS: f64 = 2.0;

/// What can go wrong while embedding, matching or checking voices.
#[derive(Debug, thiserror::Error)]
pub enum VoiceMatchError {
    #[error(transparent)]
    Decode(#[from] DecodeError),
    #[error(transparent)]
    Speaker(#[from] SpeakerError),
    #[error(transparent)]
    Library(#[from] LibraryError),
    #[error(transparent)]
    Synth(#[from] SynthError),
    #[error(transparent)]
    Scheduler(#[from] crate::SchedulerError),
    #[error("resampling a rendered probe for the speaker encoder: {0}")]
    Resample(#[from] AudioError),
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{} holds only silence (no speech found); give a recording of the speaker talking",
        path.display()
    )]
    Silence { path: PathBuf },
    #[error(
        "{} has only {speech_secs:.1} s of speech after trimming silences; at least \
         {MIN_SPEECH_SECS} s are needed (10 s or more gives a better match)",
        path.display()
    )]
    TooLittleSpeech { path: PathBuf, speech_secs: f64 },
    #[error(
        "{} has only {speech_secs:.1} s of speech after trimming silences; tuning needs at least \
         {} s (10 to 30 s gives a closer voice)",
        path.display(), tune::MIN_SPEECH_SECS
    )]
    TooLittleSpeechToTune { path: PathBuf, speech_secs: f64 },
    #[error("{0}")]
    SeveralSpeakers(String),
    #[error(
        "{clips} does not sound like one person speaking to the speaker encoder (the nearest \
         stock voice is only {nearest:.2} alike, below {min}): music, noise or a heavily \
         processed recording cannot be tuned toward", min = tune::MIN_LIKENESS
    )]
    NotSpeech { clips: String, nearest: f32 },
    #[error("cancelled; nothing was saved")]
    Cancelled,
    #[error(
        "the tuned voice is no closer to the clip than the best blend on sentences the search \
         never heard ({before:.3} before, {after:.3} after), so it was not kept; save the blend \
         with `banter voices match` instead"
    )]
    NotImproved { before: f32, after: f32 },
    #[error(
        "the tuned voice is unstable (two of its sentences are only {stability:.3} alike, below \
         {min}); it was not kept", min = tune::MIN_STABILITY
    )]
    Unstable { stability: f32 },
    #[error("no voice to compare with: {reason}")]
    NoCandidates { reason: String },
    #[error("{what} `{name}` is not a stock voice, a blend of stock voices, or a library voice")]
    UnknownVoice { what: &'static str, name: String },
    #[error("markers file {}: {detail}", path.display())]
    Markers { path: PathBuf, detail: String },
}

impl VoiceMatchError {
    /// True when the user's input was at fault (a bad clip, an unknown voice): exit status 2.
    #[must_use]
    pub fn is_input_error(&self) -> bool {
        match self {
            Self::Decode(e) => !matches!(e, DecodeError::Io { .. }),
            Self::Synth(e) => e.is_input_error(),
            Self::Scheduler(e) => e.is_input_error(),
            Self::Silence { .. }
            | Self::TooLittleSpeech { .. }
            | Self::TooLittleSpeechToTune { .. }
            | Self::SeveralSpeakers(_)
            | Self::NotSpeech { .. }
            | Self::NotImproved { .. }
            | Self::Unstable { .. }
            | Self::NoCandidates { .. }
            | Self::UnknownVoice { .. }
            | Self::Markers { .. }
            | Self::Speaker(SpeakerError::NoSpeech { .. })
            | Self::Library(
                LibraryError::DuplicateName { .. } | LibraryError::InvalidName { .. },
            ) => true,
            _ => false,
        }
    }
}
