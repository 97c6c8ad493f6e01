//! `banter voices`: the voices Banter can speak in (stock voices from the model store, blends
//! and matched voices from the library), and the commands that add and remove library voices.
//!
//! `voices tune` (in `voices_tune`) searches beyond the blends toward a clip's speaker.
//!
//! `voices match` finds the stock voice, blend of stock voices or library Piper voice whose
//! speech is closest to the speaker of a clip. It says so plainly: a match, not a clone. A
//! Piper winner is that Piper voice itself (the families do not blend), so NAME is saved as
//! another name for it, and the output says so; a Piper voice that could not be compared (its
//! model file moved, say) is named in a warning.

use std::path::PathBuf;
use std::time::Instant;

use engine::assets::ModelStore;
use engine::library::{Library, NewVoice, Voice, VoiceKind};
use engine::phonemes::Language;
use engine::voice::{StockVoice, VoiceSpec, VoiceTable};
use engine::voicematch::matching::{save_match, MatchOptions};
use engine::voicematch::{match_voice, MatchEvent, PiperScore, VoiceMatch};

use super::library::{load_embedder, user_error};
use super::EngineArgs;
use crate::exit::BadInput;

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct VoicesArgs {
    #[command(subcommand)]
    pub command: Option<VoicesCommand>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Model folder (default: $BANTER_MODEL_DIR or $XDG_DATA_HOME/banter/models).
    #[arg(long, value_name = "DIR")]
    pub models: Option<PathBuf>,
}

#[derive(Debug, clap::Subcommand)]
pub enum VoicesCommand {
    /// Save a blend of stock voices as NAME, e.g. `warm af_bella:0.7+af_sky:0.3`.
    Blend {
        name: String,
        /// Stock voices with weights: `af_bella:0.7+af_sky:0.3` or `af_bella(2)+af_sky(1)`.
        recipe: String,
        /// A note kept with the voice.
        #[arg(long, default_value = "")]
        notes: String,
        #[arg(long, value_name = "DIR")]
        models: Option<PathBuf>,
    },
    /// Find the stock voice, blend of stock voices or library Piper voice closest to the speaker
    /// in CLIP (WAV, FLAC, MP3, Ogg) and save it as NAME. This matches a voice Banter has; it
    /// does not clone.
    Match(MatchArgs),
    /// Tune a voice toward the speaker of CLIP… (one speaker, 10–30 s of speech in all) and
    /// save it as NAME: a Kokoro voice searched beyond the stock blends, not a clone. Only
    /// tune voices you have the speaker's permission to use.
    Tune(super::voices_tune::TuneArgs),
    /// Add a Piper voice: NAME.onnx with NAME.onnx.json beside it (Piper voices carry their
    /// own licences; the dataset and licence the .onnx.json states are shown by `banter voices`).
    Add(super::voices_piper::AddArgs),
    /// Remove a saved blend, matched, tuned or Piper voice (a Piper voice's file is left alone).
    Rm { name: String },
}

#[derive(Debug, clap::Args)]
pub struct MatchArgs {
    pub name: String,
    pub clip: PathBuf,
    /// Print `{"voice", "recipe", "similarity", "family", "piper", "best_kokoro", "nearest_stock",
    /// "nearest_piper", "skipped", "embedding_cache"}`.
    #[arg(long)]
    pub json: bool,
    /// Compare only with these voices (comma-separated stock voices and library Piper voices);
    /// default: every English stock voice and every English Piper voice in the library.
    #[arg(long, value_delimiter = ',', value_name = "VOICES")]
    pub among: Vec<String>,
    /// Probe renders the blend search may spend (each is about 9 s of speech).
    #[arg(long, default_value_t = 12, value_parser = clap::value_parser!(u16).range(0..=48))]
    pub renders: u16,
    /// Show the match without saving it.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// The exact `--json` shape of `voices match`.
#[derive(serde::Serialize)]
struct MatchJson<'a> {
    voice: &'a str,
    /// The winner in voice-spec form (a Piper winner's key, `piper/…`).
    recipe: &'a str,
    similarity: f32,
    /// `kokoro` or `piper`: the winner's family.
    family: &'static str,
    /// The Piper winner, or null.
    piper: Option<PiperJson<'a>>,
    /// The best stock voice or blend, `[recipe, similarity]`, or null.
    best_kokoro: Option<(&'a str, f32)>,
    nearest_stock: Vec<(&'a str, f32)>,
    nearest_piper: Vec<PiperJson<'a>>,
    /// Piper voices that could not be compared: `{name, model, reason}`.
    skipped: Vec<serde_json::Value>,
    embedding_cache: &'a str,
}

#[derive(serde::Serialize)]
struct PiperJson<'a> {
    name: &'a str,
    language: &'a str,
    model: &'a std::path::Path,
    similarity: f32,
}

impl<'a> PiperJson<'a> {
    fn new(p: &'a PiperScore) -> Self {
        Self {
            name: &p.name,
            language: &p.language,
            model: &p.model,
            similarity: p.similarity,
        }
    }
}

pub fn run(args: &VoicesArgs) -> anyhow::Result<()> {
    match &args.command {
        None => list(args),
        Some(VoicesCommand::Blend {
            name,
            recipe,
            notes,
            models,
        }) => blend(name, recipe, notes, models.as_ref()),
        Some(VoicesCommand::Match(m)) => match_clip(m),
        Some(VoicesCommand::Tune(t)) => super::voices_tune::tune(t),
        Some(VoicesCommand::Add(a)) => super::voices_piper::add(a),
        Some(VoicesCommand::Rm { name }) => {
            let library = super::library::open()?;
            match library.remove_voice(name) {
                Ok(()) => {
                    eprintln!("removed {}", name.trim());
                    Ok(())
                }
                Err(
                    e @ (engine::library::LibraryError::NotFound { .. }
                    | engine::library::LibraryError::StockVoice { .. }),
                ) => Err(BadInput(e.to_string()).into()),
                Err(e) => Err(e.into()),
            }
        }
    }
}

pub(super) fn store(dir: Option<&PathBuf>) -> anyhow::Result<ModelStore> {
    let store = match dir {
        Some(d) => ModelStore::at(d),
        None => ModelStore::open_default()?,
    };
    super::models::ensure_store(&store)?;
    Ok(store)
}

/// A library with the store's stock voices seeded.
pub(super) fn seeded(store: &ModelStore) -> anyhow::Result<Library> {
    let library = super::library::open()?;
    library.seed_stock_voices(&engine::voice::stock_voices(store))?;
    Ok(library)
}

fn list(args: &VoicesArgs) -> anyhow::Result<()> {
    let store = store(args.models.as_ref())?;
    let voices: Vec<Voice> = match seeded(&store) {
        Ok(library) => library.list_voices()?,
        Err(e) => {
            eprintln!("warning: the voice library is unavailable ({e}); listing stock voices only");
            return list_stock(&store, args.json);
        }
    };
    let library = super::library::open()?;
    let piper = |v: &Voice| -> Option<engine::library::PiperRecord> {
        (v.kind == VoiceKind::Piper)
            .then(|| library.piper_record(&v.name).ok().flatten())
            .flatten()
    };
    if args.json {
        let list: Vec<serde_json::Value> = voices
            .iter()
            .map(|v| {
                let mut item = serde_json::json!({
                    "name": v.name,
                    "kind": kind_str(v.kind),
                    "language": v.language.map(Language::espeak_code),
                    "gender": v.gender.map(|g| g.to_string()),
                    "recipe": v.recipe,
                    "notes": v.notes,
                });
                if let Some(p) = piper(v) {
                    item["piper"] = serde_json::json!({
                        "model": p.onnx_path,
                        "sha256": p.onnx_sha256,
                        "speaker": p.speaker,
                        "dataset": p.dataset,
                        "license": p.license,
                        "language": piper_language(&p),
                    });
                }
                item
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(());
    }
    println!(
        "{:<14} {:<8} {:<22} {:<7} RECIPE",
        "NAME", "KIND", "LANGUAGE", "GENDER"
    );
    for v in &voices {
        if let Some(p) = piper(v) {
            println!(
                "{:<14} {:<8} {:<22} {:<7} {} (dataset: {}; licence: {})",
                v.name,
                kind_str(v.kind),
                piper_language(&p).unwrap_or_default(),
                "",
                p.onnx_path.display(),
                p.dataset.as_deref().unwrap_or("not stated"),
                p.license.as_deref().unwrap_or("not stated")
            );
            continue;
        }
        println!(
            "{:<14} {:<8} {:<22} {:<7} {}",
            v.name,
            kind_str(v.kind),
            v.language.map_or("", language_name),
            v.gender.map(|g| g.to_string()).unwrap_or_default(),
            v.recipe.clone().unwrap_or_default()
        );
    }
    Ok(())
}

/// A Piper voice's language as its saved `.onnx.json` states it (`en_US`).
fn piper_language(p: &engine::library::PiperRecord) -> Option<String> {
    engine::voice::PiperConfig::parse(&p.config_json)
        .ok()
        .and_then(|c| c.language)
}

fn list_stock(store: &ModelStore, json: bool) -> anyhow::Result<()> {
    let voices = engine::voice::stock_voices(store);
    if json {
        println!("{}", serde_json::to_string_pretty(&voices)?);
        return Ok(());
    }
    println!("{:<14} {:<8} {:<22} GENDER", "NAME", "KIND", "LANGUAGE");
    for v in voices {
        println!(
            "{:<14} {:<8} {:<22} {}",
            v.name,
            "stock",
            language_name(v.language),
            v.gender
        );
    }
    Ok(())
}

fn kind_str(kind: VoiceKind) -> &'static str {
    kind.as_str()
}

fn blend(name: &str, recipe: &str, notes: &str, models: Option<&PathBuf>) -> anyhow::Result<()> {
    let spec = VoiceSpec::parse(recipe).map_err(|e| BadInput(e.to_string()))?;
    let store = store(models)?;
    let library = seeded(&store)?;
    let mut parts = Vec::with_capacity(spec.terms.len());
    for term in &spec.terms {
        let path = store.voice_table(&term.voice);
        if StockVoice::from_name(&term.voice).is_none() || !path.is_file() {
            return Err(BadInput(format!(
                "`{}` is not a stock voice; a blend mixes stock voices (`banter voices` lists them)",
                term.voice
            ))
            .into());
        }
        parts.push((VoiceTable::read(&path)?, term.weight));
    }
    let heaviest = spec
        .terms
        .iter()
        .max_by(|a, b| a.weight.total_cmp(&b.weight))
        .and_then(|t| StockVoice::from_name(&t.voice));
    let voice = library
        .add_voice(&NewVoice {
            name: name.to_owned(),
            kind: VoiceKind::Blend,
            language: Some(spec.language()),
            gender: heaviest.map(|v| v.gender),
            recipe: Some(spec.canonical()),
            style: Some(VoiceTable::blend(&parts)),
            notes: notes.to_owned(),
        })
        .map_err(library_input_error)?;
    eprintln!(
        "saved blend {} = {}",
        voice.name,
        voice.recipe.unwrap_or_default()
    );
    warn_if_not_castable(&voice.name);
    Ok(())
}

/// Duplicate and invalid names are the user's to fix (exit status 2).
pub(super) fn library_input_error(e: engine::library::LibraryError) -> anyhow::Error {
    use engine::library::LibraryError as E;
    match e {
        E::DuplicateName { .. } | E::InvalidName { .. } => BadInput(e.to_string()).into(),
        other => other.into(),
    }
}

/// Script cast sections accept ASCII voice names only; other names work through `--cast`.
/// `name` trimmed, if it is a valid voice name not yet taken (taken is fine when only trying).
pub(super) fn check_new_name(
    library: &Library,
    name: &str,
    dry_run: bool,
) -> anyhow::Result<String> {
    let trimmed = name.trim();
    if trimmed.is_empty() || trimmed.chars().any(char::is_control) || trimmed.chars().count() > 200
    {
        return Err(BadInput(format!(
            "invalid voice name {name:?}: give 1 to 200 characters, no control characters"
        ))
        .into());
    }
    if !dry_run && library.get_voice(trimmed)?.is_some() {
        return Err(BadInput(format!(
            "a voice named `{trimmed}` already exists; choose another name (or `banter voices rm` \
             it)"
        ))
        .into());
    }
    Ok(trimmed.to_owned())
}

pub(super) fn warn_if_not_castable(name: &str) {
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        eprintln!(
            "note: a script's cast section accepts voice names of ASCII letters, digits, `_` \
             and `-`; use `--cast SPEAKER={name}` (or `banter say --voice`) for this one"
        );
    }
}

fn match_clip(args: &MatchArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let store = store(args.engine.models.as_ref())?;
    let library = seeded(&store)?;
    check_new_name(&library, &args.name, args.dry_run)?;
    let engine = super::models::load_engine(&args.engine)?;
    let embedder = load_embedder(&store, &engine)?;
    let options = MatchOptions {
        candidates: (!args.among.is_empty()).then(|| args.among.clone()),
        max_renders: usize::from(args.renders),
        ..MatchOptions::default()
    };
    let found = match_voice(
        &embedder,
        &engine,
        &library,
        &args.clip,
        &options,
        &mut show_progress,
    )
    .map_err(user_error)?;
    if found.clip.truncated {
        eprintln!(
            "note: the clip is long; only its first {:.0} s were used",
            found.clip.embedded_secs
        );
    }
    if let Some(damage) = &found.clip.damaged {
        eprintln!("note: the clip is damaged ({damage}); the part before the damage was used");
    }
    for skipped in &found.skipped {
        eprintln!(
            "warning: Piper voice `{}` was not compared ({}): {}",
            skipped.name,
            skipped.model.display(),
            skipped.reason
        );
    }
    if !args.dry_run {
        save_match(&library, &engine, &args.name, &args.clip, &found).map_err(user_error)?;
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string(&match_json(args.name.trim(), &found))?
        );
    } else {
        print_match(args.name.trim(), &found);
    }
    eprintln!(
        "{} in {:.1} s ({} blends scored, {} probes rendered now, clip embedding cache: {})",
        if args.dry_run {
            "matched (not saved: --dry-run)"
        } else {
            "matched and saved"
        },
        started.elapsed().as_secs_f64(),
        found.blends_tried,
        found.renders,
        found.clip.cache.as_str()
    );
    warn_if_not_castable(args.name.trim());
    Ok(())
}

fn match_json<'a>(voice: &'a str, found: &'a VoiceMatch) -> MatchJson<'a> {
    MatchJson {
        voice,
        recipe: &found.recipe,
        similarity: found.similarity,
        family: if found.piper.is_some() {
            "piper"
        } else {
            "kokoro"
        },
        piper: found.piper.as_ref().map(PiperJson::new),
        best_kokoro: found.best_kokoro.as_ref().map(|(r, s)| (r.as_str(), *s)),
        nearest_stock: found
            .nearest_stock
            .iter()
            .map(|(n, s)| (n.as_str(), *s))
            .collect(),
        nearest_piper: found.nearest_piper.iter().map(PiperJson::new).collect(),
        skipped: found
            .skipped
            .iter()
            .map(|s| serde_json::json!({"name": s.name, "model": s.model, "reason": s.reason}))
            .collect(),
        embedding_cache: found.clip.cache.as_str(),
    }
}

fn print_match(name: &str, found: &VoiceMatch) {
    println!(
        "{name} = {}  (similarity {:.3})",
        found.label(),
        found.similarity
    );
    if !found.nearest_stock.is_empty() {
        let nearest: Vec<String> = found
            .nearest_stock
            .iter()
            .map(|(n, s)| format!("{n} {s:.3}"))
            .collect();
        println!("nearest stock voices: {}", nearest.join(", "));
    }
    if !found.nearest_piper.is_empty() {
        let nearest: Vec<String> = found
            .nearest_piper
            .iter()
            .map(|p| format!("{} (Piper, {}) {:.3}", p.name, p.language, p.similarity))
            .collect();
        println!("nearest Piper voices: {}", nearest.join(", "));
    }
    match (&found.piper, &found.best_kokoro) {
        (Some(p), kokoro) => {
            if let Some((recipe, s)) = kokoro {
                println!("best Kokoro voice or blend: {recipe} {s:.3}");
            }
            println!(
                "The closest voice is the Piper voice {} itself ({}), matched to the clip's \
                 speaker; {name} is another name for it (Piper and Kokoro voices cannot be \
                 blended). It is not a clone of the clip's voice.",
                p.name,
                p.model.display()
            );
        }
        (None, _) => println!(
            "This is the closest voice Banter can speak (a stock voice or a blend of them), \
             matched to the clip's speaker; it is not a clone of that voice."
        ),
    }
}

fn show_progress(event: &MatchEvent) {
    match event {
        MatchEvent::ClipEmbedded(c) => eprintln!(
            "clip embedded ({:.1} s{}; embedding cache: {})",
            c.embedded_secs,
            c.speech_secs
                .map(|s| format!(", {s:.1} s of speech"))
                .unwrap_or_default(),
            c.cache.as_str()
        ),
        MatchEvent::Stock {
            name,
            done,
            total,
            cache,
        } => {
            if *cache == engine::voicematch::CacheUse::Miss {
                match name.strip_suffix(" (Piper)") {
                    Some(piper) => {
                        eprintln!("[{done}/{total}] measured Piper voice {piper} (once)");
                    }
                    None => eprintln!("[{done}/{total}] measured stock voice {name} (once)"),
                }
            }
        }
        MatchEvent::Blend {
            recipe,
            similarity,
            render,
            budget,
        } => eprintln!("blend {render}/{budget}: {recipe} → {similarity:.3}"),
    }
}

/// The language as a podcast author would name it.
fn language_name(language: Language) -> &'static str {
    match language {
        Language::EnUs => "American English",
        Language::EnGb => "British English",
        Language::Es => "Spanish",
        Language::Fr => "French",
        Language::Hi => "Hindi",
        Language::It => "Italian",
        Language::PtBr => "Brazilian Portuguese",
        Language::Ja => "Japanese",
        Language::Cmn => "Mandarin Chinese",
    }
}
