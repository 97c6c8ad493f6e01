//! Project actions: new, save (to the library), autosave, leaving a document (quit, new) with
//! the question about unsaved work, export, and retrying the model load.

use engine::library::ProjectDraft;
use engine::render::RenderOptions;

use crate::app::{EngineState, Studio};
use crate::doc::{Document, EXAMPLE};
use crate::waveform::Waveform;
use crate::work::export::{self, ExportError};
use crate::work::library::LibCmd;
use crate::work::load;

impl Studio {
    /// Starts a new, unsaved project from the example script (the caller has asked about
    /// unsaved work first: [`Command::NewProject`](crate::command::Command::NewProject)).
    pub fn new_project(&mut self) {
        self.stop();
        self.autosave_now();
        let name = self.unused_project_name();
        self.doc = Document::new(&name, EXAMPLE.to_owned(), None);
        self.selected = 0;
        self.waveform = Waveform::default();
        self.buffer.clear();
    }

    /// "untitled", or "untitled 2", 3… when a project, an autosave or the open document has
    /// the name already: a new project must never save (or autosave) over another's work.
    fn unused_project_name(&self) -> String {
        let taken = |name: &str| {
            name == self.doc.name
                || self.projects.iter().any(|p| p == name)
                || self.recovery.iter().any(|a| a.project_name == name)
        };
        // One more name than there are names taken: at least one of them is free.
        let names = self.projects.len() + self.recovery.len() + 2;
        (1..=names)
            .map(|n| {
                if n == 1 {
                    "untitled".to_owned()
                } else {
                    format!("untitled {n}")
                }
            })
            .find(|name| !taken(name))
            .unwrap_or_else(|| "untitled".to_owned())
    }

    /// Saves the project in the library under its name (the library thread does the writing);
    /// false when it cannot (the library is unavailable), which the status bar says.
    pub fn save(&mut self) -> bool {
        if self.library_error.is_some() {
            self.say("the library is unavailable; the project cannot be saved");
            return false;
        }
        let format = self
            .doc
            .parsed
            .as_ref()
            .map_or_else(|_| String::new(), |e| e.format.as_str().to_owned());
        let draft = ProjectDraft {
            name: self.doc.name.clone(),
            script: self.doc.text.clone(),
            script_format: format,
            cast: self.doc.cast_map(),
            settings: serde_json::json!({
                "export_rate": self.export.settings.rate,
                "stems": self.export.settings.stems,
            }),
            render_path: (!self.export.settings.path.is_empty())
                .then(|| std::path::PathBuf::from(&self.export.settings.path)),
        };
        self.library.send(LibCmd::Save(Box::new(draft)));
        self.doc.dirty = false;
        self.doc.unsaved_edits = false;
        true
    }

    /// Starts the export with the dialog's settings.
    pub fn start_export(&mut self) {
        let EngineState::Ready(engine) = &self.engine else {
            self.export.finished = Some(Err(ExportError::NotLoaded));
            return;
        };
        let Some(episode) = self.doc.episode() else {
            self.export.finished = Some(Err(ExportError::DoesNotParse));
            return;
        };
        let settings = &mut self.export.settings;
        if settings.path.trim().is_empty() {
            settings.path = settings.default_path(&self.doc).display().to_string();
        }
        let mut dest = std::path::PathBuf::from(settings.path.trim());
        dest.set_extension(settings.extension());
        settings.path = dest.display().to_string();
        self.export.progress = None;
        self.export.finished = None;
        self.tasks.export = Some(export::start(
            engine.engine.clone(),
            episode,
            dest,
            self.export_options(),
            self.config.library.clone(),
            self.waker.clone(),
        ));
    }

    /// The export dialog's settings as the engine takes them, the script's cue files found in
    /// the project's folder (the parse names the script after the project, not its path).
    #[must_use]
    pub fn export_options(&self) -> RenderOptions {
        RenderOptions {
            sounds_dir: Some(self.doc.project_dir()),
            ..self.export.settings.options()
        }
    }

    /// Fetches (if needed) and loads the model again after a failure.
    pub fn retry_load(&mut self) {
        let store = load::store(self.config.models.clone());
        match store {
            Ok(store) => {
                self.engine = EngineState::Loading {
                    text: "starting…".into(),
                    fraction: None,
                };
                self.tasks.load = Some(load::start(
                    store,
                    self.config.device,
                    true,
                    self.waker.clone(),
                    self.config.remote.clone(),
                ));
            }
            Err(e) => self.engine = EngineState::Failed(e),
        }
    }

    /// Hands unsaved work (text and cast) to the library thread, which writes it within
    /// [`crate::work::library::AUTOSAVE_AT_MOST`] whether or not another frame is ever drawn.
    /// Called after every change the author makes and at the end of every frame; cheap when
    /// nothing changed.
    pub fn autosave_now(&mut self) {
        if self.doc.unsaved_edits {
            self.library.send(LibCmd::Autosave {
                name: self.doc.name.clone(),
                script: self.doc.text.clone(),
                cast: self.doc.cast_map(),
            });
            self.doc.unsaved_edits = false;
        }
    }

    /// The window is closing (Quit chosen, or the author's answer about unsaved work given).
    #[must_use]
    pub fn is_quitting(&self) -> bool {
        self.quit
    }

    /// Closes the document as `leaving` asks (quit, or a new project), or asks first
    /// (Save / Discard / Cancel) when that would lose work.
    pub(crate) fn leave(&mut self, leaving: crate::state::dialogs::Leaving) {
        if self.doc.needs_saving() {
            self.dialogs.unsaved = Some(leaving);
        } else {
            self.go_on(leaving);
        }
    }

    /// Does what `leaving` asked for, the document's work saved or given up.
    pub(crate) fn go_on(&mut self, leaving: crate::state::dialogs::Leaving) {
        match leaving {
            crate::state::dialogs::Leaving::Quit => self.quit = true,
            crate::state::dialogs::Leaving::NewProject => self.new_project(),
        }
    }
}
