//! Tests: two connections writing at once never surface "database is locked", and every row
//! lands; a writer held up past the timeout gets the clear `Busy` error.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use super::support::db_path;
use crate::library::{Library, LibraryError, LibraryOptions, RenderKey, RenderKeyParts};

const ROWS_PER_WRITER: u32 = 300;

/// How often consecutive projects (in commit order) come from different writers: how evenly
/// the two took turns.
fn writer_switches(lib: &Library) -> usize {
    let names: Vec<String> = lib
        .conn
        .prepare("SELECT name FROM projects ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let writer = |n: &String| n.split('-').next().unwrap_or_default().to_owned();
    names
        .windows(2)
        .filter(|w| writer(&w[0]) != writer(&w[1]))
        .count()
}

/// Two threads meet here; one whose partner failed before arriving goes on after ten seconds
/// rather than hanging the test (the partner's error fails it).
#[derive(Default)]
struct Rendezvous(AtomicUsize);

impl Rendezvous {
    fn arrive(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
        let start = Instant::now();
        while self.0.load(Ordering::SeqCst) < 2 && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// One writer's mix: an autosave, a cache entry, and every tenth row a project save (the
/// durable, fsynced kind of commit). After its first row it waits at `together`, if given,
/// so that the rest of the run overlaps the other writer's however the threads are scheduled.
/// Returns when it started and finished.
fn write_rows(
    lib: &Library,
    writer: &str,
    together: Option<&Rendezvous>,
) -> Result<(Instant, Instant), LibraryError> {
    let start = Instant::now();
    for i in 0..ROWS_PER_WRITER {
        if i == 1 {
            together.map(Rendezvous::arrive);
        }
        let name = format!("{writer}-{i}");
        lib.autosave(
            &name,
            &format!("text of {name}"),
            &std::collections::BTreeMap::new(),
        )?;
        let key = RenderKey::new(&RenderKeyParts {
            model_id: writer,
            model_version: "1",
            phoneme_ids: &[i],
            voice_table_hash: "",
            speed: 1.0,
            sample_rate: 24_000,
            engine_version: "test",
        });
        lib.cache_put(&key, &[0.25; 2400], 24_000)?;
        if i % 10 == 0 {
            lib.save_project(&crate::library::ProjectDraft {
                name: format!("{name} project"),
                script: "HOST: hi".into(),
                script_format: "markdown".into(),
                cast: std::collections::BTreeMap::new(),
                settings: serde_json::Value::Null,
                render_path: None,
            })?;
        }
    }
    Ok((start, Instant::now()))
}

#[test]
fn two_writers_at_once_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    // both open a not-yet-existing library at the same moment: the creation races too
    let barrier = Barrier::new(3);
    // on a loaded two-core machine one writer could otherwise finish before the other is
    // scheduled at all, and the test would prove nothing about writing at once
    let after_first_row = Rendezvous::default();
    let start = std::thread::scope(|s| {
        let writers: Vec<_> = ["a", "b"]
            .into_iter()
            .map(|w| {
                let (path, barrier, after_first_row) = (&path, &barrier, &after_first_row);
                std::thread::Builder::new()
                    .name(format!("library-writer-{w}"))
                    .spawn_scoped(s, move || {
                        barrier.wait();
                        let lib = Library::open(path)?;
                        write_rows(&lib, w, Some(after_first_row))
                    })
                    .unwrap()
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        let spans: Vec<_> = writers
            .into_iter()
            .map(|w| w.join().unwrap().unwrap())
            .collect();
        // both were writing (or waiting to) at the same time
        assert!(
            spans[0].0 < spans[1].1 && spans[1].0 < spans[0].1,
            "{spans:?}"
        );
        start
    });
    let elapsed = start.elapsed();
    let lib = Library::open(&path).unwrap();
    let report = lib.check().unwrap();
    assert!(report.is_ok(), "{report:?}");
    assert_eq!(report.autosaves, 2 * u64::from(ROWS_PER_WRITER));
    assert_eq!(report.cache_entries, 2 * u64::from(ROWS_PER_WRITER));
    assert_eq!(report.projects, 2 * u64::from(ROWS_PER_WRITER / 10));
    for w in ["a", "b"] {
        for i in 0..ROWS_PER_WRITER {
            let name = format!("{w}-{i}");
            assert_eq!(
                lib.autosave_for(&name).unwrap().unwrap().script,
                format!("text of {name}")
            );
        }
    }
    // a measure of fairness, not of correctness: a writer may wait out the other's whole run
    let switches = writer_switches(&lib);
    let commits = 2 * (2 * ROWS_PER_WRITER + ROWS_PER_WRITER / 10);
    eprintln!(
        "two writers: {commits} commits in {elapsed:.2?} ({:.0} commits/s), {switches} switches",
        f64::from(commits) / elapsed.as_secs_f64()
    );
}

#[test]
fn a_writer_held_up_past_the_timeout_gets_a_clear_busy_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    let holder = Library::open(&path).unwrap();
    let waiter = Library::open_with(
        &path,
        LibraryOptions {
            busy_timeout: Duration::from_millis(300),
            ..LibraryOptions::default()
        },
    )
    .unwrap();
    holder.conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    let t = Instant::now();
    let err = waiter
        .autosave("x", "y", &std::collections::BTreeMap::new())
        .unwrap_err();
    let waited = t.elapsed();
    assert!(err.is_busy(), "{err:?}");
    assert!(err.to_string().contains("is busy"), "{err}");
    assert!(err.to_string().contains("autosave a project"), "{err}");
    assert!(waited >= Duration::from_millis(300), "{waited:?}");
    assert!(waited < Duration::from_secs(3), "{waited:?}");
    // reads are not blocked by the writer (WAL)
    assert!(waiter.list_projects().unwrap().is_empty());
    holder.conn.execute_batch("COMMIT").unwrap();
    // and once the lock is gone the write succeeds
    waiter
        .autosave("x", "y", &std::collections::BTreeMap::new())
        .unwrap();
}

#[test]
fn a_short_lock_is_waited_out() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    let holder = Library::open(&path).unwrap();
    let waiter = Library::open(&path).unwrap();
    holder.conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    std::thread::scope(|s| {
        let h = std::thread::Builder::new()
            .name("library-lock-release".into())
            .spawn_scoped(s, move || {
                std::thread::sleep(Duration::from_millis(400));
                holder.conn.execute_batch("COMMIT").unwrap();
            })
            .unwrap();
        let t = Instant::now();
        waiter
            .autosave("x", "y", &std::collections::BTreeMap::new())
            .unwrap();
        assert!(t.elapsed() >= Duration::from_millis(300));
        h.join().unwrap();
    });
}

const WRITER_CHILD_ENV: &str = "BANTER_LIBRARY_WRITER_CHILD";

/// The other process of `two_processes_writing_at_once_lose_nothing`: waits for the go file,
/// then writes its rows. Does nothing unless [`WRITER_CHILD_ENV`] names the library.
#[test]
#[ignore = "run by two_processes_writing_at_once_lose_nothing as a child process"]
fn child_writes_rows() {
    let Some(path) = std::env::var_os(WRITER_CHILD_ENV) else {
        return;
    };
    let path = std::path::PathBuf::from(path);
    let lib = Library::open(&path).unwrap();
    let go = path.with_extension("go");
    let t = Instant::now();
    while !go.exists() && t.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(1));
    }
    write_rows(&lib, "child", None).unwrap();
}

#[test]
fn two_processes_writing_at_once_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    let lib = Library::open(&path).unwrap();
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "library::tests::concurrency::child_writes_rows",
            "--exact",
            "--ignored",
            "--test-threads=1",
        ])
        .env(WRITER_CHILD_ENV, &path)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // give the child time to start and open, then release both at once
    std::thread::sleep(Duration::from_millis(300));
    std::fs::write(path.with_extension("go"), b"").unwrap();
    let start = Instant::now();
    write_rows(&lib, "parent", None).unwrap();
    let out = child.wait_with_output().unwrap();
    let elapsed = start.elapsed();
    assert!(
        out.status.success(),
        "child failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = lib.check().unwrap();
    assert!(report.is_ok(), "{report:?}");
    assert_eq!(report.autosaves, 2 * u64::from(ROWS_PER_WRITER));
    assert_eq!(report.cache_entries, 2 * u64::from(ROWS_PER_WRITER));
    assert_eq!(report.projects, 2 * u64::from(ROWS_PER_WRITER / 10));
    for w in ["parent", "child"] {
        for i in 0..ROWS_PER_WRITER {
            assert!(lib.autosave_for(&format!("{w}-{i}")).unwrap().is_some());
        }
    }
    let switches = writer_switches(&lib);
    let commits = 2 * (2 * ROWS_PER_WRITER + ROWS_PER_WRITER / 10);
    eprintln!(
        "two processes: {commits} commits in {elapsed:.2?} ({:.0} commits/s), {switches} \
         switches",
        f64::from(commits) / elapsed.as_secs_f64()
    );
}

#[test]
fn an_opener_waits_while_another_is_making_the_library() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(&dir);
    // another opener is half way through creating it: the file exists and is still empty
    let making = crate::library::open_lock::OpenLock::acquire(&path, Duration::ZERO).unwrap();
    std::fs::write(&path, b"").unwrap();
    std::fs::write(crate::library::aside::with_suffix(&path, "-wal"), [1u8; 32]).unwrap();
    let options = LibraryOptions {
        busy_timeout: Duration::from_millis(200),
        ..LibraryOptions::default()
    };
    let err = Library::open_with(&path, options.clone()).unwrap_err();
    assert!(err.is_busy(), "{err:?}");
    assert!(
        err.to_string().contains("another program is opening it"),
        "{err}"
    );
    // nothing was set aside while it waited
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.contains(".corrupt-")), "{names:?}");
    drop(making);
    let lib = Library::open_with(&path, options).unwrap();
    assert!(
        lib.set_aside().is_some(),
        "once the lock is free the crash state is handled"
    );
}
