//! What the crate's own kittests share: the studio in a harness with no model and a private
//! library, and where text was drawn.

use eframe::egui::{self, Rect};
use egui_kittest::Harness;

use crate::app::Studio;
use crate::audio::MockOut;
use crate::StudioConfig;

/// The studio at 1280×800 with no model, no fetching and a library in `dir`, run two frames.
pub(crate) fn studio(dir: &tempfile::TempDir) -> Harness<'static, Studio> {
    let config = StudioConfig {
        models: Some(dir.path().join("no-models")),
        library: Some(dir.path().join("library.sqlite")),
        fetch_models: false,
        ..StudioConfig::default()
    };
    let mut h = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_eframe(move |cc| Studio::new(&cc.egui_ctx, config, Box::new(MockOut::new())));
    h.run_steps(2);
    h
}

/// Every text shape whose text is one of `names`, with where it was drawn.
pub(crate) fn drawn_text(h: &Harness<'_, Studio>, names: &[&str]) -> Vec<(String, Rect)> {
    h.output()
        .shapes
        .iter()
        .filter_map(|clipped| match &clipped.shape {
            egui::Shape::Text(t) if names.contains(&t.galley.text()) => Some((
                t.galley.text().to_owned(),
                Rect::from_min_size(t.pos, t.galley.size()),
            )),
            _ => None,
        })
        .collect()
}
