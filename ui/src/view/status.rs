//! The status bar: model device, xRT of the last render, the scheduler's figures, the loopback
//! API switch (its URL and a copy-token button), the playback device (with the output picker),
//! and the latest message.

use std::sync::atomic::Ordering;

use engine::Engine;

use eframe::egui;

use crate::app::{EngineState, Studio};

pub fn show(studio: &mut Studio, ui: &mut egui::Ui) {
    ui.horizontal(|ui| {
        let mut ready = None;
        match &studio.engine {
            EngineState::Ready(engine) => {
                ui.label(format!("model: {}", engine.device))
                    .on_hover_text("Where the speech model runs");
                let m = engine.engine.metrics();
                ui.separator();
                let xrt = studio.last_xrt.unwrap_or_else(|| m.xrt());
                ui.label(format!("xRT {xrt:.2}")).on_hover_text(
                    "Seconds of audio made per second of compute in the last render \
                     (above 1 is faster than real time)",
                );
                ui.separator();
                ui.label(format!(
                    "streams {} active · {} queued · {} segments · {} cache hits",
                    m.active.load(Ordering::Relaxed),
                    m.queued.load(Ordering::Relaxed),
                    m.segments.load(Ordering::Relaxed),
                    m.cache_hits.load(Ordering::Relaxed),
                ))
                .on_hover_text("The shared scheduler that serves playback, exports and the API");
                ready = Some(engine.engine.clone());
            }
            EngineState::Loading { text, .. } => {
                ui.spinner();
                ui.label(format!("model: {text}"));
            }
            EngineState::Fetching { text, .. } => {
                ui.spinner();
                ui.label(format!("fetching the model: {text}"));
            }
            EngineState::Failed(e) => {
                ui.colored_label(ui.visuals().error_fg_color, "model unavailable")
                    .on_hover_text(e.as_str());
            }
        }
        if let Some(engine) = ready {
            api_switch(studio, ui, engine);
        }
        ui.separator();
        match &studio.audio_error {
            None if !studio.outputs.names.is_empty() => output_picker(studio, ui),
            None => {
                ui.label(format!("audio: {}", studio.audio.describe()))
                    .on_hover_text("The audio output playback goes to");
            }
            Some(e) => {
                ui.colored_label(ui.visuals().warn_fg_color, "audio: cannot play")
                    .on_hover_text(format!("{e}. Rendering and export still work."));
                if !studio.outputs.names.is_empty() {
                    output_picker(studio, ui);
                }
            }
        }
        if let Some(name) = &studio.outputs.opening {
            ui.spinner();
            ui.label(format!("opening {name}…"));
        }
        if let Some((m, _)) = &studio.message {
            ui.separator();
            ui.label(m.as_str());
        }
    });
}

/// The output device picker: the devices listed (off the UI thread), the current one selected.
fn output_picker(studio: &mut Studio, ui: &mut egui::Ui) {
    let current = studio.audio.describe();
    let mut chosen = None;
    let label = ui.label("Output");
    egui::ComboBox::from_id_salt("output-device")
        .selected_text(&current)
        .width(180.0)
        .show_ui(ui, |ui| {
            for name in &studio.outputs.names {
                if ui.selectable_label(*name == current, name).clicked() && *name != current {
                    chosen = Some(name.clone());
                }
            }
            if ui
                .button("Refresh the list")
                .on_hover_text("List the output devices again (after plugging one in)")
                .clicked()
            {
                studio.outputs.refresh(&studio.waker);
            }
        })
        .response
        .labelled_by(label.id)
        .on_hover_text("The audio output playback goes to");
    if let Some(name) = chosen {
        studio.choose_output(&name);
    }
}

/// The loopback API switch: off, or on with its URL (selectable) and a copy-token button. The
/// server shares the studio's engine and scheduler.
fn api_switch(studio: &mut Studio, ui: &mut egui::Ui, engine: Engine) {
    if !studio.api.available() {
        return;
    }
    ui.separator();
    let mut on = studio.api.running().is_some();
    let toggle = ui.checkbox(&mut on, "API").on_hover_text(
        "Serve the OpenAI-compatible speech API on this machine's loopback interface, from \
         this studio's engine (same as `banter serve`; only programs with the token get in)",
    );
    if toggle.changed() {
        if on {
            studio.api.start(engine);
        } else {
            studio.api.stop();
        }
    }
    if let Some(info) = studio.api.running().cloned() {
        ui.add(egui::Label::new(egui::RichText::new(&info.url).monospace()).selectable(true))
            .on_hover_text("Where programs reach the API");
        if ui
            .small_button("Copy token")
            .on_hover_text("Copy the API token (send it as `Authorization: Bearer TOKEN`)")
            .clicked()
        {
            ui.ctx().copy_text(info.token);
            studio.say("API token copied");
        }
    } else if let Some(e) = studio.api.error() {
        ui.colored_label(ui.visuals().error_fg_color, "API failed")
            .on_hover_text(e.to_owned());
    }
}
