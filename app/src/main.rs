//! `banter`: the studio by default, plus CLI subcommands (`say`, `models`, `voices`, `bench`).
//! `banter SCRIPT` opens the studio with SCRIPT imported: a first argument that is an existing
//! file and not a subcommand is taken as a script before clap sees the arguments.
//!
//! This crate is the only place that wires the engine to the outside world. Exit status: 0 on
//! success, 2 when the input was bad (with a one-line reason), 1 on internal errors. A panic is a
//! bug; the hook below still turns it into exit status 1 with a message instead of 101, unless
//! it happens inside `engine::panic_guard::catch`, which reports it as an error instead.

// Doc comments on clap arguments are the --help text users read; backticks would show literally.
#![allow(clippy::doc_markdown)]

mod cli;
mod exit;
mod malloc;
mod server;

use clap::Parser;

fn main() {
    malloc::keep_freed_memory();
    settle_candle_threads();
    exit::install_panic_hook();
    if let Some(script) = script_argument() {
        init_logging(false);
        let code = match open_studio(Some(script), None) {
            Ok(()) => 0,
            Err(err) => exit::report(&err),
        };
        std::process::exit(code);
    }
    let args = cli::Cli::parse();
    init_logging(args.verbose);
    let code = match cli::run(args) {
        Ok(()) => 0,
        Err(err) => exit::report(&err),
    };
    std::process::exit(code);
}

/// Threads for candle, set in the environment before any thread exists (as changing the
/// environment must); a value the user set is kept.
///
/// - `CANDLE_NUM_THREADS=1`: candle's element-wise ops (adds, products, `exp`) split large
///   tensors across their own pool and the caller waits at a barrier for that pool's worker.
///   With the model's two rayon threads on two cores the worker often could not be scheduled:
///   in a profile of lone first segments the model thread spent a tenth of its time waiting
///   there. With one thread the ops run inline; the big ones of the generator run on rayon's
///   pool instead (the engine's `elementwise` module).
/// - `CANDLE_BARRIER_POOL_SPIN_LIMIT=200`, for a user who raises `CANDLE_NUM_THREADS`: candle
///   0.11's worker otherwise spins 25 000 rounds (about a millisecond of a core) after every op.
/// - `RAYON_NUM_THREADS`: candle asks how many threads to use on every matrix product, and
///   without this variable it counts physical cores by reading and parsing `/proc/cpuinfo`,
///   again each time: 12 ms of the model thread per lone first segment. It is set to the size
///   rayon gives its pool anyway (the available parallelism), which leaves our pool as it was;
///   candle's products then split across the same threads as the rest of the model, not the
///   physical cores only.
fn settle_candle_threads() {
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .to_string();
    for (var, value) in [
        ("CANDLE_NUM_THREADS", "1"),
        ("CANDLE_BARRIER_POOL_SPIN_LIMIT", "200"),
        ("RAYON_NUM_THREADS", threads.as_str()),
    ] {
        if std::env::var_os(var).is_none() {
            std::env::set_var(var, value);
        }
    }
}

fn init_logging(verbose: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("BANTER_LOG").unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new(if verbose { "debug" } else { "warn" })
    });
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

/// `banter SCRIPT`: the only argument is an existing file whose name is not a subcommand.
fn script_argument() -> Option<std::path::PathBuf> {
    use clap::CommandFactory;
    let mut args = std::env::args_os().skip(1);
    let first = args.next()?;
    if args.next().is_some() {
        return None;
    }
    let text = first.to_string_lossy();
    if text.starts_with('-') || cli::Cli::command().find_subcommand(text.as_ref()).is_some() {
        return None;
    }
    let path = std::path::PathBuf::from(&first);
    path.is_file().then_some(path)
}

/// Opens the studio window (with a script imported, if given) and waits until it closes.
pub fn open_studio(
    script: Option<std::path::PathBuf>,
    engine: Option<String>,
) -> anyhow::Result<()> {
    // `--engine`, else BANTER_ENGINE: where the studio renders when not on this machine.
    let remote = engine
        .or_else(|| std::env::var("BANTER_ENGINE").ok())
        .filter(|e| !e.trim().is_empty())
        .map(|endpoints| {
            let list = endpoints.clone();
            ui::work::load::RemoteEngine {
                endpoints,
                connect: std::sync::Arc::new(move |store: &engine::assets::ModelStore| {
                    cli::models::connect_remote(store, &list).map_err(|e| format!("{e:#}"))
                }),
            }
        });
    let config = ui::StudioConfig {
        remote,
        // `banter` alone carries on with the project saved last.
        reopen_last: script.is_none(),
        script,
        // BANTER_NO_FETCH=1: never download the model from the studio (tests, offline use).
        fetch_models: std::env::var_os("BANTER_NO_FETCH").is_none(),
        ..ui::StudioConfig::default()
    };
    let api: Box<dyn ui::api::LoopbackApi> = Box::new(server::embedded::StudioApi::default());
    ui::run(config, Some(api)).map_err(|e| match e {
        ui::UiError::NoDisplay => exit::BadInput(e.to_string()).into(),
        ui::UiError::Window(_) => anyhow::Error::new(e),
    })
}
