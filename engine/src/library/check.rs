//! `banter library check` and `banter library vacuum`: is the file sound, what is in it, and
//! giving back the space that deleted cache entries left behind.

use super::error::LibraryError;
use super::open::Library;

/// What [`Library::check`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckReport {
    pub schema_version: u32,
    /// `PRAGMA integrity_check`'s lines, then any damage met while counting: exactly
    /// `["ok"]` when the file is sound.
    pub integrity: Vec<String>,
    /// `PRAGMA foreign_key_check` rows, as `table rowid -> parent`.
    pub foreign_key_violations: Vec<String>,
    /// Tuned voices whose pack does not match what was saved, as `voice: problem`.
    pub pack_problems: Vec<String>,
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
        self.integrity == ["ok"]
            && self.foreign_key_violations.is_empty()
            && self.pack_problems.is_empty()
    }
}

/// What [`Library::vacuum`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VacuumReport {
    pub bytes_before: u64,
    pub bytes_after: u64,
}

impl Library {
    /// Runs `SQLite`'s full integrity and foreign key checks and counts what is stored (a
    /// count that meets damage reads 0, and the damage is listed). Reads every page: seconds
    /// for a large cache.
    pub fn check(&self) -> Result<CheckReport, LibraryError> {
        let err = self.sql_err("check the library");
        let mut integrity = match self.lines("PRAGMA integrity_check", |r| r.get(0)) {
            Ok(lines) => lines,
            Err(e) => vec![damage(e, "integrity check").map_err(&err)?],
        };
        let mut foreign_key_violations = Vec::new();
        match self.lines("PRAGMA foreign_key_check", |r| {
            let table: String = r.get(0)?;
            let rowid: Option<i64> = r.get(1)?;
            let parent: String = r.get(2)?;
            Ok(format!("{table} {} -> {parent}", rowid.unwrap_or_default()))
        }) {
            Ok(v) => foreign_key_violations = v,
            Err(e) => integrity.push(damage(e, "foreign key check").map_err(&err)?),
        }
        let queries = [
            "SELECT count(*) FROM voices",
            "SELECT count(*) FROM voices WHERE kind = 'stock'",
            "SELECT count(*) FROM projects",
            "SELECT count(*) FROM autosaves",
            "SELECT count(*) FROM speaker_embeddings",
            "SELECT count(*) FROM render_cache",
            "SELECT coalesce(sum(size_bytes), 0) FROM render_cache",
        ];
        let mut counts = [0u64; 7];
        for (sql, n) in queries.iter().zip(&mut counts) {
            match self.conn.query_row(sql, [], |r| r.get::<_, i64>(0)) {
                Ok(v) => *n = u64::try_from(v).unwrap_or(0),
                Err(e) => integrity.push(damage(e, sql).map_err(&err)?),
            }
        }
        let pack_problems = match self.check_tuned_packs() {
            Ok(p) => p
                .into_iter()
                .map(|p| format!("{}: {}", p.voice, p.problem))
                .collect(),
            Err(e) => vec![format!("tuned voices could not be checked: {e}")],
        };
        let [voices, stock_voices, projects, autosaves, embeddings, cache_entries, cache_bytes] =
            counts;
        Ok(CheckReport {
            schema_version: self.schema_version()?,
            integrity,
            foreign_key_violations,
            pack_problems,
            voices,
            stock_voices,
            projects,
            autosaves,
            embeddings,
            cache_entries,
            cache_bytes,
            file_bytes: self.file_bytes(),
        })
    }

    fn lines<T>(
        &self,
        sql: &str,
        f: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<Vec<T>> {
        let mut stmt = self.conn.prepare(sql)?;
        let rows = stmt.query_map([], f)?;
        rows.collect()
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

/// Damage met while checking is part of the report, not an error of the check: a corruption
/// error becomes a report line, any other error stays an error.
fn damage(e: rusqlite::Error, what: &str) -> Result<String, rusqlite::Error> {
    if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseCorrupt) {
        Ok(format!("{what}: {e}"))
    } else {
        Err(e)
    }
}
