//! "Reads as": a turn as the render will read it (normalised words, `word /ipa/` for a given
//! pronunciation, `[pause 1 s]`), shown when the author hovers a turn in either view of the
//! script editor, so a misreading ("$4.1 billion", "FY2025") is caught in text before anything is
//! rendered. The text comes from [`engine::render::reads_as`] on the episode as it will be
//! rendered (the cast panel's voices pick the normaliser's dialect).
//!
//! It is worked out only for the turn under the pointer, and kept per document revision in
//! egui's memory (it is the view's own derived value, not studio state): a tooltip is redrawn
//! every frame while it is open, and the episode with the cast applied is a clone of the whole
//! script, so it is made once per revision, on the first hover after a change.

use std::collections::HashMap;
use std::sync::Arc;

use eframe::egui;
use engine::script::Episode;

use crate::doc::Document;

/// The effective episode of one document revision and the turns read from it so far.
#[derive(Clone, Default)]
struct Cache {
    /// `(document id, revision)` the entries belong to.
    key: (u64, u64),
    episode: Option<Arc<Episode>>,
    texts: HashMap<usize, Option<String>>,
}

/// Turn `turn` of `doc` as it will be read; `None` when the script does not parse, the turn is
/// not in it, or its speaker is not in the cast.
#[must_use]
pub(super) fn reads_as(ctx: &egui::Context, doc: &Document, turn: usize) -> Option<String> {
    let id = egui::Id::unique("banter-reads-as");
    ctx.data_mut(|d| {
        let cache = d.get_temp_mut_or_default::<Cache>(id);
        let key = (doc.id, doc.revision);
        if cache.key != key || cache.episode.is_none() {
            *cache = Cache {
                key,
                episode: doc.episode().map(Arc::new),
                texts: HashMap::new(),
            };
        }
        let episode = cache.episode.as_ref()?;
        cache
            .texts
            .entry(turn)
            .or_insert_with(|| {
                let line = episode.lines.get(turn)?;
                engine::render::reads_as(episode, line)
            })
            .clone()
    })
}

/// The hover line for turn `turn`: "Reads as: …".
#[must_use]
pub(super) fn hover_text(ctx: &egui::Context, doc: &Document, turn: usize) -> String {
    reads_as(ctx, doc, turn).map_or_else(
        || "Reads as: (no voice for this speaker yet)".to_owned(),
        |text| format!("Reads as: {text}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::CastChoice;

    #[test]
    fn a_turn_reads_as_the_render_will_read_it_and_follows_edits() {
        let ctx = egui::Context::default();
        let mut doc = Document::new("t.txt", "Ann: It cost $5.\nBen: 3 cats.\n".into(), None);
        assert_eq!(
            reads_as(&ctx, &doc, 0).as_deref(),
            Some("It cost five dollars.")
        );
        assert_eq!(hover_text(&ctx, &doc, 1), "Reads as: Three cats.");
        assert_eq!(reads_as(&ctx, &doc, 2), None, "no such turn");
        doc.text = "Ann: 2 dogs.\n".into();
        doc.edited();
        assert_eq!(reads_as(&ctx, &doc, 0).as_deref(), Some("Two dogs."));
        // The cast panel's voice counts: a French voice gets no English number reading.
        doc.set_choice(
            "Ann",
            CastChoice {
                voice: "ff_siwis".into(),
                speed: 1.0,
            },
        );
        assert_eq!(reads_as(&ctx, &doc, 0).as_deref(), Some("2 dogs."));
    }
}
