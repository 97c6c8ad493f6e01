//! Opening a script or a project: File → Open through the desktop's file dialog (or the typed
//! path without one; see [`crate::files`] for why and how that is decided), reading the file on a
//! worker thread, refusing what is not a script in a window that stays until dismissed, and, for
//! a plain `banter`, reopening the project saved last.

use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use crate::app::{Incoming, Studio};
use crate::doc::Document;
use crate::files::{NoDialog, ScriptChooser, NO_DIALOG_WITHIN};
use crate::waveform::Waveform;
use crate::work::library::LibCmd;

/// What the file dialog's worker reports.
pub(crate) enum Chosen {
    /// The author chose this file.
    File(PathBuf),
    /// The dialog gave nothing back, this long after it was asked for.
    Nothing { after: Duration },
}

impl Studio {
    /// Gives the studio the desktop's file dialog for File → Open (without one, the Open window's
    /// typed path is used).
    pub fn set_script_chooser(&mut self, chooser: Arc<dyn ScriptChooser>) {
        self.chooser = chooser;
    }

    /// File → Open: the desktop's dialog on a worker thread, or the typed path where there is
    /// none.
    pub(crate) fn show_open(&mut self) {
        self.library.send(LibCmd::ListProjects);
        if self.tasks.choosing.is_some() {
            return;
        }
        if let Err(why) = self.chooser.available() {
            self.show_open_path(Some(why));
            return;
        }
        let (tx, rx) = mpsc::sync_channel(1);
        let chooser = Arc::clone(&self.chooser);
        let waker = self.waker.clone();
        let start = self
            .doc
            .path
            .as_deref()
            .and_then(Path::parent)
            .map(Path::to_path_buf);
        let asked = Instant::now();
        match crate::work::spawn("banter-file-dialog", move || {
            let chosen = chooser.choose(start.as_deref()).map_or_else(
                || Chosen::Nothing {
                    after: asked.elapsed(),
                },
                Chosen::File,
            );
            crate::work::send(&tx, &waker, chosen);
        }) {
            Ok(()) => self.tasks.choosing = Some(rx),
            Err(e) => {
                tracing::warn!("{e}");
                self.show_open_path(Some(NoDialog::DidNotOpen));
            }
        }
    }

    /// The Open window: a typed path and the library's projects; `why` says why the desktop's
    /// dialog is not used.
    pub(crate) fn show_open_path(&mut self, why: Option<NoDialog>) {
        self.library.send(LibCmd::ListProjects);
        self.dialogs.open = Some(String::new());
        self.dialogs.no_dialog = why;
    }

    /// Reads a script file on a worker thread; it opens when read (or asks to replace), and a
    /// file that is not a script is refused in a window that stays until dismissed.
    pub fn import(&mut self, path: &Path) {
        let tx = self.tasks.imports.tx.clone();
        let waker = self.waker.clone();
        let path = path.to_path_buf();
        if let Err(e) = crate::work::spawn("banter-import", move || {
            let result = crate::files::read_script(&path).map(|opened| Incoming {
                name: opened.name,
                path,
                text: opened.text,
                note: opened.note,
            });
            crate::work::send(&tx, &waker, result);
        }) {
            self.say(e.to_string());
        }
    }

    pub(crate) fn replace_document(&mut self, incoming: Incoming) {
        self.stop();
        let stem = Path::new(&incoming.name).file_stem().map_or_else(
            || incoming.name.clone(),
            |s| s.to_string_lossy().into_owned(),
        );
        self.doc = Document::new(&stem, incoming.text, Some(incoming.path));
        // A freshly imported script is a new project that has not been saved yet.
        self.doc.dirty = true;
        self.selected = 0;
        self.waveform = Waveform::default();
        self.buffer.clear();
        match incoming.note {
            Some(note) => self.say(format!("opened {}; {note}", incoming.name)),
            None => self.say(format!("opened {}", incoming.name)),
        }
    }

    /// Folds in the file dialog's answer and the files read since the last frame.
    pub(crate) fn drain_open(&mut self) {
        let answer = self.tasks.choosing.as_ref().map(mpsc::Receiver::try_recv);
        match answer {
            None | Some(Err(mpsc::TryRecvError::Empty)) => {}
            Some(Err(mpsc::TryRecvError::Disconnected)) => {
                self.tasks.choosing = None;
                self.show_open_path(Some(NoDialog::DidNotOpen));
            }
            Some(Ok(chosen)) => {
                self.tasks.choosing = None;
                match chosen {
                    Chosen::File(path) => self.import(&path),
                    // Nobody cancels a dialog that fast: it never showed.
                    Chosen::Nothing { after } if after < NO_DIALOG_WITHIN => {
                        self.show_open_path(Some(NoDialog::DidNotOpen));
                    }
                    Chosen::Nothing { .. } => {}
                }
            }
        }
        let imports: Vec<_> = self.tasks.imports.rx.try_iter().collect();
        for result in imports {
            match result {
                Ok(incoming) if self.doc.dirty && self.doc.revision > 0 => {
                    self.incoming = Some(incoming);
                }
                Ok(incoming) => {
                    self.dialogs.open_error = None;
                    self.replace_document(incoming);
                }
                Err(e) => {
                    tracing::info!("studio: cannot open: {e}");
                    self.dialogs.open_error = Some(e);
                }
            }
        }
    }

    /// With the library's projects (latest first) in hand at start-up: a plain `banter` reopens
    /// the latest, unless the author already opened something or crash recovery has work to
    /// offer (its dialog asks first).
    pub(crate) fn reopen_latest(&mut self, projects: &[String]) {
        if !std::mem::take(&mut self.reopen_last) {
            return;
        }
        let untouched = self.doc.revision == 0 && self.doc.path.is_none() && !self.doc.dirty;
        if !untouched || !self.recovery.is_empty() || self.incoming.is_some() {
            return;
        }
        if let Some(latest) = projects.first() {
            self.library.send(LibCmd::Load(latest.clone()));
        }
    }
}
