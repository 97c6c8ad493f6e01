//! Moving an unusable file out of the way, never deleting it: the checks made before `SQLite`
//! touches the file, and the rename to `library.sqlite.corrupt-20261122T101500` (or
//! `.foreign-…`) together with its `-wal`, `-shm` and `-journal`.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::clock;
use super::error::LibraryError;

/// Why a file was moved out of the way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetAsideReason {
    /// `SQLite` could not read it as a database (random bytes, a text file, a damaged header).
    Unreadable { detail: String },
    /// A `SQLite` database of some other application.
    Foreign {
        application_id: i32,
        user_version: u32,
        tables: u32,
    },
}

/// A file found at the library path that was renamed so a fresh library could be created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetAside {
    /// Where it was (the library path).
    pub original: PathBuf,
    /// Where it is now (its `-wal`/`-shm`, if any, sit beside it with the same suffixes).
    pub moved_to: PathBuf,
    pub reason: SetAsideReason,
}

/// Looks at the file before `SQLite` does: opening a file that is not a database still makes
/// `SQLite` delete a `-wal`/`-shm` beside it, and those must go aside intact. Also an empty
/// main file beside a non-empty WAL (`SQLite` would discard the WAL) counts as unreadable.
pub(crate) fn precheck(path: &Path) -> std::io::Result<Option<SetAsideReason>> {
    const MAGIC: &[u8; 16] = b"SQLite format 3\0";
    let mut file = match fs_err::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut head = Vec::with_capacity(100);
    std::io::Read::read_to_end(&mut std::io::Read::take(&mut file, 100), &mut head)?;
    if head.is_empty() {
        let wal_len = std::fs::metadata(with_suffix(path, "-wal")).map_or(0, |m| m.len());
        return Ok((wal_len > 0).then(|| SetAsideReason::Unreadable {
            detail: format!("empty database file beside a {wal_len}-byte write-ahead log"),
        }));
    }
    Ok(
        (head.len() < 100 || !head.starts_with(MAGIC)).then(|| SetAsideReason::Unreadable {
            detail: "not a SQLite database: the file does not start with the SQLite header"
                .to_owned(),
        }),
    )
}

/// Renames `path` (and its `-wal`, `-shm`, `-journal`) beside itself with a timestamped name
/// that does not exist yet; returns the new main path. Side files go first: a stale `-wal`
/// left beside a fresh database could be replayed into it.
pub(crate) fn set_aside_file(
    path: &Path,
    reason: &SetAsideReason,
) -> Result<PathBuf, LibraryError> {
    let tag = match reason {
        SetAsideReason::Unreadable { .. } => "corrupt",
        SetAsideReason::Foreign { .. } => "foreign",
    };
    let base = format!(
        "{}.{tag}-{}",
        path.display(),
        clock::compact_utc(SystemTime::now())
    );
    let mut target = PathBuf::from(&base);
    let mut n = 1;
    while target.exists() || with_suffix(&target, "-wal").exists() {
        n += 1;
        target = PathBuf::from(format!("{base}-{n}"));
    }
    for suffix in ["-wal", "-shm", "-journal"] {
        let side = with_suffix(path, suffix);
        if side.exists() {
            fs_err::rename(&side, with_suffix(&target, suffix))?;
        }
    }
    match fs_err::rename(path, &target) {
        Ok(()) => Ok(target),
        // Another process set it aside first; the fresh library is already on its way.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(target),
        Err(e) => Err(e.into()),
    }
}

pub(crate) fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}
