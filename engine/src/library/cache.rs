//! The render cache: audio already synthesised, keyed by everything that determines it, so
//! re-rendering an episode after editing one line only synthesises that line.
//!
//! Audio is stored as little-endian f32 BLOBs inside the database, not as files beside it:
//! a put (metadata, audio and any evictions) is one transaction, so a crash can never leave
//! metadata without audio or a file nobody owns; eviction is a `DELETE`; backup is one file.
//! Entries are a line or a chunk (a few seconds, hundreds of KB), where `SQLite`'s blob reads
//! are as fast as files. The metadata lives in its own table so that a hit, which bumps the
//! entry's recency, rewrites a small row and never the audio.
//!
//! Recency is a counter (`use_seq`, the largest so far plus one), not the clock: two uses in
//! the same millisecond still have an order, and a clock set back cannot reorder the cache.
//! `last_used` keeps the time for people. After each put, the least recently used entries go
//! until the total audio size is within the cap (2 GiB by default).

use std::cell::Cell;
use std::fmt;

use rusqlite::{params, OptionalExtension, Transaction};
use sha2::{Digest, Sha256};

use super::clock;
use super::embeddings::{f32_to_le, le_to_f32};
use super::error::LibraryError;
use super::open::Library;
use crate::voice::VoiceTable;

/// Default cap on the cache's audio: 2 GiB.
pub const DEFAULT_CACHE_CAP: u64 = 2 << 30;

/// Everything that determines rendered audio. Hash it with [`RenderKey::new`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RenderKeyParts<'a> {
    /// The model's id, e.g. `kokoro-v1.0`.
    pub model_id: &'a str,
    /// The model file's version or sha256.
    pub model_version: &'a str,
    /// The phoneme ids fed to the model (after text normalisation and phonemisation).
    pub phoneme_ids: &'a [u32],
    /// [`RenderKey::voice_table_hash`] of the style table used.
    pub voice_table_hash: &'a str,
    pub speed: f32,
    pub sample_rate: u32,
    /// The engine's version: a change in the synthesis code invalidates the cache.
    pub engine_version: &'a str,
}

/// A render cache key: lowercase hex sha256 of a canonical encoding of [`RenderKeyParts`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RenderKey(String);

impl RenderKey {
    /// Hashes `parts`. The encoding is canonical: a version tag, then every field in a fixed
    /// order, each with a one-byte tag and its length, numbers little-endian, `-0.0` speed
    /// as `0.0`; so no two different part lists share an encoding.
    #[must_use]
    pub fn new(parts: &RenderKeyParts<'_>) -> Self {
        let mut h = Sha256::new();
        h.update(b"banter.render-key.v1\0");
        let mut field = |tag: u8, bytes: &[u8]| {
            h.update([tag]);
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        };
        field(1, parts.model_id.as_bytes());
        field(2, parts.model_version.as_bytes());
        let ids: Vec<u8> = parts
            .phoneme_ids
            .iter()
            .flat_map(|i| i.to_le_bytes())
            .collect();
        field(3, &ids);
        field(4, parts.voice_table_hash.as_bytes());
        let speed = if parts.speed == 0.0 {
            0.0f32
        } else {
            parts.speed
        };
        field(5, &speed.to_bits().to_le_bytes());
        field(6, &parts.sample_rate.to_le_bytes());
        field(7, parts.engine_version.as_bytes());
        Self(hex::encode(h.finalize()))
    }

    /// A key read back from elsewhere (a log, an API call): 64 hex digits.
    #[must_use]
    pub fn from_hex(hex: &str) -> Option<Self> {
        (hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| Self(hex.to_ascii_lowercase()))
    }

    /// The sha256 of a style table's bytes, for [`RenderKeyParts::voice_table_hash`].
    #[must_use]
    pub fn voice_table_hash(table: &VoiceTable) -> String {
        hex::encode(Sha256::digest(table.to_bytes()))
    }

    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RenderKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Audio from the cache.
#[derive(Debug, Clone, PartialEq)]
pub struct CachedAudio {
    pub samples: Vec<f32>,
    pub sample_rate: u32,
    /// The frames per token of each Kokoro pass the audio took (word timing); `None` for an
    /// entry stored without them.
    pub durations: Option<Vec<Vec<u32>>>,
}

/// Passes' durations as stored: per pass, its token count then its frames, u32 little-endian.
fn durations_to_le(passes: &[&[u32]]) -> Vec<u8> {
    let mut out = Vec::new();
    for pass in passes {
        out.extend_from_slice(&u32::try_from(pass.len()).unwrap_or(u32::MAX).to_le_bytes());
        for d in *pass {
            out.extend_from_slice(&d.to_le_bytes());
        }
    }
    out
}

/// The inverse of [`durations_to_le`]; `None` when the bytes are not that shape.
fn le_to_durations(bytes: &[u8]) -> Option<Vec<Vec<u32>>> {
    let words: Vec<u32> = bytes
        .chunks(4)
        .map(|c| c.try_into().ok().map(u32::from_le_bytes))
        .collect::<Option<_>>()?;
    let mut out = Vec::new();
    let mut rest = words.as_slice();
    while let Some((&n, tail)) = rest.split_first() {
        let n = usize::try_from(n).ok()?;
        if n > tail.len() {
            return None;
        }
        out.push(tail[..n].to_vec());
        rest = &tail[n..];
    }
    Some(out)
}

/// What a [`Library::cache_put`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PutOutcome {
    /// False when the audio alone is larger than the cap (nothing was stored).
    pub stored: bool,
    /// Entries evicted to get back under the cap.
    pub evicted: usize,
}

/// The cache's size and this connection's hit rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheStats {
    pub entries: u64,
    /// Bytes of audio (not counting `SQLite`'s overhead).
    pub bytes: u64,
    pub cap_bytes: u64,
    /// Hits and misses of `cache_get` through this [`Library`] since it was opened.
    pub hits: u64,
    pub misses: u64,
}

/// Hit and miss counters of one connection.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    hits: Cell<u64>,
    misses: Cell<u64>,
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl Library {
    /// The audio cached under `key`, marking it most recently used; `None` on a miss.
    pub fn cache_get(&self, key: &RenderKey) -> Result<Option<CachedAudio>, LibraryError> {
        let op = "read the render cache";
        let found = self.write(op, |tx| {
            let entry: Option<(i64, u32, i64)> = tx
                .query_row(
                    "UPDATE render_cache SET last_used = ?2,
                         use_seq = (SELECT max(use_seq) + 1 FROM render_cache)
                     WHERE key = ?1 RETURNING id, sample_rate, sample_count",
                    params![key.as_str(), clock::now_ms()],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .optional()
                .map_err(self.sql_err(op))?;
            let Some((id, sample_rate, count)) = entry else {
                return Ok(None);
            };
            let (bytes, durations): (Vec<u8>, Option<Vec<u8>>) = tx
                .query_row(
                    "SELECT samples, durations FROM render_audio WHERE entry_id = ?1",
                    [id],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .map_err(self.sql_err(op))?;
            let samples = le_to_f32(&bytes)
                .filter(|s| i64::try_from(s.len()).ok() == Some(count))
                .ok_or_else(|| LibraryError::Malformed {
                    path: self.path.clone(),
                    what: "cached audio",
                    reason: format!("{} bytes for {count} samples under key {key}", bytes.len()),
                })?;
            Ok(Some(CachedAudio {
                samples,
                sample_rate,
                // Unreadable timing is only a miss for word timing, never an error.
                durations: durations.as_deref().and_then(le_to_durations),
            }))
        })?;
        let counter = if found.is_some() {
            &self.counters.hits
        } else {
            &self.counters.misses
        };
        counter.set(counter.get() + 1);
        Ok(found)
    }

    /// Stores audio under `key` (replacing any), most recently used, then evicts the least
    /// recently used entries beyond the cap, all in one transaction.
    pub fn cache_put(
        &self,
        key: &RenderKey,
        samples: &[f32],
        sample_rate: u32,
    ) -> Result<PutOutcome, LibraryError> {
        self.cache_put_timed(key, samples, sample_rate, None)
    }

    /// [`Self::cache_put`] with the frames per token of each pass (see [`CachedAudio`]).
    pub fn cache_put_timed(
        &self,
        key: &RenderKey,
        samples: &[f32],
        sample_rate: u32,
        durations: Option<&[&[u32]]>,
    ) -> Result<PutOutcome, LibraryError> {
        let op = "write the render cache";
        let durations = durations.map(durations_to_le);
        let size = samples.len() as u64 * 4 + durations.as_ref().map_or(0, Vec::len) as u64;
        let cap = self.options.cache_cap_bytes;
        if size > cap {
            tracing::debug!(%key, size, cap, "audio larger than the render cache cap; not cached");
            return Ok(PutOutcome {
                stored: false,
                evicted: 0,
            });
        }
        let bytes = f32_to_le(samples);
        self.write(op, |tx| {
            let now = clock::now_ms();
            let id: i64 = tx
                .query_row(
                    "INSERT INTO render_cache
                     (key, sample_rate, sample_count, size_bytes, created_at, last_used, use_seq)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?5,
                             (SELECT coalesce(max(use_seq), 0) + 1 FROM render_cache))
                     ON CONFLICT (key) DO UPDATE SET
                         sample_rate = excluded.sample_rate,
                         sample_count = excluded.sample_count,
                         size_bytes = excluded.size_bytes, created_at = excluded.created_at,
                         last_used = excluded.last_used, use_seq = excluded.use_seq
                     RETURNING id",
                    params![
                        key.as_str(),
                        sample_rate,
                        to_i64(samples.len() as u64),
                        to_i64(size),
                        now
                    ],
                    |r| r.get(0),
                )
                .map_err(self.sql_err(op))?;
            tx.execute(
                "INSERT OR REPLACE INTO render_audio (entry_id, samples, durations)
                 VALUES (?1, ?2, ?3)",
                params![id, bytes, durations],
            )
            .map_err(self.sql_err(op))?;
            let evicted = self.evict(tx, cap)?;
            Ok(PutOutcome {
                stored: true,
                evicted,
            })
        })
    }

    /// Evicts least recently used entries until the cache is within the cap; returns how many.
    pub fn cache_evict(&self) -> Result<usize, LibraryError> {
        let cap = self.options.cache_cap_bytes;
        self.write("evict from the render cache", |tx| self.evict(tx, cap))
    }

    /// Empties the render cache; returns how many entries went.
    pub fn cache_clear(&self) -> Result<usize, LibraryError> {
        let op = "clear the render cache";
        self.write(op, |tx| {
            tx.execute("DELETE FROM render_cache", [])
                .map_err(self.sql_err(op))
        })
    }

    /// Entries, bytes, cap, and this connection's hits and misses.
    pub fn cache_stats(&self) -> Result<CacheStats, LibraryError> {
        let (entries, bytes): (i64, i64) = self
            .conn
            .query_row(
                "SELECT count(*), coalesce(sum(size_bytes), 0) FROM render_cache",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(self.sql_err("read the render cache's size"))?;
        Ok(CacheStats {
            entries: u64::try_from(entries).unwrap_or(0),
            bytes: u64::try_from(bytes).unwrap_or(0),
            cap_bytes: self.options.cache_cap_bytes,
            hits: self.counters.hits.get(),
            misses: self.counters.misses.get(),
        })
    }

    /// The keys in eviction order (least recently used first); for tests and diagnostics.
    pub fn cache_keys_lru(&self) -> Result<Vec<RenderKey>, LibraryError> {
        let op = "list the render cache";
        let mut stmt = self
            .conn
            .prepare_cached("SELECT key FROM render_cache ORDER BY use_seq")
            .map_err(self.sql_err(op))?;
        let rows = stmt
            .query_map([], |r| r.get(0).map(RenderKey))
            .map_err(self.sql_err(op))?;
        rows.collect::<Result<_, _>>().map_err(self.sql_err(op))
    }

    fn evict(&self, tx: &Transaction<'_>, cap: u64) -> Result<usize, LibraryError> {
        let op = "evict from the render cache";
        let total: i64 = tx
            .query_row(
                "SELECT coalesce(sum(size_bytes), 0) FROM render_cache",
                [],
                |r| r.get(0),
            )
            .map_err(self.sql_err(op))?;
        let mut excess = total - to_i64(cap);
        if excess <= 0 {
            return Ok(0);
        }
        let mut victims = Vec::new();
        {
            let mut stmt = tx
                .prepare_cached("SELECT id, size_bytes FROM render_cache ORDER BY use_seq")
                .map_err(self.sql_err(op))?;
            let mut rows = stmt.query([]).map_err(self.sql_err(op))?;
            while excess > 0 {
                let Some(row) = rows.next().map_err(self.sql_err(op))? else {
                    break;
                };
                let (id, size): (i64, i64) = (
                    row.get(0).map_err(self.sql_err(op))?,
                    row.get(1).map_err(self.sql_err(op))?,
                );
                victims.push(id);
                excess -= size;
            }
        }
        let mut delete = tx
            .prepare_cached("DELETE FROM render_cache WHERE id = ?1")
            .map_err(self.sql_err(op))?;
        for id in &victims {
            delete.execute([id]).map_err(self.sql_err(op))?;
        }
        Ok(victims.len())
    }
}
