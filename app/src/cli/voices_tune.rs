//! `banter voices tune NAME CLIP…`: a voice tuned toward the speaker of one or more clips,
//! saved in the library as kind `tuned` (see `engine::voicematch::tune`).
//!
//! It says what it is: a tuned Kokoro voice, not a clone; the similarity before (the best
//! blend) and after, both on sentences the search never heard; and that only voices whose
//! speaker agreed may be tuned. Ctrl-C stops it before the next render with nothing saved.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use engine::voicematch::tune::{save_tuned, tune_voice, TuneEvent, TuneOptions, CONSENT};
use engine::voicematch::{MatchEvent, MatchOptions, VoiceMatchError};

use super::library::{load_embedder, user_error};
use super::EngineArgs;

#[derive(Debug, clap::Args)]
pub struct TuneArgs {
    pub name: String,
    /// One or more clips of the same speaker (WAV, FLAC, MP3, Ogg); 10–30 s of speech in all
    /// is best.
    #[arg(required = true)]
    pub clips: Vec<PathBuf>,
    /// Time for the whole tuning, in seconds (the search stops in time to check its result).
    #[arg(long, default_value_t = 270, value_parser = clap::value_parser!(u32).range(20..=3600))]
    pub seconds: u32,
    /// Stop after this many candidates (default: as many as the time allows).
    #[arg(long)]
    pub candidates: Option<usize>,
    /// Start from the best of these stock voices and their blends (comma-separated); default:
    /// every English one.
    #[arg(long, value_delimiter = ',', value_name = "VOICES")]
    pub among: Vec<String>,
    /// Blend renders the starting match may spend.
    #[arg(long, default_value_t = 12, value_parser = clap::value_parser!(u16).range(0..=48))]
    pub renders: u16,
    /// Principal axes of the stock voices' packs to search along.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub axes: u32,
    /// The search's seed: the same seed, clips and model give the same voice.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print the result as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Tune and report without saving.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub engine: EngineArgs,
}

pub fn tune(args: &TuneArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    eprintln!("{CONSENT}");
    let store = super::voices::store(args.engine.models.as_ref())?;
    let library = super::voices::seeded(&store)?;
    let name = super::voices::check_new_name(&library, &args.name, args.dry_run)?;
    let engine = super::models::load_engine(&args.engine)?;
    let embedder = load_embedder(&store, &engine)?;
    let cancel =
        super::cancel_on_ctrl_c("stopping before the next render; nothing will be saved…")?;
    let options = TuneOptions {
        time_limit: Duration::from_secs(u64::from(args.seconds)),
        max_candidates: args.candidates,
        seed: args.seed,
        axes: args.axes as usize,
        matching: MatchOptions {
            candidates: (!args.among.is_empty()).then(|| args.among.clone()),
            max_renders: usize::from(args.renders),
            ..MatchOptions::default()
        },
    };
    let mut last_shown = Instant::now();
    let result = tune_voice(
        &embedder,
        &engine,
        &library,
        &args.clips,
        &options,
        &cancel,
        &mut |e| show(e, &mut last_shown),
    );
    let tuned = match result {
        Ok(t) => t,
        Err(VoiceMatchError::Cancelled) => {
            return Err(crate::exit::Stopped("cancelled; nothing was saved".into()).into())
        }
        Err(e) => return Err(user_error(e)),
    };
    if let Err(e) = tuned.accept() {
        eprintln!(
            "searched {} candidates in {:.0} s from {}",
            tuned.tried,
            tuned.elapsed.as_secs_f64(),
            tuned.start_recipe
        );
        return Err(user_error(e));
    }
    if !args.dry_run {
        save_tuned(&library, &name, &tuned).map_err(user_error)?;
    }
    super::voices::warn_if_not_castable(&name);
    let nearest = tuned.nearest_stock.first().cloned().unwrap_or_default();
    if args.json {
        let out = serde_json::json!({
            "voice": name,
            "kind": "tuned",
            "saved": !args.dry_run,
            "start_recipe": tuned.start_recipe,
            "nearest_stock": nearest.0,
            "similarity_before": tuned.before,
            "similarity_after": tuned.after,
            "stability_before": tuned.stability_before,
            "stability": tuned.stability,
            "probe_before": tuned.probe_before,
            "probe_after": tuned.probe_after,
            "candidates": tuned.tried,
            "moves": tuned.moves,
            "seconds": tuned.elapsed.as_secs_f64(),
        });
        println!("{}", serde_json::to_string(&out)?);
    } else {
        println!(
            "{name}: tuned from {} — similarity on held-out sentences {:.3} → {:.3} \
             (stability {:.3})",
            tuned.start_recipe, tuned.before, tuned.after, tuned.stability
        );
        println!(
            "This is a Kokoro voice tuned toward the clip's speaker, not a clone of that voice. \
             {CONSENT}"
        );
    }
    eprintln!(
        "{} in {:.0} s ({} candidates, {} moves of the search)",
        if args.dry_run {
            "tuned (not saved: --dry-run)"
        } else {
            "tuned and saved"
        },
        started.elapsed().as_secs_f64(),
        tuned.tried,
        tuned.moves
    );
    Ok(())
}

fn show(event: &TuneEvent, last: &mut Instant) {
    match event {
        TuneEvent::Clips(t) => {
            for c in &t.clips {
                eprintln!(
                    "clip {}: {:.1} s of speech{}",
                    c.path.display(),
                    c.speech_secs,
                    if c.embedding.truncated {
                        format!(" (long: its first {:.0} s used)", c.embedding.embedded_secs)
                    } else {
                        String::new()
                    }
                );
            }
        }
        TuneEvent::Match(MatchEvent::Blend {
            recipe,
            similarity,
            render,
            budget,
        }) => eprintln!("matching {render}/{budget}: {recipe} → {similarity:.3}"),
        TuneEvent::Match(MatchEvent::Stock {
            name, done, total, ..
        }) if done == total || last.elapsed() > Duration::from_secs(5) => {
            *last = Instant::now();
            eprintln!("matching: compared with {done}/{total} stock voices ({name})");
        }
        TuneEvent::Match(_) => {}
        TuneEvent::Started {
            recipe,
            before,
            probe_similarity,
            axes,
        } => eprintln!(
            "starting from {recipe}: similarity {before:.3} on held-out sentences, \
             {probe_similarity:.3} on the search's probes; searching {axes} axes…"
        ),
        TuneEvent::Candidate {
            tried,
            estimate,
            moved,
            elapsed,
            left,
        } => {
            if *moved && last.elapsed() > Duration::from_secs(10) {
                *last = Instant::now();
                eprintln!(
                    "candidate {tried}: similarity so far about {estimate:.3} on the probes \
                     ({:.0} s, {:.0} s left)",
                    elapsed.as_secs_f64(),
                    left.as_secs_f64()
                );
            }
        }
        TuneEvent::Checking => eprintln!("checking the result on held-out sentences…"),
    }
}
