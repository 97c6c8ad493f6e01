//! `banter script check`: validate a script without rendering it, and show exactly what will be
//! said, by whom, in which voice.

use std::path::PathBuf;

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
    /// Print `{"format", "cast", "lines", "warnings"}` as JSON.
    #[arg(long)]
    pub json: bool,
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
        println!("{}", serde_json::to_string_pretty(&episode.check_report())?);
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
    }
    for c in &episode.chapters {
        println!("chapter at line {}: {}", c.position.line, c.title);
    }
    for w in &episode.warnings {
        eprintln!("{}: warning: {}", episode.locate(w.position), w.message);
    }
    Ok(())
}
