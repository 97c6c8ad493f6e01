//! Banter's studio: a native egui/eframe window for writing, casting, hearing and exporting an
//! episode.
//!
//! The window talks to the engine only through its public API and never waits on it: model
//! loading and fetching, playback rendering (interactive streams on the shared scheduler),
//! exports (offline work on the same scheduler), the library, voice matching, the cast check,
//! previews and output-device probing each run on a named thread ([`work`], [`devices`]) and
//! report through bounded channels; every report requests a repaint.
//! Playback goes through the [`audio::AudioOut`] trait: cpal on a real machine, a recording mock
//! in tests, and a "cannot play" stand-in when there is no device (rendering and export still
//! work then).
//!
//! Layout of the crate: [`app`] holds the studio's state and everything that changes it, one
//! file per concern (the frame loop, `apply` for the views' commands, the worker-report drain,
//! playback, words, cast, outputs, find, undo, projects, opening files); [`view`] one file per
//! panel or dialog (they draw and emit [`command::Command`]s; `Studio::apply`, in
//! `app/apply.rs`, is the one place that carries them out), [`state`] the panels' and dialogs'
//! state, [`doc`] the open script, [`waveform`] the waveform envelope, [`input`] shortcuts and
//! dropped files, [`history`] the undo history, [`devices`] the output-device catalogs,
//! [`files`] the file dialog and what is refused as not a script, [`words`] where timed words
//! are in the shown text, [`frames`] the frame-time statistics.

pub mod api;
pub mod app;
pub mod audio;
pub mod command;
pub mod devices;
pub mod doc;
pub mod files;
pub mod frames;
pub mod history;
pub mod input;
pub mod state;
#[cfg(test)]
mod test_support;
pub mod view;
pub mod waveform;
pub mod words;
pub mod work;

pub use app::{Studio, StudioConfig};
pub use command::Command;

use eframe::egui;

/// Why the studio could not open.
#[derive(Debug, thiserror::Error)]
pub enum UiError {
    #[error(
        "no display to open the studio on (DISPLAY and WAYLAND_DISPLAY are unset); \
         render from the command line instead: banter render SCRIPT"
    )]
    NoDisplay,
    #[error("the studio window failed: {0}")]
    Window(String),
}

/// Opens the studio window and runs it until it is closed; `api`, when given, is the loopback
/// server the status bar's API switch starts over the studio's engine.
pub fn run(config: StudioConfig, api: Option<Box<dyn api::LoopbackApi>>) -> Result<(), UiError> {
    if cfg!(target_os = "linux")
        && std::env::var_os("DISPLAY").is_none()
        && std::env::var_os("WAYLAND_DISPLAY").is_none()
    {
        return Err(UiError::NoDisplay);
    }
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("Banter studio")
            .with_app_id("banter")
            .with_inner_size([1280.0, 800.0])
            .with_min_inner_size([900.0, 560.0])
            .with_drag_and_drop(true),
        renderer: eframe::Renderer::Glow,
        ..Default::default()
    };
    eframe::run_native(
        "Banter studio",
        options,
        Box::new(move |cc| {
            let audio: Box<dyn audio::AudioOut> = match audio::CpalOut::open_default() {
                Ok(out) => Box::new(out),
                Err(e) => Box::new(audio::NoAudio(e)),
            };
            let mut studio = Studio::new(&cc.egui_ctx, config, audio);
            studio.set_output_catalog(std::sync::Arc::new(devices::CpalCatalog));
            studio.set_script_chooser(std::sync::Arc::new(files::DesktopChooser));
            if let Some(api) = api {
                studio.set_api(api);
            }
            Ok(Box::new(studio))
        }),
    )
    .map_err(|e| UiError::Window(e.to_string()))
}
