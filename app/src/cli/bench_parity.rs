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
    /// Instead of the device against the CPU: decode every segment's streaming windows alone
    /// and then this many at a time in one batched generator pass, on the same device, and
    /// compare each window (fails below 100 dB).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub batch: Option<u32>,
    /// With `--batch`: every segment this many times over, so a large batch has enough
    /// windows to fill it (the GPU check runs batches of up to 64).
    #[arg(
        long,
        default_value_t = 1,
        requires = "batch",
        value_parser = clap::value_parser!(u32).range(1..=64)
    )]
    pub copies: u32,
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
    let mut places = Vec::new();
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
            places.push(i);
            segments.push((seg.ids, style));
        }
    }
    if let Some(n) = args.batch {
        let copies = args.copies as usize;
        let names: Vec<String> = (0..copies)
            .flat_map(|k| {
                names.iter().map(move |name| match k {
                    0 => name.clone(),
                    k => format!("{name} (copy {})", k + 1),
                })
            })
            .collect();
        let segments: Vec<parity::batch::BatchSegment> =
            std::iter::repeat_n(segments.into_iter().zip(places).collect::<Vec<_>>(), copies)
                .flatten()
                .map(|((ids, style), index)| parity::batch::BatchSegment { ids, style, index })
                .collect();
        println!(
            "banter bench parity --batch {n} — the streaming windows of {} segments on {}, \
             voice {}: each alone, then {n} at a time in one generator pass",
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
        let report = parity::batch::run(&store.kokoro_weights(), &device, &segments, n as usize)?;
        return print_batch(&report, &names);
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

/// `--batch N`'s report: each window's SNR, the timings; an error below the bar.
fn print_batch(report: &parity::batch::BatchReport, names: &[String]) -> anyhow::Result<()> {
    println!(
        "{:<22}{:>7}{:>9}{:>11}{:>12}",
        "segment", "window", "samples", "padded to", "SNR dB"
    );
    for w in &report.windows {
        let name = names.get(w.segment).map_or("?", String::as_str);
        let verdict = if w.snr_db >= parity::batch::MIN_SNR_DB {
            ""
        } else {
            "  BELOW"
        };
        println!(
            "{name:<22}{:>7}{:>9}{:>11}{:>12.1}{verdict}",
            w.window + 1,
            w.samples,
            w.padded_to,
            w.snr_db
        );
    }
    let audio_s = report.windows.iter().map(|w| w.samples).sum::<usize>() as f64
        / f64::from(engine::SAMPLE_RATE);
    println!(
        "alone:   {} passes in {:.3} s ({:.1} ms a window, xRT {:.2})",
        report.passes_alone,
        report.alone_s,
        report.alone_s * 1e3 / report.passes_alone.max(1) as f64,
        audio_s / report.alone_s.max(1e-9)
    );
    println!(
        "batched: {} passes in {:.3} s ({:.1} ms a pass, xRT {:.2}), {:.2}x alone's time",
        report.passes_batched,
        report.batched_s,
        report.batched_s * 1e3 / report.passes_batched.max(1) as f64,
        audio_s / report.batched_s.max(1e-9),
        report.batched_s / report.alone_s.max(1e-9)
    );
    println!(
        "again:   the batched run repeated, every shape seen: {:.3} s (xRT {:.2}), {:.2}x alone's \
         time, lowest SNR {:.1} dB; CUDA graphs ready: {}",
        report.again_s,
        audio_s / report.again_s.max(1e-9),
        report.again_s / report.alone_s.max(1e-9),
        report.again_lowest_snr_db,
        report.graphs
    );
    if let Some((first, again)) = report.pools {
        let mib = |b: u64| b as f64 / 1_048_576.0;
        println!(
            "device memory after the first batched run / the repeat: pool reserved {:.0} / {:.0} \
             MiB (in use {:.0} / {:.0}), graph pool reserved {:.0} / {:.0} MiB; the steady state {}",
            mib(first.reserved),
            mib(again.reserved),
            mib(first.used),
            mib(again.used),
            mib(first.graph_reserved),
            mib(again.graph_reserved),
            if again.reserved <= first.reserved && again.graph_reserved <= first.graph_reserved {
                "took no memory from the driver"
            } else {
                "STILL ALLOCATES from the driver"
            }
        );
    }
    let p = &report.prelude;
    println!(
        "prelude (encoder and decoder body, padded batches): F0/N rel err {:.1e}{}, decoder \
         body lowest SNR {:.1} dB; alone {:.3} s, batched {:.3} s ({:.2}x)",
        p.worst_f0_n_rel,
        if p.durations_differ > 0 {
            format!(
                " ({} segments' durations rounded otherwise)",
                p.durations_differ
            )
        } else {
            String::new()
        },
        p.lowest_body_db,
        p.alone_s,
        p.batched_s,
        p.batched_s / p.alone_s.max(1e-9)
    );
    if report.reduced_layers > 0 {
        println!(
            "  ({} layers in bfloat16 or 8-bit products: the padded batch's other blocking flips \
             roundings, so the F0/N figure is held to no bar here; BANTER_PRECISION=f32 holds it \
             to {:.0e})",
            report.reduced_layers,
            parity::batch::F0_N_MAX_REL
        );
    }
    let per_frame = |secs: f64, frames: usize| secs * 1e3 / frames.max(1) as f64;
    println!(
        "generator frames (context included): alone {}, batched {} ({:.2}x, the padding to \
         buckets); per frame: alone {:.2} ms, batched {:.2} ms",
        report.frames_alone,
        report.frames_batched,
        report.frames_batched as f64 / report.frames_alone.max(1) as f64,
        per_frame(report.alone_s, report.frames_alone),
        per_frame(report.batched_s, report.frames_batched)
    );
    println!(
        "lowest SNR {:.1} dB over {} windows (bar {} dB)",
        report.lowest_snr_db(),
        report.windows.len(),
        parity::batch::MIN_SNR_DB
    );
    if report.again_lowest_snr_db < parity::batch::MIN_SNR_DB {
        anyhow::bail!(
            "the repeated batched run differs from alone ({:.1} dB, below {} dB)",
            report.again_lowest_snr_db,
            parity::batch::MIN_SNR_DB
        );
    }
    let p = &report.prelude;
    if p.lowest_body_db < parity::batch::MIN_SNR_DB {
        anyhow::bail!(
            "a batched decoder body differs from alone ({:.1} dB, below {} dB)",
            p.lowest_body_db,
            parity::batch::MIN_SNR_DB
        );
    }
    if report.reduced_layers == 0 && p.worst_f0_n_rel > parity::batch::F0_N_MAX_REL {
        anyhow::bail!(
            "batched F0/N curves differ from alone (rel err {:.1e}, above {:.0e})",
            p.worst_f0_n_rel,
            parity::batch::F0_N_MAX_REL
        );
    }
    if !report.passed() {
        anyhow::bail!(
            "{} of {} windows decoded in a batch differ from alone (below {} dB)",
            report
                .windows
                .iter()
                .filter(|w| w.snr_db < parity::batch::MIN_SNR_DB)
                .count(),
            report.windows.len(),
            parity::batch::MIN_SNR_DB
        );
    }
    Ok(())
}
