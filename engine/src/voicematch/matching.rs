//! Matching a reference clip to the nearest voice Banter can speak: a stock Kokoro voice, a
//! blend of stock voices, or a Piper voice from the library.
//!
//! 1. The clip is embedded (or its embedding read from the library: the encoder then does
//!    not run).
//! 2. Every candidate is compared through its probe embedding, rendered and cached once per
//!    voice: the stock voices (by default the English ones installed) and the library's Piper
//!    voices (by default the English ones; each speaker of a multi-speaker model is a voice of
//!    its own). A Piper voice whose model file is gone, unreadable or replaced is skipped, and
//!    the result names it and its file ([`VoiceMatch::skipped`]): one broken voice does not
//!    stop the others from being compared.
//! 3. Blends of the nearest few *stock* voices are searched ([`super::search`]), each costing
//!    one probe render (at most [`super::search::DEFAULT_RENDERS`] by default), and the best
//!    of all wins.
//!
//! Why Piper voices are never blended: a blend mixes Kokoro style tables; a Piper voice is a
//! model of its own with no table, so the two families cannot be mixed. A Piper voice is a
//! candidate as it is, and when it wins, the match *is* that voice ([`VoiceMatch::piper`]);
//! saving it saves another name for the same Piper voice ([`save_match`]).
//!
//! This finds the closest voice Banter can speak; it does not clone the clip's voice.

use std::path::{Path, PathBuf};

use super::embed::{CacheUse, ClipEmbedding, VoiceEmbedder};
use super::resolve::piper_voice;
use super::search::{recipe, BlendSearch, Terms, DEFAULT_RENDERS};
use super::VoiceMatchError;
use crate::library::{Library, NewPiperVoice, NewVoice, Voice, VoiceKind};
use crate::script::{ENGLISH_FEMALE, ENGLISH_MALE};
use crate::speech::SynthError;
use crate::voice::{PiperVoice, StockVoice, VoiceSpec};
use crate::Engine;

/// How to match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchOptions {
    /// Voices to compare with: stock voices, or Piper voices by their library name; `None`:
    /// every English stock voice installed and every English Piper voice in the library.
    pub candidates: Option<Vec<String>>,
    /// Probe renders the blend search may spend.
    pub max_renders: usize,
    /// How many of the nearest stock (and Piper) voices the result lists.
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
    /// A candidate's probe embedding is ready (`cache` says whether it was rendered now): a
    /// stock voice by its name, a Piper voice as `NAME (Piper)` (see [`piper_label`]).
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

/// How a Piper voice appears in progress events: `NAME (Piper)`.
#[must_use]
pub fn piper_label(name: &str) -> String {
    format!("{name} (Piper)")
}

/// A Piper voice of the library, scored against the clip.
#[derive(Debug, Clone, PartialEq)]
pub struct PiperScore {
    /// Its name in the library.
    pub name: String,
    /// The key it renders under (`piper/<sha256 prefix>[/<speaker>]`), a [`VoiceSpec`].
    pub key: String,
    /// Its language as its `.onnx.json` states it (`en_US`), else its espeak voice.
    pub language: String,
    /// The model file.
    pub model: PathBuf,
    pub similarity: f32,
}

/// A Piper voice the match could not compare with, and why (shown to the user as a warning).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedVoice {
    /// Its name in the library.
    pub name: String,
    /// The model file the library points to.
    pub model: PathBuf,
    pub reason: String,
}

/// The result of a match.
#[derive(Debug, Clone, PartialEq)]
pub struct VoiceMatch {
    /// The winner in `VoiceSpec` form: a stock voice or blend, or a Piper voice's key (then
    /// [`Self::piper`] says which library voice it is).
    pub recipe: String,
    /// Cosine similarity of the winner's probe embedding to the clip's embedding.
    pub similarity: f32,
    /// Set when the winner is a Piper voice of the library.
    pub piper: Option<PiperScore>,
    /// The best stock voice or blend and its similarity (`None` when no stock voice was a
    /// candidate); the winner unless a Piper voice came closer.
    pub best_kokoro: Option<(String, f32)>,
    /// The nearest stock voices, best first.
    pub nearest_stock: Vec<(String, f32)>,
    /// The nearest Piper voices, best first.
    pub nearest_piper: Vec<PiperScore>,
    /// Piper voices that were candidates but could not be compared.
    pub skipped: Vec<SkippedVoice>,
    pub clip: ClipEmbedding,
    /// Blends the search scored (at most the budget).
    pub blends_tried: usize,
    /// Probes actually rendered now (stock, Piper and blends; the rest came from the library).
    pub renders: usize,
    /// Every blend tried with its similarity, in order.
    pub tried: Vec<(String, f32)>,
}

impl VoiceMatch {
    /// The winner as a person reads it: `NAME (Piper voice, en_US)`, else the recipe.
    #[must_use]
    pub fn label(&self) -> String {
        match &self.piper {
            Some(p) => format!("{} (Piper voice, {})", p.name, p.language),
            None => self.recipe.clone(),
        }
    }
}

/// A voice the match compares with.
#[derive(Debug, Clone)]
enum Candidate {
    Stock(String),
    Piper(PiperCandidate),
}

#[derive(Debug, Clone)]
struct PiperCandidate {
    voice: PiperVoice,
    language: String,
}

/// The candidates of one match, and the Piper voices left out with the reason.
#[derive(Debug, Clone)]
struct Candidates {
    list: Vec<Candidate>,
    skipped: Vec<SkippedVoice>,
}

/// Which families a match compares with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Families {
    /// Stock voices, their blends and the library's Piper voices.
    All,
    /// Stock voices and their blends only (tuning starts from a Kokoro voice).
    Kokoro,
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
    // Unknown names are refused before the clip is embedded.
    let candidates = candidates(
        engine,
        library,
        options.candidates.as_deref(),
        Families::All,
    )?;
    let target = embedder.embed_clip(library, clip)?;
    progress(&MatchEvent::ClipEmbedded(Box::new(target.clone())));
    match_among(
        embedder,
        engine,
        library,
        target,
        candidates,
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
    match_families(
        embedder,
        engine,
        library,
        target,
        options,
        Families::All,
        progress,
        cancelled,
    )
}

/// [`match_embedding`] over the families asked for.
#[allow(clippy::too_many_arguments)]
pub(crate) fn match_families(
    embedder: &VoiceEmbedder,
    engine: &Engine,
    library: &Library,
    target: ClipEmbedding,
    options: &MatchOptions,
    families: Families,
    progress: &mut dyn FnMut(&MatchEvent),
    cancelled: &dyn Fn() -> bool,
) -> Result<VoiceMatch, VoiceMatchError> {
    let candidates = candidates(engine, library, options.candidates.as_deref(), families)?;
    match_among(
        embedder, engine, library, target, candidates, options, progress, cancelled,
    )
}

#[allow(clippy::too_many_arguments, clippy::too_many_lines)]
fn match_among(
    embedder: &VoiceEmbedder,
    engine: &Engine,
    library: &Library,
    target: ClipEmbedding,
    candidates: Candidates,
    options: &MatchOptions,
    progress: &mut dyn FnMut(&MatchEvent),
    cancelled: &dyn Fn() -> bool,
) -> Result<VoiceMatch, VoiceMatchError> {
    let Candidates {
        list: candidates,
        mut skipped,
    } = candidates;
    let mut stock = Vec::with_capacity(candidates.len());
    let mut piper: Vec<PiperScore> = Vec::new();
    let mut renders = 0;
    for (done, candidate) in candidates.iter().enumerate() {
        if cancelled() {
            return Err(VoiceMatchError::Cancelled);
        }
        let (name, cache) = match candidate {
            Candidate::Stock(name) => {
                let spec = VoiceSpec::parse(name).map_err(SynthError::from)?;
                let (embedding, cache) = embedder.voice_embedding(library, engine, &spec)?;
                stock.push((name.clone(), embedding.cosine(&target.embedding)));
                (name.clone(), cache)
            }
            Candidate::Piper(p) => match embedder.piper_embedding(library, engine, &p.voice) {
                Ok((embedding, cache)) => {
                    piper.push(PiperScore {
                        name: p.voice.name.clone(),
                        key: p.voice.key(),
                        language: p.language.clone(),
                        model: p.voice.onnx.clone(),
                        similarity: embedding.cosine(&target.embedding),
                    });
                    (piper_label(&p.voice.name), cache)
                }
                Err(e) if is_voice_problem(&e) => {
                    skipped.push(SkippedVoice {
                        name: p.voice.name.clone(),
                        model: p.voice.onnx.clone(),
                        reason: skip_reason(&e),
                    });
                    continue;
                }
                Err(e) => return Err(e),
            },
        };
        renders += usize::from(cache == CacheUse::Miss);
        progress(&MatchEvent::Stock {
            name,
            done: done + 1,
            total: candidates.len(),
            cache,
        });
    }
    stock.sort_by(|a, b| b.1.total_cmp(&a.1));
    piper.sort_by(|a, b| b.similarity.total_cmp(&a.similarity));
    // Only stock voices are blended (see the module docs).
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
    let best_kokoro = search.best().map(|(terms, s)| (recipe(&terms), s));
    let Some((recipe_won, similarity, piper_won)) = winner(best_kokoro.as_ref(), piper.first())
    else {
        return Err(VoiceMatchError::NoCandidates {
            reason: no_voice_scored(&skipped),
        });
    };
    let listed = options.listed.max(1);
    Ok(VoiceMatch {
        recipe: recipe_won,
        similarity,
        piper: piper_won,
        best_kokoro,
        nearest_stock: stock.into_iter().take(listed).collect(),
        nearest_piper: piper.into_iter().take(listed).collect(),
        skipped,
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

/// The winner of the best Kokoro recipe and the best Piper voice: the closer one (Kokoro on a
/// tie); `(recipe, similarity, the Piper voice if it won)`. A non-finite score never wins.
fn winner(
    kokoro: Option<&(String, f32)>,
    piper: Option<&PiperScore>,
) -> Option<(String, f32, Option<PiperScore>)> {
    let kokoro = kokoro.filter(|(_, s)| s.is_finite());
    let piper = piper.filter(|p| p.similarity.is_finite());
    match (kokoro, piper) {
        (Some((r, s)), Some(p)) if p.similarity <= *s => Some((r.clone(), *s, None)),
        (_, Some(p)) => Some((p.key.clone(), p.similarity, Some(p.clone()))),
        (Some((r, s)), None) => Some((r.clone(), *s, None)),
        (None, None) => None,
    }
}

/// Why nothing could be scored, naming the Piper voices that were skipped.
fn no_voice_scored(skipped: &[SkippedVoice]) -> String {
    if skipped.is_empty() {
        return "no voice could be scored".to_owned();
    }
    let names: Vec<String> = skipped
        .iter()
        .map(|s| format!("{} ({}: {})", s.name, s.model.display(), s.reason))
        .collect();
    format!(
        "no voice could be scored; Piper voices skipped: {}",
        names.join("; ")
    )
}

/// What a skipped Piper voice is told by: the file's problem alone (the warning names the voice
/// and the file itself).
fn skip_reason(e: &VoiceMatchError) -> String {
    match e {
        VoiceMatchError::Synth(SynthError::Voice(crate::voice::VoiceError::PiperFile {
            reason,
            ..
        }))
        | VoiceMatchError::Scheduler(crate::SchedulerError::Synth(SynthError::Voice(
            crate::voice::VoiceError::PiperFile { reason, .. },
        ))) => reason.clone(),
        other => other.to_string(),
    }
}

/// True when a Piper candidate's error is that voice's own problem (its file, its config):
/// the candidate is skipped and the others compared. Anything else (the scheduler, the
/// library) ends the match.
fn is_voice_problem(e: &VoiceMatchError) -> bool {
    matches!(
        e,
        VoiceMatchError::Synth(SynthError::Voice(_))
            | VoiceMatchError::Scheduler(crate::SchedulerError::Synth(SynthError::Voice(_)))
    )
}

fn score(
    embedder: &VoiceEmbedder,
    engine: &Engine,
    library: &Library,
    terms: &Terms,
    target: &ClipEmbedding,
) -> Result<(f32, CacheUse), VoiceMatchError> {
    let spec = VoiceSpec::parse(&recipe(terms)).map_err(SynthError::from)?;
    let (embedding, cache) = embedder.voice_embedding(library, engine, &spec)?;
    Ok((embedding.cosine(&target.embedding), cache))
}

/// The voices to compare with: those asked for (a stock voice must be installed; a Piper voice
/// is named as the library names it), else every installed English stock voice and every
/// English Piper voice of the library. A Piper voice whose file cannot be used is skipped
/// with the reason, not an error.
fn candidates(
    engine: &Engine,
    library: &Library,
    asked: Option<&[String]>,
    families: Families,
) -> Result<Candidates, VoiceMatchError> {
    let installed: Vec<String> = engine.stock_voices().into_iter().map(|v| v.name).collect();
    let mut out = Candidates {
        list: Vec::new(),
        skipped: Vec::new(),
    };
    if let Some(names) = asked {
        for n in names {
            let n = n.trim();
            if installed.iter().any(|i| i == n) {
                out.list.push(Candidate::Stock(n.to_owned()));
                continue;
            }
            match families {
                Families::All => {
                    if piper_candidate(library, n, &mut out, false)? {
                        continue;
                    }
                }
                Families::Kokoro => {
                    if library.piper_record(n)?.is_some() {
                        return Err(VoiceMatchError::NoCandidates {
                            reason: format!(
                                "`{n}` is a Piper voice; tuning moves a Kokoro style pack, so it \
                                 starts from stock voices only (`banter voices match` compares \
                                 Piper voices too)"
                            ),
                        });
                    }
                }
            }
            return Err(VoiceMatchError::UnknownVoice {
                what: "candidate voice",
                name: n.to_owned(),
            });
        }
    } else {
        out.list.extend(
            ENGLISH_FEMALE
                .iter()
                .chain(ENGLISH_MALE.iter())
                .map(|s| (*s).to_owned())
                .filter(|n| installed.contains(n))
                .map(Candidate::Stock),
        );
        if families == Families::All {
            for voice in library.list_voices()? {
                if voice.kind == VoiceKind::Piper {
                    piper_candidate(library, &voice.name, &mut out, true)?;
                }
            }
        }
    }
    if out.list.is_empty() {
        let reason = if out.skipped.is_empty() {
            match families {
                Families::All => "no English stock voice is installed and the library has no English Piper voice; run `banter models fetch` or `banter voices add NAME FILE.onnx`",
                Families::Kokoro => "no English stock voice is installed; run `banter models fetch`",
            }
            .to_owned()
        } else {
            no_voice_scored(&out.skipped)
        };
        return Err(VoiceMatchError::NoCandidates { reason });
    }
    Ok(out)
}

/// Adds the library's Piper voice `name` to `out` (or to its skipped list, with the reason,
/// when its model file cannot be used); `english_only` leaves out a voice in another language.
/// False when the library has no Piper voice of that name.
fn piper_candidate(
    library: &Library,
    name: &str,
    out: &mut Candidates,
    english_only: bool,
) -> Result<bool, VoiceMatchError> {
    let Some(record) = library.piper_record(name)? else {
        return Ok(false);
    };
    match piper_voice(library, name) {
        Ok(Some(voice)) => {
            if english_only && !is_english(&voice) {
                return Ok(true);
            }
            let language = piper_language(&voice);
            out.list
                .push(Candidate::Piper(PiperCandidate { voice, language }));
        }
        Ok(None) => return Ok(false),
        Err(e) if is_voice_problem(&e) => {
            out.skipped.push(SkippedVoice {
                name: name.to_owned(),
                model: record.onnx_path,
                reason: skip_reason(&e),
            });
        }
        Err(e) => return Err(e),
    }
    Ok(true)
}

/// A Piper voice's language: its `.onnx.json`'s `language.code` (`en_US`), else its espeak
/// voice (`en-us`), else `unknown`.
fn piper_language(voice: &PiperVoice) -> String {
    voice
        .config
        .language
        .clone()
        .filter(|l| !l.trim().is_empty())
        .or_else(|| {
            (!voice.config.espeak_voice.is_empty()).then(|| voice.config.espeak_voice.clone())
        })
        .unwrap_or_else(|| "unknown".to_owned())
}

/// True when a Piper voice speaks English (the probe passage is English), by its espeak voice
/// or, for a voice without one, its stated language.
fn is_english(voice: &PiperVoice) -> bool {
    let english = |s: &str| {
        let s = s.trim().to_ascii_lowercase();
        s == "en" || s.starts_with("en-") || s.starts_with("en_")
    };
    english(&voice.config.espeak_voice) || voice.config.language.as_deref().is_some_and(english)
}

/// Saves a match as a library voice called `name`. A stock voice or blend is saved as kind
/// `matched`, with its style table and a note saying what it is. A Piper winner is saved as
/// another name for that Piper voice (kind `piper`, the same model file and speaker), with a
/// note saying it is that voice: Piper and Kokoro voices cannot be blended, so the match is the
/// Piper voice itself.
pub fn save_match(
    library: &Library,
    engine: &Engine,
    name: &str,
    clip: &Path,
    found: &VoiceMatch,
) -> Result<Voice, VoiceMatchError> {
    let clip_name = clip.file_name().map_or_else(
        || clip.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    if let Some(piper) = &found.piper {
        return save_piper_match(library, name, &clip_name, piper);
    }
    let spec = VoiceSpec::parse(&found.recipe).map_err(crate::speech::SynthError::from)?;
    let table = engine.voice(&spec)?;
    let heaviest = spec
        .terms
        .iter()
        .max_by(|a, b| a.weight.total_cmp(&b.weight))
        .and_then(|t| StockVoice::from_name(&t.voice));
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

/// Saves `name` as another name for the Piper voice that won (see [`save_match`]).
fn save_piper_match(
    library: &Library,
    name: &str,
    clip_name: &str,
    piper: &PiperScore,
) -> Result<Voice, VoiceMatchError> {
    let record =
        library
            .piper_record(&piper.name)?
            .ok_or_else(|| VoiceMatchError::UnknownVoice {
                what: "Piper voice (removed from the library while matching)",
                name: piper.name.clone(),
            })?;
    let voice = NewPiperVoice {
        name: name.to_owned(),
        key: piper.key.clone(),
        onnx_path: record.onnx_path,
        onnx_sha256: record.onnx_sha256,
        onnx_size: record.onnx_size,
        config_json: record.config_json,
        speaker: record.speaker,
        dataset: record.dataset,
        license: record.license,
        notes: format!(
            "the Piper voice {} itself, the nearest voice to {clip_name} (similarity {:.3}); \
             a match, not a clone",
            piper.name, piper.similarity
        ),
    };
    library
        .add_piper_voices(std::slice::from_ref(&voice))?
        .into_iter()
        .next()
        .ok_or_else(|| VoiceMatchError::UnknownVoice {
            what: "Piper voice (not found after saving)",
            name: name.to_owned(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::voice::VoiceError;

    fn piper(espeak: &str, language: Option<&str>) -> PiperVoice {
        let language = language
            .map(|l| format!(r#", "language": {{"code": "{l}"}}"#))
            .unwrap_or_default();
        let espeak = if espeak.is_empty() {
            r#""phoneme_type": "text""#.to_owned()
        } else {
            format!(r#""espeak": {{"voice": "{espeak}"}}"#)
        };
        let json = format!(
            r#"{{"audio": {{"sample_rate": 22050}}, {espeak},
                "phoneme_id_map": {{"^": [1], "_": [0], "$": [2]}}{language}}}"#
        );
        PiperVoice {
            name: "v".into(),
            onnx: "/v/v.onnx".into(),
            sha256: "ab".repeat(32),
            config: std::sync::Arc::new(
                vits::config::PiperConfig::parse(&json).expect("a valid config"),
            ),
            speaker: None,
        }
    }

    fn score(name: &str, similarity: f32) -> PiperScore {
        PiperScore {
            name: name.into(),
            key: format!("piper/{name}"),
            language: "en_US".into(),
            model: "/v/v.onnx".into(),
            similarity,
        }
    }

    #[test]
    fn piper_voices_are_english_by_their_espeak_voice_or_stated_language() {
        assert!(is_english(&piper("en-us", None)));
        assert!(is_english(&piper("en-gb-x-rp", Some("en_GB"))));
        assert!(is_english(&piper("", Some("en_US"))));
        assert!(!is_english(&piper("de", Some("de_DE"))));
        assert!(!is_english(&piper("eo", None)));
        assert_eq!(piper_language(&piper("en-us", Some("en_US"))), "en_US");
        assert_eq!(piper_language(&piper("de", None)), "de");
        assert_eq!(piper_language(&piper("", None)), "unknown");
    }

    #[test]
    fn the_closer_family_wins_and_kokoro_keeps_a_tie() {
        let kokoro = ("af_bella:0.7+af_sky:0.3".to_owned(), 0.8);
        let (recipe, s, p) = winner(Some(&kokoro), Some(&score("joe", 0.9))).expect("a winner");
        assert_eq!((recipe.as_str(), s), ("piper/joe", 0.9));
        assert_eq!(p.expect("Piper won").name, "joe");
        let (recipe, _, p) = winner(Some(&kokoro), Some(&score("joe", 0.8))).expect("a winner");
        assert_eq!(recipe, kokoro.0);
        assert!(p.is_none());
        assert!(winner(Some(&kokoro), Some(&score("joe", f32::NAN))).is_some_and(|w| w.2.is_none()));
        assert!(winner(None, Some(&score("joe", 0.1))).is_some_and(|w| w.2.is_some()));
        assert!(winner(None, None).is_none());
    }

    #[test]
    fn only_a_voices_own_problem_skips_it_and_the_reason_is_the_files() {
        let file = VoiceMatchError::Synth(SynthError::Voice(VoiceError::PiperFile {
            name: "joe".into(),
            path: "/v/joe.onnx".into(),
            reason: "the model file cannot be read".into(),
        }));
        assert!(is_voice_problem(&file));
        assert_eq!(skip_reason(&file), "the model file cannot be read");
        let in_scheduler = VoiceMatchError::Scheduler(crate::SchedulerError::Synth(
            SynthError::Voice(VoiceError::UnknownPiper {
                key: "piper/ab".into(),
            }),
        ));
        assert!(is_voice_problem(&in_scheduler));
        assert!(!is_voice_problem(&VoiceMatchError::Scheduler(
            crate::SchedulerError::Shutdown
        )));
        assert!(!is_voice_problem(&VoiceMatchError::Cancelled));
        let skipped = [SkippedVoice {
            name: "joe".into(),
            model: "/v/joe.onnx".into(),
            reason: "gone".into(),
        }];
        let reason = no_voice_scored(&skipped);
        assert!(reason.contains("joe (/v/joe.onnx: gone)"), "{reason}");
    }
}
