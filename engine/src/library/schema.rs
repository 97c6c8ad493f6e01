//! The schema as an ordered list of migrations, and the code that applies them.
//!
//! The version lives in `PRAGMA user_version` (in the file header, so it changes atomically
//! with the transaction that upgrades the tables); the `migrations` table keeps a readable
//! history for `banter library check`. Each upgrade runs in its own `BEGIN IMMEDIATE`
//! transaction that re-reads the version first, so two processes opening an old library at
//! once cannot both apply the same step. A fresh library is built by the same steps from
//! version 0, so "fresh" and "upgraded" cannot drift apart, and the tests check it.
//!
//! Rules for a new version: append a step, never edit a published one; keep each step valid
//! SQL on the previous schema; add a test fixture row for the new tables in `tests/migrate.rs`.

use rusqlite::{Connection, TransactionBehavior};

/// `PRAGMA application_id` of a Banter library ("BNTR"): how a foreign `SQLite` file at our
/// path is told apart from an old or newer library of ours.
pub(crate) const APPLICATION_ID: i32 = 0x424E_5452;

/// One step of the schema's history.
pub(crate) struct Migration {
    pub version: u32,
    pub name: &'static str,
    pub sql: &'static str,
    /// The step rebuilds a table other tables reference: foreign keys are switched off around
    /// its transaction (`SQLite` ignores the pragma inside one; with them on, dropping the old
    /// table would cascade-delete its children), and `foreign_key_check` must find nothing
    /// before it commits.
    pub rebuilds: bool,
}

/// Every step, oldest first; `version` is the position plus one.
pub(crate) const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "voices, speaker embeddings, projects, autosaves",
        rebuilds: false,
        sql: r"
CREATE TABLE migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    applied_at INTEGER NOT NULL
);
-- The style table is the last column: listing voices never reads its overflow pages.
CREATE TABLE voices (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL UNIQUE,
    kind       TEXT    NOT NULL CHECK (kind IN ('stock', 'blend', 'matched')),
    language   TEXT,
    gender     TEXT    CHECK (gender IN ('female', 'male')),
    recipe     TEXT,
    notes      TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    style      BLOB    CHECK (style IS NULL OR length(style) = 522240)
);
CREATE TABLE speaker_embeddings (
    audio_hash      TEXT    NOT NULL,
    encoder         TEXT    NOT NULL,
    encoder_version INTEGER NOT NULL,
    embedding       BLOB    NOT NULL CHECK (length(embedding) = 1024),
    clip_secs       REAL    NOT NULL,
    sample_rate     INTEGER NOT NULL,
    created_at      INTEGER NOT NULL,
    PRIMARY KEY (audio_hash, encoder, encoder_version)
);
CREATE TABLE projects (
    id            INTEGER PRIMARY KEY,
    name          TEXT    NOT NULL UNIQUE,
    script        TEXT    NOT NULL,
    script_format TEXT    NOT NULL,
    cast_json     TEXT    NOT NULL DEFAULT '{}',
    settings_json TEXT    NOT NULL DEFAULT '{}',
    render_path   TEXT,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);
CREATE INDEX projects_by_recency ON projects (updated_at DESC);
-- Keyed by name, not by project id: a project never saved yet needs crash recovery too.
CREATE TABLE autosaves (
    project_name TEXT    PRIMARY KEY,
    script       TEXT    NOT NULL,
    saved_at     INTEGER NOT NULL
);
",
    },
    Migration {
        version: 2,
        name: "render cache",
        rebuilds: false,
        sql: r"
-- Metadata apart from the audio: a cache hit updates last_used/use_seq, and SQLite rewrites
-- a whole row (overflow pages included) on UPDATE, so the hit must not touch the samples.
CREATE TABLE render_cache (
    id           INTEGER PRIMARY KEY,
    key          TEXT    NOT NULL UNIQUE,
    sample_rate  INTEGER NOT NULL,
    sample_count INTEGER NOT NULL,
    size_bytes   INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    last_used    INTEGER NOT NULL,
    use_seq      INTEGER NOT NULL
);
CREATE INDEX render_cache_lru ON render_cache (use_seq);
CREATE TABLE render_audio (
    entry_id INTEGER PRIMARY KEY REFERENCES render_cache (id) ON DELETE CASCADE,
    samples  BLOB    NOT NULL
);
",
    },
    Migration {
        version: 3,
        name: "render cache word timing",
        rebuilds: false,
        sql: r"
-- The frames the model gave every token of each pass (u32 little-endian, a pass's count first),
-- so a cached sentence still says when each word is spoken. NULL in entries made before: those
-- are rendered again when word timing is wanted.
ALTER TABLE render_audio ADD COLUMN durations BLOB;
",
    },
    Migration {
        version: 4,
        name: "tuned voices",
        rebuilds: false,
        sql: r"
-- A new kind joins the CHECK, which SQLite can change only by rebuilding the table (same
-- columns, same order, same ids).
CREATE TABLE voices_v4 (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL UNIQUE,
    kind       TEXT    NOT NULL CHECK (kind IN ('stock', 'blend', 'matched', 'tuned')),
    language   TEXT,
    gender     TEXT    CHECK (gender IN ('female', 'male')),
    recipe     TEXT,
    notes      TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    style      BLOB    CHECK (style IS NULL OR length(style) = 522240)
);
INSERT INTO voices_v4 (id, name, kind, language, gender, recipe, notes, created_at, updated_at, style)
    SELECT id, name, kind, language, gender, recipe, notes, created_at, updated_at, style FROM voices;
DROP TABLE voices;
ALTER TABLE voices_v4 RENAME TO voices;
-- How a tuned voice was made; its pack is the voice's style BLOB, checked by pack_sha256.
-- Written in the same transaction as the voice, removed with it.
CREATE TABLE voice_tunings (
    voice_id           INTEGER PRIMARY KEY REFERENCES voices (id) ON DELETE CASCADE,
    pack_version       INTEGER NOT NULL,
    pack_sha256        TEXT    NOT NULL,
    start_recipe       TEXT    NOT NULL,
    clip_hashes        TEXT    NOT NULL,
    encoder            TEXT    NOT NULL,
    encoder_version    INTEGER NOT NULL,
    embedding_keys     TEXT    NOT NULL,
    settings_json      TEXT    NOT NULL,
    history_json       TEXT    NOT NULL,
    before_similarity  REAL    NOT NULL,
    heldout_similarity REAL    NOT NULL,
    stability          REAL    NOT NULL,
    provenance         TEXT    NOT NULL,
    created_at         INTEGER NOT NULL
);
",
    },
    Migration {
        version: 5,
        name: "autosaved cast choices",
        rebuilds: false,
        sql: r"
-- An autosave keeps the author's voice choices with the text (speaker -> voice@speed, as a
-- project's cast_json): recovering after a crash must not lose the casting either.
ALTER TABLE autosaves ADD COLUMN cast_json TEXT NOT NULL DEFAULT '{}';
",
    },
    Migration {
        version: 6,
        name: "Piper voices",
        rebuilds: true,
        sql: r"
-- A new kind joins the CHECK: the table is rebuilt (same columns, order and ids) with foreign
-- keys off, so voice_tunings' rows stay.
CREATE TABLE voices_v6 (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL UNIQUE,
    kind       TEXT    NOT NULL CHECK (kind IN ('stock', 'blend', 'matched', 'tuned', 'piper')),
    language   TEXT,
    gender     TEXT    CHECK (gender IN ('female', 'male')),
    recipe     TEXT,
    notes      TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    style      BLOB    CHECK (style IS NULL OR length(style) = 522240)
);
INSERT INTO voices_v6 (id, name, kind, language, gender, recipe, notes, created_at, updated_at, style)
    SELECT id, name, kind, language, gender, recipe, notes, created_at, updated_at, style FROM voices;
DROP TABLE voices;
ALTER TABLE voices_v6 RENAME TO voices;
-- A Piper voice: the user's model file by path and content (sha256 and size, checked whenever
-- it is loaded, so a moved or replaced file is reported, never spoken by another voice), its
-- .onnx.json as it was when added, and the licence facts shown beside the voice.
CREATE TABLE piper_voices (
    voice_id     INTEGER PRIMARY KEY REFERENCES voices (id) ON DELETE CASCADE,
    onnx_path    TEXT    NOT NULL,
    onnx_sha256  TEXT    NOT NULL CHECK (length(onnx_sha256) = 64),
    onnx_size    INTEGER NOT NULL,
    config_json  TEXT    NOT NULL,
    speaker      INTEGER,
    dataset      TEXT,
    license      TEXT
);
",
    },
];

/// The schema version this Banter writes.
#[allow(clippy::cast_possible_truncation)] // a handful of migrations
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// What [`migrate_to`] found and did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MigrateOutcome {
    /// Applied steps (possibly none) and now at the target.
    Done { from: u32 },
    /// The file is newer than `target`; nothing was touched.
    Newer { found: u32 },
}

pub(crate) fn user_version(conn: &Connection) -> rusqlite::Result<u32> {
    let v: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    // user_version is a signed 32-bit field; a negative one is not ours, read as "newer".
    Ok(u32::try_from(v).unwrap_or(u32::MAX))
}

/// Applies the migrations up to `target`, one transaction per step.
pub(crate) fn migrate_to(conn: &mut Connection, target: u32) -> rusqlite::Result<MigrateOutcome> {
    let mut start = None;
    loop {
        // A rebuilding step runs with foreign keys off (see `Migration::rebuilds`).
        let next = user_version(conn)? as usize;
        let rebuilds = MIGRATIONS
            .get(next)
            .is_some_and(|m| m.rebuilds && next < target as usize);
        let keys_were: i64 = conn.pragma_query_value(None, "foreign_keys", |r| r.get(0))?;
        if rebuilds {
            conn.pragma_update(None, "foreign_keys", "OFF")?;
        }
        let result = migrate_step(conn, target, &mut start);
        if rebuilds {
            conn.pragma_update(None, "foreign_keys", keys_were)?;
        }
        if let Some(outcome) = result? {
            return Ok(outcome);
        }
    }
}

/// One step of [`migrate_to`]: `Some` when there is nothing left to do.
fn migrate_step(
    conn: &mut Connection,
    target: u32,
    start: &mut Option<u32>,
) -> rusqlite::Result<Option<MigrateOutcome>> {
    {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let current = user_version(&tx)?;
        let from = *start.get_or_insert(current);
        if current > target {
            return Ok(Some(MigrateOutcome::Newer { found: current }));
        }
        if current == target {
            return Ok(Some(MigrateOutcome::Done { from }));
        }
        let step = &MIGRATIONS[current as usize];
        debug_assert_eq!(step.version, current + 1);
        tx.execute_batch(step.sql)?;
        if step.rebuilds {
            let violations: i64 =
                tx.query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| {
                    r.get(0)
                })?;
            if violations > 0 {
                // Rolled back when `tx` drops: the library stays at the previous version.
                return Err(rusqlite::Error::SqliteFailure(
                    rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CONSTRAINT),
                    Some(format!(
                        "upgrading to v{} ({}) would leave {violations} broken references",
                        step.version, step.name
                    )),
                ));
            }
        }
        if current == 0 {
            tx.pragma_update(None, "application_id", APPLICATION_ID)?;
        }
        tx.execute(
            "INSERT INTO migrations (version, name, applied_at) VALUES (?1, ?2, ?3)",
            rusqlite::params![step.version, step.name, super::clock::now_ms()],
        )?;
        tx.pragma_update(None, "user_version", step.version)?;
        tx.commit()?;
        tracing::debug!(
            version = step.version,
            name = step.name,
            "library schema upgraded"
        );
    }
    Ok(None)
}
