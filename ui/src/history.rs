//! Undo and redo for the script's text and the cast choices.
//!
//! Rather than asking every change to record itself, the history is shown the document as it
//! is ([`History::observe`]): by [`crate::Studio::apply`] around each script or cast command,
//! and by the frame loop each frame (for voice matches and the test hooks); a change becomes an
//! undo step. Typing
//! one or two characters at a time within [`COALESCE`] of the previous text change extends
//! that step, so Ctrl+Z undoes a burst of typing rather than one letter. Opening another
//! document (a different [`Document::id`]) starts a fresh history. While another text field
//! has the keyboard (find, search, a line being edited), Ctrl+Z is left to that field.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::doc::{CastChoice, Document};

/// Typing within this long of the previous keystroke joins its undo step.
pub const COALESCE: Duration = Duration::from_secs(1);
/// Undo steps kept (the oldest go first).
pub const DEPTH: usize = 200;

#[derive(Debug, Clone, PartialEq)]
struct Snapshot {
    text: String,
    cast: BTreeMap<String, CastChoice>,
}

impl Snapshot {
    fn of(doc: &Document) -> Self {
        Self {
            text: doc.text.clone(),
            cast: doc.cast.clone(),
        }
    }
}

#[derive(Debug, Default)]
pub struct History {
    doc: Option<u64>,
    current: Option<Snapshot>,
    undo: Vec<Snapshot>,
    redo: Vec<Snapshot>,
    last_typing: Option<Instant>,
}

impl History {
    /// Records `doc` as it is now: a change since the last call becomes an undo step.
    pub fn observe(&mut self, doc: &Document) {
        if self.doc != Some(doc.id) {
            *self = Self {
                doc: Some(doc.id),
                current: Some(Snapshot::of(doc)),
                ..Self::default()
            };
            return;
        }
        let Some(current) = self.current.take() else {
            self.current = Some(Snapshot::of(doc));
            return;
        };
        if current.text == doc.text && current.cast == doc.cast {
            self.current = Some(current);
            return;
        }
        let typing = current.cast == doc.cast
            && current.text.len().abs_diff(doc.text.len()) <= 2
            && current.text != doc.text;
        let joins = typing && self.last_typing.is_some_and(|t| t.elapsed() < COALESCE);
        if !joins {
            self.undo.push(current);
            if self.undo.len() > DEPTH {
                self.undo.remove(0);
            }
        }
        self.current = Some(Snapshot::of(doc));
        self.redo.clear();
        self.last_typing = typing.then(Instant::now);
    }

    #[must_use]
    pub fn can_undo(&self) -> bool {
        !self.undo.is_empty()
    }

    #[must_use]
    pub fn can_redo(&self) -> bool {
        !self.redo.is_empty()
    }

    /// Puts `doc` back as it was before the last change; false when there is nothing to undo.
    pub fn undo(&mut self, doc: &mut Document) -> bool {
        self.observe(doc);
        let Some(snap) = self.undo.pop() else {
            return false;
        };
        if let Some(current) = self.current.replace(snap.clone()) {
            self.redo.push(current);
        }
        apply(doc, snap);
        self.last_typing = None;
        true
    }

    /// Re-does the last undone change; false when there is nothing to redo.
    pub fn redo(&mut self, doc: &mut Document) -> bool {
        self.observe(doc);
        let Some(snap) = self.redo.pop() else {
            return false;
        };
        if let Some(current) = self.current.replace(snap.clone()) {
            self.undo.push(current);
        }
        apply(doc, snap);
        self.last_typing = None;
        true
    }
}

fn apply(doc: &mut Document, snap: Snapshot) {
    doc.text = snap.text;
    doc.cast = snap.cast;
    doc.edited();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Document {
        Document::new("t", text.to_owned(), None)
    }

    #[test]
    fn undoes_and_redoes_text_and_cast_changes_in_order() {
        let mut d = doc("Ann: One.\n");
        let mut h = History::default();
        h.observe(&d);
        d.text = "Ann: One. Two, three.\n".into();
        d.edited();
        h.observe(&d);
        d.cast.insert(
            "Ann".into(),
            CastChoice {
                voice: "af_sky".into(),
                speed: 1.1,
            },
        );
        h.observe(&d);
        assert!(h.undo(&mut d));
        assert!(d.cast.is_empty());
        assert_eq!(d.text, "Ann: One. Two, three.\n");
        assert!(h.undo(&mut d));
        assert_eq!(d.text, "Ann: One.\n");
        assert!(!h.undo(&mut d), "nothing left to undo");
        assert!(h.redo(&mut d));
        assert!(h.redo(&mut d));
        assert_eq!(d.cast["Ann"].voice, "af_sky");
        assert!(!h.redo(&mut d));
        // A new change after an undo drops the redo steps.
        assert!(h.undo(&mut d));
        d.text.push_str("Ann: Four, five, six.\n");
        h.observe(&d);
        assert!(!h.can_redo());
    }

    #[test]
    fn typing_joins_one_step_and_another_document_starts_afresh() {
        let mut d = doc("Ann: Hi");
        let mut h = History::default();
        h.observe(&d);
        for c in ['!', ' ', 'Y', 'o'] {
            d.text.push(c);
            h.observe(&d);
        }
        assert!(h.undo(&mut d));
        assert_eq!(d.text, "Ann: Hi", "one step for the burst of typing");
        let other = doc("Ben: Other.");
        h.observe(&other);
        assert!(!h.can_undo());
    }
}
