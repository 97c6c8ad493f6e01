//! Tests: a writer killed with SIGKILL in the middle of its writes leaves a sound file with
//! every commit it reported and no half of any transaction.
//!
//! The parent re-runs this test binary as a child, selecting the ignored
//! `child_writes_until_killed` test with [`CHILD_ENV`] naming a directory. The child commits
//! batches in a loop and appends each committed batch's number to a side file; the parent
//! kills it after about half a second, then reopens the library.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rusqlite::params;

use crate::library::{Library, LibraryError};

const CHILD_ENV: &str = "BANTER_LIBRARY_CRASH_CHILD";
const ROWS_PER_BATCH: i64 = 10;
const LOG: &str = "committed.log";

/// One transaction: `ROWS_PER_BATCH` projects and a 200 KB cache entry.
fn commit_batch(lib: &Library, round: u32, batch: i64) -> Result<(), LibraryError> {
    let audio = vec![0u8; 200 * 1024];
    lib.write("crash test batch", |tx| {
        let err = lib.sql_err("crash test batch");
        for row in 0..ROWS_PER_BATCH {
            tx.execute(
                "INSERT INTO projects (name, script, script_format, created_at, updated_at)
                 VALUES (?1, ?2, 'plain', 0, 0)",
                params![format!("r{round}-b{batch}-{row}"), "x".repeat(500)],
            )
            .map_err(&err)?;
        }
        let id: i64 = tx
            .query_row(
                "INSERT INTO render_cache
                 (key, sample_rate, sample_count, size_bytes, created_at, last_used, use_seq)
                 VALUES (?1, 24000, 51200, 204800, 0, 0, ?2) RETURNING id",
                params![format!("r{round}-b{batch}"), batch],
                |r| r.get(0),
            )
            .map_err(&err)?;
        tx.execute(
            "INSERT INTO render_audio (entry_id, samples) VALUES (?1, ?2)",
            params![id, audio],
        )
        .map_err(&err)?;
        Ok(())
    })
}

/// The child: commits batches until killed. Does nothing unless [`CHILD_ENV`] is set.
#[test]
#[ignore = "run by crash_mid_write_loses_no_reported_commit as a child process"]
fn child_writes_until_killed() {
    let Some(dir) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let dir = Path::new(&dir);
    let round: u32 = std::env::var("BANTER_LIBRARY_CRASH_ROUND")
        .unwrap()
        .parse()
        .unwrap();
    let lib = Library::open(dir.join("library.sqlite")).unwrap();
    let mut log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(format!("r{round}-{LOG}")))
        .unwrap();
    for batch in 0..1_000_000 {
        commit_batch(&lib, round, batch).unwrap();
        // after the commit: a number in this file is a promise the rows are there
        writeln!(log, "{batch}").unwrap();
    }
}

/// Batches the child reported, from complete lines only (the kill may cut the last one).
fn reported(dir: &Path, round: u32) -> Vec<i64> {
    let text = std::fs::read_to_string(dir.join(format!("r{round}-{LOG}"))).unwrap_or_default();
    let complete = text.rfind('\n').map_or("", |end| &text[..end]);
    complete.lines().map(|l| l.parse().unwrap()).collect()
}

#[test]
fn crash_mid_write_loses_no_reported_commit() {
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut total_batches = 0;
    for round in 0..3u32 {
        let mut child = Command::new(&exe)
            .args([
                "library::tests::crash::child_writes_until_killed",
                "--exact",
                "--ignored",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, dir.path())
            .env("BANTER_LIBRARY_CRASH_ROUND", round.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // wait for the first commit (start-up may be slow on a busy machine), then let it run
        let t = Instant::now();
        while reported(dir.path(), round).is_empty() && t.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(500));
        child.kill().unwrap(); // SIGKILL on Unix
        let status = child.wait().unwrap();
        assert!(
            !status.success(),
            "the child was killed, not finished: {status:?}"
        );

        let batches = reported(dir.path(), round);
        assert!(
            !batches.is_empty(),
            "round {round}: the child committed nothing"
        );
        assert_eq!(
            batches,
            (0..i64::try_from(batches.len()).unwrap()).collect::<Vec<_>>()
        );
        let lib = Library::open(dir.path().join("library.sqlite")).unwrap();
        assert!(lib.set_aside().is_none());
        let report = lib.check().unwrap();
        assert!(report.is_ok(), "round {round}: {report:?}");
        let prefix = format!("r{round}-%");
        let rows: i64 = lib
            .conn
            .query_row(
                "SELECT count(*) FROM projects WHERE name LIKE ?1",
                [&prefix],
                |r| r.get(0),
            )
            .unwrap();
        let entries: i64 = lib
            .conn
            .query_row(
                "SELECT count(*) FROM render_cache WHERE key LIKE ?1",
                [&prefix],
                |r| r.get(0),
            )
            .unwrap();
        let reported_n = i64::try_from(batches.len()).unwrap();
        // all reported batches are present; at most one more committed before its report
        assert!(
            entries == reported_n || entries == reported_n + 1,
            "{entries} vs {reported_n}"
        );
        assert_eq!(rows, entries * ROWS_PER_BATCH, "no half batch");
        for b in &batches {
            let n: i64 = lib
                .conn
                .query_row(
                    "SELECT count(*) FROM projects WHERE name LIKE ?1",
                    [format!("r{round}-b{b}-%")],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(n, ROWS_PER_BATCH, "round {round} batch {b}");
        }
        eprintln!(
            "crash round {round}: killed after {reported_n} reported commits, {entries} found, \
             integrity ok"
        );
        total_batches += reported_n;
    }
    assert!(total_batches >= 3);
}
