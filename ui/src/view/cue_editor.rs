//! The small editor a click on a cue's band in the sound lane opens: the cue's volume (dB) and
//! fade (seconds) as the script sets them now (the parser's defaults where it sets none; only
//! the fade for `[bed: off]`), and Apply, which asks for them to be written into the cue.
//!
//! Why this shape: the cue belongs to the script, so the editor holds only what is being typed
//! (in egui's memory, as [`crate::command`] asks of a value that is only the UI's own) and
//! Apply sends [`Command::SetCueOptions`] with the fields the author changed; the document
//! rewrites the cue, the parser judges the values and says why it refuses one (in the status
//! bar), and the change is one undo step. The values are typed as text, so a unit the parser
//! reads (`500ms`) works as written.

use eframe::egui;
use engine::script::Position;

use crate::app::Studio;
use crate::command::Command;
use crate::doc::{cue_at, shown_values, CueOptions};

/// What the editor holds while it is open.
#[derive(Debug, Clone, PartialEq)]
struct Editing {
    /// Where the cue's `[` is in the script.
    at: Position,
    /// The cue as written when the editor opened (its title).
    cue: String,
    /// The fields as typed; `volume` is `None` for `[bed: off]`.
    volume: Option<String>,
    fade: String,
    /// Where the click was: the editor opens there.
    near: egui::Pos2,
}

fn id() -> egui::Id {
    egui::Id::unique("banter-cue-editor")
}

/// Opens the editor on the cue whose `[` is at `at`, near `near`, with the values the script
/// gives it now; nothing opens when the script has no cue there any more (it is said why).
#[must_use = "false when nothing opened: say why"]
pub fn open(ctx: &egui::Context, studio: &Studio, at: Position, near: egui::Pos2) -> bool {
    let cue = studio
        .doc
        .parsed
        .as_ref()
        .ok()
        .and_then(|ep| cue_at(ep, at))
        .map(|c| &c.action);
    let Some(action) = cue else {
        return false;
    };
    let (volume, fade) = shown_values(action);
    let kind = match action.file() {
        Some(file) if matches!(action, engine::script::CueAction::Sound { .. }) => {
            format!("[sound: {file}]")
        }
        Some(file) => format!("[bed: {file}]"),
        None => "[bed: off]".to_owned(),
    };
    let editing = Editing {
        at,
        cue: kind,
        volume,
        fade,
        near,
    };
    ctx.data_mut(|d| d.insert_temp(id(), editing));
    true
}

/// Draws the editor while it is open.
pub fn show(studio: &Studio, ctx: &egui::Context, out: &mut Vec<Command>) {
    let Some(mut e) = ctx.data(|d| d.get_temp::<Editing>(id())) else {
        return;
    };
    // The values the script gives the cue now: only a field that differs is written.
    let now = studio
        .doc
        .parsed
        .as_ref()
        .ok()
        .and_then(|ep| cue_at(ep, e.at))
        .map(|c| shown_values(&c.action));
    let mut open = true;
    let mut close = false;
    egui::Window::new("Sound cue")
        .id(id())
        .open(&mut open)
        .collapsible(false)
        .resizable(false)
        .default_pos(e.near + egui::vec2(0.0, -150.0))
        .show(ctx, |ui| {
            ui.label(format!(
                "{} at line {}, column {}",
                e.cue, e.at.line, e.at.column
            ));
            egui::Grid::new("cue-editor-fields")
                .num_columns(2)
                .show(ui, |ui| {
                    if let Some(volume) = &mut e.volume {
                        let label = ui.label("Volume (dB)");
                        ui.add(egui::TextEdit::singleline(volume).desired_width(80.0))
                            .labelled_by(label.id)
                            .on_hover_text(
                                "The cue's level in dB, from -60 to +12 (0 plays the file as it \
                                 is)",
                            );
                        ui.end_row();
                    }
                    let label = ui.label("Fade (s)");
                    ui.add(egui::TextEdit::singleline(&mut e.fade).desired_width(80.0))
                        .labelled_by(label.id)
                        .on_hover_text("Fade in and out in seconds, up to 30 (or 500ms)");
                    ui.end_row();
                });
            if now.is_none() {
                ui.colored_label(
                    ui.visuals().warn_fg_color,
                    "The script has no cue here now; press Play to see its cues.",
                );
            }
            ui.horizontal(|ui| {
                let options = now.as_ref().map(|(volume, fade)| CueOptions {
                    volume: e.volume.clone().filter(|v| Some(v) != volume.as_ref()),
                    fade: Some(e.fade.clone()).filter(|f| f != fade),
                });
                let changed = options
                    .as_ref()
                    .is_some_and(|o| o.volume.is_some() || o.fade.is_some());
                if ui
                    .add_enabled(changed, egui::Button::new("Apply"))
                    .on_hover_text("Write these values into the cue in the script (undoable)")
                    .on_disabled_hover_text("The cue in the script already has these values")
                    .clicked()
                {
                    if let Some(options) = options {
                        out.push(Command::SetCueOptions { at: e.at, options });
                    }
                }
                if ui.button("Close").clicked() {
                    close = true;
                }
            });
        });
    if open && !close {
        ctx.data_mut(|d| d.insert_temp(id(), e));
    } else {
        ctx.data_mut(|d| d.remove::<Editing>(id()));
    }
}
