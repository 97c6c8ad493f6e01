//! `banter bench synth`: Banter's xRT, time to first audio and peak memory beside kokoro-onnx on
//! onnxruntime (same int8 model, same voice, same passages, same thread count), in one run.
//!
//! Machines are noisy, so the table reports ratios from the same run; see
//! `shared/docs/streaming.md` for the definitions (xRT = audio seconds / wall seconds).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::Context;
use engine::{Mode, StreamEvent};
use engine::{SpeechRequest, SAMPLE_RATE};

use super::EngineArgs;
use crate::exit::BadInput;

#[derive(Debug, clap::Subcommand)]
pub enum BenchCommand {
    /// Render the bundled passages and compare with kokoro-onnx.
    Synth(SynthBenchArgs),
    /// Render SCRIPT three times through the render cache (in a temporary library): cold,
    /// unchanged, and with one line edited; print the times and ratios.
    Cache(CacheBenchArgs),
    /// Time the scheduler's first step of B segments one by one and as one batch.
    Batch(super::bench_batch::BatchBenchArgs),
    /// Tune a voice toward each reference speaker in DIR (not Kokoro voices) and print the
    /// nearest stock voice, best blend and tuned similarity on held-out sentences, stability,
    /// WER (with --judge), time and peak RSS.
    Tune(super::bench_tune::TuneBenchArgs),
    /// Compare the model on --device with the f32 CPU port stage by stage (encoder alone and
    /// batched, decoder whole and windowed) on the bundled passages' segments.
    Parity(super::bench_parity::ParityBenchArgs),
}

#[derive(Debug, clap::Args)]
pub struct CacheBenchArgs {
    /// The script to render.
    pub script: PathBuf,
    #[command(flatten)]
    pub script_args: super::script_input::ScriptArgs,
    #[command(flatten)]
    pub engine: EngineArgs,
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
    match cmd {
        BenchCommand::Synth(args) => synth_bench(args),
        BenchCommand::Cache(args) => cache_bench(args),
        BenchCommand::Batch(args) => super::bench_batch::run(args),
        BenchCommand::Tune(args) => super::bench_tune::run(args),
        BenchCommand::Parity(args) => super::bench_parity::run(args),
    }
}

fn synth_bench(args: &SynthBenchArgs) -> anyhow::Result<()> {
    let passages = passages(&args.passages)?;
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let load_started = Instant::now();
    let engine = super::models::load_engine(&args.engine)?;
    let load_s = load_started.elapsed().as_secs_f64();
    let rss_loaded = peak_rss_mb();
    let request = SpeechRequest::new(&args.voice, 1.0)?;
    let mut ours = Vec::new();
    for path in &passages {
        let text = fs_err::read_to_string(path)?;
        // Offline streams: whole segments, exactly, as `banter say` renders them.
        let _ = engine.synthesize(&text, &request, Mode::Offline)?; // warm-up
        let mut best: Option<Figures> = None;
        for _ in 0..args.runs.max(1) {
            let started = Instant::now();
            let mut ttfa = None;
            let mut samples = 0usize;
            let mut stream = engine.submit_text(&text, request.clone(), Mode::Offline)?;
            while let Some(event) = stream.blocking_next() {
                match event {
                    StreamEvent::Audio { samples: chunk, .. } => {
                        ttfa.get_or_insert_with(|| started.elapsed().as_secs_f64());
                        samples += chunk.len();
                    }
                    StreamEvent::Failed(e) => return Err(e.into()),
                }
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
        engine.device_name()
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
pub(super) fn peak_rss_mb() -> f64 {
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

/// One timed render of the cache benchmark.
struct CacheRun {
    label: &'static str,
    audio_s: f64,
    wall_s: f64,
    pass_one_s: f64,
    model_s: f64,
    hits: u64,
    misses: u64,
}

fn cache_bench(args: &CacheBenchArgs) -> anyhow::Result<()> {
    use engine::render::cache::Cached;
    use engine::render::{render_episode, FromModel, RenderOptions};
    use engine::script::Piece;
    use std::sync::atomic::AtomicBool;

    let episode = super::script_input::load(&args.script, &args.script_args, None)?;
    let engine = super::models::load_engine(&args.engine)?;
    let dir = std::env::temp_dir().join(format!("banter-bench-cache-{}", std::process::id()));
    fs_err::create_dir_all(&dir)?;
    let result = (|| -> anyhow::Result<Vec<CacheRun>> {
        let library = engine::library::Library::open(dir.join("library.sqlite"))?;
        let cached = Cached::new(FromModel, library);
        let options = RenderOptions {
            captions: vec![],
            markers: false,
            ..RenderOptions::default()
        };
        let cancel = AtomicBool::new(false);
        let mut runs = Vec::new();
        let mut render =
            |label: &'static str, ep: &engine::script::Episode| -> anyhow::Result<()> {
                let before = cached.counts();
                let started = Instant::now();
                let report = render_episode(
                    &engine,
                    &cached,
                    ep,
                    &dir.join("episode.wav"),
                    &options,
                    &cancel,
                    &mut |_| {},
                )?;
                let after = cached.counts();
                runs.push(CacheRun {
                    label,
                    audio_s: report.duration_secs,
                    wall_s: started.elapsed().as_secs_f64(),
                    pass_one_s: report.compute.as_secs_f64(),
                    model_s: after
                        .model_time
                        .saturating_sub(before.model_time)
                        .as_secs_f64(),
                    hits: after.hits - before.hits,
                    misses: after.misses - before.misses,
                });
                eprintln!("{label}: done");
                Ok(())
            };
        render("full render (cold cache)", &episode)?;
        render("unchanged re-render", &episode)?;
        let mut edited = episode.clone();
        let middle = edited.lines.len() / 2;
        let line = edited
            .lines
            .iter_mut()
            .skip(middle)
            .find(|l| l.pieces.iter().any(|p| matches!(p, Piece::Text { .. })))
            .ok_or_else(|| BadInput("the script has no line of text to edit".into()))?;
        if let Some(Piece::Text { text }) = line
            .pieces
            .iter_mut()
            .rev()
            .find(|p| matches!(p, Piece::Text { .. }))
        {
            text.push_str(" That much is certain.");
        }
        render("one line edited", &edited)?;
        Ok(runs)
    })();
    let _ = fs_err::remove_dir_all(&dir);
    let runs = result?;
    println!(
        "{:<26} {:>8} {:>8} {:>8} {:>8} {:>8} {:>5} {:>6}",
        "render", "audio s", "wall s", "xRT", "pass 1 s", "model s", "hits", "misses"
    );
    for r in &runs {
        println!(
            "{:<26} {:>8.1} {:>8.2} {:>8.1} {:>8.2} {:>8.2} {:>5} {:>6}",
            r.label,
            r.audio_s,
            r.wall_s,
            r.audio_s / r.wall_s.max(1e-9),
            r.pass_one_s,
            r.model_s,
            r.hits,
            r.misses
        );
    }
    if let [full, same, edit] = runs.as_slice() {
        let ratio = |a: f64, b: f64| a / b.max(1e-9);
        println!(
            "unchanged re-render: {:.1}x faster wall, {:.1}x faster pass one",
            ratio(full.wall_s, same.wall_s),
            ratio(full.pass_one_s, same.pass_one_s)
        );
        println!(
            "one-line edit:       {:.1}x faster wall, {:.1}x faster pass one ({} of {} sentences re-rendered)",
            ratio(full.wall_s, edit.wall_s),
            ratio(full.pass_one_s, edit.pass_one_s),
            edit.misses,
            edit.hits + edit.misses
        );
    }
    Ok(())
}
