//! The blend editor under a speaker in the cast panel: two or more stock voices with weights,
//! shown as the recipe the engine parses (`af_bella:0.7+af_sky:0.3`, weights normalised), with
//! a preview and a button that gives the blend to the speaker. Kokoro blends by mixing the
//! voices' style tables, so a blend is a new voice "between" its parts, not several speaking.

use eframe::egui;
use engine::voice::VoiceSpec;

use crate::app::Studio;
use crate::doc::CastChoice;

/// A blend being edited: `(stock voice, weight)` terms.
pub type Terms = Vec<(String, f32)>;

/// The recipe for `terms` in canonical form (zero weights dropped), or why there is none.
pub fn recipe(terms: &[(String, f32)]) -> Result<String, String> {
    let text = terms
        .iter()
        .filter(|(_, w)| *w > 0.0)
        .map(|(v, w)| format!("{v}:{w}"))
        .collect::<Vec<_>>()
        .join("+");
    if text.is_empty() {
        return Err("give at least one voice a weight above zero".into());
    }
    VoiceSpec::parse(&text)
        .map(|s| s.canonical())
        .map_err(|e| e.to_string())
}

/// The terms to start editing from: the speaker's blend, or its voice plus a second one.
fn start_terms(voice: &str, voices: &[String]) -> Terms {
    match VoiceSpec::parse(voice) {
        Ok(spec) if spec.terms.len() > 1 => spec
            .terms
            .into_iter()
            .map(|t| (t.voice, t.weight))
            .collect(),
        _ => {
            // A library voice (a matched one, say) is not a blend term: start from stock voices.
            let voice = if voices.iter().any(|v| v == voice) || voices.is_empty() {
                voice
            } else {
                voices[0].as_str()
            };
            let other = voices
                .iter()
                .find(|v| v.as_str() != voice)
                .cloned()
                .unwrap_or_else(|| voice.to_owned());
            vec![(voice.to_owned(), 0.7), (other, 0.3)]
        }
    }
}

/// The "Blend…" toggle for `speaker` (in the speaker's row).
pub fn toggle(studio: &mut Studio, ui: &mut egui::Ui, speaker: &str, voice: &str) {
    let open = studio.blends.contains_key(speaker);
    if ui
        .selectable_label(open, format!("Blend voices for {speaker}"))
        .on_hover_text("Mix two or more voices into a new one, with weights")
        .clicked()
    {
        if open {
            studio.blends.remove(speaker);
        } else {
            let names: Vec<String> = crate::view::cast::voices(studio)
                .into_iter()
                .map(|v| v.name)
                .collect();
            studio
                .blends
                .insert(speaker.to_owned(), start_terms(voice, &names));
        }
    }
}

/// The editor, when open for `speaker`.
pub fn show(studio: &mut Studio, ui: &mut egui::Ui, speaker: &str, speed: f32) {
    let Some(mut terms) = studio.blends.get(speaker).cloned() else {
        return;
    };
    let voices = crate::view::cast::voices(studio);
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
    let recipe = recipe(&terms);
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
                ui.colored_label(ui.visuals().error_fg_color, e);
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
                studio.preview_voice(speaker, r, speed);
            }
            if ui
                .button(format!("Use for {speaker}"))
                .on_hover_text(format!("Give {speaker} this blend"))
                .clicked()
            {
                crate::view::cast::set_choice(
                    studio,
                    speaker,
                    CastChoice {
                        voice: r.clone(),
                        speed,
                    },
                );
            }
        });
    }
    studio.blends.insert(speaker.to_owned(), terms);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recipes_are_normalised_and_need_a_weight() {
        let terms = vec![("af_bella".to_owned(), 1.4), ("af_sky".to_owned(), 0.6)];
        assert_eq!(recipe(&terms).as_deref(), Ok("af_bella:0.7+af_sky:0.3"));
        let one = vec![("af_bella".to_owned(), 0.5), ("af_sky".to_owned(), 0.0)];
        assert_eq!(recipe(&one).as_deref(), Ok("af_bella"));
        assert!(recipe(&[("af_sky".to_owned(), 0.0)]).is_err());
        let start = start_terms("af_bella:0.7+af_sky:0.3", &[]);
        assert_eq!(start.len(), 2);
    }
}
