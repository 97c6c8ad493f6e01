//! How the lines that will not be spoken look. The parser takes some lines for headings, stage
//! directions, narration, metadata or comments rather than speech; an author who meant them to
//! be heard must see that before rendering. The raw view greys them (in its layouter) and names
//! their kind at the right edge of the line; the lines view lists them, one compact row per run,
//! between the turns they stand among.

use eframe::egui::{self, Align2, FontId, Galley, Pos2};

use crate::doc::{SkippedRun, SourceMap, SourceRole};

/// How many of a run's lines its row and tooltip show (a JSON episode's structure can be long).
const HOVER_LINES: usize = 12;

/// Names the kind of each skipped line the raw view shows, at the right edge (`right`) of its
/// first row; rows outside the visible area are left alone, so a long script costs nothing.
pub(super) fn label_lines(
    ui: &egui::Ui,
    galley: &Galley,
    galley_pos: Pos2,
    right: f32,
    source: &SourceMap,
) {
    let clip = ui.clip_rect();
    let font = FontId::proportional(11.0);
    let colour = ui.visuals().weak_text_color();
    let background = ui.visuals().text_edit_bg_color();
    let painter = ui.painter();
    let mut line = 1;
    let mut starts_line = true;
    for row in &galley.rows {
        let rect = row.rect().translate(galley_pos.to_vec2());
        if starts_line && rect.max.y >= clip.min.y && rect.min.y <= clip.max.y {
            if let SourceRole::Skipped(kind) = source.role(line) {
                let label = painter.layout_no_wrap(kind.as_str().to_owned(), font.clone(), colour);
                let at = Align2::RIGHT_CENTER
                    .anchor_size(Pos2::new(right - 8.0, rect.center().y), label.size());
                painter.rect_filled(at.expand(2.0), 3.0, background);
                painter.galley(at.min, label, colour);
            }
        }
        starts_line = row.ends_with_newline;
        if row.ends_with_newline {
            line += 1;
        }
    }
}

/// One row of the lines view for a run of skipped lines: the kind where a speaker would be,
/// the run's lines on one row, greyed, and every line of the run on hover.
pub(super) fn run_row(ui: &mut egui::Ui, run: &SkippedRun) {
    let weak = ui.visuals().weak_text_color();
    egui::Frame::new()
        .inner_margin(egui::Margin::symmetric(6, 1))
        .show(ui, |ui| {
            ui.horizontal(|ui| {
                ui.add_sized(
                    [110.0, 16.0],
                    egui::Label::new(egui::RichText::new(run.kind.as_str()).small().color(weak)),
                );
                // The run's lines on one row (`--- · title: Pilot · ---`), cut at the panel's edge.
                let preview = run.texts[..run.texts.len().min(HOVER_LINES)].join(" · ");
                let lines = if run.last_line == run.first_line {
                    format!("line {}", run.first_line)
                } else {
                    format!("lines {}–{}", run.first_line, run.last_line)
                };
                let mut shown = run.texts[..run.texts.len().min(HOVER_LINES)].join("\n");
                if run.texts.len() > HOVER_LINES {
                    shown.push_str("\n…");
                }
                ui.add(
                    egui::Label::new(egui::RichText::new(preview).italics().color(weak)).truncate(),
                )
                .on_hover_text(format!("Not spoken: {} ({lines})\n{shown}", run.kind));
            });
        });
}
