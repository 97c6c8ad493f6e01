//! Tests: a corrupt or foreign file at the library path is set aside (never deleted) with
//! its side files, and a fresh library takes its place; an empty file is simply used.

use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::support::db_path;
use crate::library::{Library, SetAsideReason};

/// Files in `dir` whose name starts with `library.sqlite.` + `tag`.
fn set_aside_files(dir: &Path, tag: &str) -> Vec<PathBuf> {
    let prefix = format!("library.sqlite.{tag}-");
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix))
        })
        .collect();
    out.sort();
    out
}

/// Opens over `bytes` and checks the file was moved intact and a working library created.
fn assert_set_aside_unreadable(bytes: &[u8]) {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    std::fs::write(&path, bytes).unwrap();
    let lib = Library::open(&path).unwrap();
    let aside = lib.set_aside().expect("the file was set aside").clone();
    assert!(
        matches!(&aside.reason, SetAsideReason::Unreadable { detail } if !detail.is_empty()),
        "{aside:?}"
    );
    assert_eq!(aside.original, path);
    assert_eq!(
        set_aside_files(dir.path(), "corrupt"),
        std::slice::from_ref(&aside.moved_to)
    );
    let name = aside
        .moved_to
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    // library.sqlite.corrupt-20261122T101500
    let stamp = name.strip_prefix("library.sqlite.corrupt-").unwrap();
    assert_eq!(stamp.len(), 15, "{name}");
    assert_eq!(&stamp[8..9], "T", "{name}");
    assert!(
        stamp.chars().filter(char::is_ascii_digit).count() == 14,
        "{name}"
    );
    assert_eq!(
        std::fs::read(&aside.moved_to).unwrap(),
        bytes,
        "kept byte for byte"
    );
    // the fresh library works
    lib.autosave("after", "recovered", &std::collections::BTreeMap::new())
        .unwrap();
    assert!(lib.check().unwrap().is_ok());
    drop(lib);
    assert!(Library::open(&path).unwrap().set_aside().is_none());
}

#[test]
fn random_bytes_are_set_aside() {
    // xorshift: deterministic noise
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let bytes: Vec<u8> = (0..8192)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_le_bytes()[0]
        })
        .collect();
    assert_set_aside_unreadable(&bytes);
}

#[test]
fn a_text_file_is_set_aside() {
    assert_set_aside_unreadable(
        "name,voice\nHost,af_heart\nשלום,🎙️\n"
            .repeat(200)
            .as_bytes(),
    );
}

#[test]
fn a_damaged_sqlite_file_is_set_aside() {
    // a real library whose pages after the header are overwritten
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    {
        let lib = Library::open(&path).unwrap();
        lib.conn
            .execute_batch("PRAGMA journal_mode = DELETE")
            .unwrap();
    }
    let mut bytes = std::fs::read(&path).unwrap();
    for b in &mut bytes[100..] {
        *b = 0xA5;
    }
    assert_set_aside_unreadable(&bytes);
}

#[test]
fn an_empty_file_becomes_a_library() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    std::fs::write(&path, b"").unwrap();
    let lib = Library::open(&path).unwrap();
    assert!(lib.set_aside().is_none());
    assert!(lib.check().unwrap().is_ok());
}

#[test]
fn side_files_move_with_the_main_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    std::fs::write(&path, b"not a database at all, just some text").unwrap();
    let side = |p: &Path, s: &str| {
        let mut o = p.as_os_str().to_owned();
        o.push(s);
        PathBuf::from(o)
    };
    std::fs::write(side(&path, "-wal"), b"stale wal").unwrap();
    std::fs::write(side(&path, "-shm"), b"stale shm").unwrap();
    let lib = Library::open(&path).unwrap();
    let moved = lib.set_aside().unwrap().moved_to.clone();
    assert_eq!(std::fs::read(side(&moved, "-wal")).unwrap(), b"stale wal");
    assert_eq!(std::fs::read(side(&moved, "-shm")).unwrap(), b"stale shm");
    lib.autosave("x", "y", &std::collections::BTreeMap::new())
        .unwrap();
    assert!(lib.check().unwrap().is_ok());
}

#[test]
fn two_set_asides_in_one_second_get_distinct_names() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    let mut moved = Vec::new();
    for text in ["first", "second"] {
        std::fs::write(&path, text.repeat(100)).unwrap();
        let lib = Library::open(&path).unwrap();
        moved.push(lib.set_aside().unwrap().moved_to.clone());
    }
    assert_ne!(moved[0], moved[1]);
    assert_eq!(
        std::fs::read(&moved[0]).unwrap(),
        "first".repeat(100).as_bytes()
    );
    assert_eq!(
        std::fs::read(&moved[1]).unwrap(),
        "second".repeat(100).as_bytes()
    );
}

/// Another application's database, in WAL mode with data still in its WAL.
fn foreign_db(path: &Path, application_id: i32, user_version: u32) -> Connection {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(&format!(
        "PRAGMA journal_mode = WAL;
         PRAGMA application_id = {application_id};
         PRAGMA user_version = {user_version};
         CREATE TABLE bookmarks (url TEXT);
         INSERT INTO bookmarks VALUES ('https://example.invalid/keep-me');"
    ))
    .unwrap();
    conn
}

#[test]
fn another_apps_database_is_set_aside_with_its_data() {
    for (app_id, version) in [(0, 7), (0, 0), (0x1234_5678, 1), (0x1234_5678, 99)] {
        let dir = tempfile::tempdir().unwrap();
        let path = db_path(&dir);
        drop(foreign_db(&path, app_id, version));
        let lib = Library::open(&path).unwrap();
        let aside = lib.set_aside().unwrap().clone();
        assert_eq!(
            aside.reason,
            SetAsideReason::Foreign {
                application_id: app_id,
                user_version: version,
                tables: 1
            }
        );
        assert_eq!(
            set_aside_files(dir.path(), "foreign"),
            std::slice::from_ref(&aside.moved_to)
        );
        let old = Connection::open(&aside.moved_to).unwrap();
        let url: String = old
            .query_row("SELECT url FROM bookmarks", [], |r| r.get(0))
            .unwrap();
        assert_eq!(url, "https://example.invalid/keep-me");
        assert!(lib.check().unwrap().is_ok());
        assert!(lib.list_voices().unwrap().is_empty());
    }
}

#[test]
fn an_empty_file_beside_a_wal_is_set_aside_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    std::fs::write(&path, b"").unwrap();
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    std::fs::write(&wal, b"frames that SQLite would discard").unwrap();
    let lib = Library::open(&path).unwrap();
    let moved = lib.set_aside().unwrap().moved_to.clone();
    let mut moved_wal = moved.into_os_string();
    moved_wal.push("-wal");
    assert_eq!(
        std::fs::read(moved_wal).unwrap(),
        b"frames that SQLite would discard"
    );
}
