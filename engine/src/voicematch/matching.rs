//! Matching a reference clip to the nearest stock voice or blend of stock voices.
//!
//! 1. The clip is embedded (or its embedding read from the library: the encoder then does
//!    not run).
//! 2. Every candidate stock voice (by default the English ones installed) is compared through
//!    its probe embedding, rendered and cached once per voice.
//! 3. Blends of the nearest few are searched ([`super::search`]), each costing one probe render
//!    (at most [`super::search::DEFAULT_RENDERS`] by default), and the best of all wins.
//!
//! This finds the closest voice Kokoro can speak in; it does not clone the clip's voice.

use std::path::Path;

use super::embed::{CacheUse, ClipEmbedding, VoiceEmbedder};
use super::search::{recipe, BlendSearch, Terms, DEFAULT_RENDERS};
use super::VoiceMatchError;
use crate::library::{Library, NewVoice, Voice, VoiceKind};
use crate::script::{ENGLISH_FEMALE, ENGLISH_MALE};
use crate::voice::{StockVoice, VoiceSpec};
use crate::Engine;

/// How to match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchOptions {
    /// Stock voices to compare with; `None`: every English stock voice installed.
    pub candidates: Option<Vec<String>>,
    /// Probe renders the blend search may spend.
    pub max_renders: usize,
    /// How many of the nearest stock voices the result lists.
    pub listed: usize,
}

impl Default for MatchOptions {
    fn default() -> Self {
        Self {
            candidates: None,
            max_renders: DEFAULT_RENDERS,
            listed: 5,
        }
    }
}

/// What the match is doing, for a progress display.
#[derive(Debug, Clone, PartialEq)]
pub enum MatchEvent {
    ClipEmbedded(Box<ClipEmbedding>),
    /// A stock voice's probe embedding is ready (`cache` says whether it was rendered now).
    Stock {
        name: String,
        done: usize,
        total: usize,
        cache: CacheUse,
    },
    /// A blend was rendered and scored.
    Blend {
        recipe: String,
        similarity: f32,
        render: usize,
        budget: usize,
    },
}

/// The result of a match.
#[derive(Debug, Clone, PartialEq)]
pub struct VoiceMatch {
    /// The winning stock voice or blend, in `VoiceSpec` form.
    pub recipe: String,
    /// Cosine similarity of the winner's probe embedding to the clip's embedding.
    pub similarity: f32,
    /// The nearest stock voices, best first.
    pub nearest_stock: Vec<(String, f32)>,
    pub clip: ClipEmbedding,
    /// Blends the search scored (at most the budget).
    pub blends_tried: usize,
    /// Probes actually rendered now (stock and blends; the rest came from the library).
    pub renders: usize,
    /// Every blend tried with its similarity, in order.
    pub tried: Vec<(String, f32)>,
}

/// Matches the clip at `clip` (see the module docs).
pub fn match_voice(
    embedder: &VoiceEmbedder,
    engine: &Engine,
    library: &Library,
    clip: &Path,
    options: &MatchOptions,
    progress: &mut dyn FnMut(&MatchEvent),
) -> Result<VoiceMatch, VoiceMatchError> {
    candidates(engine, options.candidates.as_deref())?;
    let target = embedder.embed_clip(library, clip)?;
    progress(&MatchEvent::ClipEmbedded(Box::new(target.clone())));
    match_embedding(
        embedder,
        engine,
        library,
        target,
        options,
        progress,
        &|| false,
    )
}

/// Matches an embedded clip (or the mean of several clips' embeddings); `cancelled` is asked
/// before every render and ends the match with [`VoiceMatchError::Cancelled`].
pub fn match_embedding(
    embedder: &VoiceEmbedder,
    engine: &Engine,
    library: &Library,
    target: ClipEmbedding,
    options: &MatchOptions,
    progress: &mut dyn FnMut(&MatchEvent),
    cancelled: &dyn Fn() -> bool,
) -> Result<VoiceMatch, VoiceMatchError> {
    let candidates = candidates(engine, options.candidates.as_deref())?;
    let mut stock = Vec::with_capacity(candidates.len());
    let mut renders = 0;
    for (done, name) in candidates.iter().enumerate() {
        if cancelled() {
            return Err(VoiceMatchError::Cancelled);
        }
        let spec = VoiceSpec::parse(name).map_err(crate::speech::SynthError::from)?;
        let (embedding, cache) = embedder.voice_embedding(library, engine, &spec)?;
        renders += usize::from(cache == CacheUse::Miss);
        stock.push((name.clone(), embedding.cosine(&target.embedding)));
        progress(&MatchEvent::Stock {
            name: name.clone(),
            done: done + 1,
            total: candidates.len(),
            cache,
        });
    }
    stock.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut search = BlendSearch::new(stock.clone(), options.max_renders);
    while let Some(terms) = search.next_candidate() {
        if cancelled() {
            return Err(VoiceMatchError::Cancelled);
        }
        let (similarity, cache) = score(embedder, engine, library, &terms, &target)?;
        renders += usize::from(cache == CacheUse::Miss);
        search.record(&terms, similarity);
        progress(&MatchEvent::Blend {
            recipe: recipe(&terms),
            similarity,
            render: search.renders(),
            budget: options.max_renders,
        });
    }
    let (best, similarity) = search.best().ok_or_else(|| VoiceMatchError::NoCandidates {
        reason: "no stock voice could be scored".to_owned(),
    })?;
    Ok(VoiceMatch {
        recipe: recipe(&best),
        similarity,
        nearest_stock: stock.into_iter().take(options.listed.max(1)).collect(),
        clip: target,
        blends_tried: search.renders(),
        renders,
        tried: search
            .scored()
            .iter()
            .map(|(t, s)| (recipe(t), *s))
            .collect(),
    })
}

fn score(
    embedder: &VoiceEmbedder,
    engine: &Engine,
    library: &Library,
    terms: &Terms,
    target: &ClipEmbedding,
) -> Result<(f32, CacheUse), VoiceMatchError> {
    let spec = VoiceSpec::parse(&recipe(terms)).map_err(crate::speech::SynthError::from)?;
    let (embedding, cache) = embedder.voice_embedding(library, engine, &spec)?;
    Ok((embedding.cosine(&target.embedding), cache))
}

/// The stock voices to compare with: those asked for (each must be installed), else every
/// installed English one.
fn candidates(engine: &Engine, asked: Option<&[String]>) -> Result<Vec<String>, VoiceMatchError> {
    let installed: Vec<String> = engine.stock_voices().into_iter().map(|v| v.name).collect();
    let list: Vec<String> = match asked {
        Some(names) => {
            for n in names {
                if !installed.contains(n) {
                    return Err(VoiceMatchError::UnknownVoice {
                        what: "candidate voice",
                        name: n.clone(),
                    });
                }
            }
            names.to_vec()
        }
        None => ENGLISH_FEMALE
            .iter()
            .chain(ENGLISH_MALE.iter())
            .map(|s| (*s).to_owned())
            .filter(|n| installed.contains(n))
            .collect(),
    };
    if list.is_empty() {
        return Err(VoiceMatchError::NoCandidates {
            reason: "no English stock voice is installed; run `banter models fetch`".to_owned(),
        });
    }
    Ok(list)
}

/// Saves a match as a library voice called `name` (kind `matched`), with its style table and
/// a note saying what it is.
pub fn save_match(
    library: &Library,
    engine: &Engine,
    name: &str,
    clip: &Path,
    found: &VoiceMatch,
) -> Result<Voice, VoiceMatchError> {
    let spec = VoiceSpec::parse(&found.recipe).map_err(crate::speech::SynthError::from)?;
    let table = engine.voice(&spec)?;
    let heaviest = spec
        .terms
        .iter()
        .max_by(|a, b| a.weight.total_cmp(&b.weight))
        .and_then(|t| StockVoice::from_name(&t.voice));
    let clip_name = clip.file_name().map_or_else(
        || clip.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    Ok(library.add_voice(&NewVoice {
        name: name.to_owned(),
        kind: VoiceKind::Matched,
        language: Some(spec.language()),
        gender: heaviest.map(|v| v.gender),
        recipe: Some(found.recipe.clone()),
        style: Some((*table).clone()),
        notes: format!(
            "nearest stock blend to {clip_name} (similarity {:.3}); a match, not a clone",
            found.similarity
        ),
    })?)
}
