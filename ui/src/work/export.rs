//! Exports in the background: [`render_episode`] through the shared scheduler as offline work
//! (so playback and API clients are served first), with progress, ETA and cancel. Library
//! voices in the cast are resolved first ([`super::resolve`]).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};

use engine::render::{
    cache::Cached, render_episode, FromModel, Progress, RenderError, RenderOptions, RenderReport,
    SentenceSource,
};
use engine::script::Episode;
use engine::voicematch::VoiceMatchError;
use engine::Engine;

use super::{send, spawn, SpawnError, Waker, EVENTS};

/// Why an export wrote nothing: the engine's error as it was typed, or what the studio could not
/// start it with.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("the model is not loaded yet")]
    NotLoaded,
    #[error("the script does not parse")]
    DoesNotParse,
    /// A library voice in the cast could not be resolved.
    #[error(transparent)]
    Voice(#[from] Box<VoiceMatchError>),
    #[error(transparent)]
    Render(#[from] Box<RenderError>),
    #[error(transparent)]
    Spawn(#[from] SpawnError),
}

pub enum ExportEvent {
    Progress(Progress),
    Done(Result<RenderReport, ExportError>),
}

super::boxed_from!(ExportError => VoiceMatchError, RenderError);

/// A running export; dropping it cancels.
pub struct ExportJob {
    pub rx: mpsc::Receiver<ExportEvent>,
    pub dest: PathBuf,
    cancel: Arc<AtomicBool>,
}

impl ExportJob {
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

impl Drop for ExportJob {
    fn drop(&mut self) {
        self.cancel();
    }
}

#[must_use]
pub fn start(
    engine: Engine,
    episode: Episode,
    dest: PathBuf,
    options: RenderOptions,
    library: Option<PathBuf>,
    waker: Waker,
) -> ExportJob {
    let (tx, rx) = mpsc::sync_channel(EVENTS);
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&cancel);
    let path = dest.clone();
    let tx2 = tx.clone();
    let waker2 = waker.clone();
    if let Err(e) = spawn("banter-export", move || {
        let mut episode = episode;
        let result = super::resolve::episode(library.as_deref(), &engine, &mut episode)
            .map_err(ExportError::from)
            .and_then(|()| {
                // Through the library's render cache, which playback fills with the same
                // samples: what was just heard is not rendered again.
                let cached =
                    super::resolve::open(library.as_deref()).map(|lib| Cached::new(FromModel, lib));
                let source: &dyn SentenceSource = match &cached {
                    Some(cached) => cached,
                    None => &FromModel,
                };
                let mut report = render_episode(
                    &engine,
                    source,
                    &episode,
                    &path,
                    &options,
                    &flag,
                    &mut |p| send(&tx, &waker, ExportEvent::Progress(p.clone())),
                )
                .map_err(ExportError::from)?;
                if let Some(counts) = cached.as_ref().map(Cached::counts) {
                    let all = counts.hits + counts.misses;
                    report.notices.push(format!(
                        "{} of {all} sentences came from the render cache (played or exported \
                         before); {} were rendered",
                        counts.hits, counts.misses
                    ));
                }
                Ok(report)
            });
        send(&tx, &waker, ExportEvent::Done(result));
    }) {
        send(&tx2, &waker2, ExportEvent::Done(Err(e.into())));
    }
    ExportJob { rx, dest, cancel }
}
