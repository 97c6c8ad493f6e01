//! `manifest.json`: the store's record of what was fetched, verified and converted.
//!
//! It is written last, after every file it lists is in place, so its presence means a
//! fetch completed. It lists every file's size and sha256 (the converted safetensors
//! included), the package versions they came from and the converter version, which lets
//! a later run decide in a few `stat` calls whether the store is complete and current.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::error::AssetError;
use super::fsio::write_atomic;
use super::manifest::{Catalog, CONVERTER_VERSION};

/// File name of the record inside the store.
pub const MANIFEST_FILE: &str = "manifest.json";
/// Layout version of `manifest.json`; bump on incompatible changes.
pub const RECORD_FORMAT: u32 = 1;

/// Size and checksum of one stored file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    pub size: u64,
    pub sha256: String,
}

/// One downloaded package.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceRecord {
    /// `pip` or `npm`.
    pub client: String,
    /// `NAME==VERSION` (pip) or `NAME@VERSION` (npm).
    pub package: String,
}

/// The parsed `manifest.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreRecord {
    pub format: u32,
    /// [`Catalog::id`] of the assets.
    pub catalog: String,
    /// [`CONVERTER_VERSION`] that produced the safetensors.
    pub converter_version: u32,
    /// Version of the engine crate that wrote the record (informational).
    pub engine_version: String,
    /// Seconds since the Unix epoch when the fetch finished (informational).
    pub created_unix: u64,
    pub sources: Vec<SourceRecord>,
    /// Every file, by path relative to the store root with `/` separators.
    pub files: BTreeMap<String, FileRecord>,
}

impl StoreRecord {
    /// A record for `catalog` made by this engine, listing `files`.
    #[must_use]
    pub fn new(catalog: &Catalog, files: BTreeMap<String, FileRecord>) -> Self {
        Self {
            format: RECORD_FORMAT,
            catalog: catalog.id.to_owned(),
            converter_version: CONVERTER_VERSION,
            engine_version: env!("CARGO_PKG_VERSION").to_owned(),
            created_unix: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            sources: catalog
                .sources()
                .into_iter()
                .map(|(client, package)| SourceRecord { client, package })
                .collect(),
            files,
        }
    }

    /// Why this record does not describe a current store for `catalog`, if it does not.
    #[must_use]
    pub fn staleness(&self, catalog: &Catalog) -> Option<String> {
        if self.format != RECORD_FORMAT {
            return Some(format!(
                "manifest format {} (expected {RECORD_FORMAT})",
                self.format
            ));
        }
        if self.catalog != catalog.id {
            return Some(format!("assets {} (expected {})", self.catalog, catalog.id));
        }
        if self.converter_version != CONVERTER_VERSION {
            return Some(format!(
                "weights converted by converter version {} (current is {CONVERTER_VERSION})",
                self.converter_version
            ));
        }
        None
    }

    /// Reads `manifest.json`: `Ok(None)` when absent, `Err(reason)` when unreadable.
    pub fn read(path: &Path) -> Result<Option<Self>, String> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Writes the record atomically as pretty JSON.
    pub fn write(&self, path: &Path) -> Result<(), AssetError> {
        let mut json = serde_json::to_string_pretty(self).map_err(|e| AssetError::Io {
            path: path.to_owned(),
            source: std::io::Error::other(e),
        })?;
        json.push('\n');
        write_atomic(path, json.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assets::manifest::KOKORO_V1;

    #[test]
    fn record_round_trips_through_json() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(MANIFEST_FILE);
        let mut files = BTreeMap::new();
        files.insert(
            "voices/af_heart.bin".to_owned(),
            FileRecord {
                size: 522_240,
                sha256: KOKORO_V1.voices.checked_voice.1.to_owned(),
            },
        );
        let record = StoreRecord::new(&KOKORO_V1, files);
        record.write(&path).expect("write");
        let back = StoreRecord::read(&path)
            .expect("readable")
            .expect("present");
        assert_eq!(back, record);
        assert_eq!(back.sources.len(), 6);
        assert_eq!(back.staleness(&KOKORO_V1), None);
    }

    #[test]
    fn absent_garbled_and_stale_records_are_told_apart() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(MANIFEST_FILE);
        assert_eq!(StoreRecord::read(&path), Ok(None));
        std::fs::write(&path, "{ not json").expect("write");
        assert!(StoreRecord::read(&path).is_err());

        let mut old = StoreRecord::new(&KOKORO_V1, BTreeMap::new());
        old.converter_version = CONVERTER_VERSION + 1;
        let why = old.staleness(&KOKORO_V1).expect("stale");
        assert!(why.contains("converter version"), "{why}");
    }
}
