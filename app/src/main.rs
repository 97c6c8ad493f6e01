//! `banter`: the studio by default, plus CLI subcommands (`say`, `models`, `voices`, `bench`).
//!
//! This crate is the only place that wires the engine to the outside world. Exit status: 0 on
//! success, 2 when the input was bad (with a one-line reason), 1 on internal errors. A panic is a
//! bug; the hook below still turns it into exit status 1 with a message instead of 101.

// Doc comments on clap arguments are the --help text users read; backticks would show literally.
#![allow(clippy::doc_markdown)]

mod cli;
mod exit;
mod server;

use clap::Parser;

fn main() {
    exit::install_panic_hook();
    let args = cli::Cli::parse();
    let filter = tracing_subscriber::EnvFilter::try_from_env("BANTER_LOG").unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new(if args.verbose { "debug" } else { "warn" })
    });
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    let code = match cli::run(args) {
        Ok(()) => 0,
        Err(err) => exit::report(&err),
    };
    std::process::exit(code);
}
