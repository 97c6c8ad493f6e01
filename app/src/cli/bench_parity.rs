//! `banter bench parity`: the model on a device (CUDA, or the CPU's faster products) stage by
//! stage against the f32 CPU port, on the segments of the bundled passages
//! (`engine::parity` says why stages and not whole renders).
//!
//! Encoder: durations equal, F0 and text features' relative error, alone and in one batch.
//! Decoder: SNR of one exact pass and of a later segment's streaming windows, both fed the
//! CPU's encoder output. The bar the CPU's bf16 paths are held to is 30 dB.

use std::path::PathBuf;

use anyhow::Context;
use engine::parity;
use engine::voice::VoiceTable;
use engine::SpeechRequest;

#[derive(Debug, clap::Args)]
pub struct ParityBenchArgs {
    /// Text files whose segments are compared (default: welcome, three-sentences, paragraph
    /// and long from assets/passages).
    pub passages: Vec<PathBuf>,
    /// Voice to compare with.
    #[arg(long, default_value = "af_heart")]
    pub voice: String,
    #[command(flatten)]
    pub engine: super::EngineArgs,
}

pub fn run(args: &ParityBenchArgs) -> anyhow::Result<()> {
    let (choice, store) = super::models::device_and_store(&args.engine)?;
    let device = choice.open()?;
    let request = SpeechRequest::new(&args.voice, 1.0)?;
    let table = VoiceTable::read(&store.voice_table(&args.voice))
        .with_context(|| format!("`{}` must be a stock voice", args.voice))?;
    let passages = if args.passages.is_empty() {
        ["welcome", "three-sentences", "paragraph", "long"]
            .iter()
            .map(|p| PathBuf::from(format!("assets/passages/{p}.txt")))
            .collect()
    } else {
        args.passages.clone()
    };
    let mut segments = Vec::new();
    let mut names = Vec::new();
    for path in &passages {
        let text = fs_err::read_to_string(path)?;
        let stem = path
            .file_stem()
            .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
        for (i, seg) in engine::segments::segments(&text, &request)?
            .into_iter()
            .enumerate()
        {
            let style = table.style_for(seg.ids.len()).to_vec();
            names.push(format!("{stem} #{}", i + 1));
            segments.push((seg.ids, style));
        }
    }
    println!(
        "banter bench parity — {} segments of {} against the f32 CPU port, voice {}",
        segments.len(),
        if device.is_cpu() {
            format!(
                "the CPU (BANTER_PRECISION={:?})",
                engine::Precision::from_env()
            )
        } else {
            choice.to_string()
        },
        args.voice
    );
    let kernels = parity::cuda_kernels(&device)?;
    if !kernels.is_empty() {
        println!("Banter's CUDA kernels against their CPU references (random inputs):");
        for (name, diff, scale) in &kernels {
            let rel = diff / scale.max(f32::MIN_POSITIVE);
            let verdict = if rel < 1e-4 { "ok" } else { "DIFFERENT" };
            println!("  {name:<22} max |Δ| {diff:.1e} of {scale:.1e} (rel {rel:.1e}) {verdict}");
        }
    }
    let report = parity::run(&store.kokoro_weights(), &device, &segments)?;
    let rows = &report.segments;
    println!(
        "{:<22}{:>7}{:>7}  {:>5}{:>9}{:>9}  {:>9}{:>9}  {:>10}{:>10}",
        "segment",
        "tokens",
        "frames",
        "dur",
        "F0 rel",
        "asr rel",
        "batch dur",
        "batch F0",
        "whole dB",
        "window dB"
    );
    let yes = |b: bool| if b { "same" } else { "DIFF" };
    for (name, r) in names.iter().zip(rows) {
        println!(
            "{name:<22}{:>7}{:>7}  {:>5}{:>9.1e}{:>9.1e}  {:>9}{:>9.1e}  {:>9.1e}{:>9.1e}  {:>10.1}{:>10.1}",
            r.tokens,
            r.frames,
            yes(r.durations_equal),
            r.f0_rel,
            r.asr_rel,
            yes(r.batch_durations_equal),
            r.batch_f0_rel,
            r.body_rel,
            r.har_rel,
            r.whole_snr_db,
            r.windowed_snr_db
        );
    }
    let worst =
        |f: fn(&parity::SegmentParity) -> f64| rows.iter().map(f).fold(f64::INFINITY, f64::min);
    println!(
        "lowest SNR: whole {:.1} dB, windowed {:.1} dB; durations differ alone in {} and in the batch in {} of {} segments",
        worst(|r| r.whole_snr_db),
        worst(|r| r.windowed_snr_db),
        rows.iter().filter(|r| !r.durations_equal).count(),
        rows.iter().filter(|r| !r.batch_durations_equal).count(),
        rows.len()
    );
    println!(
        "generator pass over the longest segment, piece by piece (rel err): {}",
        report
            .longest_trace
            .iter()
            .map(|e| format!("{e:.1e}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!("the last stage's input over the longest segment, layer by layer (rel err):");
    for (layer, err) in &report.last_stage_input {
        println!("  {layer:<56}{err:.1e}");
    }
    println!("generator layers with random weights, device against the CPU:");
    for (op, rows, err) in parity::op_sweep(&device)? {
        println!("  {op:<48}{rows:>7} rows  rel err {err:.1e}");
    }
    Ok(())
}
