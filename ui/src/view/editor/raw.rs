//! The raw script view: the whole text in a code editor. The line a parse error points at is
//! highlighted, find matches are marked, and the lines that will not be spoken are greyed with
//! their kind at the right edge, so an author sees what the parser made of every line while
//! writing. Hovering a line says what it is: "Reads as: …" for a line of a turn, "not spoken:
//! narration" for a skipped one.

use eframe::egui::{self, text::LayoutJob, FontId, TextFormat};

use crate::app::Studio;
use crate::command::Command;
use crate::doc::SourceRole;

use super::reads_as;

/// The field's accessible name, and its tooltip away from any line.
const FIELD_NAME: &str = "The script as text";

pub(super) fn show(studio: &Studio, ui: &mut egui::Ui, out: &mut Vec<Command>) {
    let error_line = studio.doc.parsed.as_ref().err().map(|e| e.line);
    let error_bg = ui.visuals().error_fg_color.gamma_multiply(0.25);
    let text_colour = ui.visuals().text_color();
    let skipped_colour = ui.visuals().weak_text_color();
    let find_bg = super::find_colour(ui);
    let query = (studio.find.open && !studio.find.query.is_empty())
        .then(|| studio.find.query.to_lowercase());
    let source = studio.doc.source();
    let mut layouter = move |ui: &egui::Ui, text: &dyn egui::TextBuffer, wrap: f32| {
        let mut job = LayoutJob::default();
        for (i, line) in text.as_str().split_inclusive('\n').enumerate() {
            let colour = match source.role(i + 1) {
                SourceRole::Skipped(_) => skipped_colour,
                SourceRole::Spoken { .. } | SourceRole::Blank => text_colour,
            };
            let mut format = TextFormat::simple(FontId::monospace(14.0), colour);
            if error_line == Some(i + 1) {
                format.background = error_bg;
            } else if query
                .as_ref()
                .is_some_and(|q| line.to_lowercase().contains(q.as_str()))
            {
                format.background = find_bg;
            }
            job.append(line, 0.0, format);
        }
        job.wrap.max_width = wrap;
        ui.fonts_mut(|f| f.layout_job(job))
    };
    egui::ScrollArea::vertical()
        .id_salt("raw")
        .auto_shrink(false)
        .show(ui, |ui| {
            // The field edits a copy; the edit reaches the document as a command.
            let mut text = studio.doc.text.clone();
            let output = egui::TextEdit::multiline(&mut text)
                .id_salt("raw-editor")
                .desired_width(f32::INFINITY)
                .desired_rows(24)
                .code_editor()
                .layouter(&mut layouter)
                .show(ui);
            let response = output.response.response;
            ui.data_mut(|d| d.insert_temp(super::script_field_key(), response.id));
            // The tooltip changes with the line under the pointer, so it cannot name the field
            // for screen readers (and tests) as a fixed hover text does: name it here.
            ui.ctx().accesskit_node_builder(response.id, |node| {
                node.set_label(FIELD_NAME);
            });
            super::skipped::label_lines(
                ui,
                &output.galley,
                output.galley_pos,
                response.rect.right(),
                source,
            );
            let hovered = response
                .hover_pos()
                .map(|p| line_at(&output.galley, p.y - output.galley_pos.y));
            let response = response.on_hover_ui_at_pointer(|ui| {
                ui.label(hover_text(ui.ctx(), studio, hovered));
            });
            if response.changed() {
                out.push(Command::EditText(text));
            }
        });
}

/// What the raw view's tooltip says about source line `line`.
fn hover_text(ctx: &egui::Context, studio: &Studio, line: Option<usize>) -> String {
    let Some(line) = line else {
        return FIELD_NAME.to_owned();
    };
    match studio.doc.source().role(line) {
        SourceRole::Blank => FIELD_NAME.to_owned(),
        SourceRole::Skipped(kind) => format!("Line {line} · not spoken: {kind}"),
        SourceRole::Spoken { turn } => {
            let speaker = studio
                .doc
                .parsed
                .as_ref()
                .ok()
                .and_then(|ep| ep.lines.get(turn))
                .map_or("", |l| l.speaker.as_str());
            format!(
                "Line {line} · {speaker}\n{}",
                reads_as::hover_text(ctx, &studio.doc, turn)
            )
        }
    }
}

/// The source line (1-based) shown at height `y` in `galley` (the last one below its end).
fn line_at(galley: &egui::Galley, y: f32) -> usize {
    let mut line = 1;
    for row in &galley.rows {
        if y < row.rect().max.y {
            return line;
        }
        if row.ends_with_newline {
            line += 1;
        }
    }
    line
}
