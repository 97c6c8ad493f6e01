//! `banter bench synth`: Banter's xRT, time to first audio and peak memory beside kokoro-onnx on
//! onnxruntime (same int8 model, same voice, same passages, same thread count), in one run.
//!
//! Machines are noisy, so the table reports ratios from the same run; see
//! `shared/docs/streaming.md` for the definitions (xRT = audio seconds / wall seconds).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::Context;
use engine::synth::{SpeechRequest, SAMPLE_RATE};

use super::EngineArgs;
use crate::exit::BadInput;

#[derive(Debug, clap::Subcommand)]
pub enum BenchCommand {
    /// Render the bundled passages and compare with kokoro-onnx.
    Synth(SynthBenchArgs),
}

#[derive(Debug, clap::Args)]
pub struct SynthBenchArgs {
    /// Text files to render (default: every .txt in assets/passages).
    pub passages: Vec<PathBuf>,
    /// Voice to render with.
    #[arg(long, default_value = "af_heart")]
    pub voice: String,
    /// Timed runs per passage (the best is reported), after one warm-up.
    #[arg(long, default_value_t = 1)]
    pub runs: usize,
    /// Skip the kokoro-onnx peer.
    #[arg(long)]
    pub no_peer: bool,
    /// Python interpreter that has kokoro-onnx 0.6.1 installed.
    #[arg(long, default_value = "python3")]
    pub python: String,
    /// The peer script.
    #[arg(long, default_value = "tools/bench/kokoro_onnx_peer.py")]
    pub peer_script: PathBuf,
    #[command(flatten)]
    pub engine: EngineArgs,
}

struct Figures {
    name: String,
    audio_s: f64,
    wall_s: f64,
    ttfa_s: f64,
}

pub fn run(cmd: &BenchCommand) -> anyhow::Result<()> {
    let BenchCommand::Synth(args) = cmd;
    let passages = passages(&args.passages)?;
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let load_started = Instant::now();
    let synth = super::models::load_synthesizer(&args.engine)?;
    let load_s = load_started.elapsed().as_secs_f64();
    let rss_loaded = peak_rss_mb();
    let request = SpeechRequest::new(&args.voice, 1.0)?;
    let mut ours = Vec::new();
    for path in &passages {
        let text = fs_err::read_to_string(path)?;
        let _ = synth.synthesize(&text, &request)?; // warm-up
        let mut best: Option<Figures> = None;
        for _ in 0..args.runs.max(1) {
            let started = Instant::now();
            let mut ttfa = None;
            let mut samples = 0usize;
            for chunk in synth.stream(&text, &request)? {
                let chunk = chunk?;
                ttfa.get_or_insert_with(|| started.elapsed().as_secs_f64());
                samples += chunk.samples.len();
            }
            let wall_s = started.elapsed().as_secs_f64();
            let f = Figures {
                name: file_name(path),
                audio_s: samples as f64 / f64::from(SAMPLE_RATE),
                wall_s,
                ttfa_s: ttfa.unwrap_or(wall_s),
            };
            if best.as_ref().is_none_or(|b| f.wall_s < b.wall_s) {
                best = Some(f);
            }
        }
        ours.extend(best);
    }
    let rss_peak = peak_rss_mb();
    let peer = if args.no_peer {
        Ok(Vec::new())
    } else {
        run_peer(args, &passages, threads)
    };

    println!(
        "banter bench synth — voice {}, {threads} threads, device {}",
        args.voice,
        engine::device::describe(synth.device())
    );
    println!("model load {load_s:.2} s; peak RSS with model loaded {rss_loaded:.0} MB, after rendering {rss_peak:.0} MB");
    println!();
    println!(
        "{:<22} {:>8} {:>11} {:>11} {:>9} {:>11} {:>13} {:>14}",
        "passage",
        "audio s",
        "banter xRT",
        "peer xRT",
        "ratio",
        "banter TTFA",
        "peer total s",
        "TTFA/peer tot"
    );
    let peer_rows = peer.as_ref().map_or(&[][..], Vec::as_slice);
    for f in &ours {
        let p = peer_rows.iter().find(|p| p.name == f.name);
        let xrt = f.audio_s / f.wall_s;
        let (peer_xrt, ratio, peer_total, ttfa_share) = match p {
            Some(p) => {
                let px = p.audio_s / p.wall_s;
                (
                    format!("{px:.2}"),
                    format!("{:.2}", xrt / px),
                    format!("{:.2}", p.wall_s),
                    format!("{:.0} %", 100.0 * f.ttfa_s / p.wall_s),
                )
            }
            None => ("-".into(), "-".into(), "-".into(), "-".into()),
        };
        println!(
            "{:<22} {:>8.2} {:>11.2} {:>11} {:>9} {:>10.2}s {:>13} {:>14}",
            f.name, f.audio_s, xrt, peer_xrt, ratio, f.ttfa_s, peer_total, ttfa_share
        );
    }
    match peer {
        Err(e) => println!("\npeer unavailable: {e:#}\n(install it with `python3 -m pip install kokoro-onnx==0.6.1`, or pass --no-peer)"),
        Ok(rows) if !rows.is_empty() => {
            let rss = rows.iter().map(|r| r.peak_rss_mb).fold(0.0, f64::max);
            println!("\npeer peak RSS {rss:.0} MB (onnxruntime, int8 activations)");
        }
        Ok(_) => {}
    }
    Ok(())
}

fn passages(given: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    if !given.is_empty() {
        for p in given {
            if !p.is_file() {
                return Err(BadInput(format!("{}: no such passage file", p.display())).into());
            }
        }
        return Ok(given.to_vec());
    }
    let dir = Path::new("assets/passages");
    let mut found: Vec<PathBuf> = fs_err::read_dir(dir)
        .map_err(|e| {
            BadInput(format!(
                "{e}; run from the repository root or name passage files"
            ))
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    found.sort();
    Ok(found)
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

struct PeerFigures {
    name: String,
    audio_s: f64,
    wall_s: f64,
    peak_rss_mb: f64,
}

/// Runs the Python peer, which prints one JSON object per passage.
fn run_peer(
    args: &SynthBenchArgs,
    passages: &[PathBuf],
    threads: usize,
) -> anyhow::Result<Vec<PeerFigures>> {
    let store = match &args.engine.models {
        Some(d) => engine::assets::ModelStore::at(d),
        None => engine::assets::ModelStore::open_default()?,
    };
    let out = Command::new(&args.python)
        .arg(&args.peer_script)
        .arg("--model-dir")
        .arg(store.root())
        .arg("--voice")
        .arg(&args.voice)
        .arg("--threads")
        .arg(threads.to_string())
        .arg("--runs")
        .arg(args.runs.max(1).to_string())
        .args(passages)
        .output()
        .with_context(|| format!("running {} {}", args.python, args.peer_script.display()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: String = err.lines().rev().take(3).collect::<Vec<_>>().join(" | ");
        anyhow::bail!("the peer failed: {tail}");
    }
    let mut rows = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        rows.push(PeerFigures {
            name: v["passage"].as_str().unwrap_or_default().to_owned(),
            audio_s: v["audio_s"].as_f64().unwrap_or(0.0),
            wall_s: v["wall_s"].as_f64().unwrap_or(f64::NAN),
            peak_rss_mb: v["peak_rss_mb"].as_f64().unwrap_or(0.0),
        });
    }
    Ok(rows)
}

/// Peak resident memory of this process (VmHWM), in MB; 0 where /proc is not available.
fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|kb| kb.parse::<f64>().ok())
            })
        })
        .map_or(0.0, |kb| kb / 1024.0)
}
