//! Saved voices: the stock voices (seeded from the model store's list; their tables stay in
//! the store), blends of them, and voices matched to a speaker's clip. Blends and matched
//! voices carry their 510×256 style table as a little-endian f32 BLOB, so a saved voice
//! renders the same even if the recipe's ingredients change.

use std::time::SystemTime;

use rusqlite::{params, OptionalExtension, Row};

use super::clock;
use super::error::{is_unique_violation, LibraryError};
use super::open::Library;
use crate::phonemes::Language;
use crate::voice::{Gender, StockVoice, VoiceTable};

/// Longest name accepted, in characters.
pub(crate) const MAX_NAME_CHARS: usize = 200;

/// Where a voice came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VoiceKind {
    /// Ships with the model; its table lives in the model store.
    Stock,
    /// A weighted mix of other voices (`recipe` says which).
    Blend,
    /// Found to match a speaker's clip (speaker embeddings).
    Matched,
    /// Searched beyond the stock blends toward a speaker's clip (`voice_tunings` says how).
    Tuned,
    /// A Piper (VITS) voice from the user's own model file (`piper_voices` says which).
    Piper,
}

impl VoiceKind {
    /// The kind as stored and shown: `stock`, `blend`, `matched` or `tuned`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            VoiceKind::Stock => "stock",
            VoiceKind::Blend => "blend",
            VoiceKind::Matched => "matched",
            VoiceKind::Tuned => "tuned",
            VoiceKind::Piper => "piper",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "stock" => VoiceKind::Stock,
            "blend" => VoiceKind::Blend,
            "matched" => VoiceKind::Matched,
            "tuned" => VoiceKind::Tuned,
            "piper" => VoiceKind::Piper,
            _ => return None,
        })
    }
}

/// A voice to add.
#[derive(Debug, Clone)]
pub struct NewVoice {
    pub name: String,
    pub kind: VoiceKind,
    pub language: Option<Language>,
    pub gender: Option<Gender>,
    /// How it was made, e.g. `af_bella:0.7+af_sky:0.3`.
    pub recipe: Option<String>,
    /// The style table; `None` for stock voices (the model store has theirs).
    pub style: Option<VoiceTable>,
    pub notes: String,
}

/// A saved voice, without its style table (read that with [`Library::voice_style`]: it is
/// 522 KB and only rendering needs it).
#[derive(Debug, Clone, PartialEq)]
pub struct Voice {
    pub id: i64,
    pub name: String,
    pub kind: VoiceKind,
    pub language: Option<Language>,
    pub gender: Option<Gender>,
    pub recipe: Option<String>,
    pub has_style: bool,
    pub notes: String,
    pub created_at: SystemTime,
    pub updated_at: SystemTime,
}

const VOICE_COLUMNS: &str =
    "id, name, kind, language, gender, recipe, style IS NOT NULL, notes, created_at, updated_at";

/// Trims `name` and checks that it can be shown and typed: not empty, no control characters,
/// at most [`MAX_NAME_CHARS`]. Any script, emoji, RTL text and combining marks are fine.
pub(crate) fn clean_name(what: &'static str, name: &str) -> Result<String, LibraryError> {
    let trimmed = name.trim();
    let invalid = |reason| LibraryError::InvalidName {
        what,
        name: name.to_owned(),
        reason,
    };
    if trimmed.is_empty() {
        return Err(invalid("it is empty"));
    }
    if trimmed.chars().any(char::is_control) {
        return Err(invalid("it contains control characters"));
    }
    if trimmed.chars().count() > MAX_NAME_CHARS {
        return Err(invalid("it is longer than 200 characters"));
    }
    Ok(trimmed.to_owned())
}

fn gender_str(g: Gender) -> &'static str {
    match g {
        Gender::Female => "female",
        Gender::Male => "male",
    }
}

impl Library {
    /// Adds every stock voice not yet present; returns how many were added. Idempotent: run
    /// it at every start with the model store's list.
    pub fn seed_stock_voices(&self, stock: &[StockVoice]) -> Result<usize, LibraryError> {
        self.write("seed the stock voices", |tx| {
            let now = clock::now_ms();
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO voices (name, kind, language, gender, created_at, updated_at)
                     VALUES (?1, 'stock', ?2, ?3, ?4, ?4) ON CONFLICT (name) DO NOTHING",
                )
                .map_err(self.sql_err("seed the stock voices"))?;
            let mut added = 0;
            for v in stock {
                added += insert
                    .execute(params![
                        v.name,
                        v.language.espeak_code(),
                        gender_str(v.gender),
                        now
                    ])
                    .map_err(self.sql_err("seed the stock voices"))?;
            }
            Ok(added)
        })
    }

    /// Saves a new voice; [`LibraryError::DuplicateName`] if the name is taken.
    pub fn add_voice(&self, voice: &NewVoice) -> Result<Voice, LibraryError> {
        let name = clean_name("voice", &voice.name)?;
        let style = voice.style.as_ref().map(VoiceTable::to_bytes);
        let id = self.write_durable("add a voice", |tx| {
            let now = clock::now_ms();
            tx.execute(
                "INSERT INTO voices
                 (name, kind, language, gender, recipe, notes, created_at, updated_at, style)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8)",
                params![
                    name,
                    voice.kind.as_str(),
                    voice.language.map(Language::espeak_code),
                    voice.gender.map(gender_str),
                    voice.recipe,
                    voice.notes,
                    now,
                    style
                ],
            )
            .map_err(|e| self.duplicate_or(e, "voice", &name, "add a voice"))?;
            Ok(tx.last_insert_rowid())
        })?;
        self.voice_where("id = ?1", id)?
            .ok_or_else(|| self.not_found("voice", &name))
    }

    /// The voice called `name` (trimmed), if any.
    pub fn get_voice(&self, name: &str) -> Result<Option<Voice>, LibraryError> {
        self.voice_where("name = ?1", name.trim())
    }

    /// Every voice, stock first, then by name.
    pub fn list_voices(&self) -> Result<Vec<Voice>, LibraryError> {
        let op = "list the voices";
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {VOICE_COLUMNS} FROM voices ORDER BY kind <> 'stock', name"
            ))
            .map_err(self.sql_err(op))?;
        let rows = stmt
            .query_map([], |r| Ok(self.voice_from_row(r)))
            .map_err(self.sql_err(op))?;
        let mut out = Vec::new();
        for row in rows {
            out.push(row.map_err(self.sql_err(op))??);
        }
        Ok(out)
    }

    /// The style table of a saved voice; `None` if the voice has none (stock) or is unknown.
    pub fn voice_style(&self, name: &str) -> Result<Option<VoiceTable>, LibraryError> {
        let bytes: Option<Option<Vec<u8>>> = self
            .conn
            .query_row(
                "SELECT style FROM voices WHERE name = ?1",
                [name.trim()],
                |r| r.get(0),
            )
            .optional()
            .map_err(self.sql_err("read a voice's style table"))?;
        bytes
            .flatten()
            .map(|b| {
                VoiceTable::from_bytes(&b).map_err(|e| LibraryError::Malformed {
                    path: self.path.clone(),
                    what: "voice style table",
                    reason: format!("voice `{name}`: {e}"),
                })
            })
            .transpose()
    }

    /// Renames a saved voice. Errors if `from` is unknown, `to` is taken, or `from` is a stock
    /// voice (its name is how the engine finds its table in the model store).
    pub fn rename_voice(&self, from: &str, to: &str) -> Result<(), LibraryError> {
        let to = clean_name("voice", to)?;
        let from = from.trim();
        self.write_durable("rename a voice", |tx| {
            let kind = self.kind_of(tx, from)?;
            if kind == VoiceKind::Stock {
                return Err(LibraryError::StockVoice {
                    name: from.to_owned(),
                });
            }
            tx.execute(
                "UPDATE voices SET name = ?2, updated_at = ?3 WHERE name = ?1",
                params![from, to, clock::now_ms()],
            )
            .map_err(|e| self.duplicate_or(e, "voice", &to, "rename a voice"))?;
            Ok(())
        })
    }

    /// Replaces a voice's notes.
    pub fn set_voice_notes(&self, name: &str, notes: &str) -> Result<(), LibraryError> {
        let name = name.trim();
        let changed = self.write_durable("set a voice's notes", |tx| {
            tx.execute(
                "UPDATE voices SET notes = ?2, updated_at = ?3 WHERE name = ?1",
                params![name, notes, clock::now_ms()],
            )
            .map_err(self.sql_err("set a voice's notes"))
        })?;
        if changed == 0 {
            return Err(self.not_found("voice", name));
        }
        Ok(())
    }

    /// Removes a saved voice; stock voices cannot be removed. A tuned voice's tuning record
    /// and the cache entries made for it alone go with it, in the same transaction.
    pub fn remove_voice(&self, name: &str) -> Result<(), LibraryError> {
        let name = name.trim();
        self.write_durable("remove a voice", |tx| {
            if self.kind_of(tx, name)? == VoiceKind::Stock {
                return Err(LibraryError::StockVoice {
                    name: name.to_owned(),
                });
            }
            self.remove_tuning_embeddings(tx, name)?;
            tx.execute("DELETE FROM voices WHERE name = ?1", [name])
                .map_err(self.sql_err("remove a voice"))?;
            Ok(())
        })
    }

    fn kind_of(&self, tx: &rusqlite::Connection, name: &str) -> Result<VoiceKind, LibraryError> {
        let kind: Option<String> = tx
            .query_row("SELECT kind FROM voices WHERE name = ?1", [name], |r| {
                r.get(0)
            })
            .optional()
            .map_err(self.sql_err("look up a voice"))?;
        let kind = kind.ok_or_else(|| self.not_found("voice", name))?;
        VoiceKind::parse(&kind).ok_or_else(|| self.malformed("voice kind", &kind))
    }

    pub(crate) fn voice_where(
        &self,
        clause: &str,
        value: impl rusqlite::ToSql,
    ) -> Result<Option<Voice>, LibraryError> {
        let op = "read a voice";
        self.conn
            .prepare_cached(&format!(
                "SELECT {VOICE_COLUMNS} FROM voices WHERE {clause}"
            ))
            .and_then(|mut s| {
                s.query_row([value], |r| Ok(self.voice_from_row(r)))
                    .optional()
            })
            .map_err(self.sql_err(op))?
            .transpose()
    }

    /// Reads one row of [`VOICE_COLUMNS`]; the outer error is `SQLite`'s, the inner one a
    /// value this Banter does not understand.
    fn voice_from_row(&self, r: &Row<'_>) -> Result<Voice, LibraryError> {
        let get = |e| self.sql_err("read a voice")(e);
        let kind: String = r.get(2).map_err(get)?;
        let language: Option<String> = r.get(3).map_err(get)?;
        let gender: Option<String> = r.get(4).map_err(get)?;
        Ok(Voice {
            id: r.get(0).map_err(get)?,
            name: r.get(1).map_err(get)?,
            kind: VoiceKind::parse(&kind).ok_or_else(|| self.malformed("voice kind", &kind))?,
            language: language
                .map(|l| l.parse().map_err(|_| self.malformed("voice language", &l)))
                .transpose()?,
            gender: gender
                .map(|g| match g.as_str() {
                    "female" => Ok(Gender::Female),
                    "male" => Ok(Gender::Male),
                    _ => Err(self.malformed("voice gender", &g)),
                })
                .transpose()?,
            recipe: r.get(5).map_err(get)?,
            has_style: r.get(6).map_err(get)?,
            notes: r.get(7).map_err(get)?,
            created_at: clock::from_ms(r.get(8).map_err(get)?),
            updated_at: clock::from_ms(r.get(9).map_err(get)?),
        })
    }

    pub(crate) fn duplicate_or(
        &self,
        e: rusqlite::Error,
        what: &'static str,
        name: &str,
        op: &'static str,
    ) -> LibraryError {
        if is_unique_violation(&e) {
            LibraryError::DuplicateName {
                path: self.path.clone(),
                what,
                name: name.to_owned(),
            }
        } else {
            self.sql_err(op)(e)
        }
    }

    pub(crate) fn not_found(&self, what: &'static str, name: &str) -> LibraryError {
        LibraryError::NotFound {
            path: self.path.clone(),
            what,
            name: name.to_owned(),
        }
    }

    pub(crate) fn malformed(&self, what: &'static str, value: &str) -> LibraryError {
        LibraryError::Malformed {
            path: self.path.clone(),
            what,
            reason: format!("unexpected value {value:?}"),
        }
    }
}
