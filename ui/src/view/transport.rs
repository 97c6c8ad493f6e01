//! Transport (play from the selected line, stop; without an audio output, why nothing can be
//! heard) and the timeline: the waveform growing as the
//! scheduler delivers audio, the rendered-ahead region, per-line regions labelled with their
//! speaker, and the playhead. Clicking the timeline seeks. Ctrl+scroll (or a pinch) zooms about
//! the pointer, scrolling moves along, and a zoomed view pages along with the playhead; once a
//! second is wide enough, thin word boundaries (and the words that fit) are drawn. When sound cues
//! play, the sound lane ([`super::lane`]) runs under the speech; clicking a cue's band there
//! opens its editor ([`super::cue_editor`]) instead of seeking.

use eframe::egui::{self, Color32, Pos2, Rect, Sense, Stroke, Vec2};
use engine::SAMPLE_RATE;

use crate::app::Studio;
use crate::command::Command;
use crate::doc::speaker_index;
use crate::view::speaker_colour;
use crate::waveform::BUCKET;

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
        let rendered = studio.waveform.samples;
        ui.monospace(format!("{} / {}", clock(pos), clock(rendered)))
            .on_hover_text("Playhead / audio rendered so far");
        let ahead = rendered.saturating_sub(pos) as f64 / f64::from(SAMPLE_RATE);
        let state = if studio.is_rendering() {
            format!("rendering · {ahead:.1} s ahead")
        } else if studio.waveform.complete {
            "rendered".to_owned()
        } else {
            String::new()
        };
        ui.label(state)
            .on_hover_text("How much audio is ready beyond the playhead");
        if studio.waveform.revision != studio.doc.revision && rendered > 0 {
            ui.colored_label(
                ui.visuals().warn_fg_color,
                "script changed: press Play to re-render",
            )
            .on_hover_text("The audio was rendered before the last edit");
        }
    });
    if let Some(problem) = studio.audio_problem() {
        // Said here, where Play is, for as long as it is true: the Play button renders but
        // cannot sound, and a status message or a tooltip is gone or hidden when it is needed.
        ui.colored_label(
            ui.visuals().warn_fg_color,
            format!(
                "No sound: {problem}. Play renders the episode to the timeline below; \
                 export works."
            ),
        );
    }
    ui.add_space(4.0);
    timeline(studio, ui, out);
    crate::view::cue_editor::show(studio, ui.ctx(), out);
}

/// The part of the timeline on screen: UI-only, kept in egui's memory. Zoomed, it shows a fixed
/// stretch of time, so it does not widen as more audio arrives.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Zoom {
    /// Samples across the timeline; `None` shows everything.
    span: Option<f64>,
    /// The first sample shown (when zoomed).
    start: f64,
}

/// The narrowest the timeline zooms to.
const MIN_SPAN_SECS: f64 = 2.0;
/// Word boundaries show once a second is this wide (an average word is then ~10 px).
const WORD_PX_PER_SEC: f64 = 40.0;

impl Zoom {
    /// The first sample and the number of samples shown, for `total` samples on the timeline;
    /// while `playhead` is given (playing), the view pages along to keep it in sight.
    fn window(&mut self, total: f64, playhead: Option<f64>) -> (f64, f64) {
        let Some(span) = self.span.filter(|&s| s < total) else {
            *self = Self::default();
            return (0.0, total);
        };
        if let Some(p) = playhead {
            if p < self.start || p >= self.start + span {
                self.start = p - span * 0.05;
            }
        }
        self.start = self.start.clamp(0.0, total - span);
        (self.start, span)
    }

    /// Zooms in by `by` (below 1: out), keeping the sample at fraction `frac` of the width where
    /// it is.
    fn zoom_at(&mut self, by: f64, frac: f64, total: f64) {
        let (start, span) = self.window(total, None);
        let anchor = start + frac * span;
        let new = (span / by).max(MIN_SPAN_SECS * f64::from(SAMPLE_RATE));
        if new >= total {
            *self = Self::default();
        } else {
            *self = Self {
                span: Some(new),
                start: anchor - frac * new,
            };
        }
    }
}

fn timeline(studio: &Studio, ui: &mut egui::Ui, out: &mut Vec<Command>) {
    let height = ui.available_height().clamp(60.0, 220.0) - 6.0;
    let (rect, response) = ui.allocate_exact_size(
        Vec2::new(ui.available_width(), height),
        Sense::click_and_drag(),
    );
    let response = response.on_hover_text(
        "Timeline: click or drag to move the playhead; scroll with Ctrl held (or pinch) to zoom \
         in to the words, scroll to move along",
    );
    let visuals = ui.visuals().clone();
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 4.0, visuals.extreme_bg_color);
    let tl = &studio.waveform;
    // The sound lane, when cues play, takes the bottom of the timeline; the speech the rest.
    let full = rect;
    let lane_height = crate::view::lane::height(&tl.lane, rect.height());
    let (rect, lane_rect) = {
        let split = rect.bottom() - lane_height;
        (
            Rect::from_min_max(rect.min, Pos2::new(rect.right(), split)),
            Rect::from_min_max(Pos2::new(rect.left(), split), rect.max),
        )
    };
    let total = if tl.complete {
        tl.samples.max(1)
    } else {
        tl.samples
            .max((MIN_VIEW_SECS * f64::from(SAMPLE_RATE)) as usize)
            + SAMPLE_RATE as usize * 2
    } as f64;
    let zoom_id = ui.scope_id().with("timeline-zoom");
    let mut zoom: Zoom = ui.data(|d| d.get_temp(zoom_id)).unwrap_or_default();
    if response.hovered() {
        let (by, scroll) = ui.input(|i| (i.zoom_delta(), i.smooth_scroll_delta));
        let (start, span) = zoom.window(total, None);
        if (by - 1.0).abs() > f32::EPSILON {
            let frac = response.hover_pos().map_or(0.5, |p| {
                f64::from((p.x - rect.left()) / rect.width()).clamp(0.0, 1.0)
            });
            zoom.zoom_at(f64::from(by), frac, total);
        } else if zoom.span.is_some() && scroll != Vec2::ZERO {
            let px = f64::from(scroll.x + scroll.y);
            zoom.start = start - px * span / f64::from(rect.width().max(1.0));
        }
    }
    let playhead = studio.buffer.position();
    let (start, span) = zoom.window(total, studio.is_playing().then_some(playhead as f64));
    ui.data_mut(|d| d.insert_temp(zoom_id, zoom));
    let per_sample = f64::from(rect.width()) / span;
    let x_of = |sample: usize| rect.left() + ((sample as f64 - start) * per_sample) as f32;
    // Rendered-ahead region: everything rendered, a lighter band.
    let rendered = Rect::from_min_max(
        rect.min,
        Pos2::new(x_of(tl.samples).min(rect.right()), rect.bottom()),
    );
    painter.rect_filled(rendered, 4.0, visuals.faint_bg_color);
    // Line regions with speaker labels. A label is drawn only where it fits inside its line's
    // band (zoomed out, lines are narrower than names), so no two labels ever overlap.
    let mut free_from = f32::NEG_INFINITY;
    for r in &tl.regions {
        let colour = speaker_colour(speaker_index(&studio.doc, &r.speaker));
        let band = Rect::from_min_max(
            Pos2::new(x_of(r.start), rect.top()),
            Pos2::new(x_of(r.end).max(x_of(r.start) + 1.0), rect.bottom()),
        );
        if band.right() < rect.left() || band.left() > rect.right() {
            continue;
        }
        painter.rect_filled(band, 2.0, colour.gamma_multiply(0.18));
        painter.line_segment(
            [band.left_top(), band.left_bottom()],
            Stroke::new(1.0, colour.gamma_multiply(0.7)),
        );
        let at = Pos2::new(band.left().max(rect.left()), band.top()) + Vec2::new(4.0, 2.0);
        let name =
            painter.layout_no_wrap(r.speaker.clone(), egui::FontId::proportional(12.0), colour);
        let end = at.x + name.size().x;
        if at.x >= free_from && end + 2.0 <= band.right().min(rect.right()) {
            painter.galley(at, name, colour);
            free_from = end + 4.0;
        }
    }
    if per_sample * f64::from(SAMPLE_RATE) >= WORD_PX_PER_SEC {
        words(&painter, rect, tl, (start, start + span), &x_of, &visuals);
    }
    // Waveform: min/max per pixel column from the 10 ms envelope; the lane's to the same scale.
    let peak = tl.peak().max(tl.lane.envelope.peak()).max(0.05);
    let envelope = |painter: &egui::Painter, rect: Rect, peaks: &[(f32, f32)], colour| {
        draw_envelope(painter, rect, peaks, peak, (start, span), colour);
    };
    envelope(
        &painter,
        rect,
        &tl.envelope.peaks,
        visuals.text_color().gamma_multiply(0.8),
    );
    if lane_height > 0.0 {
        crate::view::lane::draw(&painter, lane_rect, &tl.lane, &x_of, &envelope, &visuals);
        if let Some(cue) = response
            .hover_pos()
            .and_then(|p| crate::view::lane::cue_at(lane_rect, &tl.lane, &x_of, p))
        {
            response
                .clone()
                .on_hover_text_at_pointer(crate::view::lane::describe(cue));
        }
    }
    // Playhead.
    let x = x_of(playhead);
    painter.line_segment(
        [Pos2::new(x, full.top()), Pos2::new(x, full.bottom())],
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
    // A click on a cue's band opens its editor; anywhere else it seeks.
    let on_cue = response
        .interact_pointer_pos()
        .filter(|_| response.clicked() && lane_height > 0.0)
        .and_then(|p| {
            crate::view::lane::cue_at(lane_rect, &tl.lane, &x_of, p).map(|c| (c.cue.position, p))
        });
    if let Some((at, p)) = on_cue {
        if !crate::view::cue_editor::open(ui.ctx(), studio, at, p) {
            out.push(Command::Say(format!(
                "the script has no cue at line {}, column {} now; press Play to see its cues",
                at.line, at.column
            )));
        }
    } else if let Some(p) = response.interact_pointer_pos() {
        if response.clicked() || response.dragged() {
            let frac = f64::from((p.x - rect.left()) / rect.width()).clamp(0.0, 1.0);
            let sample = (start + frac * span) as usize;
            out.push(Command::Seek(sample.min(studio.waveform.samples)));
        }
    }
}

/// Draws `peaks` (one per [`BUCKET`] samples, scaled by `peak`) across `rect` as min/max lines,
/// one per pixel column, for the samples `shown.0..shown.0 + shown.1`.
fn draw_envelope(
    painter: &egui::Painter,
    rect: Rect,
    peaks: &[(f32, f32)],
    peak: f32,
    shown: (f64, f64),
    colour: Color32,
) {
    let (start, span) = shown;
    let mid = rect.center().y;
    let half = rect.height() * 0.42;
    let columns = rect.width().max(1.0) as usize;
    let buckets_per_col = (span / BUCKET as f64) / columns as f64;
    let first_bucket = start / BUCKET as f64;
    for col in 0..columns {
        let a = (first_bucket + col as f64 * buckets_per_col) as usize;
        let b = ((first_bucket + (col + 1) as f64 * buckets_per_col) as usize).max(a + 1);
        if a >= peaks.len() {
            break;
        }
        let (lo, hi) = peaks[a..b.min(peaks.len())]
            .iter()
            .fold((0.0f32, 0.0f32), |(l, h), &(lo, hi)| (l.min(lo), h.max(hi)));
        let x = rect.left() + col as f32 + 0.5;
        painter.line_segment(
            [
                Pos2::new(x, mid - hi / peak * half),
                Pos2::new(x, mid - lo / peak * half + 1.0),
            ],
            Stroke::new(1.0, colour),
        );
    }
}

/// Thin word boundaries over the waveform, and each word's text where it fits, for the words
/// between samples `shown.0` and `shown.1` (found by binary search in each line's words).
fn words(
    painter: &egui::Painter,
    rect: Rect,
    tl: &crate::waveform::Waveform,
    shown: (f64, f64),
    x_of: &dyn Fn(usize) -> f32,
    visuals: &egui::Visuals,
) {
    let tick = Stroke::new(1.0, visuals.text_color().gamma_multiply(0.3));
    let font = egui::FontId::proportional(11.0);
    let (top, bottom) = (rect.top() + 18.0, rect.bottom());
    let tick_at = |x: f32| painter.line_segment([Pos2::new(x, top), Pos2::new(x, bottom)], tick);
    for r in &tl.regions {
        if (r.end as f64) < shown.0 || (r.start as f64) > shown.1 {
            continue;
        }
        let from = r.words.partition_point(|w| (w.end as f64) < shown.0);
        let mut last_end = f32::NEG_INFINITY;
        for w in &r.words[from..] {
            if w.start as f64 > shown.1 {
                break;
            }
            let (a, b) = (x_of(w.start), x_of(w.end));
            if a - last_end > 2.0 && last_end.is_finite() {
                tick_at(last_end);
            }
            tick_at(a);
            last_end = b;
            // About 6 px a character at this size: no layout for words that cannot fit.
            if b - a - 4.0 > 6.0 * w.text.chars().count() as f32 {
                painter.text(
                    Pos2::new(a + 2.0, bottom - 2.0),
                    egui::Align2::LEFT_BOTTOM,
                    &w.text,
                    font.clone(),
                    visuals.weak_text_color(),
                );
            }
        }
        if last_end.is_finite() {
            tick_at(last_end);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speaker_labels_never_overlap_on_a_zoomed_out_timeline() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut h = crate::test_support::studio(&dir);
        // Sixteen lines of 1.5 s (about 45 px each across the timeline), then one long line: two
        // long names take turns, so a label drawn wider than its line lands on the next one.
        let names = ["Professor Higgins", "Colonel Pickering"];
        let sr = SAMPLE_RATE as usize;
        let mut tl = crate::waveform::Waveform::new(0, 0);
        let mut at = 0;
        for line in 0..17 {
            let len = if line == 16 { 8 * sr } else { sr * 3 / 2 };
            tl.line_start(line, names[line % 2].to_owned(), at);
            tl.push(&vec![0.1; len]);
            at += len;
            tl.regions[line].end = at;
        }
        tl.complete = true;
        h.state_mut().waveform = tl;
        h.run_steps(2);
        let drawn = crate::test_support::drawn_text(&h, &names);
        assert!(
            drawn.iter().any(|(name, _)| name == names[0]),
            "the long last line has room for its label: {drawn:?}"
        );
        for (k, (a, ra)) in drawn.iter().enumerate() {
            for (b, rb) in &drawn[k + 1..] {
                assert!(!ra.intersects(*rb), "{a} at {ra:?} overlaps {b} at {rb:?}");
            }
        }
    }

    const SR: f64 = SAMPLE_RATE as f64;

    #[test]
    fn zoom_keeps_the_pointer_s_time_and_its_limits() {
        let total = 60.0 * SR;
        let mut z = Zoom::default();
        assert_eq!(z.window(total, None), (0.0, total), "all of it");
        // Zooming in 4× at the middle keeps 30 s in the middle.
        z.zoom_at(4.0, 0.5, total);
        let (start, span) = z.window(total, None);
        assert!((span - 15.0 * SR).abs() < 1.0 && (start + span / 2.0 - 30.0 * SR).abs() < 1.0);
        // No closer than MIN_SPAN_SECS; zooming out past everything shows everything.
        z.zoom_at(1000.0, 0.0, total);
        assert!((z.window(total, None).1 - MIN_SPAN_SECS * SR).abs() < 1.0);
        z.zoom_at(0.001, 0.5, total);
        assert_eq!(z, Zoom::default());
        // A stretch is kept inside the audio, and pages along with a playhead leaving it.
        z = Zoom {
            span: Some(10.0 * SR),
            start: 55.0 * SR,
        };
        assert_eq!(z.window(total, None), (50.0 * SR, 10.0 * SR));
        let (start, _) = z.window(total, Some(5.0 * SR));
        assert!(start < 5.0 * SR && 5.0 * SR < start + 10.0 * SR, "{start}");
        let again = z.window(total, Some(6.0 * SR)).0;
        assert!((again - start).abs() < 1.0, "no jump inside it");
        // A zoomed span as wide as the audio is no zoom.
        assert_eq!(z.window(8.0 * SR, None), (0.0, 8.0 * SR));
    }
}
