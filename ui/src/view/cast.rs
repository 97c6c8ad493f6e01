//! The cast: every speaker with a voice (stock voices grouped by language, searchable) and a
//! speed; a voice automatic casting guessed from the name says so under the speaker. Each row is also a drop target: an audio clip dropped on it asks the voice matcher for
//! the closest voice (see [`crate::work::voicematch`]).

use eframe::egui;

use crate::app::Studio;
use crate::command::Command;
use crate::view::speaker_colour;
use engine::voicematch::tune::CONSENT;

use crate::work::voicematch::{MatchState, Matched};

/// Where each speaker's row was last drawn: UI-only, kept in egui's memory under this key.
fn rows_key() -> egui::Id {
    egui::Id::unique("banter-cast-rows")
}

/// The speaker whose row in the cast panel was last drawn under `pos` (a clip's drop target).
pub(crate) fn speaker_at(ctx: &egui::Context, pos: egui::Pos2) -> Option<String> {
    let rows: Vec<(String, egui::Rect)> = ctx.data(|d| d.get_temp(rows_key()))?;
    rows.into_iter()
        .find(|(_, r)| r.contains(pos))
        .map(|(s, _)| s)
}

pub fn show(studio: &Studio, ui: &mut egui::Ui, out: &mut Vec<Command>) {
    ui.horizontal(|ui| {
        ui.heading("Cast");
        if studio.cast_check.running {
            // In the heading row, so the rows below do not move while the check runs.
            ui.spinner()
                .on_hover_text("Checking that the speakers' voices sound distinct");
        }
    });
    ui.label(egui::RichText::new("Drop a voice clip on a speaker to match a voice.").weak())
        .on_hover_text("Voice matching compares the clip with every voice in the library");
    let warnings = studio.cast_warnings();
    if let Some(e) = &studio.cast_check.error {
        ui.label(egui::RichText::new(format!("Cast check unavailable: {e}")).weak())
            .on_hover_text("The cast check compares the voices with the speaker encoder");
    }
    for w in &warnings {
        ui.colored_label(
            ui.visuals().warn_fg_color,
            format!("Sounds alike: {}", w.message().replace('≥', ">=")),
        )
        .on_hover_text("Cast check: these voices are hard to tell apart (probe similarity ≥ 0.90)");
    }
    ui.separator();
    let voices = studio.voice_choices();
    let library_voices = &studio.library_voices;
    let speakers = studio.doc.speakers();
    if speakers.is_empty() {
        ui.label("No speakers: the script does not parse yet.");
    }
    let filter_id = ui.scope_id().with("voice-filter");
    let mut filter: String = ui.data_mut(|d| d.get_temp(filter_id)).unwrap_or_default();
    let mut rows = Vec::new();
    egui::ScrollArea::vertical().id_salt("cast").show(ui, |ui| {
        for (k, (name, choice)) in speakers.into_iter().enumerate() {
            let mut new = choice.clone();
            let frame = egui::Frame::group(ui.style()).show(ui, |ui| {
                ui.set_width(ui.available_width());
                ui.horizontal(|ui| {
                    let (dot, _) =
                        ui.allocate_exact_size(egui::vec2(12.0, 12.0), egui::Sense::hover());
                    ui.painter()
                        .circle_filled(dot.center(), 5.0, speaker_colour(k));
                    ui.strong(&name);
                    if warnings
                        .iter()
                        .any(|w| w.speaker_a == name || w.speaker_b == name)
                    {
                        ui.colored_label(ui.visuals().warn_fg_color, "(sounds alike)")
                            .on_hover_text(format!(
                                "{name}'s voice is hard to tell apart from another speaker's"
                            ));
                    }
                    preview_button(studio, ui, out, &name);
                });
                if let Some(guess) = studio.doc.guess(&name) {
                    guess_notice(ui, guess);
                }
                ui.horizontal(|ui| {
                    ui.label("Voice");
                    egui::ComboBox::from_id_salt(("voice", &name))
                        .selected_text(&new.voice)
                        .width(170.0)
                        .height(400.0)
                        // A click in the search field must not close the list; picking a voice
                        // closes it (below).
                        .close_behavior(egui::PopupCloseBehavior::CloseOnClickOutside)
                        .show_ui(ui, |ui| {
                            ui.horizontal(|ui| {
                                let label = ui.label("Search");
                                ui.add(
                                    egui::TextEdit::singleline(&mut filter)
                                        .hint_text("name or language")
                                        .desired_width(110.0),
                                )
                                .labelled_by(label.id)
                                .on_hover_text("Filter the voices by name or language");
                            });
                            let mut language = None;
                            for v in &voices {
                                let lang = v.language.to_string();
                                if !filter.is_empty()
                                    && !v.name.contains(filter.as_str())
                                    && !lang.contains(filter.as_str())
                                {
                                    continue;
                                }
                                if language.as_ref() != Some(&lang) {
                                    ui.label(egui::RichText::new(&lang).small().weak());
                                    language = Some(lang);
                                }
                                if ui
                                    .selectable_value(
                                        &mut new.voice,
                                        v.name.clone(),
                                        format!("{} ({})", v.name, v.gender),
                                    )
                                    .clicked()
                                {
                                    ui.close();
                                }
                            }
                            let mut heading = false;
                            for v in library_voices {
                                if !filter.is_empty() && !v.contains(filter.as_str()) {
                                    continue;
                                }
                                if !std::mem::replace(&mut heading, true) {
                                    ui.label(
                                        egui::RichText::new("library (blends, matched)")
                                            .small()
                                            .weak(),
                                    );
                                }
                                if ui
                                    .selectable_value(
                                        &mut new.voice,
                                        v.clone(),
                                        format!("{v} (library)"),
                                    )
                                    .clicked()
                                {
                                    ui.close();
                                }
                            }
                        })
                        .response
                        .on_hover_text(format!("The voice {name} speaks with"));
                });
                ui.horizontal(|ui| {
                    ui.label("Speed");
                    ui.add(
                        egui::Slider::new(&mut new.speed, 0.5..=2.0)
                            .step_by(0.05)
                            .fixed_decimals(2),
                    )
                    .on_hover_text(format!(
                        "How fast {name} speaks (1.0 is the voice's own pace)"
                    ));
                });
                ui.horizontal(|ui| crate::view::blend::toggle(studio, ui, &name, &new.voice));
                crate::view::blend::show(studio, ui, out, &name, new.speed);
                match_status(studio, ui, out, &name);
            });
            rows.push((name.clone(), frame.response.rect));
            if new != choice {
                out.push(Command::SetCast {
                    speaker: name,
                    choice: new,
                });
            }
        }
    });
    ui.data_mut(|d| {
        d.insert_temp(filter_id, filter);
        d.insert_temp(rows_key(), rows);
    });
}

/// Says that a speaker's voice was guessed from the name, and how to change it.
fn guess_notice(ui: &mut egui::Ui, guess: &engine::script::GenderGuess) {
    let said = guess.describe();
    let mut chars = said.chars();
    let capital: String = chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default();
    ui.label(
        egui::RichText::new(format!("{capital}: choose another voice if that is wrong."))
            .small()
            .color(ui.visuals().warn_fg_color),
    )
    .on_hover_text(
        "Automatic casting reads a likely gender from a title or a common given name; \
         a name is only a hint, so this is a guess",
    );
}

/// Preview (or stop previewing) `speaker`'s voice.
fn preview_button(studio: &Studio, ui: &mut egui::Ui, out: &mut Vec<Command>, speaker: &str) {
    ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
        if studio.previewing() == Some(speaker) {
            if ui
                .small_button("Stop preview")
                .on_hover_text("Stop the preview")
                .clicked()
            {
                out.push(Command::Stop);
            }
        } else if ui
            .small_button(format!("Preview {speaker}"))
            .on_hover_text(format!(
                "Hear a sample sentence in {speaker}'s voice and speed"
            ))
            .clicked()
        {
            out.push(Command::PreviewSpeaker(speaker.to_owned()));
        }
    });
}

/// The state of `speaker`'s voice match or tuning under its row: progress (with Cancel for a
/// tuning), the voice found (with Tune beside a match), or why not.
fn match_status(studio: &Studio, ui: &mut egui::Ui, out: &mut Vec<Command>, speaker: &str) {
    match studio.matching.get(speaker) {
        None => {}
        Some(MatchState::Running {
            text,
            fraction,
            cancel,
        }) => {
            ui.horizontal(|ui| {
                ui.spinner();
                if cancel.is_some() {
                    ui.label(format!("Tuning a voice: {text}"));
                    if ui
                        .small_button("Cancel tuning")
                        .on_hover_text("Stop before the next render; nothing is saved")
                        .clicked()
                    {
                        out.push(Command::CancelTune {
                            speaker: speaker.to_owned(),
                        });
                    }
                } else {
                    ui.label(format!("Matching a voice: {text}"));
                }
            });
            if let Some(f) = fraction {
                ui.add(egui::ProgressBar::new(*f).show_percentage());
            }
        }
        Some(MatchState::Done(m)) => matched(ui, out, speaker, m),
        Some(MatchState::Failed(e)) => {
            ui.colored_label(
                ui.visuals().error_fg_color,
                format!("Voice match or tuning failed: {e}"),
            )
            .on_hover_text("Drop a clip of at least a few seconds of clear speech of one speaker");
        }
    }
}

fn matched(ui: &mut egui::Ui, out: &mut Vec<Command>, speaker: &str, m: &Matched) {
    let nearest = m
        .nearest
        .iter()
        .map(|(n, s)| format!("{n} {s:.2}"))
        .collect::<Vec<_>>()
        .join(", ");
    if let Some(before) = m.tuned_from {
        ui.label(format!(
            "Tuned voice \"{}\": similarity {before:.2} (best blend), now {:.2} on held-out \
             sentences",
            m.name, m.similarity
        ))
        .on_hover_text(format!(
            "Saved in the voice library, tuned from {}. Nearest stock voices: {nearest}",
            m.recipe
        ));
        ui.label(
            egui::RichText::new(format!(
                "A Kokoro voice tuned toward the clip's speaker, not a clone. {CONSENT}"
            ))
            .small()
            .weak(),
        );
    } else {
        ui.horizontal(|ui| {
            ui.label(format!(
                "Matched voice \"{}\" = {} (similarity {:.2})",
                m.name, m.recipe, m.similarity
            ))
            .on_hover_text(format!(
                "Saved in the voice library. Nearest stock voices: {nearest}"
            ));
            if ui
                .small_button("Tune")
                .on_hover_text(format!(
                    "Search beyond the stock blends for a voice closer to this clip's speaker \
                     (a few minutes, in the background). {CONSENT}"
                ))
                .clicked()
            {
                out.push(Command::TuneVoice {
                    speaker: speaker.to_owned(),
                    clip: m.clip.clone(),
                });
            }
        });
        ui.label(
            egui::RichText::new(
                "This matches the nearest voice Banter can speak; it does not clone the \
                 clip's voice.",
            )
            .small()
            .weak(),
        );
    }
    for note in &m.notes {
        ui.label(egui::RichText::new(format!("Note: {note}")).small());
    }
}
