//! `banter script check`: validate a script without rendering it, and show exactly what will be
//! said, by whom, in which voice.

use std::path::PathBuf;

use engine::assets::ModelStore;
use engine::device::DeviceChoice;
use engine::library::Library;
use engine::render::reads_as;
use engine::script::{CueAction, Episode};
use engine::voicematch::cast::check_cast;
use engine::voicematch::{CastPair, VoiceEmbedder, CAST_WARN_SIMILARITY};
use engine::Engine;

use super::script_input::{self, ScriptArgs};

#[derive(Debug, clap::Subcommand)]
pub enum ScriptCommand {
    /// Parse SCRIPT and print its format, cast, spoken lines and warnings.
    Check(CheckArgs),
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The script; `-` reads standard input.
    pub script: PathBuf,
    /// Read the script as this format instead of detecting it.
    #[arg(long)]
    pub format: Option<String>,
    /// Print `{"format", "cast", "lines", "warnings", "skipped", "sounds"}` as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also show each turn as it will be read: after normalisation (numbers, money, dates,
    /// acronyms), the lexicon and directives (`"reads_as"` in `--json`).
    #[arg(long)]
    pub spoken: bool,
    /// Skip the cast check (which compares the cast's voices with the speaker encoder, once
    /// per voice, when the model and the encoder are installed).
    #[arg(long)]
    pub no_cast_check: bool,
    #[command(flatten)]
    pub script_args: ScriptArgs,
}

pub fn run(cmd: &ScriptCommand) -> anyhow::Result<()> {
    match cmd {
        ScriptCommand::Check(args) => check(args),
    }
}

fn check(args: &CheckArgs) -> anyhow::Result<()> {
    let episode = script_input::load(&args.script, &args.script_args, args.format.as_deref())?;
    if args.json {
        let mut report = episode.check_report();
        if args.spoken {
            add_reads_as(&episode, &mut report);
        }
        println!("{}", serde_json::to_string_pretty(&report)?);
        if !args.no_cast_check {
            cast_check(&episode);
        }
        return Ok(());
    }
    println!("{}: {} format", episode.source, episode.format.as_str());
    if let Some(title) = &episode.settings.title {
        println!("title: {title}");
    }
    println!("cast:");
    for m in &episode.cast.members {
        let speed = m.speed.map(|s| format!(" @{s}")).unwrap_or_default();
        println!("  {}: {}{speed}", m.name, m.voice);
    }
    println!("lines:");
    for line in &episode.lines {
        println!(
            "  {:>5}  {}: {}",
            line.position.line,
            line.speaker,
            episode.spoken_text(line)
        );
        if args.spoken {
            if let Some(reads) = reads_as(&episode, line) {
                println!("         reads as: {reads}");
            }
        }
    }
    if !episode.skipped.is_empty() {
        println!("not spoken:");
        for s in &episode.skipped {
            println!("  {:>5}  [{}] {}", s.position.line, s.kind, s.text);
        }
    }
    for c in &episode.chapters {
        println!("chapter at line {}: {}", c.position.line, c.title);
    }
    let mut sounds = episode.sounds().peekable();
    if sounds.peek().is_some() {
        println!("sounds:");
    }
    for (_, cue) in sounds {
        let at = cue.position.line;
        let waits = if cue.alone { " (speech waits)" } else { "" };
        match &cue.action {
            CueAction::Sound {
                file,
                volume_db,
                overlap_secs,
                ..
            } => println!(
                "  {at:>5}  sound {file}, {volume_db:+} dB{waits}{}",
                if *overlap_secs > 0.0 && cue.alone {
                    format!(", overlap {overlap_secs} s")
                } else {
                    String::new()
                }
            ),
            CueAction::Bed {
                file,
                volume_db,
                fade_secs,
                duck_db,
            } => println!(
                "  {at:>5}  bed {file}, {volume_db:+} dB, fade {fade_secs} s, ducked {duck_db} dB under speech"
            ),
            CueAction::BedOff { fade_secs } => println!("  {at:>5}  bed off, fade {fade_secs} s"),
        }
    }
    for w in &episode.warnings {
        eprintln!("{}: warning: {}", episode.locate(w.position), w.message);
    }
    if !args.no_cast_check {
        cast_check(&episode);
    }
    Ok(())
}

/// Adds `"reads_as"` to each of the report's lines (same order as the episode's).
fn add_reads_as(episode: &Episode, report: &mut serde_json::Value) {
    let Some(lines) = report.get_mut("lines").and_then(|l| l.as_array_mut()) else {
        return;
    };
    for (json, line) in lines.iter_mut().zip(&episode.lines) {
        if let (Some(object), Some(reads)) = (json.as_object_mut(), reads_as(episode, line)) {
            object.insert("reads_as".to_owned(), serde_json::Value::String(reads));
        }
    }
}

/// Warns (on stderr) about speakers whose voices sound alike. Advice only: any failure is a
/// note, never an error of the check.
fn cast_check(episode: &Episode) {
    if episode.cast.members.len() < 2 {
        return;
    }
    match cast_pairs(episode) {
        Ok(Some(pairs)) => {
            for p in pairs {
                eprintln!("{}: warning: {}", episode.source, p.message());
            }
        }
        Ok(None) => {}
        Err(e) => eprintln!("note: the cast check was skipped: {e:#}"),
    }
}

/// `None` when the model, the encoder or the library is not available.
fn cast_pairs(episode: &Episode) -> anyhow::Result<Option<Vec<CastPair>>> {
    let store = ModelStore::open_default()?;
    if !store.is_ready() || !store.speaker_encoder_ready() {
        return Ok(None);
    }
    let Ok(library) = Library::open_default() else {
        return Ok(None);
    };
    let engine = Engine::load(&store, DeviceChoice::Auto)?;
    let embedder = VoiceEmbedder::load(&store, engine.device())?;
    let cast: Vec<(String, String)> = episode
        .cast
        .members
        .iter()
        .map(|m| (m.name.clone(), m.voice.clone()))
        .collect();
    Ok(Some(check_cast(
        &embedder,
        &engine,
        &library,
        &cast,
        CAST_WARN_SIMILARITY,
    )?))
}
