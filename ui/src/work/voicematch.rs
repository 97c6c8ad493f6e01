//! Voice matching, tuning and the cast check, off the UI thread.
//!
//! Dropping an audio clip on a speaker asks [`VoiceTools::match_clip`] for the stock voice or
//! blend closest to the clip's speaker, saves it as a library voice and gives it to that speaker;
//! "Tune" beside the match asks [`VoiceTools::tune_clip`] to search beyond the blends toward the
//! same clip (minutes, cancellable, background work on the scheduler), saved the same way;
//! the cast panel asks [`VoiceTools::check_cast`] whether two speakers' voices are too alike. Both
//! embed audio and may render probes (seconds each), so both run on worker threads and report
//! through bounded channels. The studio reaches the engine only through the [`VoiceTools`] trait:
//! [`crate::work::matcher::EngineMatcher`] once the model is loaded, [`Unavailable`] before, and
//! a scripted stand-in in the UI tests that need no model.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc};

use engine::assets::AssetError;
use engine::library::LibraryError;
use engine::voicematch::{CastPair, VoiceMatchError};

use super::{send, spawn, SpawnError, Waker};

/// Why a voice match, a tuning or a cast check did not give an answer: the engine's error
/// kept as it was typed, or what the studio itself could not do.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("{}: voice matching needs the model; wait until it is loaded", clip.display())]
    MatchNeedsModel { clip: PathBuf },
    #[error("{}: tuning a voice needs the model; wait until it is loaded", clip.display())]
    TuneNeedsModel { clip: PathBuf },
    #[error("the cast check needs the model")]
    CheckNeedsModel,
    #[error("the voice library is unavailable: {0}")]
    LibraryUnavailable(#[source] Box<LibraryError>),
    /// Looking a name up in the library failed.
    #[error(transparent)]
    Library(#[from] Box<LibraryError>),
    #[error("the speaker encoder is not in {} (run `banter models fetch`)", root.display())]
    EncoderMissing { root: PathBuf },
    #[error("fetching the speaker encoder: {0}")]
    FetchEncoder(#[source] Box<AssetError>),
    #[error("loading the speaker encoder: {0}")]
    LoadEncoder(#[source] Box<VoiceMatchError>),
    /// Matching, tuning or checking failed in the engine.
    #[error(transparent)]
    Engine(#[from] Box<VoiceMatchError>),
    #[error("too many {what} voices called \"{base}\"")]
    NoFreeName { what: &'static str, base: String },
    #[error(transparent)]
    Spawn(#[from] SpawnError),
}

super::boxed_from!(ToolError => LibraryError, VoiceMatchError);

/// A voice found for a clip and saved in the library.
#[derive(Debug, Clone, PartialEq)]
pub struct Matched {
    /// The library voice it was saved as.
    pub name: String,
    /// What it renders: a stock voice or a blend recipe (`af_bella:0.7+af_sky:0.3`).
    pub recipe: String,
    /// Cosine similarity of the voice to the clip's speaker (1.0 would be identical).
    pub similarity: f32,
    /// The nearest stock voices, best first.
    pub nearest: Vec<(String, f32)>,
    /// Remarks about the clip (truncated, damaged).
    pub notes: Vec<String>,
    /// The clip it was matched or tuned to.
    pub clip: PathBuf,
    /// For a tuned voice: the best blend's similarity on the same held-out sentences as
    /// `similarity` (the "before"); `None` for a match.
    pub tuned_from: Option<f32>,
}

/// What a match says while it runs.
pub type Progress<'a> = &'a mut dyn FnMut(String, Option<f32>);

/// Voice matching and the cast check (see the module docs).
pub trait VoiceTools: Send + Sync {
    /// Matches the speaker in `clip`, saves the result as a library voice for `speaker`.
    fn match_clip(
        &self,
        speaker: &str,
        clip: &Path,
        progress: Progress<'_>,
    ) -> Result<Matched, ToolError>;

    /// Tunes a voice toward the speaker in `clip` and saves it for `speaker`; stops with an
    /// error (nothing saved) once `cancel` is set.
    fn tune_clip(
        &self,
        speaker: &str,
        clip: &Path,
        cancel: &AtomicBool,
        progress: Progress<'_>,
    ) -> Result<Matched, ToolError>;

    /// The pairs of `(speaker, voice)` whose voices are too alike, closest first.
    fn check_cast(&self, cast: &[(String, String)]) -> Result<Vec<CastPair>, ToolError>;
}

/// Who provided the studio's voice tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolsOrigin {
    /// [`Unavailable`], until the model loads.
    StandIn,
    /// The engine's, installed when the model loaded.
    Engine,
    /// Set by the caller (tests, automation): loading the model keeps them.
    Caller,
}

/// Before the model is loaded.
pub struct Unavailable;

impl VoiceTools for Unavailable {
    fn match_clip(
        &self,
        _speaker: &str,
        clip: &Path,
        _progress: Progress<'_>,
    ) -> Result<Matched, ToolError> {
        Err(ToolError::MatchNeedsModel {
            clip: clip.to_owned(),
        })
    }

    fn tune_clip(
        &self,
        _speaker: &str,
        clip: &Path,
        _cancel: &AtomicBool,
        _progress: Progress<'_>,
    ) -> Result<Matched, ToolError> {
        Err(ToolError::TuneNeedsModel {
            clip: clip.to_owned(),
        })
    }

    fn check_cast(&self, _cast: &[(String, String)]) -> Result<Vec<CastPair>, ToolError> {
        Err(ToolError::CheckNeedsModel)
    }
}

/// What a match job reports.
pub enum MatchReport {
    Progress {
        speaker: String,
        text: String,
        fraction: Option<f32>,
    },
    Done {
        speaker: String,
        clip: PathBuf,
        result: Result<Matched, ToolError>,
    },
}

/// What a clip job does.
#[derive(Debug, Clone)]
pub enum ClipJob {
    Match,
    /// Tune; setting the flag cancels.
    Tune(CancelFlag),
}

/// A shared cancel flag; two are equal when they are the same flag.
#[derive(Debug, Clone, Default)]
pub struct CancelFlag(pub Arc<AtomicBool>);

impl PartialEq for CancelFlag {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Where a speaker's match stands (shown in the cast panel).
#[derive(Debug, Clone, PartialEq)]
pub enum MatchState {
    Running {
        text: String,
        fraction: Option<f32>,
        /// Set for a tuning: the cancel button sets it.
        cancel: Option<CancelFlag>,
    },
    Done(Matched),
    Failed(String),
}

/// Matches (or tunes toward) `clip` for `speaker` on a worker thread.
pub fn start(
    tools: Arc<dyn VoiceTools>,
    job: ClipJob,
    speaker: String,
    clip: PathBuf,
    tx: mpsc::SyncSender<MatchReport>,
    waker: Waker,
) {
    let tx2 = tx.clone();
    let (speaker2, clip2) = (speaker.clone(), clip.clone());
    if let Err(e) = spawn("banter-voicematch", move || {
        let mut progress = |text: String, fraction: Option<f32>| {
            // Progress is advisory: if the UI is behind, skip a line rather than wait for it.
            if tx
                .try_send(MatchReport::Progress {
                    speaker: speaker.clone(),
                    text,
                    fraction,
                })
                .is_ok()
            {
                waker.wake();
            }
        };
        let result = match &job {
            ClipJob::Match => tools.match_clip(&speaker, &clip, &mut progress),
            ClipJob::Tune(cancel) => tools.tune_clip(&speaker, &clip, &cancel.0, &mut progress),
        };
        send(
            &tx,
            &waker,
            MatchReport::Done {
                speaker,
                clip,
                result,
            },
        );
    }) {
        let _ = tx2.send(MatchReport::Done {
            speaker: speaker2,
            clip: clip2,
            result: Err(e.into()),
        });
    }
}

/// The answer of a cast check, for the cast it checked.
pub struct CastChecked {
    pub cast: Vec<(String, String)>,
    pub result: Result<Vec<CastPair>, ToolError>,
}

/// Checks `cast` on a worker thread.
pub fn check(
    tools: Arc<dyn VoiceTools>,
    cast: Vec<(String, String)>,
    tx: mpsc::SyncSender<CastChecked>,
    waker: Waker,
) {
    let tx2 = tx.clone();
    let cast2 = cast.clone();
    if let Err(e) = spawn("banter-castcheck", move || {
        let result = tools.check_cast(&cast);
        send(&tx, &waker, CastChecked { cast, result });
    }) {
        let _ = tx2.send(CastChecked {
            cast: cast2,
            result: Err(e.into()),
        });
    }
}

/// The cast check's state in the studio: what was asked last, whether it runs, what it said.
#[derive(Default)]
pub struct CastCheckState {
    /// The cast last sent to the checker.
    pub asked: Option<Vec<(String, String)>>,
    pub running: bool,
    /// The warnings for the cast in `checked`.
    pub pairs: Vec<CastPair>,
    pub checked: Option<Vec<(String, String)>>,
    pub error: Option<String>,
}

impl CastCheckState {
    /// The warnings that still apply to `cast` (a stale answer is not shown).
    #[must_use]
    pub fn warnings_for(&self, cast: &[(String, String)]) -> &[CastPair] {
        if self.checked.as_deref() == Some(cast) {
            &self.pairs
        } else {
            &[]
        }
    }
}
