//! [`LibraryError`]: what can go wrong with the library, always naming the database file and
//! the operation, so a message in a log or on screen says where to look.

use std::path::PathBuf;
use std::time::Duration;

/// What can go wrong when opening or using the library.
#[derive(Debug, thiserror::Error)]
pub enum LibraryError {
    #[error(
        "cannot find the user's data directory for the voice library; \
         set BANTER_LIBRARY to the file the library should live in"
    )]
    NoDataDir,

    #[error("voice library {path}: {op}: {source}")]
    Sqlite {
        path: PathBuf,
        op: &'static str,
        #[source]
        source: rusqlite::Error,
    },

    #[error(
        "voice library {path} is busy: another Banter process (the studio or the API server) \
         kept it locked for more than {waited:?} while trying to {op}. Try again; if it \
         persists, look for a stuck `banter` process"
    )]
    Busy {
        path: PathBuf,
        op: &'static str,
        waited: Duration,
    },

    #[error(
        "voice library {path} has schema version {found}, newer than this Banter knows \
         ({known}): it was written by a newer Banter. It was left untouched; upgrade Banter, \
         or set BANTER_LIBRARY to use another file"
    )]
    NewerSchema {
        path: PathBuf,
        found: u32,
        known: u32,
    },

    #[error("{what} `{name}` already exists in the voice library {path}; choose another name")]
    DuplicateName {
        path: PathBuf,
        what: &'static str,
        name: String,
    },

    #[error("no {what} named `{name}` in the voice library {path}")]
    NotFound {
        path: PathBuf,
        what: &'static str,
        name: String,
    },

    #[error("`{name}` is a stock voice: it ships with the model and cannot be removed")]
    StockVoice { name: String },

    #[error("invalid {what} name {name:?}: {reason}")]
    InvalidName {
        what: &'static str,
        name: String,
        reason: &'static str,
    },

    #[error("{what} has {len} values, expected {expected}")]
    BadLength {
        what: &'static str,
        len: usize,
        expected: usize,
    },

    #[error("{what} contains non-finite values (NaN or infinity)")]
    NonFinite { what: &'static str },

    #[error("{what} path {path} is not valid UTF-8; the library stores paths as text")]
    NonUtf8Path { what: &'static str, path: PathBuf },

    #[error("{what} is not valid JSON: {source}")]
    Json {
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },

    #[error("voice library {path}: stored {what} is malformed: {reason}")]
    Malformed {
        path: PathBuf,
        what: &'static str,
        reason: String,
    },

    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl LibraryError {
    /// Whether this is the lock-timeout error (worth a retry later, not a bug).
    #[must_use]
    pub fn is_busy(&self) -> bool {
        matches!(self, LibraryError::Busy { .. })
    }
}

/// Whether `SQLite` said the database is locked by another connection.
pub(crate) fn is_busy_code(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// Whether `SQLite` rejected a row for a UNIQUE (or primary key) constraint.
pub(crate) fn is_unique_violation(e: &rusqlite::Error) -> bool {
    match e {
        rusqlite::Error::SqliteFailure(f, _) => {
            f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                || f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
        }
        _ => false,
    }
}
