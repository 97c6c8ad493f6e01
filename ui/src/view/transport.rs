//! Transport (play from the selected line, stop) and the timeline: the waveform growing as the
//! scheduler delivers audio, the rendered-ahead region, per-line regions labelled with their
//! speaker, and the playhead. Clicking the timeline seeks.

use eframe::egui::{self, Color32, Pos2, Rect, Sense, Stroke, Vec2};
use engine::synth::SAMPLE_RATE;

use crate::app::Studio;
use crate::command::Command;
use crate::doc::speaker_index;
use crate::timeline::BUCKET;
use crate::view::speaker_colour;

/// The timeline never shows less than this much time, so short renders do not fill it at once.
const MIN_VIEW_SECS: f64 = 20.0;

fn clock(samples: usize) -> String {
    let secs = samples as f64 / f64::from(SAMPLE_RATE);
    format!("{}:{:04.1}", (secs / 60.0).floor(), secs % 60.0)
}

pub fn show(studio: &Studio, ui: &mut egui::Ui, out: &mut Vec<Command>) {
    ui.add_space(4.0);
    ui.horizontal(|ui| {
        let playing = studio.is_playing();
        let label = if playing { "Pause" } else { "Play" };
        let ready = studio.is_ready() && studio.doc.parsed.is_ok();
        if ui
            .add_enabled(
                ready,
                egui::Button::new(label).min_size(Vec2::new(84.0, 26.0)),
            )
            .on_hover_text("Play from the selected line (Space)")
            .on_disabled_hover_text("Playback needs the model loaded and a script that parses")
            .clicked()
        {
            out.push(Command::TogglePlay);
        }
        if ui
            .add(egui::Button::new("Stop").min_size(Vec2::new(70.0, 26.0)))
            .on_hover_text("Stop playback and its render (Esc)")
            .clicked()
        {
            out.push(Command::Stop);
        }
        ui.label(format!("from line {}", studio.selected + 1))
            .on_hover_text("Select a line in the script to play from there");
        ui.separator();
        let pos = studio.buffer.position();
        let rendered = studio.timeline.samples;
        ui.monospace(format!("{} / {}", clock(pos), clock(rendered)))
            .on_hover_text("Playhead / audio rendered so far");
        let ahead = rendered.saturating_sub(pos) as f64 / f64::from(SAMPLE_RATE);
        let state = if studio.is_rendering() {
            format!("rendering · {ahead:.1} s ahead")
        } else if studio.timeline.complete {
            "rendered".to_owned()
        } else {
            String::new()
        };
        ui.label(state)
            .on_hover_text("How much audio is ready beyond the playhead");
        if studio.timeline.revision != studio.doc.revision && rendered > 0 {
            ui.colored_label(
                ui.visuals().warn_fg_color,
                "script changed: press Play to re-render",
            )
            .on_hover_text("The audio was rendered before the last edit");
        }
    });
    ui.add_space(4.0);
    timeline(studio, ui, out);
}

fn timeline(studio: &Studio, ui: &mut egui::Ui, out: &mut Vec<Command>) {
    let height = ui.available_height().clamp(60.0, 220.0) - 6.0;
    let (rect, response) = ui.allocate_exact_size(
        Vec2::new(ui.available_width(), height),
        Sense::click_and_drag(),
    );
    let response = response.on_hover_text("Timeline: click or drag to move the playhead");
    let visuals = ui.visuals().clone();
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 4.0, visuals.extreme_bg_color);
    let tl = &studio.timeline;
    let total = if tl.complete {
        tl.samples.max(1)
    } else {
        tl.samples
            .max((MIN_VIEW_SECS * f64::from(SAMPLE_RATE)) as usize)
            + SAMPLE_RATE as usize * 2
    };
    let x_of = |sample: usize| rect.left() + rect.width() * (sample as f32 / total as f32);
    // Rendered-ahead region: everything rendered, a lighter band.
    let rendered = Rect::from_min_max(rect.min, Pos2::new(x_of(tl.samples), rect.bottom()));
    painter.rect_filled(rendered, 4.0, visuals.faint_bg_color);
    // Line regions with speaker labels.
    for r in &tl.regions {
        let colour = speaker_colour(speaker_index(&studio.doc, &r.speaker));
        let band = Rect::from_min_max(
            Pos2::new(x_of(r.start), rect.top()),
            Pos2::new(x_of(r.end).max(x_of(r.start) + 1.0), rect.bottom()),
        );
        painter.rect_filled(band, 2.0, colour.gamma_multiply(0.18));
        painter.line_segment(
            [band.left_top(), band.left_bottom()],
            Stroke::new(1.0, colour.gamma_multiply(0.7)),
        );
        if band.width() > 30.0 {
            painter.text(
                band.left_top() + Vec2::new(4.0, 2.0),
                egui::Align2::LEFT_TOP,
                &r.speaker,
                egui::FontId::proportional(12.0),
                colour,
            );
        }
    }
    // Waveform: min/max per pixel column from the 10 ms envelope.
    let mid = rect.center().y;
    let half = rect.height() * 0.42;
    let peak = tl.peak().max(0.05);
    let wave = visuals.text_color().gamma_multiply(0.8);
    let columns = rect.width().max(1.0) as usize;
    let buckets_per_col = (total as f64 / BUCKET as f64) / columns as f64;
    for col in 0..columns {
        let a = (col as f64 * buckets_per_col) as usize;
        let b = (((col + 1) as f64 * buckets_per_col) as usize).max(a + 1);
        if a >= tl.peaks.len() {
            break;
        }
        let (lo, hi) = tl.peaks[a..b.min(tl.peaks.len())]
            .iter()
            .fold((0.0f32, 0.0f32), |(l, h), &(lo, hi)| (l.min(lo), h.max(hi)));
        let x = rect.left() + col as f32 + 0.5;
        painter.line_segment(
            [
                Pos2::new(x, mid - hi / peak * half),
                Pos2::new(x, mid - lo / peak * half + 1.0),
            ],
            Stroke::new(1.0, wave),
        );
    }
    // Playhead.
    let x = x_of(studio.buffer.position());
    painter.line_segment(
        [Pos2::new(x, rect.top()), Pos2::new(x, rect.bottom())],
        Stroke::new(2.0, Color32::from_rgb(0xff, 0x55, 0x55)),
    );
    if tl.samples == 0 {
        painter.text(
            rect.center(),
            egui::Align2::CENTER_CENTER,
            "Press Play (Space): audio appears here as it is rendered",
            egui::FontId::proportional(14.0),
            visuals.weak_text_color(),
        );
    }
    if let Some(p) = response.interact_pointer_pos() {
        if response.clicked() || response.dragged() {
            let frac = ((p.x - rect.left()) / rect.width()).clamp(0.0, 1.0);
            let sample = (frac as f64 * total as f64) as usize;
            out.push(Command::Seek(sample.min(studio.timeline.samples)));
        }
    }
}
