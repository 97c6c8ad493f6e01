//! The studio's state and its frame loop: drain the workers' channels, handle dropped files and
//! shortcuts, then lay out the panels (menu, cast, script, transport and timeline, status) and
//! any open dialog. Nothing here waits: every slow thing is a job in [`crate::work`].
//!
//! Shortcuts and views do not write this state: they read it and emit
//! [`Command`](crate::command::Command)s, which [`Studio::apply`] (in `app::apply`) carries out.
//! Every `impl Studio` lives in this module's files, one per concern (`apply`, `drain`,
//! `playback`, `words`, `live`, `cast`, `outputs`, `find`, `undo`, `project`, `open`), so the
//! fields only they touch are private to `app`; the rest are `pub(crate)` for the views, which
//! reach them through `&Studio` only.

mod apply;
mod cast;
mod drain;
mod find;
mod live;
mod open;
mod outputs;
mod piper;
mod playback;
mod project;
mod tasks;
mod undo;
mod words;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use eframe::egui;
use engine::device::DeviceChoice;
use engine::library::Autosave;

use crate::audio::{AudioOut, PlayBuffer};
use crate::doc::{Document, EXAMPLE};
use crate::frames::FrameStats;
use crate::state::dialogs::Dialogs;
use crate::state::export::ExportDialog;
use crate::state::EditorMode;
use crate::view;
use crate::waveform::Waveform;
use crate::work::library::{LibCmd, LibraryLink};
use crate::work::load::{self, LoadError, Loaded};
use crate::work::voicematch::{CastCheckState, MatchState, ToolsOrigin, Unavailable, VoiceTools};
use crate::work::Waker;

use tasks::BackgroundTasks;

/// How the studio starts.
#[derive(Debug, Clone, Default)]
pub struct StudioConfig {
    /// A script to import at start.
    pub script: Option<PathBuf>,
    /// The model store (default: `$BANTER_MODEL_DIR` or the user's data directory).
    pub models: Option<PathBuf>,
    pub device: DeviceChoice,
    /// The library file (default: `$BANTER_LIBRARY` or the user's data directory).
    pub library: Option<PathBuf>,
    /// Fetch missing model assets on start (the first-run view); tests switch it off.
    pub fetch_models: bool,
    /// Reopen the project saved last when the studio starts without a script (`banter` alone);
    /// crash recovery, when it has something to offer, asks first instead.
    pub reopen_last: bool,
    /// Render on servers instead of this machine (`banter --engine triton://…`): playback,
    /// previews and exports all go there; voices and the library stay here.
    pub remote: Option<load::RemoteEngine>,
}

/// Where the engine stands.
pub enum EngineState {
    Loading {
        text: String,
        fraction: Option<f32>,
    },
    Fetching {
        root: String,
        text: String,
        fraction: Option<f32>,
    },
    Failed(LoadError),
    Ready(Box<Loaded>),
}

/// A script read from disk, waiting to replace the current one.
pub struct Incoming {
    pub name: String,
    pub path: PathBuf,
    pub text: String,
    /// What was guessed to read the file (its encoding), said when it opens.
    pub note: Option<String>,
}

pub struct Studio {
    pub(crate) config: StudioConfig,
    pub(crate) waker: Waker,
    pub(crate) doc: Document,
    mode: EditorMode,
    /// Episode index of the selected line (play starts there).
    pub(crate) selected: usize,
    pub(crate) engine: EngineState,
    /// Every job on a worker thread and every channel a worker reports on.
    pub(crate) tasks: BackgroundTasks,
    pub(crate) audio: Box<dyn AudioOut>,
    pub(crate) audio_error: Option<String>,
    pub(crate) outputs: crate::devices::Outputs,
    pub(crate) buffer: Arc<PlayBuffer>,
    /// "Play from here" waiting for its word to be rendered ([`crate::words`]).
    pub(crate) pending_word: Option<crate::words::PendingWord>,
    /// Sentences already rendered for playback (replays and edits reuse them).
    pub(crate) sentences: Arc<crate::work::sentences::SentenceCache>,
    /// The document revision last seen and when it changed (edits during playback settle).
    pub(crate) edit_seen: (u64, Instant),
    pub(crate) waveform: Waveform,
    pub(crate) export: ExportDialog,
    pub(crate) library: LibraryLink,
    pub(crate) library_error: Option<crate::work::library::Unavailable>,
    pub(crate) projects: Vec<String>,
    /// The library's blends and matched voices (offered in the cast).
    pub(crate) library_voices: Vec<String>,
    pub(crate) recovery: Vec<Autosave>,
    /// Open, Save as and the shortcuts overlay.
    dialogs: Dialogs,
    pub(crate) incoming: Option<Incoming>,
    /// The desktop's file dialog (or none: the Open window's typed path).
    chooser: Arc<dyn crate::files::ScriptChooser>,
    /// Reopen the library's latest project once its list arrives (a plain `banter`).
    reopen_last: bool,
    pub(crate) history: crate::history::History,
    pub(crate) find: crate::state::find::FindBar,
    dark: bool,
    pub(crate) message: Option<(String, Instant)>,
    pub(crate) matcher: Arc<dyn VoiceTools>,
    pub(crate) tools_origin: ToolsOrigin,
    pub(crate) match_options: engine::voicematch::MatchOptions,
    /// Each speaker's latest voice match (running, found, failed).
    pub(crate) matching: std::collections::BTreeMap<String, MatchState>,
    pub(crate) cast_check: CastCheckState,
    pub(crate) last_xrt: Option<f64>,
    /// The loopback API switch in the status bar.
    api: crate::api::ApiSwitch,
    frames: FrameStats,
    quit: bool,
}

impl Studio {
    /// Builds the studio and starts its workers (model load, library).
    #[must_use]
    pub fn new(ctx: &egui::Context, config: StudioConfig, mut audio: Box<dyn AudioOut>) -> Self {
        let waker = Waker(ctx.clone());
        let store = load::store(config.models.clone());
        let (engine, load_rx) = match store {
            Ok(store) => (
                EngineState::Loading {
                    text: "starting…".into(),
                    fraction: None,
                },
                Some(load::start(
                    store,
                    config.device,
                    config.fetch_models,
                    waker.clone(),
                    config.remote.clone(),
                )),
            ),
            Err(e) => (EngineState::Failed(e), None),
        };
        let buffer = PlayBuffer::new();
        let audio_error = audio
            .attach(Arc::clone(&buffer))
            .err()
            .map(|e| e.to_string());
        let library = LibraryLink::start(config.library.clone(), waker.clone());
        library.send(LibCmd::ListAutosaves);
        library.send(LibCmd::ListProjects);
        library.send(LibCmd::ListVoices);
        let mut studio = Self {
            waker,
            doc: Document::new("untitled", EXAMPLE.to_owned(), None),
            mode: EditorMode::Lines,
            selected: 0,
            engine,
            tasks: BackgroundTasks::new(load_rx),
            audio,
            audio_error,
            outputs: crate::devices::Outputs::default(),
            buffer,
            pending_word: None,
            sentences: Arc::default(),
            edit_seen: (0, Instant::now()),
            waveform: Waveform::default(),
            export: ExportDialog::default(),
            library,
            library_error: None,
            projects: Vec::new(),
            library_voices: Vec::new(),
            recovery: Vec::new(),
            dialogs: Dialogs::default(),
            incoming: None,
            chooser: Arc::new(crate::files::NoChooser),
            reopen_last: config.reopen_last && config.script.is_none(),
            history: crate::history::History::default(),
            find: crate::state::find::FindBar::default(),
            dark: true,
            message: None,
            matcher: Arc::new(Unavailable),
            tools_origin: ToolsOrigin::StandIn,
            match_options: engine::voicematch::MatchOptions::default(),
            matching: std::collections::BTreeMap::new(),
            cast_check: CastCheckState::default(),
            last_xrt: None,
            api: crate::api::ApiSwitch::default(),
            frames: FrameStats::from_env(),
            quit: false,
            config,
        };
        if let Some(path) = studio.config.script.clone() {
            studio.import(&path);
        }
        studio
    }

    /// Gives the studio a loopback API server to switch on from the status bar.
    pub fn set_api(&mut self, api: Box<dyn crate::api::LoopbackApi>) {
        self.api = crate::api::ApiSwitch::new(api);
    }

    /// The API's address and token while it is switched on.
    #[must_use]
    pub fn api_running(&self) -> Option<&crate::api::ApiInfo> {
        self.api.running()
    }

    /// Replaces the voice tools (matching, cast check); loading the model then keeps them.
    pub fn set_voice_tools(&mut self, tools: Arc<dyn VoiceTools>) {
        self.matcher = tools;
        self.tools_origin = ToolsOrigin::Caller;
    }

    /// How the engine's voice matching searches (tests narrow the candidates to stay quick);
    /// takes effect when the model loads.
    pub fn set_match_options(&mut self, options: engine::voicematch::MatchOptions) {
        self.match_options = options;
    }

    // --- read-only views for tests and the status bar ---

    #[must_use]
    pub fn document(&self) -> &Document {
        &self.doc
    }

    /// Opens project `name` from the library (as the Open dialog does).
    pub(crate) fn library_load(&mut self, name: &str) {
        self.library.send(LibCmd::Load(name.to_owned()));
    }

    /// Waits until the library thread has written everything queued (shutdown, tests).
    #[must_use]
    pub fn flush_library(&self) -> bool {
        self.library.flush(Duration::from_secs(5))
    }

    #[must_use]
    pub fn is_ready(&self) -> bool {
        matches!(self.engine, EngineState::Ready(_))
    }

    #[must_use]
    pub fn engine_error(&self) -> Option<&LoadError> {
        match &self.engine {
            EngineState::Failed(e) => Some(e),
            _ => None,
        }
    }

    #[must_use]
    pub fn waveform(&self) -> &Waveform {
        &self.waveform
    }

    #[must_use]
    pub fn is_playing(&self) -> bool {
        self.buffer.is_playing()
    }

    /// The playhead: the next sample of the rendered audio to play.
    #[must_use]
    pub fn playhead(&self) -> usize {
        self.buffer.position()
    }

    /// Rendering for playback is under way.
    #[must_use]
    pub fn is_rendering(&self) -> bool {
        self.tasks.play.is_some()
    }

    #[must_use]
    pub fn export_dialog(&self) -> &ExportDialog {
        &self.export
    }

    /// Whether the script shows as parsed lines or raw text.
    #[must_use]
    pub fn editor_mode(&self) -> EditorMode {
        self.mode
    }

    /// The dark theme is on.
    #[must_use]
    pub fn is_dark(&self) -> bool {
        self.dark
    }

    /// Which small dialogs are open and what has been typed in them.
    #[must_use]
    pub fn dialogs(&self) -> &Dialogs {
        &self.dialogs
    }

    /// The status bar's API switch.
    pub(crate) fn api_switch(&self) -> &crate::api::ApiSwitch {
        &self.api
    }

    #[must_use]
    pub fn message(&self) -> Option<&str> {
        self.message.as_ref().map(|(m, _)| m.as_str())
    }

    #[must_use]
    pub fn recovery_offers(&self) -> &[Autosave] {
        &self.recovery
    }

    #[must_use]
    pub fn projects(&self) -> &[String] {
        &self.projects
    }

    pub(crate) fn say(&mut self, text: impl Into<String>) {
        let text = text.into();
        tracing::info!("studio: {text}");
        self.message = Some((text, Instant::now()));
    }

    // --- the frame ---

    /// One frame: the whole UI. Public so tests and the eframe wrapper share it.
    pub fn frame(&mut self, ui: &mut egui::Ui) {
        let started = Instant::now();
        let ctx = ui.ctx().clone();
        self.drain_all();
        self.schedule_cast_check();
        self.history.observe(&self.doc);
        let mut commands = Vec::new();
        crate::input::handle(&ctx, &mut commands);
        self.apply_all(&mut commands);
        ctx.set_visuals(if self.dark {
            egui::Visuals::dark()
        } else {
            egui::Visuals::light()
        });
        view::layout(self, ui);
        self.history.observe(&self.doc);
        self.autosave_now();
        self.follow_edits();
        if self.is_playing() || self.tasks.busy() {
            // Keep the playhead moving at the display rate while anything is under way.
            ctx.request_repaint_after(Duration::from_millis(16));
        }
        if self
            .message
            .as_ref()
            .is_some_and(|(_, t)| t.elapsed() > Duration::from_secs(8))
        {
            self.message = None;
        }
        self.frames.record(started.elapsed());
        if self.quit {
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        }
    }

    /// Called once when the window closes: autosave and frame statistics.
    pub fn shutdown(&mut self) {
        self.stop();
        self.autosave_now();
        if !self.flush_library() {
            tracing::warn!("the library did not confirm the last autosave in time");
        }
        self.frames.report();
    }
}

impl eframe::App for Studio {
    /// Runs every pass, even while the window is minimised or hidden (when `ui` does not): the
    /// window manager's close button is answered here, so unsaved work is never closed on.
    fn logic(&mut self, ctx: &egui::Context, _frame: &mut eframe::Frame) {
        if ctx.input(|i| i.viewport().close_requested()) && !self.quit {
            self.leave(crate::state::dialogs::Leaving::Quit);
            if !self.quit {
                ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
                ctx.request_repaint();
            }
        }
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.frame(ui);
    }

    fn on_exit(&mut self, _gl: Option<&eframe::glow::Context>) {
        self.shutdown();
    }
}
