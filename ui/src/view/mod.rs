//! The studio's panels and dialogs, one file each. [`layout`] places them: menu bar on top,
//! status bar at the bottom, transport and timeline above it, the cast on the left, the script
//! in the middle; dialogs float above.
//!
//! A view only draws and asks: it gets `&Studio` and a `&mut Vec<Command>`, reads the state it
//! draws and pushes a command for every change the author makes (see [`crate::command`] for the
//! rule on widgets that edit a value in place, and for what a view may keep in egui's memory).
//! [`layout`] applies each panel's commands right after drawing it, so the panels drawn later in
//! the frame already show the change.

pub mod blend;
pub mod cast;
pub mod cue_editor;
pub mod dialogs;
pub mod editor;
pub mod export;
pub mod find;
pub mod lane;
pub mod line_menu;
pub mod menu;
pub mod status;
pub mod transport;

use eframe::egui;

use crate::app::{EngineState, Studio};

/// Speaker colours, readable on both themes.
pub const SPEAKER_COLOURS: [egui::Color32; 8] = [
    egui::Color32::from_rgb(0x4e, 0x9a, 0xf0),
    egui::Color32::from_rgb(0xe6, 0x7e, 0x22),
    egui::Color32::from_rgb(0x2e, 0xb8, 0x72),
    egui::Color32::from_rgb(0xc2, 0x4d, 0xd6),
    egui::Color32::from_rgb(0xd9, 0x4a, 0x4a),
    egui::Color32::from_rgb(0x1a, 0xb0, 0xb0),
    egui::Color32::from_rgb(0xb8, 0x9a, 0x1c),
    egui::Color32::from_rgb(0x8a, 0x7b, 0xe0),
];

#[must_use]
pub fn speaker_colour(index: usize) -> egui::Color32 {
    SPEAKER_COLOURS[index % SPEAKER_COLOURS.len()]
}

/// Draws every panel and dialog, applying the commands each one emits once it is drawn.
pub fn layout(studio: &mut Studio, ui: &mut egui::Ui) {
    let mut out = Vec::new();
    egui::Panel::top("menu").show(ui, |ui| menu::show(studio, ui, &mut out));
    studio.apply_all(&mut out);
    egui::Panel::bottom("status").show(ui, |ui| status::show(studio, ui, &mut out));
    studio.apply_all(&mut out);
    let first_run = !matches!(
        studio.engine,
        EngineState::Ready(_) | EngineState::Loading { .. }
    );
    egui::Panel::bottom("transport")
        .resizable(true)
        .default_size(190.0)
        .min_size(140.0)
        .show(ui, |ui| transport::show(studio, ui, &mut out));
    studio.apply_all(&mut out);
    egui::Panel::left("cast")
        .resizable(true)
        .default_size(300.0)
        .min_size(220.0)
        .show(ui, |ui| cast::show(studio, ui, &mut out));
    studio.apply_all(&mut out);
    egui::CentralPanel::default().show(ui, |ui| {
        if first_run {
            dialogs::first_run(studio, ui, &mut out);
            ui.separator();
        }
        editor::show(studio, ui, &mut out);
    });
    studio.apply_all(&mut out);
    let ctx = ui.ctx().clone();
    export::show(studio, &ctx, &mut out);
    studio.apply_all(&mut out);
    dialogs::show(studio, &ctx, &mut out);
    studio.apply_all(&mut out);
}
