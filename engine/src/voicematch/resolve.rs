//! Library voices (blends and matched voices saved by name) as the synthesizer renders them.
//!
//! The synthesizer knows stock voices and recipes (`af_bella:0.7+af_sky:0.3`). A library voice
//! is looked up by name, replaced by its recipe (which also gives the language to phonemize
//! in), and its stored style table is registered for that recipe, so it renders exactly as it
//! was saved. A tuned voice is replaced by a name of its own instead
//! ([`super::tune::tuned_spec`]): its pack is no recipe's. Names are looked up in the library before the stock voices are tried: a cast
//! saying `narrator` means the library's `narrator`.

use crate::library::{Library, VoiceKind};
use crate::script::Episode;
use crate::speech::SynthError;
use crate::voice::{PiperVoice, VoiceError, VoiceSpec, VoiceTable};
use crate::Engine;

use super::VoiceMatchError;

/// A library voice ready to render.
#[derive(Debug, Clone)]
pub struct LibraryVoice {
    pub name: String,
    pub spec: VoiceSpec,
    /// The stored table (`None` for a saved voice without one: its recipe is rendered).
    pub table: Option<VoiceTable>,
    /// A Piper voice, to register with the engine before its spec is spoken.
    pub piper: Option<PiperVoice>,
}

impl LibraryVoice {
    /// Makes the engine speak this voice as saved (its table, or its Piper model).
    pub fn register(&self, engine: &Engine) {
        if let Some(table) = &self.table {
            engine.register_voice(&self.spec, table.clone());
        }
        if let Some(piper) = &self.piper {
            engine.register_piper(piper.clone());
        }
    }
}

/// The Piper voice the library keeps under `name`, checked against its file's path and size
/// (the sha256 is checked when the model is loaded): a moved or deleted file is an error that
/// says which and where, before anything is queued.
pub fn piper_voice(library: &Library, name: &str) -> Result<Option<PiperVoice>, VoiceMatchError> {
    let Some(record) = library.piper_record(name)? else {
        return Ok(None);
    };
    let missing = |reason: String| {
        VoiceMatchError::Synth(SynthError::Voice(VoiceError::PiperFile {
            name: name.to_owned(),
            path: record.onnx_path.clone(),
            reason,
        }))
    };
    let config = vits::config::PiperConfig::parse(&record.config_json)
        .map_err(|e| missing(format!("its saved .onnx.json no longer reads: {e}")))?;
    match std::fs::metadata(&record.onnx_path) {
        Ok(meta) if meta.len() == record.onnx_size => {}
        Ok(meta) => {
            return Err(missing(format!(
                "the file is {} bytes, not the {} it had when the voice was added: it was replaced; add the voice again",
                meta.len(),
                record.onnx_size
            )))
        }
        Err(e) => {
            return Err(missing(format!(
                "the model file cannot be read ({e}): was it moved or deleted? Put it back or add the voice again from its new place"
            )))
        }
    }
    Ok(Some(PiperVoice {
        name: name.to_owned(),
        onnx: record.onnx_path.clone(),
        sha256: record.onnx_sha256.clone(),
        config: std::sync::Arc::new(config),
        speaker: record.speaker,
    }))
}

/// The blend or matched voice called `name`, if the library has one.
pub fn library_voice(
    library: &Library,
    name: &str,
) -> Result<Option<LibraryVoice>, VoiceMatchError> {
    let Some(voice) = library.get_voice(name)? else {
        return Ok(None);
    };
    if voice.kind == VoiceKind::Stock {
        return Ok(None);
    }
    if voice.kind == VoiceKind::Piper {
        let piper =
            piper_voice(library, &voice.name)?.ok_or_else(|| VoiceMatchError::UnknownVoice {
                what: "Piper voice without its model record (run `banter library check`)",
                name: voice.name.clone(),
            })?;
        let spec = VoiceSpec::one(piper.key());
        return Ok(Some(LibraryVoice {
            name: voice.name,
            spec,
            table: None,
            piper: Some(piper),
        }));
    }
    let recipe = voice.recipe.ok_or_else(|| VoiceMatchError::UnknownVoice {
        what: "library voice without a recipe",
        name: voice.name.clone(),
    })?;
    let table = if voice.has_style {
        library.voice_style(&voice.name)?
    } else {
        None
    };
    let spec = match (&voice.kind, &table) {
        // A tuned pack renders under a name of its own, not its starting blend's.
        (VoiceKind::Tuned, Some(t)) => super::tune::tuned_spec(&recipe, t),
        (VoiceKind::Tuned, None) => {
            return Err(VoiceMatchError::UnknownVoice {
                what: "tuned voice without its pack (run `banter library check`)",
                name: voice.name.clone(),
            })
        }
        _ => VoiceSpec::parse(&recipe).map_err(crate::speech::SynthError::from)?,
    };
    Ok(Some(LibraryVoice {
        name: voice.name,
        spec,
        table,
        piper: None,
    }))
}

/// The spec to render `name` with: a library voice's recipe (its table registered with
/// `synth`), else `name` parsed as a stock voice or blend.
pub fn resolve_voice(
    library: Option<&Library>,
    engine: &Engine,
    name: &str,
) -> Result<VoiceSpec, VoiceMatchError> {
    if let Some(lib) = library {
        if let Some(v) = library_voice(lib, name)? {
            v.register(engine);
            return Ok(v.spec);
        }
    }
    VoiceSpec::parse(name).map_err(|_| VoiceMatchError::UnknownVoice {
        what: "voice",
        name: name.to_owned(),
    })
}

/// Rewrites every cast member whose voice is a library voice to that voice's recipe, and
/// registers the stored tables with `synth`. Returns `(speaker, library name, recipe)` for
/// each member rewritten.
pub fn resolve_cast(
    library: &Library,
    engine: &Engine,
    episode: &mut Episode,
) -> Result<Vec<(String, String, String)>, VoiceMatchError> {
    let mut rewritten = Vec::new();
    for member in &mut episode.cast.members {
        let Some(v) = library_voice(library, &member.voice)? else {
            continue;
        };
        let recipe = v.spec.canonical();
        v.register(engine);
        rewritten.push((member.name.clone(), v.name, recipe.clone()));
        member.voice = recipe;
    }
    Ok(rewritten)
}
