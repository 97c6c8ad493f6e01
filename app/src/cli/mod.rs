//! Command-line interface: argument definitions and dispatch to one module per subcommand.

mod bench;
mod bench_batch;
mod bench_parity;
mod bench_tune;
mod library;
pub(crate) mod models;
mod output;
mod render;
mod say;
mod say_follow;
mod script;
mod script_input;
mod serve;
mod triton;
mod voices;
mod voices_piper;
mod voices_tune;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// Banter: a voice studio for podcast authors.
#[derive(Debug, Parser)]
#[command(name = "banter", version, about, propagate_version = true)]
pub struct Cli {
    /// Log debug details to stderr (or set BANTER_LOG=debug).
    #[arg(long, short, global = true)]
    pub verbose: bool,
    /// The studio renders on Triton servers instead of this machine (`triton://HOST:PORT`,
    /// several separated by commas; or set BANTER_ENGINE). Each command has its own --engine.
    #[arg(long, value_name = "triton://HOST:PORT[,…]")]
    pub engine: Option<String>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Render a script into a finished episode: audio, captions, chapters, stems.
    Render(render::RenderArgs),
    /// Check scripts without rendering them.
    #[command(subcommand)]
    Script(script::ScriptCommand),
    /// Speak TEXT in one voice into a WAV file.
    Say(say::SayArgs),
    /// Fetch, verify and inspect the model assets.
    #[command(subcommand)]
    Models(models::ModelsCommand),
    /// List the voices (stock, blends, matched), save blends, match a clip, remove voices.
    Voices(voices::VoicesArgs),
    /// Check and tidy the voice library (voices, embeddings, projects, render cache).
    #[command(subcommand)]
    Library(library::LibraryCommand),
    /// Benchmarks that print Banter's figures beside the peer's.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Serve the OpenAI-compatible speech API on localhost.
    Serve(serve::ServeArgs),
    /// Serve Banter from Triton Inference Server: write a model repository for it.
    #[command(subcommand)]
    Triton(triton::TritonCommand),
}

/// Options shared by every command that runs the model.
#[derive(Debug, Clone, clap::Args)]
pub struct EngineArgs {
    /// Where to run the model: auto, cpu, cuda or cuda:N.
    #[arg(long, default_value = "auto")]
    pub device: String,
    /// Model folder (default: $BANTER_MODEL_DIR or $XDG_DATA_HOME/banter/models).
    #[arg(long, value_name = "DIR")]
    pub models: Option<PathBuf>,
    /// Render on Triton Inference Server instead of this machine: `triton://HOST:PORT`, or
    /// several separated by commas to spread the segments over them (one going away, its
    /// segments go to the others). Voices resolve here. See README, "Scaling out".
    #[arg(long, value_name = "triton://HOST:PORT[,…]", conflicts_with = "device")]
    pub engine: Option<String>,
}

pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Some(Command::Render(args)) => render::run(&args),
        Some(Command::Script(cmd)) => script::run(&cmd),
        Some(Command::Say(args)) => say::run(&args),
        Some(Command::Models(cmd)) => models::run(&cmd),
        Some(Command::Voices(args)) => voices::run(&args),
        Some(Command::Library(cmd)) => library::run(&cmd),
        Some(Command::Bench(cmd)) => bench::run(&cmd),
        Some(Command::Serve(args)) => serve::run(&args),
        Some(Command::Triton(cmd)) => triton::run(&cmd),
        None => crate::open_studio(None, cli.engine),
    }
}

/// A flag Ctrl-C sets, saying `stopping` on stderr; a second Ctrl-C while the first is being
/// honoured exits at once with status 130 (what is being written is still a temporary).
pub(crate) fn cancel_on_ctrl_c(
    stopping: &'static str,
) -> anyhow::Result<std::sync::Arc<std::sync::atomic::AtomicBool>> {
    use std::sync::atomic::{AtomicBool, Ordering};
    let cancel = std::sync::Arc::new(AtomicBool::new(false));
    let flag = std::sync::Arc::clone(&cancel);
    ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::SeqCst) {
            crate::exit::stop_now();
        }
        eprintln!("\n{stopping}");
    })
    .map_err(|e| anyhow::anyhow!("installing the Ctrl-C handler: {e}"))?;
    Ok(cancel)
}
