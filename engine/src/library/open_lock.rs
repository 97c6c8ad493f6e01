//! One opener at a time: an advisory lock on `library.sqlite.open-lock`, held while a process
//! looks at the file, creates it, migrates it or sets it aside.
//!
//! Why: the checks that decide a file is unusable read it before and outside `SQLite`'s own
//! locking (see [`super::aside::precheck`]). While another process is creating the library,
//! the file can briefly be empty, half a header, or tables without our `application_id`; a
//! second opener that looked at that moment would set a live library aside and the first
//! opener's writes would go to the moved file. Every opening step happens under this lock,
//! so a second opener only ever sees a library that is finished being made. Once open,
//! connections rely on `SQLite`'s locks alone; the lock file is never removed (removing it
//! would let two openers lock two different files).

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::aside::with_suffix;
use super::error::LibraryError;

/// Held while the library is being opened; dropping it lets the next opener in.
#[derive(Debug)]
pub(crate) struct OpenLock {
    _file: File,
}

impl OpenLock {
    /// Takes the lock beside `path`, waiting up to `timeout` for another opener to finish.
    pub(crate) fn acquire(path: &Path, timeout: Duration) -> Result<Self, LibraryError> {
        let lock_path = lock_path(path);
        let in_context = |e: std::io::Error| {
            std::io::Error::new(e.kind(), format!("{}: {e}", lock_path.display()))
        };
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(in_context)?;
        let start = Instant::now();
        let mut pause = Duration::from_millis(1);
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Self { _file: file }),
                Err(TryLockError::WouldBlock) if start.elapsed() < timeout => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(20));
                }
                Err(TryLockError::WouldBlock) => {
                    return Err(LibraryError::Busy {
                        path: path.to_path_buf(),
                        op: "open (another program is opening it)",
                        waited: start.elapsed(),
                    })
                }
                Err(TryLockError::Error(e)) => return Err(in_context(e).into()),
            }
        }
    }
}

/// `library.sqlite.open-lock` beside the library.
pub(crate) fn lock_path(path: &Path) -> PathBuf {
    with_suffix(path, ".open-lock")
}
