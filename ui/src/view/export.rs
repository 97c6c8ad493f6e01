//! The export dialog: format, sample rate, captions, chapters and stems; then progress with
//! ETA, cancel, and "show in folder". The export runs in the background through the shared
//! scheduler as offline work, so the author can keep listening and editing meanwhile. The
//! dialog's state and rules are [`crate::state::export`]; this file draws them and asks.

use std::path::PathBuf;

use eframe::egui;
use engine::render::Progress;

use crate::app::Studio;
use crate::command::Command;
use engine::audio::{Codec, EPISODE_RATES};

use crate::state::export::{Captions, ExportSettings};

fn eta(p: &Progress) -> String {
    p.eta().map_or_else(
        || "estimating…".into(),
        |d| format!("{:.0} s left", d.as_secs_f64()),
    )
}

pub fn show(studio: &Studio, ctx: &egui::Context, out: &mut Vec<Command>) {
    if !studio.export.open {
        return;
    }
    let mut open = true;
    let running = studio.tasks.export.is_some();
    egui::Window::new("Export episode")
        .open(&mut open)
        .collapsible(false)
        .resizable(false)
        .default_width(440.0)
        .anchor(egui::Align2::CENTER_CENTER, egui::Vec2::ZERO)
        .show(ctx, |ui| {
            // The widgets edit a copy; a change goes back as a command.
            let mut edited = studio.export.settings.clone();
            ui.add_enabled_ui(!running, |ui| settings(&mut edited, ui));
            if edited != studio.export.settings {
                out.push(Command::SetExportSettings(edited));
            }
            ui.separator();
            if studio.tasks.export.is_some() {
                let p = studio.export.progress.clone();
                let frac = p.as_ref().map_or(0.0, Progress::fraction) as f32;
                ui.add(egui::ProgressBar::new(frac).show_percentage())
                    .on_hover_text("Export progress");
                if let Some(p) = &p {
                    ui.label(format!(
                        "line {}/{} · {:.1} s of audio · {}",
                        p.line + 1,
                        p.lines,
                        p.audio_secs,
                        eta(p)
                    ));
                } else {
                    ui.label("planning…");
                }
                if ui
                    .button("Cancel")
                    .on_hover_text("Stop the export; nothing is written")
                    .clicked()
                {
                    out.push(Command::CancelExport);
                }
            } else {
                ui.horizontal(|ui| {
                    if ui
                        .add_enabled(studio.is_ready(), egui::Button::new("Export"))
                        .on_hover_text("Render the whole episode in the background")
                        .on_disabled_hover_text("The model is not loaded yet")
                        .clicked()
                    {
                        out.push(Command::StartExport);
                    }
                    if ui
                        .button("Close")
                        .on_hover_text("Close this dialog")
                        .clicked()
                    {
                        out.push(Command::HideExport);
                    }
                });
            }
            finished(studio, ui, out);
        });
    if !open {
        out.push(Command::HideExport);
    }
}

fn settings(e: &mut ExportSettings, ui: &mut egui::Ui) {
    egui::Grid::new("export-grid")
        .num_columns(2)
        .spacing([12.0, 8.0])
        .show(ui, |ui| {
            ui.label("Format");
            ui.horizontal(|ui| {
                for codec in Codec::ALL {
                    ui.selectable_value(&mut e.format, codec, codec.label())
                        .on_hover_text(match codec {
                            Codec::Wav => "16-bit PCM, uncompressed",
                            Codec::Flac => "Lossless, about half the size of WAV",
                            Codec::Mp3 => "128 kbit/s with ID3 chapters, for podcast hosts",
                            Codec::Opus => {
                                "Ogg Opus at 48 kbit/s with chapter comments: small, for the web"
                            }
                        });
                }
            });
            e.normalise();
            ui.end_row();
            ui.label("Sample rate");
            ui.horizontal(|ui| {
                for rate in EPISODE_RATES {
                    let allowed = e.format.allows_rate(rate);
                    ui.add_enabled_ui(allowed, |ui| {
                        ui.selectable_value(
                            &mut e.rate,
                            rate,
                            format!("{} kHz", f64::from(rate) / 1000.0),
                        )
                        .on_hover_text("24 kHz is the model's own rate; others are resampled")
                        .on_disabled_hover_text(format!(
                            "{} has no {} kHz: it plays at {} kHz",
                            e.format.label(),
                            f64::from(rate) / 1000.0,
                            f64::from(e.format.nearest_rate(rate)) / 1000.0
                        ));
                    });
                }
            });
            ui.end_row();
            ui.label("Captions");
            ui.horizontal(|ui| {
                ui.selectable_value(&mut e.captions, Captions::None, "None")
                    .on_hover_text("No caption file");
                ui.selectable_value(&mut e.captions, Captions::Srt, "SRT")
                    .on_hover_text("SubRip captions beside the audio");
                ui.selectable_value(&mut e.captions, Captions::Vtt, "VTT")
                    .on_hover_text("WebVTT captions beside the audio");
                ui.selectable_value(&mut e.captions, Captions::Both, "Both")
                    .on_hover_text("SRT and VTT");
                ui.selectable_value(&mut e.captions, Captions::Words, "Words")
                    .on_hover_text(
                        "Word timing: WebVTT that marks each word as it is spoken, and SRT in \
                         short phrases",
                    );
            });
            ui.end_row();
            ui.label("Extras");
            ui.horizontal(|ui| {
                ui.checkbox(&mut e.markers, "Chapters JSON")
                    .on_hover_text("Chapter and line markers in NAME.chapters.json");
                ui.checkbox(&mut e.stems, "Stems")
                    .on_hover_text("One file per speaker beside the episode");
            });
            ui.end_row();
            ui.label("Save to");
            ui.add(egui::TextEdit::singleline(&mut e.path).desired_width(300.0))
                .on_hover_text("The episode file; captions and stems are written beside it");
            ui.end_row();
        });
}

fn finished(studio: &Studio, ui: &mut egui::Ui, out: &mut Vec<Command>) {
    let Some(result) = &studio.export.finished else {
        return;
    };
    match result {
        Ok(report) => {
            ui.label(format!(
                "Done: {:.1} s of audio in {:.1} s (xRT {:.2}), {} LUFS",
                report.duration_secs,
                report.total.as_secs_f64(),
                report.xrt(),
                report
                    .loudness_lufs
                    .map_or_else(|| "n/a".into(), |l| format!("{l:.1}"))
            ));
            for path in &report.outputs {
                ui.monospace(path.display().to_string());
            }
            // What the render wants the author to know (sounds it could not use, sentences
            // taken from the cache, leftovers it swept), each a sentence.
            for notice in &report.notices {
                ui.label(notice);
            }
            if let Some(dir) = report.outputs.first().and_then(|p| p.parent()) {
                if ui
                    .button("Show in folder")
                    .on_hover_text("Open the folder in the file manager")
                    .clicked()
                {
                    let dir = if dir.as_os_str().is_empty() {
                        PathBuf::from(".")
                    } else {
                        dir.to_path_buf()
                    };
                    out.push(Command::ShowInFolder(dir));
                }
            }
        }
        Err(e) => {
            ui.colored_label(ui.visuals().error_fg_color, format!("Export failed: {e}"));
        }
    }
}
