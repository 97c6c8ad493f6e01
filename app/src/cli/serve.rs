//! `banter serve`: loads the model, binds the loopback API and prints its URL on the first line
//! of standard output (scripts and tests read it to find a `--port 0` server).

use std::io::Write;
use std::net::IpAddr;
use std::time::Duration;

use anyhow::Context;

use super::EngineArgs;

use engine::scheduler::{Policy as SchedulePolicy, SchedulerConfig};

use crate::server::listener::Listeners;
use crate::server::scheduled::SchedulerBackend;
use crate::server::security::Policy;
use crate::server::{token, Limits, Shared};

/// Request bodies larger than this are refused (413); speech JSON is a few KiB.
const BODY_LIMIT: usize = 1024 * 1024;

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// TCP port; 0 picks a free one.
    #[arg(long, default_value_t = 8717)]
    pub port: u16,
    /// Listen on this address only instead of 127.0.0.1 and ::1. Anything but loopback exposes
    /// the API to your network (the token still guards it).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<IpAddr>,
    /// Print the API token and exit.
    #[arg(long)]
    pub show_token: bool,
    /// Longest input accepted, in characters.
    #[arg(long, default_value_t = 4096, value_name = "N")]
    pub max_input_chars: usize,
    /// Let web pages from this origin call the API (e.g. http://localhost:3000); repeatable.
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    pub allow_origins: Vec<String>,
    /// Speech jobs accepted at once (waiting or streaming); more get 429.
    #[arg(long, default_value_t = 64, value_name = "N")]
    pub max_queue: usize,
    /// Serve requests one at a time, first come first served, whole segments (the naive
    /// baseline `tools/bench/load.py` compares the scheduler with).
    #[arg(long)]
    pub naive: bool,
    /// Decode every segment in one pass, exactly as the reference model does, instead of in
    /// short windows: the first audio of a sentence then waits for the whole sentence.
    #[arg(long)]
    pub whole_segments: bool,
    /// Close connections idle (no request in flight, no bytes) for this many seconds.
    #[arg(long, default_value_t = 30, value_name = "SECONDS")]
    pub idle_timeout: u64,
    #[command(flatten)]
    pub engine: EngineArgs,
}

pub fn run(args: &ServeArgs) -> anyhow::Result<()> {
    let config_dir = token::config_dir()?;
    let token = token::load_or_create(&config_dir)?;
    if args.show_token {
        println!("{token}");
        return Ok(());
    }
    if let Some(addr) = args.listen.filter(|a| !a.is_loopback()) {
        eprintln!(
            "warning: listening on {addr}, not loopback: anyone who can reach this machine can \
             try the API (the token still guards it)"
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("api")
        .build()
        .context("starting the async runtime")?;
    let config = SchedulerConfig {
        policy: if args.naive {
            SchedulePolicy::Fifo
        } else {
            SchedulePolicy::Pressing
        },
        max_queue: args.max_queue,
        windowed: !(args.naive || args.whole_segments),
        ..SchedulerConfig::default()
    };
    let engine = super::models::load_engine_with(&args.engine, config)?;
    let backend = SchedulerBackend::new(engine, runtime.handle().clone());
    let policy = Policy {
        token,
        allowed_origins: args.allow_origins.clone(),
        extra_hosts: args.listen.map(|a| vec![host_name(a)]).unwrap_or_default(),
        any_ip_host: args.listen.is_some_and(|a| a.is_unspecified()),
        body_limit: BODY_LIMIT,
    };
    let limits = Limits {
        max_input_chars: args.max_input_chars,
        max_jobs: args.max_queue,
    };
    let state = Shared::new(policy, limits, Box::new(backend));
    runtime.block_on(async {
        let idle = Duration::from_secs(args.idle_timeout.max(1));
        let listeners = Listeners::bind(args.listen, args.port, idle)
            .await
            .with_context(|| format!("binding port {}", args.port))?;
        let addrs = listeners.local_addrs();
        let first = addrs.first().context("no address bound")?;
        let shown = if first.ip().is_unspecified() {
            std::net::SocketAddr::new(std::net::Ipv4Addr::LOCALHOST.into(), first.port())
        } else {
            *first
        };
        let mut out = std::io::stdout().lock();
        writeln!(out, "http://{shown}")?;
        out.flush()?;
        drop(out);
        let bound: Vec<String> = addrs.iter().map(ToString::to_string).collect();
        eprintln!(
            "serving the OpenAI-compatible speech API on {}; token: `banter serve --show-token`; \
             Ctrl-C stops",
            bound.join(" and ")
        );
        tokio::select! {
            result = crate::server::serve(listeners, state) => result.context("serving"),
            _ = tokio::signal::ctrl_c() => Ok(()),
        }
    })
}

/// How a `Host` header spells `addr` (IPv6 in brackets).
fn host_name(addr: IpAddr) -> String {
    match addr {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("[{v6}]"),
    }
}
