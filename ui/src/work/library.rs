//! The library (projects, autosaves, recovery, the names of library voices) on its own thread: `SQLite` is disk I/O, and the
//! UI thread never waits on disk. Commands go in through a channel; answers come back as events.

use std::path::PathBuf;
use std::sync::mpsc;

use engine::library::{Autosave, Library, ProjectDraft, VoiceKind};

use super::{send, spawn, Waker};

/// Commands (and answers) the library queue holds before the UI's sends are refused.
const COMMANDS: usize = 64;

pub enum LibCmd {
    Autosave {
        name: String,
        script: String,
    },
    Save(Box<ProjectDraft>),
    Load(String),
    ListProjects,
    ListAutosaves,
    /// The library's own voices (blends, matched voices), not the stock ones.
    ListVoices,
    ClearAutosave(String),
    /// Answers when every earlier command is done.
    Flush(mpsc::SyncSender<()>),
}

pub enum LibEvent {
    /// The library could not be opened: projects are unavailable, the rest works.
    Unavailable(String),
    Saved {
        name: String,
    },
    Loaded(Box<ProjectDraft>),
    /// Project names, most recent first.
    Projects(Vec<String>),
    /// Unsaved work found at start-up (crash recovery).
    Autosaves(Vec<Autosave>),
    /// Library voice names (blends and matched voices).
    Voices(Vec<String>),
    Error(String),
}

/// The UI's handle on the library thread.
pub struct LibraryLink {
    tx: mpsc::SyncSender<LibCmd>,
    pub rx: mpsc::Receiver<LibEvent>,
}

impl LibraryLink {
    /// Opens the library at `path` (default: the user's library) on a new thread.
    #[must_use]
    pub fn start(path: Option<PathBuf>, waker: Waker) -> Self {
        let (tx, cmd_rx) = mpsc::sync_channel::<LibCmd>(COMMANDS);
        let (ev_tx, rx) = mpsc::sync_channel(COMMANDS);
        let ev_tx2 = ev_tx.clone();
        let waker2 = waker.clone();
        if let Err(e) = spawn("banter-library", move || {
            let opened = match &path {
                Some(p) => Library::open(p),
                None => Library::open_default(),
            };
            let lib = match opened {
                Ok(lib) => lib,
                Err(e) => {
                    send(&ev_tx, &waker, LibEvent::Unavailable(e.to_string()));
                    return;
                }
            };
            while let Ok(cmd) = cmd_rx.recv() {
                let event = handle(&lib, cmd);
                if let Some(event) = event {
                    send(&ev_tx, &waker, event);
                }
            }
        }) {
            send(&ev_tx2, &waker2, LibEvent::Unavailable(e));
        }
        Self { tx, rx }
    }

    /// Queues a command; if the library thread is gone the command is dropped (the UI already
    /// said the library is unavailable).
    pub fn send(&self, cmd: LibCmd) {
        // Never block the UI thread: a full queue (the disk stalled for a long time) drops the
        // command and says so; the next autosave repeats the work.
        if let Err(mpsc::TrySendError::Full(_)) = self.tx.try_send(cmd) {
            tracing::warn!("the library is not keeping up; a command was dropped");
        }
    }

    /// Waits (at most `timeout`) until the library has done every queued command. Only for
    /// shutdown and tests: the frame loop never calls it.
    #[must_use]
    pub fn flush(&self, timeout: std::time::Duration) -> bool {
        let (tx, rx) = mpsc::sync_channel(1);
        self.send(LibCmd::Flush(tx));
        rx.recv_timeout(timeout).is_ok()
    }
}

fn handle(lib: &Library, cmd: LibCmd) -> Option<LibEvent> {
    let result = match cmd {
        LibCmd::Autosave { name, script } => lib.autosave(&name, &script).map(|()| None),
        LibCmd::Save(draft) => lib.save_project(&draft).map(|_| {
            Some(LibEvent::Saved {
                name: draft.name.clone(),
            })
        }),
        LibCmd::Load(name) => lib.load_project(&name).map(|p| {
            Some(match p {
                Some(p) => LibEvent::Loaded(Box::new(p.draft)),
                None => LibEvent::Error(format!("no project called \"{name}\" in the library")),
            })
        }),
        LibCmd::ListProjects => lib.list_projects().map(|ps| {
            Some(LibEvent::Projects(
                ps.into_iter().map(|p| p.draft.name).collect(),
            ))
        }),
        LibCmd::ListAutosaves => lib.list_autosaves().map(|a| Some(LibEvent::Autosaves(a))),
        LibCmd::ListVoices => lib.list_voices().map(|vs| {
            Some(LibEvent::Voices(
                vs.into_iter()
                    .filter(|v| v.kind != VoiceKind::Stock)
                    .map(|v| v.name)
                    .collect(),
            ))
        }),
        LibCmd::ClearAutosave(name) => lib.clear_autosave(&name).map(|()| None),
        LibCmd::Flush(done) => {
            let _ = done.send(());
            Ok(None)
        }
    };
    result.unwrap_or_else(|e| Some(LibEvent::Error(e.to_string())))
}
