//! The studio's background work in one place (rerun's `BackgroundTasks`): every job running on
//! a worker thread and every channel a worker reports on. The frame loop's drain
//! ([`super::drain`]) is the one reader; `Studio` keeps one field for all of them instead of a
//! raw sender and receiver per worker, and "is anything under way" is a question asked here.

use std::sync::mpsc;

use crate::devices::DeviceEvent;
use crate::files::OpenError;
use crate::work::export::ExportJob;
use crate::work::load::LoadEvent;
use crate::work::piper::Inspected;
use crate::work::play::PlayJob;
use crate::work::preview::PreviewJob;
use crate::work::voicematch::{CastChecked, MatchReport};

use super::open::Chosen;
use super::Incoming;

/// A bounded channel that workers started again and again report on: the studio keeps both
/// ends, hands a clone of the sender to each worker it starts and drains the receiver.
pub(crate) struct Channel<T> {
    pub tx: mpsc::SyncSender<T>,
    pub rx: mpsc::Receiver<T>,
}

impl<T> Channel<T> {
    fn new(bound: usize) -> Self {
        let (tx, rx) = mpsc::sync_channel(bound);
        Self { tx, rx }
    }
}

/// What runs in the background, and where it reports.
pub(crate) struct BackgroundTasks {
    /// The model's fetch and load, while they report.
    pub load: Option<mpsc::Receiver<LoadEvent>>,
    /// Rendering for playback.
    pub play: Option<PlayJob>,
    /// A cast preview being spoken (it uses the play buffer; playback stops for it).
    pub preview: Option<PreviewJob>,
    /// The export under way.
    pub export: Option<ExportJob>,
    /// A file dialog open on a worker thread; its answer comes back here.
    pub choosing: Option<mpsc::Receiver<Chosen>>,
    /// Script files read for opening (or refused as not a script).
    pub imports: Channel<Result<Incoming, OpenError>>,
    /// Voice matches and tunings: progress and results.
    pub matches: Channel<MatchReport>,
    /// Cast checks (which voices sound too alike).
    pub checks: Channel<CastChecked>,
    /// Output devices listed and opened.
    pub outputs: Channel<DeviceEvent>,
    /// Dropped Piper voices, checked (or refused) before the library adds them.
    pub piper: Channel<Inspected>,
}

impl BackgroundTasks {
    /// Nothing running yet but `load`, the model load started with the studio.
    pub fn new(load: Option<mpsc::Receiver<LoadEvent>>) -> Self {
        Self {
            load,
            play: None,
            preview: None,
            export: None,
            choosing: None,
            imports: Channel::new(16),
            matches: Channel::new(crate::work::EVENTS),
            checks: Channel::new(4),
            outputs: Channel::new(4),
            piper: Channel::new(16),
        }
    }

    /// Playback, a preview or an export is under way (the frame loop keeps repainting).
    pub fn busy(&self) -> bool {
        self.play.is_some() || self.preview.is_some() || self.export.is_some()
    }
}
