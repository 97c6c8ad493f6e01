//! `banter voices`: the stock voices in the model store, with language and gender.

use engine::assets::ModelStore;
use engine::phonemes::Language;

#[derive(Debug, clap::Args)]
pub struct VoicesArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Model folder (default: $BANTER_MODEL_DIR or $XDG_DATA_HOME/banter/models).
    #[arg(long, value_name = "DIR")]
    pub models: Option<std::path::PathBuf>,
}

pub fn run(args: &VoicesArgs) -> anyhow::Result<()> {
    let store = match &args.models {
        Some(dir) => ModelStore::at(dir),
        None => ModelStore::open_default()?,
    };
    super::models::ensure_store(&store)?;
    let voices = engine::synth::stock_voices(&store);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&voices)?);
        return Ok(());
    }
    println!("{:<14} {:<22} GENDER", "NAME", "LANGUAGE");
    for v in voices {
        println!(
            "{:<14} {:<22} {}",
            v.name,
            language_name(v.language),
            v.gender
        );
    }
    Ok(())
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
