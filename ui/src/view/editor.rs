//! The script editor, in two modes. *Lines*: the parsed turns, each with its speaker's colour;
//! click selects (play starts there), or, on a line already heard, moves the playhead to the
//! word clicked; while playing, the word being spoken is highlighted (see [`crate::words`]);
//! right-click offers "Play from here" and the line's menu; the Edit button edits that turn's
//! source text in place, hovering shows how the turn reads; the lines that are not spoken are listed, greyed, between
//! the turns (`skipped`); an audio file dropped on a turn's row becomes a sound cue before it
//! ([`line_at`] says which row, [`crate::input`] makes the command). *Raw* (`raw`): the whole text in any supported format, with the
//! line a parse error points at highlighted and the message under it. When the text does not
//! parse, the raw view is shown whatever the mode, since there are no lines to show.

mod raw;
mod reads_as;
mod skipped;

use std::ops::Range;
use std::sync::Arc;

use eframe::egui::text::{LayoutJob, TextFormat};
use eframe::egui::{self, Color32, Galley};

use crate::app::Studio;
use crate::command::Command;
use crate::doc::speaker_index;
use crate::state::EditorMode;
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

/// Where the lines view's rows were drawn last frame (in egui's memory), for drops.
fn rows_key() -> egui::Id {
    egui::Id::unique("banter-line-rows")
}

/// The turn (episode line index) whose row is under `pos` in the lines view, if one is.
pub(crate) fn line_at(ctx: &egui::Context, pos: egui::Pos2) -> Option<usize> {
    let rows: Vec<(usize, egui::Rect)> = ctx.data(|d| d.get_temp(rows_key()))?;
    rows.into_iter()
        .find(|(_, r)| r.contains(pos))
        .map(|(i, _)| i)
}

pub fn show(studio: &Studio, ui: &mut egui::Ui, out: &mut Vec<Command>) {
    // No rows until the lines view draws them (the raw view has none to drop on).
    ui.data_mut(|d| d.insert_temp(rows_key(), Vec::<(usize, egui::Rect)>::new()));
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
        .waveform
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
    let found = crate::state::find::matching_lines(&studio.doc, &studio.find);
    let scroll_to = studio.find.scroll_to;
    if scroll_to.is_some() {
        out.push(Command::FindScrolled);
    }
    let mut commit: Option<(usize, String)> = None;
    let mut drawn: Vec<(usize, egui::Rect)> = Vec::new();
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
                        // The whole row answers a click, not only its words: the row's own
                        // response is registered before the widgets in it, which keep theirs.
                        let whole = ui.scope_builder(
                            egui::UiBuilder::new()
                                .id_salt(("line-row", i))
                                .sense(egui::Sense::click()),
                            |ui| {
                                ui.set_width(ui.available_width());
                                ui.horizontal(|ui| {
                                    speaker_label(ui, &speaker, colour);
                                    if edit.line == Some(i) {
                                        line_editor(ui, i, &mut edit, &mut commit);
                                    } else {
                                        turn_text(studio, ui, out, i, &speaker, &text, &mut edit);
                                    }
                                });
                            },
                        );
                        if edit.line != Some(i) {
                            let whole = whole.response;
                            if whole.clicked() {
                                out.push(Command::Select(i));
                            }
                            if whole.double_clicked() {
                                edit = LineEdit {
                                    line: Some(i),
                                    text: studio.doc.turn_source(i).unwrap_or_default(),
                                };
                            }
                        }
                    });
                drawn.push((i, row.response.rect.intersect(ui.clip_rect())));
                if scroll_to == Some(i) {
                    row.response.scroll_to_me(Some(egui::Align::Center));
                }
            }
            for run in runs {
                skipped::run_row(ui, run);
            }
        });
    ui.data_mut(|d| d.insert_temp(rows_key(), drawn));
    if let Some((line, text)) = commit {
        out.push(Command::EditLine { line, text });
        edit = LineEdit::default();
    }
    ui.data_mut(|d| d.insert_temp(id, edit));
}

/// The speaker's name at the start of a row, in their colour, cut to a fixed width.
fn speaker_label(ui: &mut egui::Ui, speaker: &str, colour: usize) {
    ui.add_sized(
        [110.0, 18.0],
        egui::Label::new(
            egui::RichText::new(speaker)
                .strong()
                .color(speaker_colour(colour)),
        )
        .truncate(),
    )
    .on_hover_text(format!("Speaker: {speaker}"));
}

/// The turn's source being edited in place: the field takes the row's width and the buttons go
/// under it, so a long turn never pushes Apply off the panel.
fn line_editor(
    ui: &mut egui::Ui,
    i: usize,
    edit: &mut LineEdit,
    commit: &mut Option<(usize, String)>,
) {
    ui.vertical(|ui| {
        let r = ui.add(
            egui::TextEdit::multiline(&mut edit.text)
                .id_salt(("line-text", i))
                .desired_rows(1)
                .desired_width(ui.available_width()),
        );
        r.request_focus();
        let enter = ui.input(|inp| inp.key_pressed(egui::Key::Enter) && !inp.modifiers.shift);
        ui.horizontal(|ui| {
            if ui
                .button("Apply")
                .on_hover_text("Apply the edit (Enter)")
                .clicked()
                || enter
            {
                *commit = Some((i, edit.text.trim_end().to_owned()));
            }
            if ui
                .button("Cancel")
                .on_hover_text("Leave the line as it was (Esc)")
                .clicked()
                || ui.input(|inp| inp.key_pressed(egui::Key::Escape))
            {
                edit.line = None;
            }
        });
    });
}

/// The room the Edit button takes at the end of a row: the words wrap before it, so it never
/// covers the end of a long line (where the spoken-word highlight lands).
fn edit_button_room(ui: &egui::Ui) -> f32 {
    let text = egui::WidgetText::from("Edit").into_galley(
        ui,
        Some(egui::TextWrapMode::Extend),
        f32::INFINITY,
        egui::TextStyle::Button,
    );
    text.size().x + 2.0 * ui.spacing().button_padding.x + 2.0 * ui.spacing().item_spacing.x
}

/// A turn's words (click to select or seek, right-click for its menu, double-click to edit) and
/// its Edit button.
fn turn_text(
    studio: &Studio,
    ui: &mut egui::Ui,
    out: &mut Vec<Command>,
    i: usize,
    speaker: &str,
    text: &str,
    edit: &mut LineEdit,
) {
    let room = edit_button_room(ui);
    let galley = line_galley(ui, text, word_span(studio, i, text), room);
    let label = ui
        .add(egui::Label::new(Arc::clone(&galley)).sense(egui::Sense::click()))
        .on_hover_ui(|ui| {
            ui.label(reads_as::hover_text(ui.ctx(), &studio.doc, i));
            ui.weak(
                "Click to select (play starts here), or once heard to move the playhead to \
                 that word; right-click to play from a word or re-render the line with another \
                 speed or voice",
            );
        });
    let at = |pos: egui::Pos2| {
        let cursor = galley.cursor_from_pos(pos - label.rect.min);
        crate::words::byte_of_char(text, cursor.index.0)
    };
    if label.clicked() {
        let at = label.interact_pointer_pos().map_or(0, at);
        out.push(Command::SeekWord { line: i, at });
    }
    if label.secondary_clicked() {
        let at = label.interact_pointer_pos().map_or(0, at);
        ui.data_mut(|d| d.insert_temp(menu_word_id(), at));
    }
    label.context_menu(|ui| {
        let at = ui.data(|d| d.get_temp(menu_word_id()));
        if ui
            .add_enabled(studio.is_ready(), egui::Button::new("Play from here"))
            .on_hover_text(
                "Play from the word you right-clicked (rendering this line first if it is not \
                 yet)",
            )
            .on_disabled_hover_text("Playback needs the model loaded")
            .clicked()
        {
            out.push(Command::PlayFromWord {
                line: i,
                at: at.unwrap_or(0),
            });
            ui.close();
        }
        ui.separator();
        crate::view::line_menu::show(studio, ui, out, i, speaker);
    });
    if label.double_clicked() {
        *edit = LineEdit {
            line: Some(i),
            text: studio.doc.turn_source(i).unwrap_or_default(),
        };
    }
    ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
        if ui
            .small_button("Edit")
            .on_hover_text(format!("Edit line {}", i + 1))
            .clicked()
        {
            out.push(Command::Select(i));
            *edit = LineEdit {
                line: Some(i),
                text: studio.doc.turn_source(i).unwrap_or_default(),
            };
        }
    });
}

/// Where the right-clicked byte of a line's text is kept while its menu is open (egui's memory:
/// UI-only).
fn menu_word_id() -> egui::Id {
    egui::Id::unique("banter-line-menu-word")
}

/// The byte range of the word being spoken in turn `line`'s `text`, if it is that turn's:
/// while playing, or paused in the audio of the script as it is (after a click on a word).
fn word_span(studio: &Studio, line: usize, text: &str) -> Option<Range<usize>> {
    let position = studio.buffer.position();
    let shown = studio.buffer.is_playing()
        || (studio.waveform.revision == studio.doc.revision && position > 0);
    let (l, k) = studio.waveform.word_at(position).filter(|_| shown)?;
    if l != line {
        return None;
    }
    let words = studio.waveform.line_words(line);
    crate::words::span_of(text, words.iter().map(|w| w.text.as_str()), k)
}

/// A turn's text laid out as `egui::Label` lays out a wrapped label in a row, with `word`
/// highlighted, wrapping `room` short of the row's end: laid out here so that a click can be
/// mapped back to a character of the text.
fn line_galley(ui: &egui::Ui, text: &str, word: Option<Range<usize>>, room: f32) -> Arc<Galley> {
    let plain = TextFormat {
        font_id: egui::FontSelection::Default.resolve(ui.style()),
        color: Color32::PLACEHOLDER,
        valign: ui.text_valign(),
        ..TextFormat::default()
    };
    let mut job = LayoutJob {
        break_on_newline: true,
        halign: ui.layout().horizontal_placement(),
        justify: ui.layout().horizontal_justify(),
        ..LayoutJob::default()
    };
    job.wrap.max_width = (ui.available_width() - room).max(40.0);
    match word.filter(|r| text.get(r.clone()).is_some()) {
        Some(r) => {
            job.append(&text[..r.start], 0.0, plain.clone());
            let spoken = TextFormat {
                background: ui.visuals().selection.bg_fill,
                color: ui.visuals().strong_text_color(),
                ..plain.clone()
            };
            job.append(&text[r.clone()], 0.0, spoken);
            job.append(&text[r.end..], 0.0, plain);
        }
        None => job.append(text, 0.0, plain),
    }
    ui.fonts_mut(|f| f.layout_job(job))
}

/// The background of a line that matches the find bar.
fn find_colour(ui: &egui::Ui) -> Color32 {
    ui.visuals().warn_fg_color.gamma_multiply(0.25)
}
