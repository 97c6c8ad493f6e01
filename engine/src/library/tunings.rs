//! Tuned voices: a voice row (kind `tuned`, its pack in `style`) and a `voice_tunings` row
//! saying how the pack was made, written in one durable transaction so a crash or a cancelled
//! tuning leaves either both or neither.
//!
//! The pack is versioned (`pack_version`: how the values are to be read, today
//! [`PACK_VERSION`], a Kokoro v1.0 style table) and checked (`pack_sha256` of the stored
//! bytes, verified by [`Library::check_tuned_packs`]). The clips are referenced by their
//! embeddings' content hashes, as the speaker embedding cache keys them; `embedding_keys`
//! lists the cache entries made for this voice alone (its probe embeddings), which go with it.

use std::time::SystemTime;

use rusqlite::{params, OptionalExtension};
use sha2::{Digest, Sha256};

use super::clock;
use super::error::LibraryError;
use super::open::Library;
use super::voices::{clean_name, NewVoice, Voice, VoiceKind};
use crate::voice::VoiceTable;

/// How a stored pack is read: 1 = a Kokoro v1.0 style table, 510 × 256 little-endian f32.
pub const PACK_VERSION: u32 = 1;

/// How a tuned voice was made, as stored beside it.
#[derive(Debug, Clone, PartialEq)]
pub struct Tuning {
    pub pack_version: u32,
    /// Lowercase hex sha256 of the pack's bytes as stored.
    pub pack_sha256: String,
    /// The stock voice or blend the search started from.
    pub start_recipe: String,
    /// The reference clips' content hashes (keys of their cached embeddings).
    pub clip_hashes: Vec<String>,
    pub encoder: String,
    pub encoder_version: u32,
    /// Speaker-embedding cache keys (audio hashes) made for this voice alone.
    pub embedding_keys: Vec<String>,
    /// The search's settings (JSON object).
    pub settings_json: String,
    /// The search's history (JSON array).
    pub history_json: String,
    /// Similarity of the starting blend to the clips on the held-out sentences.
    pub before_similarity: f32,
    /// Similarity of the tuned voice to the clips on the held-out sentences.
    pub heldout_similarity: f32,
    /// Similarity between two different sentences of the tuned voice.
    pub stability: f32,
    pub provenance: String,
    pub created_at: SystemTime,
}

/// A tuned pack whose stored bytes do not match what was saved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackProblem {
    pub voice: String,
    pub problem: String,
}

impl Library {
    /// Saves a tuned voice and how it was made, atomically and durably.
    /// [`LibraryError::DuplicateName`] if the name is taken (nothing is written then).
    pub fn add_tuned_voice(
        &self,
        voice: &NewVoice,
        pack: &VoiceTable,
        tuning: &Tuning,
    ) -> Result<Voice, LibraryError> {
        let name = clean_name("voice", &voice.name)?;
        let bytes = pack.to_bytes();
        let sha = hex::encode(Sha256::digest(&bytes));
        let clips = serde_json::to_string(&tuning.clip_hashes).unwrap_or_else(|_| "[]".into());
        let keys = serde_json::to_string(&tuning.embedding_keys).unwrap_or_else(|_| "[]".into());
        let id = self.write_durable("save a tuned voice", |tx| {
            let now = clock::now_ms();
            tx.execute(
                "INSERT INTO voices
                 (name, kind, language, gender, recipe, notes, created_at, updated_at, style)
                 VALUES (?1, 'tuned', ?2, ?3, ?4, ?5, ?6, ?6, ?7)",
                params![
                    name,
                    voice.language.map(crate::phonemes::Language::espeak_code),
                    voice.gender.map(|g| g.to_string()),
                    voice.recipe,
                    voice.notes,
                    now,
                    bytes
                ],
            )
            .map_err(|e| self.duplicate_or(e, "voice", &name, "save a tuned voice"))?;
            let id = tx.last_insert_rowid();
            tx.execute(
                "INSERT INTO voice_tunings
                 (voice_id, pack_version, pack_sha256, start_recipe, clip_hashes, encoder,
                  encoder_version, embedding_keys, settings_json, history_json,
                  before_similarity, heldout_similarity, stability, provenance, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
                params![
                    id,
                    PACK_VERSION,
                    sha,
                    tuning.start_recipe,
                    clips,
                    tuning.encoder,
                    tuning.encoder_version,
                    keys,
                    tuning.settings_json,
                    tuning.history_json,
                    f64::from(tuning.before_similarity),
                    f64::from(tuning.heldout_similarity),
                    f64::from(tuning.stability),
                    tuning.provenance,
                    now
                ],
            )
            .map_err(self.sql_err("save a tuned voice"))?;
            Ok(id)
        })?;
        debug_assert!(voice.kind == VoiceKind::Tuned);
        self.get_voice(&name)?
            .filter(|v| v.id == id)
            .ok_or_else(|| self.not_found("voice", &name))
    }

    /// How the tuned voice `name` was made; `None` if it is not a tuned voice.
    pub fn voice_tuning(&self, name: &str) -> Result<Option<Tuning>, LibraryError> {
        let op = "read a voice's tuning";
        let row = self
            .conn
            .query_row(
                "SELECT t.pack_version, t.pack_sha256, t.start_recipe, t.clip_hashes, t.encoder,
                        t.encoder_version, t.embedding_keys, t.settings_json, t.history_json,
                        t.before_similarity, t.heldout_similarity, t.stability, t.provenance,
                        t.created_at
                 FROM voice_tunings t JOIN voices v ON v.id = t.voice_id WHERE v.name = ?1",
                [name.trim()],
                |r| {
                    Ok((
                        (
                            r.get::<_, u32>(0)?,
                            r.get::<_, String>(1)?,
                            r.get::<_, String>(2)?,
                            r.get::<_, String>(3)?,
                            r.get::<_, String>(4)?,
                            r.get::<_, u32>(5)?,
                            r.get::<_, String>(6)?,
                        ),
                        (
                            r.get::<_, String>(7)?,
                            r.get::<_, String>(8)?,
                            r.get::<_, f64>(9)?,
                            r.get::<_, f64>(10)?,
                            r.get::<_, f64>(11)?,
                            r.get::<_, String>(12)?,
                            r.get::<_, i64>(13)?,
                        ),
                    ))
                },
            )
            .optional()
            .map_err(self.sql_err(op))?;
        let Some(((version, sha, recipe, clips, encoder, encoder_version, keys), rest)) = row
        else {
            return Ok(None);
        };
        let (settings, history, before, heldout, stability, provenance, created) = rest;
        let list = |what: &'static str, json: &str| {
            serde_json::from_str::<Vec<String>>(json).map_err(|_| self.malformed(what, json))
        };
        #[allow(clippy::cast_possible_truncation)] // similarities in [-1, 1], stored from f32
        Ok(Some(Tuning {
            pack_version: version,
            pack_sha256: sha,
            start_recipe: recipe,
            clip_hashes: list("tuning clip list", &clips)?,
            encoder,
            encoder_version,
            embedding_keys: list("tuning embedding keys", &keys)?,
            settings_json: settings,
            history_json: history,
            before_similarity: before as f32,
            heldout_similarity: heldout as f32,
            stability: stability as f32,
            provenance,
            created_at: clock::from_ms(created),
        }))
    }

    /// Removes the tuned voice `name`'s cache entries that nothing else uses: its own probe
    /// embeddings, and its clips' embeddings unless another tuned voice lists the same clip.
    /// Call before removing the voice; returns how many entries went.
    pub(crate) fn remove_tuning_embeddings(
        &self,
        tx: &rusqlite::Transaction<'_>,
        name: &str,
    ) -> Result<usize, LibraryError> {
        let op = "remove a tuned voice's cache entries";
        let row: Option<(i64, String, String)> = tx
            .query_row(
                "SELECT t.voice_id, t.clip_hashes, t.embedding_keys
                 FROM voice_tunings t JOIN voices v ON v.id = t.voice_id WHERE v.name = ?1",
                [name],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
            .map_err(self.sql_err(op))?;
        let Some((id, clips, keys)) = row else {
            return Ok(0);
        };
        let parse = |json: &str| serde_json::from_str::<Vec<String>>(json).unwrap_or_default();
        let mut others = tx
            .prepare("SELECT clip_hashes FROM voice_tunings WHERE voice_id <> ?1")
            .map_err(self.sql_err(op))?;
        let used: Vec<String> = others
            .query_map([id], |r| r.get::<_, String>(0))
            .map_err(self.sql_err(op))?
            .filter_map(Result::ok)
            .flat_map(|j| parse(&j))
            .collect();
        let mut removed = 0;
        for hash in parse(&keys)
            .into_iter()
            .chain(parse(&clips).into_iter().filter(|h| !used.contains(h)))
        {
            removed += tx
                .execute(
                    "DELETE FROM speaker_embeddings WHERE audio_hash = ?1",
                    [&hash],
                )
                .map_err(self.sql_err(op))?;
        }
        Ok(removed)
    }

    /// Checks every tuned voice's pack against its tuning row: present, the right size,
    /// finite, a known version, and the bytes saved (sha256).
    pub fn check_tuned_packs(&self) -> Result<Vec<PackProblem>, LibraryError> {
        let op = "check the tuned voices' packs";
        let mut stmt = self
            .conn
            .prepare(
                "SELECT v.name, v.style, t.pack_version, t.pack_sha256
                 FROM voices v LEFT JOIN voice_tunings t ON t.voice_id = v.id
                 WHERE v.kind = 'tuned' ORDER BY v.name",
            )
            .map_err(self.sql_err(op))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, Option<Vec<u8>>>(1)?,
                    r.get::<_, Option<u32>>(2)?,
                    r.get::<_, Option<String>>(3)?,
                ))
            })
            .map_err(self.sql_err(op))?;
        let mut problems = Vec::new();
        for row in rows {
            let (voice, style, version, sha) = row.map_err(self.sql_err(op))?;
            let problem = match (style, version, sha) {
                (_, None, _) | (_, _, None) => Some("its tuning record is missing".to_owned()),
                (None, _, _) => Some("its pack is missing".to_owned()),
                (Some(_), Some(v), _) if v != PACK_VERSION => Some(format!(
                    "its pack has version {v}, this Banter reads version {PACK_VERSION}"
                )),
                (Some(bytes), Some(_), Some(sha)) => {
                    if hex::encode(Sha256::digest(&bytes)) == sha {
                        VoiceTable::from_bytes(&bytes)
                            .err()
                            .map(|e| format!("its pack is unreadable: {e}"))
                    } else {
                        Some("its pack's bytes differ from those saved (sha256)".to_owned())
                    }
                }
            };
            if let Some(problem) = problem {
                problems.push(PackProblem { voice, problem });
            }
        }
        Ok(problems)
    }
}
