//! Library voices (matched voices, saved blends) in what the studio renders.
//!
//! A cast may name a library voice ("Ben (matched)", "narrator"); the synthesizer knows only
//! stock voices and recipes. Before planning, playback, export and preview replace such names
//! by their recipes and register the stored style tables, as `banter render` does. This opens
//! the library, so it runs on the worker thread, never on the UI thread. Without a library
//! (it cannot be opened) names are left as they are and the render says which voice it lacks.

use std::path::Path;

use engine::library::Library;
use engine::script::Episode;
use engine::voicematch::resolve::{resolve_cast, resolve_voice};
use engine::voicematch::VoiceMatchError;
use engine::Engine;

/// The library at `library` (the default one when `None`), or `None` with a warning in the log
/// when it cannot be opened: library voices and the render cache are conveniences.
pub(super) fn open(library: Option<&Path>) -> Option<Library> {
    let opened = match library {
        Some(p) => Library::open(p),
        None => Library::open_default(),
    };
    opened
        .map_err(|e| tracing::warn!("library voices unavailable: {e}"))
        .ok()
}

/// Rewrites `episode`'s library voices to recipes (see the module docs).
pub fn episode(
    library: Option<&Path>,
    engine: &Engine,
    episode: &mut Episode,
) -> Result<(), Box<VoiceMatchError>> {
    let Some(lib) = open(library) else {
        return Ok(());
    };
    resolve_cast(&lib, engine, episode)
        .map(|_| ())
        .map_err(Box::new)
}

/// The recipe to render `voice` with: a library voice's recipe, else `voice` itself.
pub fn voice(
    library: Option<&Path>,
    engine: &Engine,
    voice: &str,
) -> Result<String, Box<VoiceMatchError>> {
    let lib = open(library);
    resolve_voice(lib.as_ref(), engine, voice)
        .map(|spec| spec.canonical())
        .map_err(Box::new)
}
