//! The voice library: one `SQLite` database per user for voices, speaker embeddings, projects
//! and the render cache.
//!
//! Why `SQLite`: the studio and the loopback API server are separate processes (or threads)
//! that read and write the same data; `SQLite` gives them transactions, crash safety and
//! concurrent access without a server. Why one file: a user can back up, move or delete
//! their library as one thing (`library.sqlite` plus its `-wal`/`-shm` while open).
//!
//! Where it lives: `$BANTER_LIBRARY` if set and not empty, else
//! `<data dir>/banter/library.sqlite` (`$XDG_DATA_HOME/banter/library.sqlite` on Linux), or
//! any path given to [`Library::open`].
//!
//! Files of this module, each about one thing:
//! - `open`: opening, pragmas, busy handling, write transactions, setting aside a corrupt
//!   or foreign file.
//! - `aside`: recognising a corrupt or foreign file and renaming it out of the way.
//! - `schema`: the ordered migrations and `PRAGMA user_version`.
//! - `voices`, `tunings`, `embeddings`, `projects`, `cache`: one table family each.
//! - `check`: `banter library check` (integrity, counts) and `vacuum`.
//! - `error`: [`LibraryError`].
//!
//! A [`Library`] wraps one connection; it is `Send` but not `Sync`: give each thread its own
//! (opening is cheap), as `SQLite` serialises writers across connections anyway.

mod aside;
mod cache;
mod check;
mod clock;
mod embeddings;
mod error;
mod open;
mod open_lock;
mod piper;
mod projects;
mod schema;
mod tunings;
mod voices;

#[cfg(test)]
mod tests;

pub use aside::{SetAside, SetAsideReason};
pub use cache::{
    CacheStats, CachedAudio, PutOutcome, RenderKey, RenderKeyParts, DEFAULT_CACHE_CAP,
};
pub use check::{CheckReport, VacuumReport};
pub use embeddings::{EmbeddingKey, SpeakerEmbedding, EMBEDDING_DIM};
pub use error::LibraryError;
pub use open::{
    default_path, Library, LibraryOptions, DEFAULT_BUSY_TIMEOUT, LIBRARY_ENV, LIBRARY_FILE,
};
pub use piper::{NewPiperVoice, PiperRecord};
pub use projects::{Autosave, Project, ProjectDraft};
pub use schema::SCHEMA_VERSION;
pub use tunings::{PackProblem, Tuning, PACK_VERSION};
pub use voices::{NewVoice, Voice, VoiceKind};
