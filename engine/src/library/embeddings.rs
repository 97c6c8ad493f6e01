//! Speaker embeddings (GE2E, 256 floats) memoised by what produced them: the sha256 of the
//! clip's bytes, the encoder's id and its version. Encoding a clip takes a model run; looking
//! it up takes a primary-key read. A new encoder version simply misses and recomputes.

use std::time::SystemTime;

use rusqlite::{params, OptionalExtension};
use sha2::{Digest, Sha256};

use super::clock;
use super::error::LibraryError;
use super::open::Library;

/// Width of a speaker embedding.
pub const EMBEDDING_DIM: usize = 256;

/// What an embedding was computed from and with.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EmbeddingKey {
    /// Lowercase hex sha256 of the audio file's bytes.
    pub audio_hash: String,
    /// The encoder, e.g. `ge2e`.
    pub encoder: String,
    pub encoder_version: u32,
}

impl EmbeddingKey {
    /// The key for a clip's raw bytes (the file as read, before decoding).
    #[must_use]
    pub fn for_audio(bytes: &[u8], encoder: &str, encoder_version: u32) -> Self {
        Self {
            audio_hash: hex::encode(Sha256::digest(bytes)),
            encoder: encoder.to_owned(),
            encoder_version,
        }
    }
}

/// A stored embedding and what it was computed from.
#[derive(Debug, Clone, PartialEq)]
pub struct SpeakerEmbedding {
    pub vector: Vec<f32>,
    pub clip_secs: f64,
    pub sample_rate: u32,
    pub created_at: SystemTime,
}

pub(crate) fn f32_to_le(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Little-endian f32s from bytes; `None` if the length is not a multiple of 4.
pub(crate) fn le_to_f32(bytes: &[u8]) -> Option<Vec<f32>> {
    bytes.len().is_multiple_of(4).then(|| {
        bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect()
    })
}

impl Library {
    /// The embedding stored for `key`, if any.
    pub fn get_embedding(
        &self,
        key: &EmbeddingKey,
    ) -> Result<Option<SpeakerEmbedding>, LibraryError> {
        let op = "read a speaker embedding";
        let row: Option<(Vec<u8>, f64, u32, i64)> = self
            .conn
            .query_row(
                "SELECT embedding, clip_secs, sample_rate, created_at FROM speaker_embeddings
                 WHERE audio_hash = ?1 AND encoder = ?2 AND encoder_version = ?3",
                params![key.audio_hash, key.encoder, key.encoder_version],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .optional()
            .map_err(self.sql_err(op))?;
        row.map(|(bytes, clip_secs, sample_rate, created)| {
            let vector = le_to_f32(&bytes)
                .filter(|v| v.len() == EMBEDDING_DIM)
                .ok_or_else(|| LibraryError::Malformed {
                    path: self.path.clone(),
                    what: "speaker embedding",
                    reason: format!("{} bytes for key {}", bytes.len(), key.audio_hash),
                })?;
            Ok(SpeakerEmbedding {
                vector,
                clip_secs,
                sample_rate,
                created_at: clock::from_ms(created),
            })
        })
        .transpose()
    }

    /// Stores (or replaces) the embedding for `key`; `vector` must have [`EMBEDDING_DIM`]
    /// finite values.
    pub fn put_embedding(
        &self,
        key: &EmbeddingKey,
        vector: &[f32],
        clip_secs: f64,
        sample_rate: u32,
    ) -> Result<(), LibraryError> {
        if vector.len() != EMBEDDING_DIM {
            return Err(LibraryError::BadLength {
                what: "speaker embedding",
                len: vector.len(),
                expected: EMBEDDING_DIM,
            });
        }
        if vector.iter().any(|v| !v.is_finite()) {
            return Err(LibraryError::NonFinite {
                what: "speaker embedding",
            });
        }
        let bytes = f32_to_le(vector);
        self.write("store a speaker embedding", |tx| {
            tx.execute(
                "INSERT OR REPLACE INTO speaker_embeddings
                 (audio_hash, encoder, encoder_version, embedding, clip_secs, sample_rate,
                  created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    key.audio_hash,
                    key.encoder,
                    key.encoder_version,
                    bytes,
                    clip_secs,
                    sample_rate,
                    clock::now_ms()
                ],
            )
            .map_err(self.sql_err("store a speaker embedding"))?;
            Ok(())
        })
    }
}
