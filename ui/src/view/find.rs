//! The find bar above the editor (only while open): the query field, how many lines match,
//! previous / next, close. The matching itself is [`crate::state::find`].

use eframe::egui;

use crate::app::Studio;
use crate::command::Command;
use crate::state::find::matching_lines;

pub fn show(studio: &Studio, ui: &mut egui::Ui, out: &mut Vec<Command>) {
    let find = &studio.find;
    if !find.open {
        return;
    }
    let hits = matching_lines(&studio.doc, find);
    let mut step = None;
    ui.horizontal(|ui| {
        let label = ui.label("Find");
        let mut query = find.query.clone();
        let field = ui
            .add(
                egui::TextEdit::singleline(&mut query)
                    .id_salt("find-query")
                    .hint_text("text or speaker")
                    .desired_width(220.0),
            )
            .labelled_by(label.id)
            .on_hover_text("Lines containing this are highlighted (case is ignored)");
        if find.focus {
            field.request_focus();
            out.push(Command::FindFocus(false));
        }
        // What the count shows this frame: a new query starts again from its first match.
        let current = if field.changed() {
            out.push(Command::SetFindQuery(query.clone()));
            0
        } else {
            find.current
        };
        let (enter, shift, escape) = ui.input(|i| {
            (
                i.key_pressed(egui::Key::Enter),
                i.modifiers.shift,
                i.key_pressed(egui::Key::Escape),
            )
        });
        if field.lost_focus() && enter {
            step = Some(!shift);
            out.push(Command::FindFocus(true));
        }
        let count = if query.is_empty() {
            String::new()
        } else if hits.is_empty() {
            "no match".to_owned()
        } else {
            format!("{} of {}", (current + 1).min(hits.len()), hits.len())
        };
        ui.label(count)
            .on_hover_text("The match jumped to and how many lines match");
        if ui
            .button("Previous")
            .on_hover_text("Previous matching line (Shift+Enter)")
            .clicked()
        {
            step = Some(false);
        }
        if ui
            .button("Next")
            .on_hover_text("Next matching line (Enter)")
            .clicked()
        {
            step = Some(true);
        }
        if ui
            .button("Close")
            .on_hover_text("Close the find bar (Esc)")
            .clicked()
            || (escape && (field.has_focus() || field.lost_focus()))
        {
            out.push(Command::CloseFind);
        }
    });
    if let Some(forward) = step {
        out.push(Command::FindStep(forward));
    }
    ui.separator();
}
