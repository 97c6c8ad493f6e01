//! `banter bench tune DIR`: tunes a voice toward each reference speaker in DIR (`<name>.wav`,
//! as `tools/bench/tune_refs.sh` makes them: voices that are not Kokoro's) and prints, per
//! speaker, the nearest stock voice, the best blend and the tuned voice's similarity on the
//! held-out sentences, its stability, the time taken and the peak RSS; with `--judge`, also
//! Whisper's word error rate of the tuned voice and of the nearest stock voice on a fixed
//! passage (the judge tool is not part of Banter; without it the WAVs are written and the
//! command to judge them printed).
//!
//! It runs in a temporary library, so the first tuning would pay for measuring every stock
//! voice once (about a minute here; an author's library keeps those measurements). That is
//! done first and reported apart, and each speaker's time is then what an author waits.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use anyhow::Context;
use engine::audio::{write_wav_file, SampleFormat};
use engine::library::Library;
use engine::script::{ENGLISH_FEMALE, ENGLISH_MALE};
use engine::voice::VoiceSpec;
use engine::voicematch::tune::{tune_voice, Renderer, TuneOptions};
use engine::voicematch::VoiceMatchError;
use engine::SAMPLE_RATE;

use super::library::load_embedder;
use super::EngineArgs;

#[derive(Debug, clap::Args)]
pub struct TuneBenchArgs {
    /// Folder of reference clips, `<speaker>.wav` each (`tools/bench/tune_refs.sh DIR`).
    pub dir: PathBuf,
    /// Only these speakers (comma-separated file stems); default: every `<name>.wav` whose
    /// name has no `-` (the `-short` clips are for error tests).
    #[arg(long, value_delimiter = ',')]
    pub speakers: Vec<String>,
    /// Time per tuning, in seconds.
    #[arg(long, default_value_t = 270)]
    pub seconds: u64,
    /// The judge tool, for Whisper WER of the tuned and nearest stock voices.
    #[arg(long, value_name = "PATH")]
    pub judge: Option<PathBuf>,
    /// Where the WER passages are written (default: a temporary folder).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// The passage each tuned and nearest stock voice reads for the WER check: four bundled
/// passages, 242 words, none of them the search's probes or held-out sentences. The target is
/// "within 1 point of the stock voices"; over one 51-word paragraph a single word is 2 points
/// (the tuned voices' one error there was Whisper tiny hearing "an idea" as "and idea").
const WER_PASSAGE: &str = concat!(
    include_str!("../../../assets/passages/paragraph.txt"),
    include_str!("../../../assets/passages/long.txt"),
    include_str!("../../../assets/passages/three-sentences.txt"),
    include_str!("../../../assets/passages/welcome.txt"),
);

struct Row {
    speaker: String,
    nearest: String,
    nearest_sim: f32,
    blend: String,
    before: f32,
    after: f32,
    stability: f32,
    candidates: usize,
    secs: f64,
    rss_mb: f64,
    verdict: String,
    wer_stock: Option<(u32, u32)>,
    wer_tuned: Option<(u32, u32)>,
}

pub fn run(args: &TuneBenchArgs) -> anyhow::Result<()> {
    let speakers = speakers(args)?;
    let scratch = std::env::temp_dir().join(format!("banter-bench-tune-{}", std::process::id()));
    fs_err::create_dir_all(&scratch)?;
    let result = bench(args, &speakers, &scratch);
    let _ = fs_err::remove_dir_all(&scratch);
    result
}

fn bench(
    args: &TuneBenchArgs,
    speakers: &[(String, PathBuf)],
    scratch: &Path,
) -> anyhow::Result<()> {
    let out = args.out.clone().unwrap_or_else(|| scratch.join("wer"));
    fs_err::create_dir_all(&out)?;
    let passage = out.join("wer-passage.txt");
    fs_err::write(&passage, WER_PASSAGE)?;
    let library = Library::open(scratch.join("library.sqlite"))?;
    let store = super::voices::store(args.engine.models.as_ref())?;
    library.seed_stock_voices(&engine::voice::stock_voices(&store))?;
    let engine = super::models::load_engine(&args.engine)?;
    let embedder = load_embedder(&store, &engine)?;

    let warm = Instant::now();
    for name in ENGLISH_FEMALE.iter().chain(ENGLISH_MALE.iter()) {
        let spec = VoiceSpec::parse(name)?;
        embedder.voice_embedding(&library, &engine, &spec)?;
    }
    let warm_s = warm.elapsed().as_secs_f64();
    eprintln!("stock voices measured once in {warm_s:.0} s (a library keeps them)");

    let never = AtomicBool::new(false);
    let mut rows = Vec::new();
    for (speaker, clip) in speakers {
        eprintln!("tuning toward {speaker} ({})…", clip.display());
        let options = TuneOptions {
            time_limit: Duration::from_secs(args.seconds),
            ..TuneOptions::default()
        };
        let started = Instant::now();
        let tuned = tune_voice(
            &embedder,
            &engine,
            &library,
            std::slice::from_ref(clip),
            &options,
            &never,
            &mut |_| {},
        );
        let secs = started.elapsed().as_secs_f64();
        let tuned = match tuned {
            Ok(t) => t,
            Err(e @ (VoiceMatchError::Silence { .. } | VoiceMatchError::SeveralSpeakers(_))) => {
                eprintln!("{speaker}: skipped: {e}");
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let (nearest, _) = tuned.nearest_stock.first().cloned().unwrap_or_default();
        let nearest_spec = VoiceSpec::parse(&nearest)?;
        let nearest_table = engine.voice(&nearest_spec)?;
        let render = Renderer::new(&engine, &embedder, tuned.language);
        let nearest_sim = render
            .heldout(&nearest_table, &tuned.target.embedding)?
            .similarity;
        let tuned_wav = out.join(format!("{speaker}-tuned.wav"));
        let stock_wav = out.join(format!("{speaker}-stock-{nearest}.wav"));
        write_wav_file(
            &tuned_wav,
            &render.speak(&tuned.table, WER_PASSAGE)?,
            SAMPLE_RATE,
            SampleFormat::Pcm16,
        )?;
        write_wav_file(
            &stock_wav,
            &render.speak(&nearest_table, WER_PASSAGE)?,
            SAMPLE_RATE,
            SampleFormat::Pcm16,
        )?;
        let (wer_stock, wer_tuned) = match &args.judge {
            Some(judge) => (
                Some(wer(judge, &stock_wav, &passage)?),
                Some(wer(judge, &tuned_wav, &passage)?),
            ),
            None => (None, None),
        };
        rows.push(Row {
            speaker: speaker.clone(),
            nearest,
            nearest_sim,
            blend: tuned.start_recipe.clone(),
            before: tuned.before,
            after: tuned.after,
            stability: tuned.stability,
            candidates: tuned.tried,
            secs,
            rss_mb: super::bench::peak_rss_mb(),
            verdict: match tuned.accept() {
                Ok(()) => "kept".to_owned(),
                Err(VoiceMatchError::NotImproved { .. }) => "refused: not closer".to_owned(),
                Err(VoiceMatchError::Unstable { .. }) => "refused: unstable".to_owned(),
                Err(e) => format!("refused: {e}"),
            },
            wer_stock,
            wer_tuned,
        });
    }
    print_table(&rows, args, warm_s, &engine, &out);
    Ok(())
}

fn print_table(
    rows: &[Row],
    args: &TuneBenchArgs,
    warm_s: f64,
    engine: &engine::Engine,
    out: &Path,
) {
    println!(
        "banter bench tune — {} s per tuning, device {}; similarities are GE2E on held-out \
         sentences the search never heard",
        args.seconds,
        engine.device_name()
    );
    println!("stock voices measured once first: {warm_s:.0} s (not counted below)");
    println!();
    println!(
        "{:<8} {:<22} {:<32} {:>7} {:>7} {:>9} {:>9} {:>9} {:>6} {:>7} {:>8}  verdict",
        "speaker",
        "nearest stock",
        "best blend",
        "blend",
        "tuned",
        "stability",
        "WER stock",
        "WER tuned",
        "cands",
        "time s",
        "RSS MB"
    );
    let fmt_wer =
        |w: Option<(u32, u32)>| w.map_or_else(|| "-".to_owned(), |(e, n)| format!("{e}/{n}"));
    for r in rows {
        println!(
            "{:<8} {:<22} {:<32} {:>7.3} {:>7.3} {:>9.3} {:>9} {:>9} {:>6} {:>7.0} {:>8.0}  {}",
            r.speaker,
            format!("{} {:.3}", r.nearest, r.nearest_sim),
            r.blend,
            r.before,
            r.after,
            r.stability,
            fmt_wer(r.wer_stock),
            fmt_wer(r.wer_tuned),
            r.candidates,
            r.secs,
            r.rss_mb,
            r.verdict
        );
    }
    if !rows.is_empty() {
        let n = rows.len() as f32;
        println!(
            "mean: nearest stock {:.3}, best blend {:.3}, tuned {:.3} (gain {:+.3} over the blend)",
            rows.iter().map(|r| r.nearest_sim).sum::<f32>() / n,
            rows.iter().map(|r| r.before).sum::<f32>() / n,
            rows.iter().map(|r| r.after).sum::<f32>() / n,
            rows.iter().map(|r| r.after - r.before).sum::<f32>() / n,
        );
    }
    if args.judge.is_none() {
        if args.out.is_some() {
            println!(
                "WER not measured: give --judge PATH (the judge tool), or judge the WAVs in {0} \
                 against {0}/wer-passage.txt",
                out.display()
            );
        } else {
            println!("WER not measured: give --judge PATH (the judge tool), or --out DIR to keep the WAVs");
        }
    }
}

/// The speakers to tune toward: `(name, clip)`.
fn speakers(args: &TuneBenchArgs) -> anyhow::Result<Vec<(String, PathBuf)>> {
    let mut found = Vec::new();
    for entry in fs_err::read_dir(&args.dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "wav") {
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let wanted = if args.speakers.is_empty() {
                !stem.contains('-')
            } else {
                args.speakers.contains(&stem)
            };
            if wanted {
                found.push((stem, path));
            }
        }
    }
    found.sort();
    anyhow::ensure!(
        !found.is_empty(),
        "no reference clips in {} (make them with tools/bench/tune_refs.sh {})",
        args.dir.display(),
        args.dir.display()
    );
    Ok(found)
}

/// Whisper's errors and words for `wav` read against `passage` (a file holding
/// [`WER_PASSAGE`]), from the judge's `= PATH: WER E/N = X` line.
fn wer(judge: &Path, wav: &Path, passage: &Path) -> anyhow::Result<(u32, u32)> {
    let output = Command::new(judge)
        .arg("wer")
        .arg(wav)
        .arg("--text-file")
        .arg(passage)
        .output()
        .with_context(|| format!("running the judge {}", judge.display()))?;
    let text = String::from_utf8_lossy(&output.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("= "))
        .with_context(|| format!("the judge printed no WER for {}: {text}", wav.display()))?;
    let figures = line
        .split("WER ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.split_once('/'))
        .and_then(|(e, n)| Some((e.parse().ok()?, n.parse().ok()?)))
        .with_context(|| format!("unreadable judge line: {line}"))?;
    Ok(figures)
}
