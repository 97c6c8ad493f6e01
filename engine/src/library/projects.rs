//! Projects (a script, its cast and render settings) and one autosave slot per project for
//! crash recovery. A save is an upsert by name; saving clears the autosave, whose text is then
//! in the project. Autosaves are keyed by project name rather than id, so a project that was
//! never saved can be recovered too.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::SystemTime;

use rusqlite::{params, OptionalExtension, Row};

use super::clock;
use super::error::LibraryError;
use super::open::Library;
use super::voices::clean_name;

/// A project as the studio saves it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectDraft {
    pub name: String,
    pub script: String,
    /// The script's format (`markdown`, `json`, ...), as the script parsers name it.
    pub script_format: String,
    /// Speaker name to voice name.
    pub cast: BTreeMap<String, String>,
    /// Render settings (speed, output format, ...), owned by the studio.
    pub settings: serde_json::Value,
    /// Where the last render was written.
    pub render_path: Option<PathBuf>,
}

/// A saved project.
#[derive(Debug, Clone, PartialEq)]
pub struct Project {
    pub id: i64,
    pub draft: ProjectDraft,
    pub created_at: SystemTime,
    pub updated_at: SystemTime,
}

/// Unsaved work kept for crash recovery: the script's text and the cast choices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Autosave {
    pub project_name: String,
    pub script: String,
    /// Speaker name to `voice@speed`, as [`ProjectDraft::cast`].
    pub cast: BTreeMap<String, String>,
    pub saved_at: SystemTime,
}

const PROJECT_COLUMNS: &str = "id, name, script, script_format, cast_json, settings_json, \
                               render_path, created_at, updated_at";

impl Library {
    /// Saves `draft` under its name, creating or replacing; clears its autosave. Returns the
    /// project's id (stable across saves).
    pub fn save_project(&self, draft: &ProjectDraft) -> Result<i64, LibraryError> {
        let op = "save a project";
        let name = clean_name("project", &draft.name)?;
        let cast = serde_json::to_string(&draft.cast).map_err(|source| LibraryError::Json {
            what: "project cast",
            source,
        })?;
        let settings = draft.settings.to_string();
        let render_path = draft
            .render_path
            .as_ref()
            .map(|p| {
                p.to_str().ok_or_else(|| LibraryError::NonUtf8Path {
                    what: "render",
                    path: p.clone(),
                })
            })
            .transpose()?;
        self.write_durable(op, |tx| {
            let id = tx
                .query_row(
                    "INSERT INTO projects (name, script, script_format, cast_json, settings_json,
                                           render_path, created_at, updated_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)
                     ON CONFLICT (name) DO UPDATE SET
                         script = excluded.script, script_format = excluded.script_format,
                         cast_json = excluded.cast_json, settings_json = excluded.settings_json,
                         render_path = excluded.render_path, updated_at = excluded.updated_at
                     RETURNING id",
                    params![
                        name,
                        draft.script,
                        draft.script_format,
                        cast,
                        settings,
                        render_path,
                        clock::now_ms()
                    ],
                    |r| r.get(0),
                )
                .map_err(self.sql_err(op))?;
            tx.execute("DELETE FROM autosaves WHERE project_name = ?1", [&name])
                .map_err(self.sql_err(op))?;
            Ok(id)
        })
    }

    /// The project called `name`, if any.
    pub fn load_project(&self, name: &str) -> Result<Option<Project>, LibraryError> {
        let op = "load a project";
        self.conn
            .prepare_cached(&format!(
                "SELECT {PROJECT_COLUMNS} FROM projects WHERE name = ?1"
            ))
            .and_then(|mut s| {
                s.query_row([name.trim()], |r| Ok(self.project_from_row(r)))
                    .optional()
            })
            .map_err(self.sql_err(op))?
            .transpose()
    }

    /// Every project, most recently saved first.
    pub fn list_projects(&self) -> Result<Vec<Project>, LibraryError> {
        let op = "list the projects";
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {PROJECT_COLUMNS} FROM projects ORDER BY updated_at DESC, id DESC"
            ))
            .map_err(self.sql_err(op))?;
        let rows = stmt
            .query_map([], |r| Ok(self.project_from_row(r)))
            .map_err(self.sql_err(op))?;
        let mut out = Vec::new();
        for row in rows {
            out.push(row.map_err(self.sql_err(op))??);
        }
        Ok(out)
    }

    /// Deletes a project and its autosave; [`LibraryError::NotFound`] if there is none.
    pub fn delete_project(&self, name: &str) -> Result<(), LibraryError> {
        let op = "delete a project";
        let name = name.trim();
        let deleted = self.write_durable(op, |tx| {
            tx.execute("DELETE FROM autosaves WHERE project_name = ?1", [name])
                .map_err(self.sql_err(op))?;
            tx.execute("DELETE FROM projects WHERE name = ?1", [name])
                .map_err(self.sql_err(op))
        })?;
        if deleted == 0 {
            return Err(self.not_found("project", name));
        }
        Ok(())
    }

    /// Keeps `script` and `cast` as the unsaved work of project `name` (saved or not),
    /// replacing the previous autosave.
    pub fn autosave(
        &self,
        name: &str,
        script: &str,
        cast: &BTreeMap<String, String>,
    ) -> Result<(), LibraryError> {
        let op = "autosave a project";
        let name = clean_name("project", name)?;
        let cast = serde_json::to_string(cast).map_err(|source| LibraryError::Json {
            what: "autosaved cast",
            source,
        })?;
        self.write(op, |tx| {
            tx.execute(
                "INSERT OR REPLACE INTO autosaves (project_name, script, cast_json, saved_at)
                 VALUES (?1, ?2, ?3, ?4)",
                params![name, script, cast, clock::now_ms()],
            )
            .map_err(self.sql_err(op))?;
            Ok(())
        })
    }

    /// The autosave of project `name`, if any.
    pub fn autosave_for(&self, name: &str) -> Result<Option<Autosave>, LibraryError> {
        self.conn
            .query_row(
                "SELECT project_name, script, cast_json, saved_at FROM autosaves \
                 WHERE project_name = ?1",
                [name.trim()],
                autosave_from_row,
            )
            .optional()
            .map_err(self.sql_err("read an autosave"))
    }

    /// Every autosave, newest first: what to offer for recovery after a crash.
    pub fn list_autosaves(&self) -> Result<Vec<Autosave>, LibraryError> {
        let op = "list the autosaves";
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT project_name, script, cast_json, saved_at FROM autosaves \
                 ORDER BY saved_at DESC",
            )
            .map_err(self.sql_err(op))?;
        let rows = stmt
            .query_map([], autosave_from_row)
            .map_err(self.sql_err(op))?;
        rows.collect::<Result<_, _>>().map_err(self.sql_err(op))
    }

    /// Drops the autosave of project `name` (recovered or discarded); no error if none.
    pub fn clear_autosave(&self, name: &str) -> Result<(), LibraryError> {
        let op = "clear an autosave";
        self.write(op, |tx| {
            tx.execute(
                "DELETE FROM autosaves WHERE project_name = ?1",
                [name.trim()],
            )
            .map_err(self.sql_err(op))?;
            Ok(())
        })
    }

    fn project_from_row(&self, r: &Row<'_>) -> Result<Project, LibraryError> {
        let get = |e| self.sql_err("read a project")(e);
        let cast: String = r.get(4).map_err(get)?;
        let settings: String = r.get(5).map_err(get)?;
        let json = |what, e: serde_json::Error| LibraryError::Malformed {
            path: self.path.clone(),
            what,
            reason: e.to_string(),
        };
        Ok(Project {
            id: r.get(0).map_err(get)?,
            draft: ProjectDraft {
                name: r.get(1).map_err(get)?,
                script: r.get(2).map_err(get)?,
                script_format: r.get(3).map_err(get)?,
                cast: serde_json::from_str(&cast).map_err(|e| json("project cast", e))?,
                settings: serde_json::from_str(&settings)
                    .map_err(|e| json("project settings", e))?,
                render_path: r
                    .get::<_, Option<String>>(6)
                    .map_err(get)?
                    .map(PathBuf::from),
            },
            created_at: clock::from_ms(r.get(7).map_err(get)?),
            updated_at: clock::from_ms(r.get(8).map_err(get)?),
        })
    }
}

fn autosave_from_row(r: &Row<'_>) -> rusqlite::Result<Autosave> {
    let cast: String = r.get(2)?;
    // A cast that does not read back is dropped, not the script with it: the text is what the
    // author cannot make again.
    let cast = serde_json::from_str(&cast).unwrap_or_else(|e| {
        tracing::warn!("an autosave's cast does not read ({e}); recovering its text only");
        BTreeMap::new()
    });
    Ok(Autosave {
        project_name: r.get(0)?,
        script: r.get(1)?,
        cast,
        saved_at: clock::from_ms(r.get(3)?),
    })
}
