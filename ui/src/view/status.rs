//! The status bar: model device, xRT of the last render, the scheduler's figures, the loopback
//! API switch (its URL, the token shown on request and a copy-token button), the playback device (with the output picker),
//! and the latest message.

use std::sync::atomic::Ordering;

use eframe::egui;

use crate::app::{EngineState, Studio};
use crate::command::Command;

pub fn show(studio: &Studio, ui: &mut egui::Ui, out: &mut Vec<Command>) {
    // Wrapped: on a narrow window (900 px) the bar grows a row instead of running off the edge.
    ui.horizontal_wrapped(|ui| {
        let mut ready = false;
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
                ready = true;
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
                    .on_hover_text(e.to_string());
            }
        }
        if ready {
            api_switch(studio, ui, out);
        }
        ui.separator();
        match &studio.audio_error {
            None if !studio.outputs.names.is_empty() => output_picker(studio, ui, out),
            None => {
                ui.label(format!("audio: {}", studio.audio.describe()))
                    .on_hover_text("The audio output playback goes to");
            }
            Some(e) => {
                ui.colored_label(ui.visuals().warn_fg_color, "audio: cannot play")
                    .on_hover_text(format!("{e}. Rendering and export still work."));
                if !studio.outputs.names.is_empty() {
                    output_picker(studio, ui, out);
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
fn output_picker(studio: &Studio, ui: &mut egui::Ui, out: &mut Vec<Command>) {
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
                out.push(Command::RefreshOutputs);
            }
        })
        .response
        .labelled_by(label.id)
        .on_hover_text("The audio output playback goes to");
    if let Some(name) = chosen {
        out.push(Command::ChooseOutput(name));
    }
}

/// The loopback API switch (shown once the model is loaded): off, or on with its URL
/// (selectable) and a copy-token button. The server shares the studio's engine and scheduler.
fn api_switch(studio: &Studio, ui: &mut egui::Ui, out: &mut Vec<Command>) {
    let api = studio.api_switch();
    if !api.available() {
        return;
    }
    ui.separator();
    let mut on = api.running().is_some();
    let toggle = ui.checkbox(&mut on, "API").on_hover_text(
        "Serve the OpenAI-compatible speech API on this machine's loopback interface, from \
         this studio's engine (same as `banter serve`; only programs with the token get in)",
    );
    if toggle.changed() {
        out.push(Command::SwitchApi(on));
    }
    if let Some(info) = api.running() {
        ui.add(egui::Label::new(egui::RichText::new(&info.url).monospace()).selectable(true))
            .on_hover_text("Where programs reach the API");
        // Shown on request (UI-only, in egui's memory): a clipboard that does not work, or a
        // token to read into another machine's config, still leaves a way to get it.
        let shown_id = egui::Id::unique("banter-api-token-shown");
        let mut shown = ui.data(|d| d.get_temp::<bool>(shown_id)).unwrap_or(false);
        if ui
            .small_button(if shown { "Hide token" } else { "Show token" })
            .on_hover_text("Show the API token here, to read or select")
            .clicked()
        {
            shown = !shown;
        }
        if shown {
            ui.add(egui::Label::new(egui::RichText::new(&info.token).monospace()).selectable(true))
                .on_hover_text("The API token (send it as `Authorization: Bearer TOKEN`)");
        }
        ui.data_mut(|d| d.insert_temp(shown_id, shown));
        if ui
            .small_button("Copy token")
            .on_hover_text("Copy the API token (send it as `Authorization: Bearer TOKEN`)")
            .clicked()
        {
            ui.ctx().copy_text(info.token.clone());
            out.push(Command::Say("API token copied".into()));
        }
    } else if let Some(e) = api.error() {
        ui.colored_label(ui.visuals().error_fg_color, "API failed")
            .on_hover_text(e.to_owned());
    }
}
