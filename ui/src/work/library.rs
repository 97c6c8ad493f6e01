//! The library (projects, autosaves, recovery, library voices and the Piper voices dropped on the
//! studio) on its own thread:
//! `SQLite` is disk I/O, and the UI thread never waits on disk. Commands go in through a
//! channel; answers come back as events.
//!
//! Autosave is timed here, not by the frame loop: the studio sends its unsaved work the moment
//! it changes (a cheap clone), and this thread writes the latest of it once edits pause for
//! [`AUTOSAVE_QUIET`], or at the latest [`AUTOSAVE_AT_MOST`] after the first unwritten change.
//! egui paints only when something asks it to (input under the pointer, an animation), so a
//! timer kept by frames stops with the pointer outside the window; this one does not. Any other
//! command writes the pending autosave first, so commands keep their order (a save after an
//! autosave clears it).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use engine::library::{Autosave, Library, LibraryError, ProjectDraft, VoiceKind};

use super::piper::{PiperAdd, PiperAdded};
use super::{send, spawn, SpawnError, Waker};

/// Why the library is unavailable (projects cannot be listed or saved; the rest works).
#[derive(Debug, thiserror::Error)]
pub enum Unavailable {
    #[error(transparent)]
    Open(Box<LibraryError>),
    #[error(transparent)]
    Spawn(#[from] SpawnError),
}

/// Why a library command failed.
#[derive(Debug, thiserror::Error)]
pub enum LibError {
    #[error("autosave of \"{name}\" failed: {source}")]
    Autosave {
        name: String,
        #[source]
        source: Box<LibraryError>,
    },
    #[error("no project called \"{0}\" in the library")]
    NoProject(String),
    #[error("Piper voice {} not added: {source}", .onnx.display())]
    Piper {
        onnx: PathBuf,
        #[source]
        source: Box<LibraryError>,
    },
    #[error(transparent)]
    Library(#[from] Box<LibraryError>),
}

/// Commands (and answers) the library queue holds before the UI's sends are refused.
const COMMANDS: usize = 64;

/// An autosave is written once edits have paused this long...
pub const AUTOSAVE_QUIET: Duration = Duration::from_millis(600);
/// ...or this long after the first change not yet written, whichever comes first.
pub const AUTOSAVE_AT_MOST: Duration = Duration::from_secs(2);

pub enum LibCmd {
    /// The unsaved work of project `name` as it is now (text and cast).
    Autosave {
        name: String,
        script: String,
        cast: BTreeMap<String, String>,
    },
    Save(Box<ProjectDraft>),
    Load(String),
    ListProjects,
    ListAutosaves,
    /// The library's own voices (blends, matched voices), not the stock ones.
    ListVoices,
    ClearAutosave(String),
    /// Add a checked Piper model's voices under a free name (see [`super::piper`]).
    AddPiper(Box<PiperAdd>),
    /// Answers when every earlier command is done.
    Flush(mpsc::SyncSender<()>),
}

pub enum LibEvent {
    /// The library could not be opened: projects are unavailable, the rest works.
    Unavailable(Unavailable),
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
    /// A Piper model's voices were added.
    PiperAdded(Box<PiperAdded>),
    Error(LibError),
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
                    send(
                        &ev_tx,
                        &waker,
                        LibEvent::Unavailable(Unavailable::Open(Box::new(e))),
                    );
                    return;
                }
            };
            let mut pending: Option<Pending> = None;
            loop {
                let cmd = match &pending {
                    None => cmd_rx
                        .recv()
                        .map_err(|_| mpsc::RecvTimeoutError::Disconnected),
                    Some(p) => {
                        cmd_rx.recv_timeout(p.due().saturating_duration_since(Instant::now()))
                    }
                };
                let cmd = match cmd {
                    Ok(LibCmd::Autosave { name, script, cast }) => {
                        let now = Instant::now();
                        let first = match pending.take() {
                            Some(p) if p.name == name => p.first,
                            // Another project's work is written before this one's is held.
                            Some(p) => {
                                write_autosave(&lib, &ev_tx, &waker, &p);
                                now
                            }
                            None => now,
                        };
                        pending = Some(Pending {
                            name,
                            script,
                            cast,
                            first,
                            last: now,
                        });
                        continue;
                    }
                    Ok(cmd) => Some(cmd),
                    Err(mpsc::RecvTimeoutError::Timeout) => None,
                    Err(mpsc::RecvTimeoutError::Disconnected) => {
                        if let Some(p) = pending.take() {
                            write_autosave(&lib, &ev_tx, &waker, &p);
                        }
                        break;
                    }
                };
                if let Some(p) = pending.take() {
                    write_autosave(&lib, &ev_tx, &waker, &p);
                }
                if let Some(event) = cmd.and_then(|cmd| handle(&lib, cmd)) {
                    send(&ev_tx, &waker, event);
                }
            }
        }) {
            send(&ev_tx2, &waker2, LibEvent::Unavailable(e.into()));
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

/// An autosave received but not yet written.
struct Pending {
    name: String,
    script: String,
    cast: BTreeMap<String, String>,
    /// The first change not yet written, and the latest.
    first: Instant,
    last: Instant,
}

impl Pending {
    fn due(&self) -> Instant {
        (self.last + AUTOSAVE_QUIET).min(self.first + AUTOSAVE_AT_MOST)
    }
}

fn write_autosave(lib: &Library, events: &mpsc::SyncSender<LibEvent>, waker: &Waker, p: &Pending) {
    if let Err(e) = lib.autosave(&p.name, &p.script, &p.cast) {
        send(
            events,
            waker,
            LibEvent::Error(LibError::Autosave {
                name: p.name.clone(),
                source: Box::new(e),
            }),
        );
    }
}

fn handle(lib: &Library, cmd: LibCmd) -> Option<LibEvent> {
    let result = match cmd {
        LibCmd::Autosave { name, script, cast } => {
            lib.autosave(&name, &script, &cast).map(|()| None)
        }
        LibCmd::Save(draft) => lib.save_project(&draft).map(|_| {
            Some(LibEvent::Saved {
                name: draft.name.clone(),
            })
        }),
        LibCmd::Load(name) => lib.load_project(&name).map(|p| {
            Some(match p {
                Some(p) => LibEvent::Loaded(Box::new(p.draft)),
                None => LibEvent::Error(LibError::NoProject(name)),
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
        LibCmd::AddPiper(add) => {
            let onnx = add.info.onnx.clone();
            return Some(match super::piper::add(lib, *add) {
                Ok(added) => LibEvent::PiperAdded(Box::new(added)),
                Err(e) => LibEvent::Error(LibError::Piper {
                    onnx,
                    source: Box::new(e),
                }),
            });
        }
        LibCmd::Flush(done) => {
            let _ = done.send(());
            Ok(None)
        }
    };
    result.unwrap_or_else(|e| Some(LibEvent::Error(LibError::Library(Box::new(e)))))
}
