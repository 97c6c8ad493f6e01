//! `banter library check`, and how every command reaches the voice library and the speaker
//! encoder.
//!
//! The library lives at `$BANTER_LIBRARY` or `<data dir>/banter/library.sqlite`. Commands for
//! which it is a convenience (the render cache, library voices in casts, the cast check) go on
//! without it, with a warning, when it cannot be opened; commands that are about it fail.

use engine::assets::ModelStore;
use engine::library::Library;
use engine::voicematch::{VoiceEmbedder, VoiceMatchError};
use engine::Engine;

use crate::exit::BadInput;

#[derive(Debug, clap::Subcommand)]
pub enum LibraryCommand {
    /// Check the library's integrity, show what it holds and how big its render cache is,
    /// then vacuum it (give back the space deleted entries left).
    Check {
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        /// Do not vacuum.
        #[arg(long)]
        no_vacuum: bool,
    },
}

pub fn run(cmd: &LibraryCommand) -> anyhow::Result<()> {
    match cmd {
        LibraryCommand::Check { json, no_vacuum } => check(*json, *no_vacuum),
    }
}

fn check(json: bool, no_vacuum: bool) -> anyhow::Result<()> {
    let library = open()?;
    if let Some(aside) = library.set_aside() {
        eprintln!(
            "warning: the file at {} was unusable and was set aside as {}; a fresh library was created",
            aside.original.display(),
            aside.moved_to.display()
        );
    }
    let report = library.check()?;
    let vacuum = if report.is_ok() && !no_vacuum {
        Some(library.vacuum()?)
    } else {
        None
    };
    let stats = library.cache_stats()?;
    if json {
        let value = serde_json::json!({
            "path": library.path().display().to_string(),
            "ok": report.is_ok(),
            "schema_version": report.schema_version,
            "integrity": report.integrity,
            "foreign_key_violations": report.foreign_key_violations,
            "pack_problems": report.pack_problems,
            "voices": report.voices,
            "stock_voices": report.stock_voices,
            "projects": report.projects,
            "autosaves": report.autosaves,
            "embeddings": report.embeddings,
            "cache_entries": report.cache_entries,
            "cache_bytes": report.cache_bytes,
            "cache_cap_bytes": stats.cap_bytes,
            "file_bytes": report.file_bytes,
            "vacuumed_bytes": vacuum.map(|v| v.bytes_before.saturating_sub(v.bytes_after)),
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        println!("library: {}", library.path().display());
        println!(
            "integrity: {}",
            if report.is_ok() {
                "ok".to_owned()
            } else {
                report
                    .integrity
                    .iter()
                    .chain(&report.foreign_key_violations)
                    .chain(&report.pack_problems)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("; ")
            }
        );
        println!("schema version: {}", report.schema_version);
        println!(
            "voices: {} ({} stock, {} saved)",
            report.voices,
            report.stock_voices,
            report.voices.saturating_sub(report.stock_voices)
        );
        println!(
            "projects: {} ({} autosaves)",
            report.projects, report.autosaves
        );
        println!("speaker embeddings: {}", report.embeddings);
        println!(
            "render cache: {} entries, {} of audio (cap {})",
            report.cache_entries,
            size(report.cache_bytes),
            size(stats.cap_bytes)
        );
        match vacuum {
            Some(v) => println!(
                "file: {} after vacuum (was {})",
                size(v.bytes_after),
                size(v.bytes_before)
            ),
            None => println!("file: {}", size(report.file_bytes)),
        }
    }
    if !report.is_ok() {
        anyhow::bail!(
            "the library at {} is damaged; back it up, then move it away to start a fresh one",
            library.path().display()
        );
    }
    Ok(())
}

fn size(bytes: u64) -> String {
    #[allow(clippy::cast_precision_loss)] // a displayed size
    let b = bytes as f64;
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.1} kB", b / 1e3)
    } else {
        format!("{bytes} B")
    }
}

/// Opens the user's library (`$BANTER_LIBRARY` overrides where).
pub fn open() -> anyhow::Result<Library> {
    Ok(Library::open_default()?)
}

/// Opens the library for a command that can do without it: on failure, warns and gives `None`.
pub fn open_optional(purpose: &str) -> Option<Library> {
    match Library::open_default() {
        Ok(l) => Some(l),
        Err(e) => {
            eprintln!("warning: the voice library is unavailable ({e}); {purpose}");
            None
        }
    }
}

/// Loads the speaker encoder, fetching its weights first if they are missing.
pub fn load_embedder(store: &ModelStore, engine: &Engine) -> anyhow::Result<VoiceEmbedder> {
    if !store.speaker_encoder_ready() {
        eprintln!("fetching the speaker encoder (resemblyzer GE2E, about 17 MB) once…");
        store.ensure_speaker_encoder(&mut |_| {})?;
    }
    VoiceEmbedder::load(store, engine.device()).map_err(user_error)
}

/// A voice-matching error as the CLI reports it: exit status 2 when the input was at fault.
pub fn user_error(e: VoiceMatchError) -> anyhow::Error {
    if e.is_input_error() {
        BadInput(e.to_string()).into()
    } else {
        e.into()
    }
}
