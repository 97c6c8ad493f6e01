//! Cast previews: a short sample sentence in one speaker's voice and speed, rendered as a
//! pressing (interactive) stream on the shared scheduler so it jumps ahead of any export, and
//! streamed to the audio output as it arrives. A library voice is resolved to its recipe first. Like playback, stopping sets a flag and drops
//! the stream handle, which cancels it in the scheduler.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};

use engine::{Engine, Mode, SpeechRequest, StreamEvent};

use super::{send, spawn, Failure, Waker, EVENTS};

/// What a speaker says when previewed.
pub const SAMPLE: &str = "Hello! This is how I sound in your episode.";

pub enum PreviewEvent {
    Audio(Vec<f32>),
    Done,
    Failed(super::Failure),
}

/// A running preview; dropping it stops the render.
pub struct PreviewJob {
    pub speaker: String,
    pub rx: mpsc::Receiver<PreviewEvent>,
    cancel: Arc<AtomicBool>,
}

impl PreviewJob {
    pub fn stop(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

impl Drop for PreviewJob {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Speaks `text` as `voice` (a stock voice or recipe) at `speed` for `speaker`.
#[must_use]
pub fn start(
    engine: Engine,
    library: Option<PathBuf>,
    speaker: String,
    voice: String,
    speed: f32,
    text: &str,
    waker: Waker,
) -> PreviewJob {
    let (tx, rx) = mpsc::sync_channel(EVENTS);
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&cancel);
    let tx2 = tx.clone();
    let waker2 = waker.clone();
    let text = text.to_owned();
    if let Err(e) = spawn("banter-preview", move || {
        let event = match super::resolve::voice(library.as_deref(), &engine, &voice)
            .map_err(Failure::from)
            .and_then(|voice| speak(&engine, &voice, speed, &text, &flag, &tx, &waker))
        {
            Ok(()) => PreviewEvent::Done,
            Err(e) => PreviewEvent::Failed(e),
        };
        if !flag.load(Ordering::Relaxed) {
            send(&tx, &waker, event);
        }
    }) {
        send(&tx2, &waker2, PreviewEvent::Failed(Failure::from(e)));
    }
    PreviewJob {
        speaker,
        rx,
        cancel,
    }
}

fn speak(
    engine: &Engine,
    voice: &str,
    speed: f32,
    text: &str,
    cancel: &AtomicBool,
    tx: &mpsc::SyncSender<PreviewEvent>,
    waker: &Waker,
) -> Result<(), Failure> {
    let request = SpeechRequest::new(voice, speed)?;
    let mut handle = engine.submit_text(text, request, Mode::Interactive)?;
    while let Some(event) = handle.blocking_next() {
        if cancel.load(Ordering::Relaxed) {
            return Ok(());
        }
        match event {
            StreamEvent::Audio { samples, .. } => send(tx, waker, PreviewEvent::Audio(samples)),
            StreamEvent::Failed(e) => return Err(e.into()),
        }
    }
    Ok(())
}
