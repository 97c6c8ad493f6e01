//! Small dialogs: first run (model fetch), open (by path), a file refused as not a script, save
//! as, crash recovery, replace the script, and the keyboard shortcuts overlay.

use eframe::egui;

use crate::app::{EngineState, Studio};
use crate::command::Command;
use crate::state::dialogs::{Leaving, UnsavedAnswer};

/// Every shortcut, for the F1 overlay.
pub const SHORTCUTS: [(&str, &str); 19] = [
    ("Space", "Play / pause from the selected line"),
    ("Esc", "Stop (or close a dialog)"),
    ("Ctrl+N", "New project"),
    ("Ctrl+O", "Open a script or a project"),
    ("Ctrl+S", "Save the project"),
    ("Ctrl+Shift+S", "Save the project as…"),
    ("Ctrl+E", "Export…"),
    ("Ctrl+Z", "Undo a script or cast change"),
    ("Ctrl+Shift+Z / Ctrl+Y", "Redo"),
    ("Ctrl+F", "Find in the script"),
    (
        "Enter / Shift+Enter",
        "Next / previous match (in the find bar)",
    ),
    ("Ctrl+L", "Switch between lines and raw text"),
    ("Ctrl+Shift+T", "Dark / light theme"),
    ("F1", "This list"),
    ("Ctrl+Q", "Quit (asks about unsaved changes)"),
    ("Double-click a line", "Edit it"),
    ("Click a word heard", "Move the playhead to it"),
    (
        "Right-click a word",
        "Play from here, or re-render with another speed or voice",
    ),
    (
        "Ctrl+scroll the timeline",
        "Zoom in to the words (scroll moves along)",
    ),
];

/// The first-run view: shown above the editor while the model is missing or failed.
pub fn first_run(studio: &Studio, ui: &mut egui::Ui, out: &mut Vec<Command>) {
    match &studio.engine {
        EngineState::Fetching {
            root,
            text,
            fraction,
        } => {
            ui.heading("Fetching the speech model");
            ui.label(format!(
                "First run: the model (about 120 MB; 430 MB once unpacked) is being downloaded \
                 into {root}."
            ));
            let bar = egui::ProgressBar::new(fraction.unwrap_or(0.0)).text(text.as_str());
            ui.add(if fraction.is_some() {
                bar
            } else {
                bar.animate(true)
            })
            .on_hover_text("Fetch progress");
        }
        EngineState::Failed(e) => {
            ui.heading("The speech model is not available");
            ui.colored_label(ui.visuals().error_fg_color, e.to_string());
            ui.label(
                "You can still write and cast the script; playback and export need the model.",
            );
            if ui
                .button("Retry (fetch the model)")
                .on_hover_text("Fetch and load the model again")
                .clicked()
            {
                out.push(Command::RetryLoad);
            }
        }
        EngineState::Loading { .. } | EngineState::Ready(_) => {}
    }
}

pub fn show(studio: &Studio, ctx: &egui::Context, out: &mut Vec<Command>) {
    open_dialog(studio, ctx, out);
    open_error(studio, ctx, out);
    save_as(studio, ctx, out);
    recovery(studio, ctx, out);
    replace(studio, ctx, out);
    unsaved(studio, ctx, out);
    if studio.dialogs().help {
        let mut open = true;
        egui::Window::new("Keyboard shortcuts")
            .open(&mut open)
            .collapsible(false)
            .anchor(egui::Align2::CENTER_CENTER, egui::Vec2::ZERO)
            .show(ctx, |ui| {
                egui::Grid::new("shortcuts").striped(true).show(ui, |ui| {
                    for (key, what) in SHORTCUTS {
                        ui.monospace(key);
                        ui.label(what);
                        ui.end_row();
                    }
                });
            });
        if !open {
            out.push(Command::SetHelp(false));
        }
    }
}

fn open_dialog(studio: &Studio, ctx: &egui::Context, out: &mut Vec<Command>) {
    let Some(typed) = &studio.dialogs().open else {
        return;
    };
    // The field edits a copy; what is typed goes back as a command.
    let mut path = typed.clone();
    let mut keep = true;
    egui::Window::new("Open")
        .collapsible(false)
        .anchor(egui::Align2::CENTER_CENTER, egui::Vec2::ZERO)
        .show(ctx, |ui| {
            if let Some(why) = &studio.dialogs().no_dialog {
                ui.label(egui::RichText::new(format!("No file dialog: {why}.")).weak());
            }
            ui.label("Import a script file (any supported format), or drop one on the window:");
            ui.horizontal(|ui| {
                let r = ui
                    .add(
                        egui::TextEdit::singleline(&mut path)
                            .hint_text("/path/to/script.txt")
                            .desired_width(320.0),
                    )
                    .on_hover_text("The script's path");
                let enter = r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                if ui
                    .button("Import")
                    .on_hover_text("Open this file as a new project")
                    .clicked()
                    || enter
                {
                    out.push(Command::Import(path.trim().into()));
                    keep = false;
                }
            });
            ui.separator();
            ui.label("Projects in the library:");
            if let Some(e) = &studio.library_error {
                ui.colored_label(ui.visuals().error_fg_color, e.to_string());
            }
            egui::ScrollArea::vertical()
                .max_height(200.0)
                .show(ui, |ui| {
                    for name in &studio.projects {
                        if ui.button(name).on_hover_text("Open this project").clicked() {
                            out.push(Command::LoadProject(name.clone()));
                            keep = false;
                        }
                    }
                });
            if ui
                .button("Cancel")
                .on_hover_text("Close this dialog")
                .clicked()
            {
                keep = false;
            }
        });
    if !keep {
        out.push(Command::CloseOpen);
    } else if path != *typed {
        out.push(Command::SetOpenPath(path));
    }
}

/// A file that could not be opened as a script, and what the studio opens: until dismissed.
fn open_error(studio: &Studio, ctx: &egui::Context, out: &mut Vec<Command>) {
    let Some(error) = &studio.dialogs().open_error else {
        return;
    };
    egui::Window::new("Cannot open this file")
        .collapsible(false)
        .resizable(false)
        .default_width(460.0)
        .anchor(egui::Align2::CENTER_CENTER, egui::Vec2::ZERO)
        .show(ctx, |ui| {
            ui.colored_label(ui.visuals().error_fg_color, error.to_string());
            if ui
                .button("OK")
                .on_hover_text("Close this message (Esc)")
                .clicked()
            {
                out.push(Command::DismissOpenError);
            }
        });
}

fn save_as(studio: &Studio, ctx: &egui::Context, out: &mut Vec<Command>) {
    let Some(typed) = &studio.dialogs().save_as else {
        return;
    };
    let mut name = typed.clone();
    let mut keep = true;
    egui::Window::new("Save as")
        .collapsible(false)
        .anchor(egui::Align2::CENTER_CENTER, egui::Vec2::ZERO)
        .show(ctx, |ui| {
            ui.label("Project name in the library:");
            let r = ui
                .text_edit_singleline(&mut name)
                .on_hover_text("The name to save the project under");
            let enter = r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            ui.horizontal(|ui| {
                if (ui
                    .button("Save")
                    .on_hover_text("Save under this name")
                    .clicked()
                    || enter)
                    && !name.trim().is_empty()
                {
                    out.push(Command::SaveAs(name.trim().to_owned()));
                    keep = false;
                }
                if ui
                    .button("Cancel")
                    .on_hover_text("Close this dialog")
                    .clicked()
                {
                    keep = false;
                }
            });
        });
    if !keep {
        out.push(Command::CloseSaveAs);
    } else if name != *typed {
        out.push(Command::SetSaveAsName(name));
    }
}

fn recovery(studio: &Studio, ctx: &egui::Context, out: &mut Vec<Command>) {
    let Some(first) = studio.recovery.first() else {
        return;
    };
    egui::Window::new("Recover unsaved work?")
        .collapsible(false)
        .anchor(egui::Align2::CENTER_CENTER, egui::Vec2::ZERO)
        .show(ctx, |ui| {
            ui.label(format!(
                "The studio closed without saving \"{}\". Recover its script?",
                first.project_name
            ));
            let preview: String = first.script.lines().take(4).collect::<Vec<_>>().join("\n");
            ui.monospace(preview);
            ui.horizontal(|ui| {
                if ui
                    .button("Recover")
                    .on_hover_text("Open the unsaved script")
                    .clicked()
                {
                    out.push(Command::RecoverAutosave);
                }
                if ui
                    .button("Discard")
                    .on_hover_text("Forget this unsaved work")
                    .clicked()
                {
                    out.push(Command::DiscardAutosave);
                }
            });
        });
}

/// "Save changes?" before quitting or starting a new project with unsaved work.
fn unsaved(studio: &Studio, ctx: &egui::Context, out: &mut Vec<Command>) {
    let Some(leaving) = studio.dialogs().unsaved else {
        return;
    };
    let then = match leaving {
        Leaving::Quit => "quitting",
        Leaving::NewProject => "starting a new project",
    };
    egui::Window::new("Save changes?")
        .collapsible(false)
        .anchor(egui::Align2::CENTER_CENTER, egui::Vec2::ZERO)
        .show(ctx, |ui| {
            ui.label(format!(
                "\"{}\" has changes that are not saved. Save them before {then}?",
                studio.doc.name
            ));
            ui.horizontal(|ui| {
                let answers = [
                    (
                        "Save",
                        "Save the project in the library, then go on",
                        UnsavedAnswer::Save,
                    ),
                    (
                        "Discard",
                        "Forget the changes since the last save, then go on",
                        UnsavedAnswer::Discard,
                    ),
                    (
                        "Cancel",
                        "Keep working on this project",
                        UnsavedAnswer::Cancel,
                    ),
                ];
                for (label, hover, answer) in answers {
                    if ui.button(label).on_hover_text(hover).clicked() {
                        out.push(Command::AnswerUnsaved(answer));
                    }
                }
            });
        });
}

fn replace(studio: &Studio, ctx: &egui::Context, out: &mut Vec<Command>) {
    let Some(incoming) = &studio.incoming else {
        return;
    };
    egui::Window::new("Replace the script?")
        .collapsible(false)
        .anchor(egui::Align2::CENTER_CENTER, egui::Vec2::ZERO)
        .show(ctx, |ui| {
            ui.label(format!(
                "\"{}\" has unsaved changes (they are autosaved). Open {} instead?",
                studio.doc.name, incoming.name
            ));
            ui.horizontal(|ui| {
                if ui
                    .button("Open")
                    .on_hover_text("Replace the current script")
                    .clicked()
                {
                    out.push(Command::ReplaceScript(true));
                }
                if ui
                    .button("Cancel")
                    .on_hover_text("Keep the current script")
                    .clicked()
                {
                    out.push(Command::ReplaceScript(false));
                }
            });
        });
}
