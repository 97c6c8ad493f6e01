//! Opening the library: where it lives, the connection's settings, how writers wait for each
//! other, and what happens when the file at the path is not a library we can use.
//!
//! Settings, and why:
//! - `journal_mode=WAL`: readers never block the writer nor the writer the readers, so the
//!   studio can list voices while the API server fills the render cache.
//! - `synchronous=NORMAL`, and `FULL` for the commits a user asked to keep (a saved project, a
//!   voice added, renamed or removed: `write_durable`). With WAL, `NORMAL` is
//!   already safe against a crash of Banter (SIGKILL included) and never corrupts the file; a
//!   power cut or OS crash may lose the last few commits. That is fine for what can be
//!   recomputed or is itself a safety net (render cache, cache recency, embeddings,
//!   autosaves) and saves an fsync on every cache hit; a `FULL` commit syncs the WAL, and
//!   with it every commit before it.
//! - `foreign_keys=ON`: the render cache's audio rows cascade with their metadata.
//! - Writers: every write transaction is `BEGIN IMMEDIATE`, taking the write lock up front, so
//!   a read-then-write transaction cannot fail half way with `SQLITE_BUSY_SNAPSHOT`. A busy
//!   handler sleeps with a short backoff until the busy timeout (5 s by default); the few busy
//!   cases `SQLite` reports without calling the handler (WAL recovery) are retried whole until
//!   the same deadline. Only then does [`LibraryError::Busy`] surface, with a clear message.
//!
//! A file at the path that `SQLite` cannot read ("not a database", "malformed") or that belongs
//! to another application (a different `application_id`, or tables without our id) is renamed
//! beside itself as `library.sqlite.corrupt-20261122T101500` (or `.foreign-…`), with its
//! `-wal`/`-shm`/`-journal`, a warning is logged, and a fresh library is created: the user's
//! file is never deleted. A library of ours with a newer schema version is refused and left
//! untouched: the user may have a newer Banter. Those verdicts are only made while holding
//! the open lock (`library.sqlite.open-lock`, see `open_lock.rs`), so a library that another
//! process is creating at that moment is never mistaken for an unusable one.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode, Transaction, TransactionBehavior};

use super::aside::{precheck, set_aside_file, SetAside, SetAsideReason};
use super::cache::{Counters, DEFAULT_CACHE_CAP};
use super::error::{is_busy_code, LibraryError};
use super::open_lock::OpenLock;
use super::schema::{self, MigrateOutcome, APPLICATION_ID, SCHEMA_VERSION};

/// Environment variable that overrides where the library lives (a file path).
pub const LIBRARY_ENV: &str = "BANTER_LIBRARY";
/// File name of the library inside `<data dir>/banter`.
pub const LIBRARY_FILE: &str = "library.sqlite";
/// How long a writer waits for another writer by default.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The user's library path: `$BANTER_LIBRARY` if set and not empty, else
/// `<data dir>/banter/library.sqlite`.
pub fn default_path() -> Result<PathBuf, LibraryError> {
    default_path_from(std::env::var_os(LIBRARY_ENV), dirs::data_dir())
}

fn default_path_from(
    env: Option<OsString>,
    data_dir: Option<PathBuf>,
) -> Result<PathBuf, LibraryError> {
    match env {
        Some(p) if !p.is_empty() => Ok(PathBuf::from(p)),
        _ => data_dir
            .map(|d| d.join("banter").join(LIBRARY_FILE))
            .ok_or(LibraryError::NoDataDir),
    }
}

/// Tunables for [`Library::open_with`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LibraryOptions {
    /// Render cache size cap in bytes of audio; least recently used entries go beyond it.
    pub cache_cap_bytes: u64,
    /// How long a write waits for another connection's write before [`LibraryError::Busy`].
    pub busy_timeout: Duration,
}

impl Default for LibraryOptions {
    fn default() -> Self {
        Self {
            cache_cap_bytes: DEFAULT_CACHE_CAP,
            busy_timeout: DEFAULT_BUSY_TIMEOUT,
        }
    }
}

/// The user's library: one `SQLite` connection with the settings above.
pub struct Library {
    pub(crate) conn: Connection,
    pub(crate) path: PathBuf,
    pub(crate) options: LibraryOptions,
    pub(crate) counters: Counters,
    set_aside: Option<SetAside>,
}

impl std::fmt::Debug for Library {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Library")
            .field("path", &self.path)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// Why one opening attempt failed.
enum Attempt {
    /// The file must be set aside and a fresh library created.
    Unusable(SetAsideReason),
    Fatal(LibraryError),
}

impl Library {
    /// Opens (creating if needed) the user's library at [`default_path`].
    pub fn open_default() -> Result<Self, LibraryError> {
        Self::open(default_path()?)
    }

    /// Opens (creating if needed) the library at `path` with default options.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, LibraryError> {
        Self::open_with(path, LibraryOptions::default())
    }

    /// Opens (creating if needed) the library at `path`, upgrading its schema; sets aside a
    /// corrupt or foreign file (see [`Library::set_aside`]); refuses a newer schema.
    pub fn open_with(
        path: impl AsRef<Path>,
        options: LibraryOptions,
    ) -> Result<Self, LibraryError> {
        let path = path.as_ref().to_path_buf();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs_err::create_dir_all(parent)?;
        }
        let _opening = OpenLock::acquire(&path, options.busy_timeout)?;
        match attempt(&path, &options) {
            Ok(conn) => Ok(Self::from_parts(conn, path, options, None)),
            Err(Attempt::Fatal(e)) => Err(e),
            Err(Attempt::Unusable(reason)) => {
                let moved_to = set_aside_file(&path, &reason)?;
                tracing::warn!(
                    path = %path.display(),
                    moved_to = %moved_to.display(),
                    ?reason,
                    "the voice library file was unusable; it was set aside and a fresh library created"
                );
                let aside = SetAside {
                    original: path.clone(),
                    moved_to,
                    reason,
                };
                match attempt(&path, &options) {
                    Ok(conn) => Ok(Self::from_parts(conn, path, options, Some(aside))),
                    Err(Attempt::Fatal(e)) => Err(e),
                    Err(Attempt::Unusable(reason)) => Err(LibraryError::Malformed {
                        path,
                        what: "fresh library",
                        reason: format!(
                            "still unusable after setting the old file aside: {reason:?}"
                        ),
                    }),
                }
            }
        }
    }

    fn from_parts(
        mut conn: Connection,
        path: PathBuf,
        options: LibraryOptions,
        set_aside: Option<SetAside>,
    ) -> Self {
        conn.set_transaction_behavior(TransactionBehavior::Immediate);
        Self {
            conn,
            path,
            options,
            counters: Counters::default(),
            set_aside,
        }
    }

    /// The database file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The unusable file this opening moved away, if any: show it to the user.
    #[must_use]
    pub fn set_aside(&self) -> Option<&SetAside> {
        self.set_aside.as_ref()
    }

    /// The options in force.
    #[must_use]
    pub fn options(&self) -> &LibraryOptions {
        &self.options
    }

    /// Changes the render cache cap; takes effect at the next `cache_put` (or `cache_evict`).
    pub fn set_cache_cap(&mut self, bytes: u64) {
        self.options.cache_cap_bytes = bytes;
    }

    /// The schema version of the open file.
    pub fn schema_version(&self) -> Result<u32, LibraryError> {
        schema::user_version(&self.conn).map_err(self.sql_err("read the schema version"))
    }

    /// Maps a `SQLite` error for operation `op`, turning a lock timeout into [`LibraryError::Busy`].
    pub(crate) fn sql_err(
        &self,
        op: &'static str,
    ) -> impl Fn(rusqlite::Error) -> LibraryError + '_ {
        move |source| sql_error(&self.path, op, self.options.busy_timeout, source)
    }

    /// Runs `f` in a `BEGIN IMMEDIATE` transaction and commits, retrying the whole
    /// transaction on a busy error until the busy timeout has passed.
    pub(crate) fn write<T>(
        &self,
        op: &'static str,
        mut f: impl FnMut(&Transaction<'_>) -> Result<T, LibraryError>,
    ) -> Result<T, LibraryError> {
        let start = Instant::now();
        let mut tries = 0u32;
        loop {
            let result = self
                .conn
                .unchecked_transaction()
                .map_err(self.sql_err(op))
                .and_then(|tx| {
                    let value = f(&tx)?;
                    tx.commit().map_err(self.sql_err(op))?;
                    Ok(value)
                });
            match result {
                Err(LibraryError::Busy { .. }) if start.elapsed() < self.options.busy_timeout => {
                    tries += 1;
                    std::thread::sleep(backoff(tries));
                }
                other => return other,
            }
        }
    }

    /// [`Library::write`] with `synchronous=FULL` for this commit: it is on disk when this
    /// returns, power cut or not.
    pub(crate) fn write_durable<T>(
        &self,
        op: &'static str,
        f: impl FnMut(&Transaction<'_>) -> Result<T, LibraryError>,
    ) -> Result<T, LibraryError> {
        self.conn
            .pragma_update(None, "synchronous", "FULL")
            .map_err(self.sql_err(op))?;
        let result = self.write(op, f);
        let restored = self
            .conn
            .pragma_update(None, "synchronous", "NORMAL")
            .map_err(self.sql_err(op));
        let value = result?;
        restored?;
        Ok(value)
    }
}

pub(crate) fn sql_error(
    path: &Path,
    op: &'static str,
    waited: Duration,
    source: rusqlite::Error,
) -> LibraryError {
    if is_busy_code(&source) {
        LibraryError::Busy {
            path: path.to_path_buf(),
            op,
            waited,
        }
    } else {
        LibraryError::Sqlite {
            path: path.to_path_buf(),
            op,
            source,
        }
    }
}

/// 0.1, 0.2, 0.4 … ms, capped at 5 ms. Write transactions here last well under a
/// millisecond, and a waiter that sleeps long loses every race for the lock to a writer
/// committing in a loop, so it polls often.
fn backoff(tries: u32) -> Duration {
    Duration::from_micros(100 << tries.min(6)).min(Duration::from_millis(5))
}

/// A busy handler that sleeps with [`backoff`] until `timeout` has passed since this wait began.
fn install_busy_handler(conn: &mut Connection, timeout: Duration) -> rusqlite::Result<()> {
    let mut began = Instant::now();
    conn.busy_handler(Some(move |count: i32| {
        if count == 0 {
            began = Instant::now();
        }
        if began.elapsed() >= timeout {
            return false;
        }
        std::thread::sleep(backoff(u32::try_from(count).unwrap_or(0)));
        true
    }))
}

/// Runs `f` again while it fails with a busy error, until `timeout` has passed.
fn retry_busy<T>(
    timeout: Duration,
    mut f: impl FnMut() -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    let start = Instant::now();
    let mut tries = 0;
    loop {
        match f() {
            Err(e) if is_busy_code(&e) && start.elapsed() < timeout => {
                tries += 1;
                std::thread::sleep(backoff(tries));
            }
            other => return other,
        }
    }
}

/// One try at opening `path`: connect, classify the file, set the pragmas, migrate.
fn attempt(path: &Path, options: &LibraryOptions) -> Result<Connection, Attempt> {
    let fatal = |op| move |e| Attempt::Fatal(sql_error(path, op, options.busy_timeout, e));
    if let Some(reason) = precheck(path).map_err(|e| Attempt::Fatal(e.into()))? {
        return Err(Attempt::Unusable(reason));
    }
    let mut conn = Connection::open(path).map_err(fatal("open"))?;
    install_busy_handler(&mut conn, options.busy_timeout).map_err(fatal("set the busy handler"))?;
    let wait = options.busy_timeout;
    retry_busy(wait, || classify(&conn, path))
        .map_err(|e| unusable_or(e, path, "read the file header", wait))??;
    // Switching to WAL needs an exclusive lock and fails at once (no busy handler) while a
    // second process creates the same library; so do the migrations' first steps.
    let mode: String = retry_busy(wait, || {
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
    })
    .map_err(|e| unusable_or(e, path, "switch to WAL", wait))?;
    if !mode.eq_ignore_ascii_case("wal") {
        tracing::warn!(path = %path.display(), mode, "the file system refused WAL mode; writers will block readers");
    }
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(fatal("set synchronous"))?;
    conn.pragma_update(None, "foreign_keys", "ON")
        .map_err(fatal("enable foreign keys"))?;
    match retry_busy(wait, || schema::migrate_to(&mut conn, SCHEMA_VERSION)) {
        Ok(MigrateOutcome::Done { from }) => {
            if from != SCHEMA_VERSION {
                tracing::info!(path = %path.display(), from, to = SCHEMA_VERSION, "voice library schema upgraded");
            }
            Ok(conn)
        }
        Ok(MigrateOutcome::Newer { found }) => Err(newer(path, found)),
        Err(e) => Err(unusable_or(e, path, "upgrade the schema", wait)),
    }
}

fn newer(path: &Path, found: u32) -> Attempt {
    Attempt::Fatal(LibraryError::NewerSchema {
        path: path.to_path_buf(),
        found,
        known: SCHEMA_VERSION,
    })
}

/// "Not a database" and "malformed" mean the file must go; anything else (permissions, disk
/// full, busy) is reported and the file left alone.
fn unusable_or(e: rusqlite::Error, path: &Path, op: &'static str, waited: Duration) -> Attempt {
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => {
            Attempt::Unusable(SetAsideReason::Unreadable {
                detail: e.to_string(),
            })
        }
        _ => Attempt::Fatal(sql_error(path, op, waited, e)),
    }
}

/// Decides from the header and schema whether the file is ours (any version we can use), new
/// (empty), newer, or foreign. Reads only, all three facts from one snapshot: read one by one,
/// a migration committed in between looked like tables without our id.
fn classify(conn: &Connection, path: &Path) -> rusqlite::Result<Result<(), Attempt>> {
    let snapshot = conn.unchecked_transaction()?;
    let application_id: i32 = snapshot.pragma_query_value(None, "application_id", |r| r.get(0))?;
    let user_version = schema::user_version(&snapshot)?;
    let tables: u32 = snapshot.query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))?;
    snapshot.finish()?;
    Ok(if application_id == APPLICATION_ID {
        if user_version > SCHEMA_VERSION {
            Err(newer(path, user_version))
        } else {
            Ok(())
        }
    } else if application_id == 0 && user_version == 0 && tables == 0 {
        Ok(())
    } else {
        Err(Attempt::Unusable(SetAsideReason::Foreign {
            application_id,
            user_version,
            tables,
        }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_path_prefers_the_env_var() {
        let p = default_path_from(Some("/x/lib.sqlite".into()), Some("/data".into())).unwrap();
        assert_eq!(p, PathBuf::from("/x/lib.sqlite"));
        let p = default_path_from(Some(OsString::new()), Some("/data".into())).unwrap();
        assert_eq!(p, PathBuf::from("/data/banter/library.sqlite"));
        assert!(matches!(
            default_path_from(None, None),
            Err(LibraryError::NoDataDir)
        ));
    }

    #[test]
    fn backoff_is_short_and_bounded() {
        assert_eq!(backoff(0), Duration::from_micros(100));
        assert_eq!(backoff(3), Duration::from_micros(800));
        assert_eq!(backoff(40), Duration::from_millis(5));
    }
}
