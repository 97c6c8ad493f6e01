//! The menu bar: File (projects, import, export, quit), Edit (undo, redo, find), View (script mode, theme) and Help.

use eframe::egui;

use crate::app::Studio;
use crate::command::Command;
use crate::state::EditorMode;

pub fn show(studio: &Studio, ui: &mut egui::Ui, out: &mut Vec<Command>) {
    egui::MenuBar::new().ui(ui, |ui| {
        ui.menu_button("File", |ui| file_menu(studio, ui, out));
        ui.menu_button("Edit", |ui| edit_menu(studio, ui, out));
        ui.menu_button("View", |ui| {
            let raw = studio.editor_mode() == EditorMode::Raw;
            if ui
                .selectable_label(raw, "Raw text  (Ctrl+L)")
                .on_hover_text("Edit the script as plain text in any supported format")
                .clicked()
            {
                out.push(Command::ToggleMode);
                ui.close();
            }
            let label = if studio.is_dark() {
                "Light theme"
            } else {
                "Dark theme"
            };
            if ui
                .button(format!("{label}  (Ctrl+Shift+T)"))
                .on_hover_text("Switch between the dark and the light theme")
                .clicked()
            {
                out.push(Command::ToggleTheme);
                ui.close();
            }
        });
        ui.menu_button("Help", |ui| {
            if ui
                .button("Keyboard shortcuts  (F1)")
                .on_hover_text("List every shortcut")
                .clicked()
            {
                out.push(Command::SetHelp(true));
                ui.close();
            }
        });
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            let marker = if studio.doc.dirty { " •" } else { "" };
            ui.label(format!("{}{marker}", studio.doc.name))
                .on_hover_text("The project's name; • means unsaved changes");
        });
    });
}

fn edit_menu(studio: &Studio, ui: &mut egui::Ui, out: &mut Vec<Command>) {
    if ui
        .add_enabled(
            studio.history.can_undo(),
            egui::Button::new("Undo  (Ctrl+Z)"),
        )
        .on_hover_text("Undo the last change to the script or the cast")
        .clicked()
    {
        out.push(Command::Undo);
        ui.close();
    }
    if ui
        .add_enabled(
            studio.history.can_redo(),
            egui::Button::new("Redo  (Ctrl+Shift+Z)"),
        )
        .on_hover_text("Redo the last undone change (also Ctrl+Y)")
        .clicked()
    {
        out.push(Command::Redo);
        ui.close();
    }
    ui.separator();
    if ui
        .button("Find…  (Ctrl+F)")
        .on_hover_text("Find text or a speaker in the script")
        .clicked()
    {
        out.push(Command::OpenFind);
        ui.close();
    }
}

fn file_menu(studio: &Studio, ui: &mut egui::Ui, out: &mut Vec<Command>) {
    if ui
        .button("New  (Ctrl+N)")
        .on_hover_text("Start a new project from the example script")
        .clicked()
    {
        out.push(Command::NewProject);
        ui.close();
    }
    if ui
        .button("Open…  (Ctrl+O)")
        .on_hover_text("Choose a script file to open as a new project")
        .clicked()
    {
        out.push(Command::ShowOpen);
        ui.close();
    }
    if ui
        .button("Open a path or a project…")
        .on_hover_text("Type a script's path, or open a project from the library")
        .clicked()
    {
        out.push(Command::ShowOpenPath);
        ui.close();
    }
    ui.menu_button("Recent projects", |ui| {
        if studio.projects.is_empty() {
            ui.label("none yet");
        }
        for name in studio.projects.iter().take(10) {
            if ui
                .button(name)
                .on_hover_text("Open this project from the library")
                .clicked()
            {
                out.push(Command::LoadProject(name.clone()));
                ui.close();
            }
        }
    });
    ui.separator();
    if ui
        .button("Save  (Ctrl+S)")
        .on_hover_text("Save the project in the library")
        .clicked()
    {
        out.push(Command::Save);
        ui.close();
    }
    if ui
        .button("Save as…  (Ctrl+Shift+S)")
        .on_hover_text("Save the project under a new name")
        .clicked()
    {
        out.push(Command::ShowSaveAs);
        ui.close();
    }
    ui.separator();
    if ui
        .button("Export…  (Ctrl+E)")
        .on_hover_text("Render the episode to WAV, FLAC or MP3 with captions and chapters")
        .clicked()
    {
        out.push(Command::ShowExport);
        ui.close();
    }
    ui.separator();
    if ui
        .button("Quit  (Ctrl+Q)")
        .on_hover_text("Close the studio (asks first if there are unsaved changes)")
        .clicked()
    {
        out.push(Command::Quit);
        ui.close();
    }
}
