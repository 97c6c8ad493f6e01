//! Tests: the migrations from an empty file and from every earlier version end at the same
//! schema as a fresh library, keep the data, and a newer library is refused untouched.

use rusqlite::Connection;

use super::support::db_path;
use crate::library::schema::{migrate_to, MigrateOutcome, APPLICATION_ID, MIGRATIONS};
use crate::library::{Library, LibraryError, SCHEMA_VERSION};

/// Everything that defines the schema, in a stable order.
fn schema_of(conn: &Connection) -> Vec<(String, String, String, Option<String>)> {
    let mut stmt = conn
        .prepare("SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY type, name")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn header(conn: &Connection) -> (i32, u32) {
    let app: i32 = conn
        .pragma_query_value(None, "application_id", |r| r.get(0))
        .unwrap();
    let ver: u32 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    (app, ver)
}

fn fresh_schema() -> Vec<(String, String, String, Option<String>)> {
    let dir = tempfile::tempdir().unwrap();
    let lib = Library::open(db_path(&dir)).unwrap();
    schema_of(&lib.conn)
}

/// Rows that exist at `version`, written with the SQL of that version.
fn fixture_rows(conn: &Connection, version: u32) {
    if version >= 1 {
        conn.execute_batch(
            "INSERT INTO voices (name, kind, created_at, updated_at)
                 VALUES ('af_heart', 'stock', 1, 1);
             INSERT INTO projects (name, script, script_format, created_at, updated_at)
                 VALUES ('Old episode', 'HOST: hi', 'markdown', 1, 2);
             INSERT INTO autosaves (project_name, script, saved_at)
                 VALUES ('Old episode', 'HOST: hi!', 3);",
        )
        .unwrap();
    }
    if version >= 2 {
        conn.execute_batch(
            "INSERT INTO render_cache
                 (id, key, sample_rate, sample_count, size_bytes, created_at, last_used, use_seq)
                 VALUES (1, 'k', 24000, 1, 4, 1, 1, 1);
             INSERT INTO render_audio (entry_id, samples) VALUES (1, x'0000803f');",
        )
        .unwrap();
    }
    if version >= 4 {
        conn.execute_batch(
            "INSERT INTO voices (id, name, kind, created_at, updated_at)
                 VALUES (50, 'Tuned one', 'tuned', 1, 1);
             INSERT INTO voice_tunings VALUES
                 (50, 1, 'sha', 'af_bella', '[]', 'ge2e', 1, '[]', '{}', '[]', 0.7, 0.8, 0.9,
                  'test', 1);",
        )
        .unwrap();
    }
}

#[test]
fn migrations_are_numbered_in_order() {
    for (i, m) in MIGRATIONS.iter().enumerate() {
        assert_eq!(m.version as usize, i + 1, "{}", m.name);
    }
    const {
        assert!(
            SCHEMA_VERSION >= 2,
            "keep at least two versions so upgrades are tested"
        );
    };
}

#[test]
fn a_fresh_library_is_at_the_latest_version() {
    let dir = tempfile::tempdir().unwrap();
    let lib = Library::open(db_path(&dir)).unwrap();
    assert_eq!(header(&lib.conn), (APPLICATION_ID, SCHEMA_VERSION));
    assert_eq!(lib.schema_version().unwrap(), SCHEMA_VERSION);
    let history: Vec<u32> = lib
        .conn
        .prepare("SELECT version FROM migrations ORDER BY version")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(history, (1..=SCHEMA_VERSION).collect::<Vec<_>>());
    let journal: String = lib
        .conn
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(journal, "wal");
    let fk: i64 = lib
        .conn
        .pragma_query_value(None, "foreign_keys", |r| r.get(0))
        .unwrap();
    assert_eq!(fk, 1);
    drop(lib);
    // reopening changes nothing
    let again = Library::open(db_path(&dir)).unwrap();
    assert_eq!(schema_of(&again.conn), fresh_schema());
    assert!(again.set_aside().is_none());
}

#[test]
fn every_earlier_version_upgrades_to_the_fresh_schema_keeping_data() {
    let fresh = fresh_schema();
    for from in 0..SCHEMA_VERSION {
        let dir = tempfile::tempdir().unwrap();
        let path = db_path(&dir);
        {
            let mut conn = Connection::open(&path).unwrap();
            conn.pragma_update(None, "journal_mode", "WAL").unwrap();
            assert_eq!(
                migrate_to(&mut conn, from).unwrap(),
                MigrateOutcome::Done { from: 0 }
            );
            assert_eq!(header(&conn).1, from);
            fixture_rows(&conn, from);
        }
        let lib = Library::open(&path).unwrap();
        assert!(lib.set_aside().is_none(), "from v{from}: not set aside");
        assert_eq!(
            header(&lib.conn),
            (APPLICATION_ID, SCHEMA_VERSION),
            "from v{from}"
        );
        assert_eq!(schema_of(&lib.conn), fresh, "from v{from}");
        let report = lib.check().unwrap();
        assert!(
            report.integrity == ["ok"] && report.foreign_key_violations.is_empty(),
            "from v{from}: {report:?}"
        );
        // The v4 fixture's tuned voice has a tuning row but no pack: the check says so, and
        // says nothing else.
        assert!(
            report
                .pack_problems
                .iter()
                .all(|p| from >= 4 && p.starts_with("Tuned one")),
            "from v{from}: {:?}",
            report.pack_problems
        );
        if from >= 1 {
            assert!(lib.get_voice("af_heart").unwrap().is_some(), "from v{from}");
            let p = lib.load_project("Old episode").unwrap().unwrap();
            assert_eq!(p.draft.script, "HOST: hi");
            assert!(p.draft.cast.is_empty(), "default cast JSON parses");
            let autosave = lib.autosave_for("Old episode").unwrap().unwrap();
            assert_eq!(autosave.script, "HOST: hi!");
            assert!(autosave.cast.is_empty(), "an older autosave has no cast");
        }
        if from >= 4 {
            // Rebuilding the voices table (v6) keeps the tuned voice's tuning row.
            let tunings: i64 = lib
                .conn
                .query_row(
                    "SELECT count(*) FROM voice_tunings WHERE voice_id = 50",
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(tunings, 1, "from v{from}: the tuning survived");
        }
        // the new tables work
        let key = crate::library::RenderKey::from_hex(&"ab".repeat(32)).unwrap();
        lib.cache_put(&key, &[0.5; 8], 24_000).unwrap();
        assert_eq!(lib.cache_get(&key).unwrap().unwrap().samples, [0.5; 8]);
    }
}

#[test]
fn a_newer_library_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    {
        let lib = Library::open(&path).unwrap();
        lib.conn
            .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .unwrap();
        lib.conn
            .execute_batch("CREATE TABLE from_the_future (x); PRAGMA wal_checkpoint(TRUNCATE);")
            .unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let err = Library::open(&path).unwrap_err();
    assert!(
        matches!(err, LibraryError::NewerSchema { found, known, .. }
            if found == SCHEMA_VERSION + 1 && known == SCHEMA_VERSION),
        "{err:?}"
    );
    assert!(err.to_string().contains("newer Banter"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), before, "file untouched");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(
        names.iter().all(|n| n.starts_with("library.sqlite")),
        "{names:?}"
    );
    assert!(
        !names
            .iter()
            .any(|n| n.contains("corrupt") || n.contains("foreign")),
        "{names:?}"
    );
}
