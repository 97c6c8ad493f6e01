//! A line's context menu (right-click in the lines view): re-render it at another speed, or with
//! another voice for its speaker.
//!
//! Speed is per line in the script itself: the menu writes a `[rate:X]` directive at the start
//! of the turn (replacing one already there), so export and playback agree and the edit shows in
//! the raw text. Scripts give voices per speaker, not per line, so "with voice" changes the
//! speaker's voice in the cast, and the menu says that it applies to all of the speaker's lines.
//! Either way the change is an ordinary edit: undoable, and while playing only the changed lines
//! are rendered again. The rewriting itself is the document's
//! ([`crate::doc::Document::set_turn_rate`]).

use eframe::egui;

use crate::app::Studio;
use crate::command::Command;
use crate::doc::CastChoice;

/// The speeds the menu offers.
pub const SPEEDS: [f32; 6] = [0.8, 0.9, 1.0, 1.1, 1.25, 1.5];

pub fn show(
    studio: &Studio,
    ui: &mut egui::Ui,
    out: &mut Vec<Command>,
    line: usize,
    speaker: &str,
) {
    ui.menu_button("Re-render with speed…", |ui| {
        let current = studio.doc.turn_rate(line);
        for speed in SPEEDS {
            let label = if (speed - 1.0).abs() < f32::EPSILON {
                "1.00× (no change)".to_owned()
            } else {
                format!("{speed:.2}×")
            };
            let chosen = current.is_some_and(|r| (r - speed).abs() < 1e-3)
                || (current.is_none() && (speed - 1.0).abs() < f32::EPSILON);
            if ui
                .selectable_label(chosen, label)
                .on_hover_text("Writes a [rate:…] directive at the start of this line")
                .clicked()
            {
                out.push(Command::SetLineRate { line, speed });
                ui.close();
            }
        }
    })
    .response
    .on_hover_text("Speak this line faster or slower");
    ui.menu_button(
        format!("Re-render with voice… (all of {speaker}'s lines)"),
        |ui| {
            let current = studio
                .doc
                .speakers()
                .into_iter()
                .find(|(s, _)| s == speaker)
                .map(|(_, c)| c);
            egui::ScrollArea::vertical()
                .max_height(320.0)
                .show(ui, |ui| {
                    for v in studio.voice_choices() {
                        let chosen = current.as_ref().is_some_and(|c| c.voice == v.name);
                        if ui
                            .selectable_label(chosen, format!("{} ({})", v.name, v.gender))
                            .clicked()
                        {
                            let speed = current.as_ref().map_or(1.0, |c| c.speed);
                            out.push(Command::SetCast {
                                speaker: speaker.to_owned(),
                                choice: CastChoice {
                                    voice: v.name.clone(),
                                    speed,
                                },
                            });
                            ui.close();
                        }
                    }
                });
        },
    )
    .response
    .on_hover_text(format!(
        "Scripts give each speaker one voice: this changes {speaker}'s voice in the cast"
    ));
}
