//! The blend editor under a speaker in the cast panel: two or more stock voices with weights,
//! shown as the recipe the engine parses (`af_bella:0.7+af_sky:0.3`, weights normalised), with
//! a preview and a button that gives the blend to the speaker. Kokoro blends by mixing the
//! voices' style tables, so a blend is a new voice "between" its parts, not several speaking.
//!
//! The open editors and their terms are UI-only until "Use" (see [`crate::state::blend`]), so
//! they live in egui's memory, by speaker.

use std::collections::BTreeMap;

use eframe::egui;

use crate::app::Studio;
use crate::command::Command;
use crate::doc::CastChoice;
use crate::state::blend::{recipe, start_terms, Terms};

/// The open blend editors, by speaker, in egui's memory.
type Editors = BTreeMap<String, Terms>;

fn editors_key() -> egui::Id {
    egui::Id::unique("banter-blend-editors")
}

fn editors(ui: &egui::Ui) -> Editors {
    ui.data(|d| d.get_temp(editors_key())).unwrap_or_default()
}

fn set_editors(ui: &egui::Ui, editors: Editors) {
    ui.data_mut(|d| d.insert_temp(editors_key(), editors));
}

/// The "Blend…" toggle for `speaker` (in the speaker's row).
pub fn toggle(studio: &Studio, ui: &mut egui::Ui, speaker: &str, voice: &str) {
    let mut editors = editors(ui);
    let open = editors.contains_key(speaker);
    if ui
        .selectable_label(open, format!("Blend voices for {speaker}"))
        .on_hover_text("Mix two or more voices into a new one, with weights")
        .clicked()
    {
        if open {
            editors.remove(speaker);
        } else {
            let names: Vec<String> = studio.voice_choices().into_iter().map(|v| v.name).collect();
            editors.insert(speaker.to_owned(), start_terms(voice, &names));
        }
        set_editors(ui, editors);
    }
}

/// The editor, when open for `speaker`.
pub fn show(studio: &Studio, ui: &mut egui::Ui, out: &mut Vec<Command>, speaker: &str, speed: f32) {
    let mut editors = editors(ui);
    let Some(terms) = editors.get_mut(speaker) else {
        return;
    };
    let voices = studio.voice_choices();
    let mut remove = None;
    let removable = terms.len() > 2;
    for (k, (voice, weight)) in terms.iter_mut().enumerate() {
        ui.horizontal(|ui| {
            egui::ComboBox::from_id_salt(("blend-voice", speaker, k))
                .selected_text(voice.as_str())
                .width(110.0)
                .height(300.0)
                .show_ui(ui, |ui| {
                    for v in &voices {
                        ui.selectable_value(voice, v.name.clone(), v.name.as_str());
                    }
                })
                .response
                .on_hover_text(format!("Voice {} of the blend", k + 1));
            ui.add(
                egui::Slider::new(weight, 0.0..=1.0)
                    .step_by(0.05)
                    .fixed_decimals(2),
            )
            .on_hover_text(format!("How much of {voice} is in the blend"));
            if removable
                && ui
                    .small_button("Remove")
                    .on_hover_text(format!("Take {voice} out of the blend"))
                    .clicked()
            {
                remove = Some(k);
            }
        });
    }
    if let Some(k) = remove {
        terms.remove(k);
    }
    let recipe = recipe(terms);
    ui.horizontal(|ui| {
        if ui
            .small_button("Add voice")
            .on_hover_text("Add another voice to the blend")
            .clicked()
        {
            let next = voices
                .iter()
                .find(|v| !terms.iter().any(|(t, _)| *t == v.name))
                .map(|v| v.name.clone());
            if let Some(name) = next {
                terms.push((name, 0.2));
            }
        }
        match &recipe {
            Ok(r) => {
                ui.label(format!("Recipe: {r}"))
                    .on_hover_text("The blend as scripts and the command line spell it");
            }
            Err(e) => {
                ui.colored_label(ui.visuals().error_fg_color, e.to_string());
            }
        }
    });
    if let Ok(r) = &recipe {
        ui.horizontal(|ui| {
            if ui
                .button("Preview blend")
                .on_hover_text("Hear the blend speak a sample sentence")
                .clicked()
            {
                out.push(Command::PreviewVoice {
                    speaker: speaker.to_owned(),
                    voice: r.clone(),
                    speed,
                });
            }
            if ui
                .button(format!("Use for {speaker}"))
                .on_hover_text(format!("Give {speaker} this blend"))
                .clicked()
            {
                out.push(Command::SetCast {
                    speaker: speaker.to_owned(),
                    choice: CastChoice {
                        voice: r.clone(),
                        speed,
                    },
                });
            }
        });
    }
    set_editors(ui, editors);
}
