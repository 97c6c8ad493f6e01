//! `banter library check` and `banter library vacuum`: is the file sound, what is in it, and
//! giving back the space that deleted cache entries left behind.

use super::error::LibraryError;
use super::open::Library;

/// What [`Library::check`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckReport {
    pub schema_version: u32,
    /// `PRAGMA integrity_check`'s lines: exactly `["ok"]` when the file is sound.
    pub integrity: Vec<String>,
    /// `PRAGMA foreign_key_check` rows, as `table rowid -> parent`.
    pub foreign_key_violations: Vec<String>,
    pub voices: u64,
    pub stock_voices: u64,
    pub projects: u64,
    pub autosaves: u64,
    pub embeddings: u64,
    pub cache_entries: u64,
    pub cache_bytes: u64,
    /// Size of the database file plus its WAL.
    pub file_bytes: u64,
}

impl CheckReport {
    /// Whether the file passed both checks.
    #[must_use]
    pub fn is_ok(&self) -> bool {
        self.integrity == ["ok"] && self.foreign_key_violations.is_empty()
    }
}

/// What [`Library::vacuum`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VacuumReport {
    pub bytes_before: u64,
    pub bytes_after: u64,
}

impl Library {
    /// Runs `SQLite`'s full integrity and foreign key checks and counts what is stored. Reads
    /// every page: seconds for a large cache.
    pub fn check(&self) -> Result<CheckReport, LibraryError> {
        let op = "check the library";
        let err = self.sql_err(op);
        let integrity = {
            let mut stmt = self.conn.prepare("PRAGMA integrity_check").map_err(&err)?;
            let rows = stmt.query_map([], |r| r.get(0)).map_err(&err)?;
            rows.collect::<Result<Vec<String>, _>>().map_err(&err)?
        };
        let foreign_key_violations = {
            let mut stmt = self
                .conn
                .prepare("PRAGMA foreign_key_check")
                .map_err(&err)?;
            let rows = stmt
                .query_map([], |r| {
                    let table: String = r.get(0)?;
                    let rowid: Option<i64> = r.get(1)?;
                    let parent: String = r.get(2)?;
                    Ok(format!("{table} {} -> {parent}", rowid.unwrap_or_default()))
                })
                .map_err(&err)?;
            rows.collect::<Result<Vec<_>, _>>().map_err(&err)?
        };
        let count = |sql: &str| -> Result<u64, LibraryError> {
            let n: i64 = self.conn.query_row(sql, [], |r| r.get(0)).map_err(&err)?;
            Ok(u64::try_from(n).unwrap_or(0))
        };
        Ok(CheckReport {
            schema_version: self.schema_version()?,
            integrity,
            foreign_key_violations,
            voices: count("SELECT count(*) FROM voices")?,
            stock_voices: count("SELECT count(*) FROM voices WHERE kind = 'stock'")?,
            projects: count("SELECT count(*) FROM projects")?,
            autosaves: count("SELECT count(*) FROM autosaves")?,
            embeddings: count("SELECT count(*) FROM speaker_embeddings")?,
            cache_entries: count("SELECT count(*) FROM render_cache")?,
            cache_bytes: count("SELECT coalesce(sum(size_bytes), 0) FROM render_cache")?,
            file_bytes: self.file_bytes(),
        })
    }

    /// Rebuilds the file without free pages (after clearing or shrinking the cache). Needs
    /// as much free disk as the library's size, and waits for other writers.
    pub fn vacuum(&self) -> Result<VacuumReport, LibraryError> {
        let op = "vacuum the library";
        let bytes_before = self.file_bytes();
        self.conn
            .execute_batch("VACUUM")
            .map_err(self.sql_err(op))?;
        // Fold the WAL back so the file size reflects the result.
        self.conn
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
            .map_err(self.sql_err(op))?;
        Ok(VacuumReport {
            bytes_before,
            bytes_after: self.file_bytes(),
        })
    }

    fn file_bytes(&self) -> u64 {
        let mut wal = self.path.as_os_str().to_owned();
        wal.push("-wal");
        [self.path.as_os_str(), wal.as_os_str()]
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
            .sum()
    }
}
