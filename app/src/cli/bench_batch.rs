//! `banter bench batch`: what encoding several segments in one pass saves, beside encoding
//! them one at a time, in the same run.
//!
//! Each row takes `B` sentences of the bundled passages (voices taken in turn, so a batch mixes
//! voices as a burst of API requests does) and times the scheduler's first step for each
//! segment — encoder, decoder body, harmonic source — once per segment and once as one batch
//! (`Engine::time_encoder_batch`, on the model thread). Best of `--runs`; machines are noisy,
//! so read the ratio.

use engine::Segment;
use engine::SpeechRequest;

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
    let engine = super::models::load_engine(&args.engine)?;
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
        let phonemes: Vec<String> = engine
            .segments(&text, first)?
            .into_iter()
            .map(|s| s.phonemes)
            .collect();
        sentences.extend(phonemes.iter().flat_map(|p| engine.sentence_segments(p)));
    }
    println!(
        "banter bench batch — {} sentences of {}–{} phonemes, voices {}, device {}",
        sentences.len(),
        sentences.iter().map(|s| s.ids.len()).min().unwrap_or(0),
        sentences.iter().map(|s| s.ids.len()).max().unwrap_or(0),
        args.voices.join(", "),
        engine.device_name()
    );
    println!(
        "{:>5} {:>9} {:>14} {:>14} {:>12} {:>8}",
        "batch", "phonemes", "one by one ms", "one batch ms", "ms per item", "ratio"
    );
    for &size in &args.sizes {
        if size == 0 {
            continue;
        }
        let items: Vec<(Segment, SpeechRequest)> = sentences
            .iter()
            .cycle()
            .take(size)
            .cloned()
            .zip(requests.iter().cycle().cloned())
            .collect();
        let phonemes: usize = items.iter().map(|(s, _)| s.ids.len()).sum();
        let t = engine.time_encoder_batch(items, args.runs)?;
        println!(
            "{size:>5} {phonemes:>9} {:>14.1} {:>14.1} {:>12.1} {:>7.2}×",
            t.one_by_one * 1e3,
            t.batched * 1e3,
            t.batched * 1e3 / size as f64,
            t.one_by_one / t.batched
        );
    }
    Ok(())
}
