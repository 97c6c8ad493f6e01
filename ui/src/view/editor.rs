//! The script editor, in two modes. *Lines*: the parsed turns, each with its speaker's colour;
//! click selects (play starts there), the Edit button edits that turn's source text in place,
//! hovering shows how the turn reads; the lines that are not spoken are listed, greyed, between
//! the turns (`skipped`). *Raw* (`raw`): the whole text in any supported format, with the
//! line a parse error points at highlighted and the message under it. When the text does not
//! parse, the raw view is shown whatever the mode, since there are no lines to show.

mod raw;
mod reads_as;
mod skipped;

use eframe::egui::{self, Color32};

use crate::app::{EditorMode, Studio};
use crate::command::Command;
use crate::doc::speaker_index;
use crate::view::speaker_colour;

/// The line being edited and its text, before Apply: UI-only, so it lives in egui's memory.
#[derive(Clone, Default)]
struct LineEdit {
    line: Option<usize>,
    text: String,
}

/// Where the raw script editor's widget id is remembered (in egui's memory).
fn script_field_key() -> egui::Id {
    egui::Id::unique("banter-raw-script-field")
}

/// The raw script editor's widget, once drawn: while it has the keyboard, Ctrl+Z is the
/// script's undo; in any other text field (search, find, a line being edited) it is that
/// field's own.
pub(crate) fn script_field(ctx: &egui::Context) -> Option<egui::Id> {
    ctx.data(|d| d.get_temp(script_field_key()))
}

pub fn show(studio: &Studio, ui: &mut egui::Ui, out: &mut Vec<Command>) {
    ui.horizontal(|ui| {
        ui.heading("Script");
        ui.add_space(8.0);
        let mut mode = studio.editor_mode();
        ui.selectable_value(&mut mode, EditorMode::Lines, "Lines")
            .on_hover_text("The parsed turns, coloured by speaker (Ctrl+L toggles)");
        ui.selectable_value(&mut mode, EditorMode::Raw, "Raw text")
            .on_hover_text("Edit the whole script as text, in any supported format");
        if mode != studio.editor_mode() {
            out.push(Command::SetMode(mode));
        }
        if let Ok(ep) = &studio.doc.parsed {
            ui.label(format!(
                "{} · {} lines · {} speakers",
                ep.format.as_str(),
                ep.lines.len(),
                ep.cast.members.len()
            ))
            .on_hover_text("Detected format and size of the script");
        }
    });
    if let Err(err) = &studio.doc.parsed {
        let text = format!("line {}, column {}: {}", err.line, err.column, err.kind);
        ui.colored_label(ui.visuals().error_fg_color, format!("Error at {text}"))
            .on_hover_text("The script does not parse; the line is highlighted below");
    }
    ui.separator();
    crate::view::find::show(studio, ui, out);
    if studio.editor_mode() == EditorMode::Raw || studio.doc.parsed.is_err() {
        raw::show(studio, ui, out);
    } else {
        lines(studio, ui, out);
    }
}

fn lines(studio: &Studio, ui: &mut egui::Ui, out: &mut Vec<Command>) {
    let Ok(ep) = &studio.doc.parsed else {
        return;
    };
    let id = ui.scope_id().with("line-edit");
    let mut edit: LineEdit = ui.data_mut(|d| d.get_temp(id)).unwrap_or_default();
    let current = studio
        .timeline
        .region_at(studio.buffer.position())
        .filter(|_| studio.buffer.is_playing())
        .map(|r| r.line);
    let rows: Vec<(usize, String, String, usize)> = ep
        .lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            (
                i,
                l.speaker.clone(),
                ep.spoken_text(l),
                speaker_index(&studio.doc, &l.speaker),
            )
        })
        .collect();
    let found = crate::find::matching_lines(&studio.doc, &studio.find);
    let scroll_to = studio.find.scroll_to;
    if scroll_to.is_some() {
        out.push(Command::FindScrolled);
    }
    let mut commit: Option<(usize, String)> = None;
    let mut runs = studio.doc.source().runs().iter().peekable();
    egui::ScrollArea::vertical()
        .id_salt("lines")
        .auto_shrink(false)
        .show(ui, |ui| {
            for (i, speaker, text, colour) in rows {
                while let Some(run) = runs.next_if(|r| r.before_turn <= i) {
                    skipped::run_row(ui, run);
                }
                let selected = i == studio.selected;
                let playing = current == Some(i);
                let fill = if playing {
                    ui.visuals().selection.bg_fill.gamma_multiply(0.6)
                } else if found.contains(&i) {
                    find_colour(ui)
                } else if selected {
                    ui.visuals().faint_bg_color
                } else {
                    Color32::TRANSPARENT
                };
                let row = egui::Frame::new()
                    .fill(fill)
                    .stroke(if selected && found.contains(&i) {
                        ui.visuals().selection.stroke
                    } else {
                        egui::Stroke::NONE
                    })
                    .inner_margin(egui::Margin::symmetric(6, 3))
                    .corner_radius(4.0)
                    .show(ui, |ui| {
                        ui.horizontal(|ui| {
                            ui.add_sized(
                                [110.0, 18.0],
                                egui::Label::new(
                                    egui::RichText::new(&speaker)
                                        .strong()
                                        .color(speaker_colour(colour)),
                                )
                                .truncate(),
                            )
                            .on_hover_text(format!("Speaker: {speaker}"));
                            if edit.line == Some(i) {
                                let r = ui.add(
                                    egui::TextEdit::multiline(&mut edit.text)
                                        .id_salt(("line-text", i))
                                        .desired_rows(1)
                                        .desired_width(ui.available_width() - 40.0),
                                );
                                r.request_focus();
                                let enter = ui.input(|inp| {
                                    inp.key_pressed(egui::Key::Enter) && !inp.modifiers.shift
                                });
                                if ui
                                    .button("Apply")
                                    .on_hover_text("Apply the edit (Enter)")
                                    .clicked()
                                    || enter
                                {
                                    commit = Some((i, edit.text.trim_end().to_owned()));
                                }
                                if ui.input(|inp| inp.key_pressed(egui::Key::Escape)) {
                                    edit.line = None;
                                }
                            } else {
                                let label = ui
                                    .add(egui::Label::new(&text).wrap().sense(egui::Sense::click()))
                                    .on_hover_ui(|ui| {
                                        ui.label(reads_as::hover_text(ui.ctx(), &studio.doc, i));
                                        ui.weak(
                                            "Click to select (play starts here); right-click to \
                                             re-render it with another speed or voice",
                                        );
                                    });
                                if label.clicked() {
                                    out.push(Command::Select(i));
                                }
                                label.context_menu(|ui| {
                                    crate::view::line_menu::show(studio, ui, out, i, &speaker);
                                });
                                if label.double_clicked() {
                                    edit = LineEdit {
                                        line: Some(i),
                                        text: studio.doc.turn_source(i).unwrap_or_default(),
                                    };
                                }
                                ui.with_layout(
                                    egui::Layout::right_to_left(egui::Align::Center),
                                    |ui| {
                                        if ui
                                            .small_button("Edit")
                                            .on_hover_text(format!("Edit line {}", i + 1))
                                            .clicked()
                                        {
                                            out.push(Command::Select(i));
                                            edit = LineEdit {
                                                line: Some(i),
                                                text: studio.doc.turn_source(i).unwrap_or_default(),
                                            };
                                        }
                                    },
                                );
                            }
                        });
                    });
                if scroll_to == Some(i) {
                    row.response.scroll_to_me(Some(egui::Align::Center));
                }
            }
            for run in runs {
                skipped::run_row(ui, run);
            }
        });
    if let Some((line, text)) = commit {
        out.push(Command::EditLine { line, text });
        edit = LineEdit::default();
    }
    ui.data_mut(|d| d.insert_temp(id, edit));
}

/// The background of a line that matches the find bar.
fn find_colour(ui: &egui::Ui) -> Color32 {
    ui.visuals().warn_fg_color.gamma_multiply(0.25)
}
