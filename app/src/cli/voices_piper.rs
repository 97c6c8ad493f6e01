//! `banter voices add NAME FILE.onnx`: a Piper voice the user brings, saved in the library.
//!
//! The pair (`FILE.onnx` and `FILE.onnx.json`) is checked first: a voice that cannot speak is
//! refused now, with the reason, not halfway through an episode. A multi-speaker model adds one
//! voice per speaker (`NAME/SPEAKER`), all or none. Piper voices carry their own licences: what
//! the `.onnx.json` says of its dataset and licence is kept and shown by `banter voices`.

use std::path::PathBuf;

use engine::library::NewPiperVoice;
use engine::voice::inspect_piper_model;

use crate::exit::BadInput;

#[derive(Debug, clap::Args)]
pub struct AddArgs {
    /// The name to speak it by (a multi-speaker model adds NAME/SPEAKER for each speaker).
    pub name: String,
    /// The Piper voice's model, `NAME.onnx`, with `NAME.onnx.json` beside it.
    pub onnx: PathBuf,
    /// A note kept with the voice.
    #[arg(long, default_value = "")]
    pub notes: String,
}

pub fn add(args: &AddArgs) -> anyhow::Result<()> {
    let info = inspect_piper_model(&args.onnx).map_err(|e| BadInput(e.to_string()))?;
    let voices = NewPiperVoice::for_model(&info, args.name.trim(), &args.notes);
    let library = super::library::open()?;
    let added = library
        .add_piper_voices(&voices)
        .map_err(super::voices::library_input_error)?;
    let config = &info.config;
    for v in &added {
        eprintln!(
            "added {} (Piper, {} Hz, espeak voice {}{})",
            v.name,
            config.sample_rate,
            if config.espeak_voice.is_empty() {
                "none"
            } else {
                &config.espeak_voice
            },
            config
                .language
                .as_deref()
                .map(|l| format!(", {l}"))
                .unwrap_or_default()
        );
    }
    eprintln!(
        "model: {} (sha256 {}…); dataset: {}; licence: {}",
        info.onnx.display(),
        &info.sha256[..12],
        config.dataset.as_deref().unwrap_or("not stated"),
        config
            .license
            .as_deref()
            .unwrap_or("not stated in the .onnx.json (see the voice's MODEL_CARD)")
    );
    Ok(())
}
