//! Piper voices in the library: a `voices` row of kind `piper` (its recipe is the engine key,
//! `piper/<sha256 prefix>[/<speaker>]`) and a `piper_voices` row with the model file's path and
//! content, the `.onnx.json` as it was when added, and the licence facts.
//!
//! Why the file is referenced, not copied: Piper voices are tens of megabytes each and users
//! keep them where Home Assistant or their desktop put them. The sha256 and size recorded here
//! are checked whenever the model is loaded, so a moved, deleted or replaced file is reported
//! by name, never read as another voice. A multi-speaker model is added as one voice per
//! speaker, in one transaction.

use std::path::PathBuf;

use rusqlite::{params, OptionalExtension};

use super::clock;
use super::error::LibraryError;
use super::open::Library;
use super::voices::{clean_name, Voice, VoiceKind};
use crate::voice::{piper_key, PiperModelInfo};

/// One Piper voice to add (one speaker of a model).
#[derive(Debug, Clone)]
pub struct NewPiperVoice {
    pub name: String,
    /// The engine key (`piper/...`), stored as the voice's recipe.
    pub key: String,
    pub onnx_path: PathBuf,
    pub onnx_sha256: String,
    pub onnx_size: u64,
    /// The `.onnx.json` text, validated by the caller.
    pub config_json: String,
    pub speaker: Option<i64>,
    pub dataset: Option<String>,
    pub license: Option<String>,
    pub notes: String,
}

impl NewPiperVoice {
    /// The voices a checked model adds under `base`: `base`, or `base/SPEAKER` for each speaker
    /// of a multi-speaker model (the CLI's `voices add` and the studio's drop both add these).
    #[must_use]
    pub fn for_model(info: &PiperModelInfo, base: &str, notes: &str) -> Vec<Self> {
        let named: Vec<(String, Option<i64>)> = if info.speakers.is_empty() {
            vec![(base.to_owned(), None)]
        } else {
            info.speakers
                .iter()
                .map(|(speaker, id)| (format!("{base}/{speaker}"), Some(*id)))
                .collect()
        };
        named
            .into_iter()
            .map(|(name, speaker)| Self {
                name,
                key: piper_key(&info.sha256, speaker),
                onnx_path: info.onnx.clone(),
                onnx_sha256: info.sha256.clone(),
                onnx_size: info.size,
                config_json: info.config_json.clone(),
                speaker,
                dataset: info.config.dataset.clone(),
                license: info.config.license.clone(),
                notes: notes.to_owned(),
            })
            .collect()
    }
}

/// What the library keeps of a Piper voice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PiperRecord {
    pub onnx_path: PathBuf,
    pub onnx_sha256: String,
    pub onnx_size: u64,
    pub config_json: String,
    pub speaker: Option<i64>,
    pub dataset: Option<String>,
    pub license: Option<String>,
}

impl Library {
    /// Adds Piper voices (the speakers of one model) in one transaction: all or none.
    pub fn add_piper_voices(&self, voices: &[NewPiperVoice]) -> Result<Vec<Voice>, LibraryError> {
        let names = voices
            .iter()
            .map(|v| clean_name("voice", &v.name))
            .collect::<Result<Vec<_>, _>>()?;
        let ids = self.write_durable("add Piper voices", |tx| {
            let now = clock::now_ms();
            let mut ids = Vec::with_capacity(voices.len());
            for (voice, name) in voices.iter().zip(&names) {
                tx.execute(
                    "INSERT INTO voices (name, kind, recipe, notes, created_at, updated_at)
                     VALUES (?1, 'piper', ?2, ?3, ?4, ?4)",
                    params![name, voice.key, voice.notes, now],
                )
                .map_err(|e| self.duplicate_or(e, "voice", name, "add Piper voices"))?;
                let id = tx.last_insert_rowid();
                tx.execute(
                    "INSERT INTO piper_voices
                     (voice_id, onnx_path, onnx_sha256, onnx_size, config_json, speaker, dataset, license)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                    params![
                        id,
                        voice.onnx_path.to_string_lossy(),
                        voice.onnx_sha256,
                        voice.onnx_size as i64,
                        voice.config_json,
                        voice.speaker,
                        voice.dataset,
                        voice.license
                    ],
                )
                .map_err(self.sql_err("add Piper voices"))?;
                ids.push(id);
            }
            Ok(ids)
        })?;
        ids.into_iter()
            .zip(&names)
            .map(|(id, name)| {
                self.voice_where("id = ?1", id)?
                    .ok_or_else(|| self.not_found("voice", name))
            })
            .collect()
    }

    /// The Piper facts of the voice called `name`; `None` if it is not a Piper voice.
    pub fn piper_record(&self, name: &str) -> Result<Option<PiperRecord>, LibraryError> {
        self.conn
            .query_row(
                "SELECT p.onnx_path, p.onnx_sha256, p.onnx_size, p.config_json, p.speaker,
                        p.dataset, p.license
                 FROM piper_voices p JOIN voices v ON v.id = p.voice_id
                 WHERE v.name = ?1 AND v.kind = ?2",
                params![name.trim(), VoiceKind::Piper.as_str()],
                |r| {
                    Ok(PiperRecord {
                        onnx_path: PathBuf::from(r.get::<_, String>(0)?),
                        onnx_sha256: r.get(1)?,
                        onnx_size: r.get::<_, i64>(2)? as u64,
                        config_json: r.get(3)?,
                        speaker: r.get(4)?,
                        dataset: r.get(5)?,
                        license: r.get(6)?,
                    })
                },
            )
            .optional()
            .map_err(self.sql_err("read a Piper voice"))
    }
}
