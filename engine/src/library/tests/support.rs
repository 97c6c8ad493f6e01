//! Shared helpers for the library tests.

use std::path::PathBuf;

use crate::library::Library;

/// A fresh library in a temporary directory (kept alive by the returned guard).
pub(crate) fn temp_library() -> (tempfile::TempDir, Library) {
    let dir = tempfile::tempdir().unwrap();
    let lib = Library::open(dir.path().join("library.sqlite")).unwrap();
    (dir, lib)
}

pub(crate) fn db_path(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("library.sqlite")
}

/// A style table with distinct, recognisable values.
pub(crate) fn table(seed: f32) -> crate::voice::VoiceTable {
    let n = crate::voice::STYLE_ROWS * crate::voice::STYLE_DIM;
    #[allow(clippy::cast_precision_loss)]
    let bytes: Vec<u8> = (0..n)
        .flat_map(|i| (seed + i as f32 * 1e-3).to_le_bytes())
        .collect();
    crate::voice::VoiceTable::from_bytes(&bytes).unwrap()
}

/// Names that stress Unicode handling: emoji (with ZWJ and a skin tone), right-to-left
/// scripts, combining marks, CJK.
pub(crate) const UNICODE_NAMES: &[&str] = &[
    "Narrator 🎙️👩🏽‍💻",
    "שלום עולם",
    "مرحبا بالعالم",
    "e\u{301}le\u{300}ve Zoë",
    "Z̸̢a̵l̷g̶o",
    "声優さん",
];
