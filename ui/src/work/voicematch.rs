//! HOOK: "drop an audio clip on a speaker → match a voice".
//!
//! The engine's voice matching (clip → speaker embedding → nearest library/stock voice) is being
//! written in parallel and is not on main yet. The studio calls it only through
//! [`VoiceMatcher`], so wiring the real one in is one `impl` (replace [`Unavailable`] in
//! `Studio::new`). Until then dropping a clip on a speaker says that matching is not available.

use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc};

use super::{send, spawn, Waker};

/// Finds the voice that sounds most like a clip.
pub trait VoiceMatcher: Send + Sync {
    /// The voice spec (stock name or blend) closest to the speaker in `clip`.
    fn match_clip(&self, clip: &Path) -> Result<String, String>;
}

/// The stand-in until the engine's voice matching lands.
pub struct Unavailable;

impl VoiceMatcher for Unavailable {
    fn match_clip(&self, clip: &Path) -> Result<String, String> {
        Err(format!(
            "{}: voice matching is not available in this build yet",
            clip.display()
        ))
    }
}

pub struct MatchResult {
    pub speaker: String,
    pub clip: PathBuf,
    pub voice: Result<String, String>,
}

/// Matches `clip` for `speaker` on a worker thread.
pub fn start(
    matcher: Arc<dyn VoiceMatcher>,
    speaker: String,
    clip: PathBuf,
    tx: mpsc::SyncSender<MatchResult>,
    waker: Waker,
) {
    let tx2 = tx.clone();
    let (speaker2, clip2) = (speaker.clone(), clip.clone());
    if let Err(e) = spawn("banter-voicematch", move || {
        let voice = matcher.match_clip(&clip);
        send(
            &tx,
            &waker,
            MatchResult {
                speaker,
                clip,
                voice,
            },
        );
    }) {
        let _ = tx2.send(MatchResult {
            speaker: speaker2,
            clip: clip2,
            voice: Err(e),
        });
    }
}
