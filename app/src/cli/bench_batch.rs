//! `banter bench batch`: what encoding several segments in one pass saves, beside encoding
//! them one at a time, in the same run.
//!
//! Each row takes `B` sentences of the bundled passages (voices taken in turn, so a batch mixes
//! voices as a burst of API requests does) and times the scheduler's first step for each
//! segment — encoder, decoder body, harmonic source — once per segment and once as one batch
//! (`Synthesizer::begin_batch`). Best of `--runs`; machines are noisy, so read the ratio.

use std::time::Instant;

use engine::kokoro::stream::ChunkPlan;
use engine::synth::{Segment, SpeechRequest, SynthError};

use super::EngineArgs;

#[derive(Debug, clap::Args)]
pub struct BatchBenchArgs {
    /// Batch sizes to time.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8")]
    pub sizes: Vec<usize>,
    /// Voices, taken in turn by the batch's members.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "af_heart,am_michael,bf_emma"
    )]
    pub voices: Vec<String>,
    /// Timed runs per row (the best is reported), after one warm-up.
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    #[command(flatten)]
    pub engine: EngineArgs,
}

pub fn run(args: &BatchBenchArgs) -> anyhow::Result<()> {
    let synth = super::models::load_synthesizer(&args.engine)?;
    let requests = args
        .voices
        .iter()
        .map(|v| SpeechRequest::new(v, 1.0))
        .collect::<Result<Vec<_>, _>>()?;
    let first = requests
        .first()
        .ok_or_else(|| crate::exit::BadInput("--voices names no voice".into()))?;
    let mut sentences: Vec<Segment> = Vec::new();
    for name in ["three-sentences.txt", "paragraph.txt", "welcome.txt"] {
        let text = fs_err::read_to_string(std::path::Path::new("assets/passages").join(name))?;
        let phonemes: Vec<String> = synth
            .segments(&text, first)?
            .into_iter()
            .map(|s| s.phonemes)
            .collect();
        sentences.extend(phonemes.iter().flat_map(|p| synth.sentence_segments(p)));
    }
    let plan = ChunkPlan::streaming();
    println!(
        "banter bench batch — {} sentences of {}–{} phonemes, voices {}, device {}",
        sentences.len(),
        sentences.iter().map(|s| s.ids.len()).min().unwrap_or(0),
        sentences.iter().map(|s| s.ids.len()).max().unwrap_or(0),
        args.voices.join(", "),
        engine::device::describe(synth.device())
    );
    println!(
        "{:>5} {:>9} {:>14} {:>14} {:>12} {:>8}",
        "batch", "phonemes", "one by one ms", "one batch ms", "ms per item", "ratio"
    );
    for &size in &args.sizes {
        if size == 0 {
            continue;
        }
        let items: Vec<(&Segment, &SpeechRequest, ChunkPlan)> = sentences
            .iter()
            .cycle()
            .take(size)
            .zip(requests.iter().cycle())
            .map(|(s, r)| (s, r, plan))
            .collect();
        let phonemes: usize = items.iter().map(|(s, _, _)| s.ids.len()).sum();
        let alone = || -> Result<(), SynthError> {
            for (segment, request, plan) in &items {
                synth.begin(segment, request, *plan)?;
            }
            Ok(())
        };
        let batched = || -> Result<(), SynthError> {
            for r in synth.begin_batch(&items) {
                r?;
            }
            Ok(())
        };
        let one_by_one = best_of(args.runs, alone)?;
        let together = best_of(args.runs, batched)?;
        println!(
            "{size:>5} {phonemes:>9} {:>14.1} {:>14.1} {:>12.1} {:>7.2}×",
            one_by_one * 1e3,
            together * 1e3,
            together * 1e3 / size as f64,
            one_by_one / together
        );
    }
    Ok(())
}

/// Seconds of the fastest of `runs` calls, after a warm-up.
fn best_of(runs: usize, mut f: impl FnMut() -> Result<(), SynthError>) -> Result<f64, SynthError> {
    f()?;
    let mut best = f64::INFINITY;
    for _ in 0..runs.max(1) {
        let started = Instant::now();
        f()?;
        best = best.min(started.elapsed().as_secs_f64());
    }
    Ok(best)
}
