//! Tuning a voice toward a speaker's clips: beyond the stock voices and their blends, into
//! the style space between and around them.
//!
//! Kokoro does not clone. What it speaks in is a style pack (510 × 256), and the 54 stock packs
//! are a few points of a space that holds closer voices. The tuning:
//!
//! 1. embeds the clips and checks them ([`clips`]): enough speech, one speaker;
//! 2. finds the best stock voice or blend, as `voices match` does (cached probes);
//! 3. scores that blend on the held-out sentences ([`HELDOUT_TEXT`]): the "before";
//! 4. walks the style space ([`space`], [`walk`]) from the blend, each candidate pack
//!    rendering one of the search's probe sentences ([`PROBE_TEXT`]) as background work on the
//!    scheduler, scored by the GE2E similarity of that speech to the clips, until the time is
//!    spent;
//! 5. scores the best pack on the held-out sentences, never heard by the search: the "after",
//!    and how alike two of its sentences sound (stability). A pack no better than the blend,
//!    or unstable, is refused ([`Tuned::accept`]).
//!
//! The guard against packs that fool the encoder without sounding like anyone: the walk never
//! leaves the region the stock voices occupy ([`space::StyleSpace::radius`]), the similarity
//! reported is on unseen sentences, and stability is required. Intelligibility is measured
//! by `banter bench tune` with Whisper (the judge tool), which Banter does not ship.
//!
//! Cancelling (the flag given) stops before the next render; nothing is written by this
//! module (saving is [`save::save_tuned`], one transaction).

pub mod clips;
pub mod save;
pub mod space;
pub mod walk;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::embed::VoiceEmbedder;
use super::matching::{match_families, Families, MatchEvent, MatchOptions};
use super::VoiceMatchError;
use crate::library::Library;
use crate::phonemes::Language;
use crate::speaker::Embedding;
use crate::speech::{SpeechRequest, SynthError, SAMPLE_RATE};
use crate::voice::{StockVoice, VoiceSpec, VoiceTable};
use crate::{Engine, Mode};

pub use clips::{Target, TuneClip};
pub use save::{save_tuned, tuned_spec};

/// The search's probe sentences, one per line: each candidate speaks one of them.
pub const PROBE_TEXT: &str = include_str!("../../../../assets/passages/tune-probes.txt");
/// Sentences the search never hears: the similarity reported, and stability.
pub const HELDOUT_TEXT: &str = include_str!("../../../../assets/passages/tune-heldout.txt");
/// A clip needs this much speech (after trimming silences) to tune toward.
pub const MIN_SPEECH_SECS: f64 = 3.0;
/// A clip whose nearest English stock voice is less alike than this is not tuned toward:
/// every recorded or synthetic speaker tried scored 0.64–0.75 (`tools/bench/tune_refs.sh`), a
/// synthetic piece of music 0.59. A heuristic: it stops music and noise, not every oddity;
/// it applies when the match compared every English stock voice (the default).
pub const MIN_LIKENESS: f32 = 0.6;
/// Two different held-out sentences of a kept voice are at least this alike.
pub const MIN_STABILITY: f32 = 0.9;
/// Said by the CLI and the studio wherever a tuning starts.
pub const CONSENT: &str = "Only tune voices you have the speaker's permission to use.";
/// The default time for a whole tuning, the match included.
pub const DEFAULT_TIME: Duration = Duration::from_secs(270);
/// Axes of the style space searched.
pub const DEFAULT_AXES: usize = 32;

/// How to tune.
#[derive(Debug, Clone, PartialEq)]
pub struct TuneOptions {
    /// The whole tuning stops searching in time to finish within this.
    pub time_limit: Duration,
    /// At most this many candidates (`None`: as many as the time allows).
    pub max_candidates: Option<usize>,
    /// The walk's seed: the same seed, clips and model give the same voice.
    pub seed: u64,
    pub axes: usize,
    pub matching: MatchOptions,
}

impl Default for TuneOptions {
    fn default() -> Self {
        Self {
            time_limit: DEFAULT_TIME,
            max_candidates: None,
            seed: 1,
            axes: DEFAULT_AXES,
            matching: MatchOptions::default(),
        }
    }
}

/// What a tuning is doing, for a progress display.
#[derive(Debug, Clone, PartialEq)]
pub enum TuneEvent {
    /// The clips are embedded and checked.
    Clips(Box<Target>),
    /// A step of the blend match.
    Match(MatchEvent),
    /// The search starts from `recipe`, whose held-out similarity is `before`.
    Started {
        recipe: String,
        before: f32,
        probe_similarity: f32,
        axes: usize,
    },
    /// A candidate was scored on a probe sentence.
    Candidate {
        tried: usize,
        /// The estimated probe similarity near the search's centre.
        estimate: f32,
        /// The centre moved after this candidate.
        moved: bool,
        elapsed: Duration,
        /// The time the search has left.
        left: Duration,
    },
    /// Scoring the result on the held-out sentences.
    Checking,
}

/// A finished tuning, not yet saved.
#[derive(Debug, Clone)]
pub struct Tuned {
    pub table: VoiceTable,
    pub target: Target,
    /// The best stock voice or blend, where the search started.
    pub start_recipe: String,
    pub language: Language,
    /// The nearest stock voices (probe-passage similarity), best first.
    pub nearest_stock: Vec<(String, f32)>,
    /// Held-out similarity of the start (before) and of the tuned pack (after).
    pub before: f32,
    pub after: f32,
    /// Stability of the start and of the tuned pack (least alike pair of held-out sentences).
    pub stability_before: f32,
    pub stability: f32,
    /// Probe similarity at the start, and the search's estimate at its end.
    pub probe_before: f32,
    pub probe_after: f32,
    pub tried: usize,
    /// Moves of the search's centre.
    pub moves: usize,
    /// `(candidate number, estimated probe similarity, seconds into the search)` at each move.
    pub history: Vec<(usize, f32, f32)>,
    pub settings: serde_json::Value,
    pub elapsed: Duration,
}

/// Tunes toward the speaker of `clips` (see the module docs). `cancel` stops it before the
/// next render with [`VoiceMatchError::Cancelled`].
pub fn tune_voice(
    embedder: &VoiceEmbedder,
    engine: &Engine,
    library: &Library,
    clips: &[PathBuf],
    options: &TuneOptions,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(&TuneEvent),
) -> Result<Tuned, VoiceMatchError> {
    let started = Instant::now();
    let cancelled = || cancel.load(Ordering::Relaxed);
    let target = clips::target(embedder, library, clips)?;
    progress(&TuneEvent::Clips(Box::new(target.clone())));
    // Tuning moves a Kokoro style pack, so it starts from a stock voice or blend: Piper voices
    // (models of their own, with no pack) are not candidates here.
    let found = match_families(
        embedder,
        engine,
        library,
        target.as_clip(),
        &options.matching,
        Families::Kokoro,
        &mut |e| progress(&TuneEvent::Match(e.clone())),
        &cancelled,
    )?;
    // Only against every English stock voice: among a few chosen ones (`--among`), a woman's
    // clip is rightly unlike every man's voice.
    let nearest = found.nearest_stock.first().map_or(0.0, |(_, s)| *s);
    if options.matching.candidates.is_none() && nearest < MIN_LIKENESS {
        return Err(VoiceMatchError::NotSpeech {
            clips: target
                .clips
                .iter()
                .map(|c| c.path.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            nearest,
        });
    }
    let start_spec = VoiceSpec::parse(&found.recipe).map_err(SynthError::from)?;
    let start = (*engine.voice(&start_spec)?).clone();
    let language = start_spec.language();
    let space = stock_space(engine, options.axes)?;
    let render = Renderer::new(engine, embedder, language);

    let check_started = Instant::now();
    let before = render.heldout(&start, &target.embedding)?;
    let check_cost = check_started.elapsed();
    let sentences = probe_sentences();
    let mut base = Vec::with_capacity(sentences.len());
    for sentence in &sentences {
        if cancelled() {
            return Err(VoiceMatchError::Cancelled);
        }
        base.push(render.score(&start, sentence, &target.embedding)?);
    }
    let probe_before = base.iter().sum::<f32>() / base.len() as f32;
    progress(&TuneEvent::Started {
        recipe: found.recipe.clone(),
        before: before.similarity,
        probe_similarity: probe_before,
        axes: space.dims(),
    });

    let mut walk = walk::Walk::new(space.coords(&start), base, space.radius(), options.seed)
        .with_target(target.embedding.as_slice());
    let search_started = Instant::now();
    let deadline = started + options.time_limit;
    let mut history = vec![(0, probe_before, 0.0)];
    let mut per_candidate = Duration::ZERO;
    loop {
        let (tried, moves) = walk.counts();
        if options.max_candidates.is_some_and(|m| tried >= m) {
            break;
        }
        let finish_by = Instant::now() + per_candidate + check_cost + check_cost / 4;
        if tried > 0 && finish_by > deadline {
            break;
        }
        if cancelled() {
            return Err(VoiceMatchError::Cancelled);
        }
        let t = Instant::now();
        let probe = walk.propose();
        let table = space.moved(&start, &probe.point);
        let e = render.embedding(&table, &sentences[probe.sentence])?;
        walk.record_embedded(e.cosine(&target.embedding), e.as_slice());
        per_candidate = if per_candidate.is_zero() {
            t.elapsed()
        } else {
            (per_candidate * 3 + t.elapsed()) / 4
        };
        let (tried, now_moves) = walk.counts();
        if now_moves > moves {
            history.push((
                tried,
                walk.estimate(),
                search_started.elapsed().as_secs_f32(),
            ));
        }
        progress(&TuneEvent::Candidate {
            tried,
            estimate: walk.estimate(),
            moved: now_moves > moves,
            elapsed: started.elapsed(),
            left: deadline.saturating_duration_since(Instant::now()),
        });
    }
    if cancelled() {
        return Err(VoiceMatchError::Cancelled);
    }
    progress(&TuneEvent::Checking);
    let probe_after = walk.estimate();
    let table = space.moved(&start, walk.centre());
    let after = render.heldout(&table, &target.embedding)?;
    let (tried, moves) = walk.counts();
    let settings = serde_json::json!({
        "method": "evolution strategy over the stock packs' principal axes: mirrored pairs, \
                   one probe sentence per pair, the centre moved along the gradient of a \
                   linear model of the speaker embedding fitted to recent pairs",
        "axes": space.dims(),
        "radius": space.radius(),
        "pairs_per_move": walk::PAIRS,
        "sigma": walk::SIGMA,
        "first_step": walk::FIRST_STEP,
        "fit_pairs": walk::FIT_PAIRS,
        "fit_decay": walk::FIT_DECAY,
        "fit_ridge": walk::FIT_RIDGE,
        "seed": options.seed,
        "time_limit_s": options.time_limit.as_secs_f64(),
        "max_candidates": options.max_candidates,
        "probe_sentences": sentences,
        "heldout_text": HELDOUT_TEXT.trim(),
    });
    let tuned = Tuned {
        table,
        target,
        start_recipe: found.recipe,
        language,
        nearest_stock: found.nearest_stock,
        before: before.similarity,
        after: after.similarity,
        stability_before: before.stability,
        stability: after.stability,
        probe_before,
        probe_after,
        tried,
        moves,
        history,
        settings,
        elapsed: started.elapsed(),
    };
    Ok(tuned)
}

impl Tuned {
    /// Whether the tuned voice may be kept: closer to the clips than the blend on the held-out
    /// sentences, and stable ([`MIN_STABILITY`]). Callers save only what passes.
    pub fn accept(&self) -> Result<(), VoiceMatchError> {
        if self.after <= self.before {
            return Err(VoiceMatchError::NotImproved {
                before: self.before,
                after: self.after,
            });
        }
        if self.stability < MIN_STABILITY {
            return Err(VoiceMatchError::Unstable {
                stability: self.stability,
            });
        }
        Ok(())
    }
}

/// The probe sentences, one per line of [`PROBE_TEXT`].
fn probe_sentences() -> Vec<String> {
    PROBE_TEXT
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The principal axes of every installed stock voice's pack.
fn stock_space(engine: &Engine, axes: usize) -> Result<space::StyleSpace, VoiceMatchError> {
    let mut tables = Vec::new();
    for v in engine.stock_voices() {
        let spec = VoiceSpec::parse(&v.name).map_err(SynthError::from)?;
        tables.push(engine.voice(&spec)?);
    }
    let refs: Vec<&VoiceTable> = tables.iter().map(AsRef::as_ref).collect();
    space::StyleSpace::from_tables(&refs, axes).ok_or_else(|| VoiceMatchError::NoCandidates {
        reason: "tuning needs at least three different stock voices installed; run \
                 `banter models fetch`"
            .to_owned(),
    })
}

/// How a pack does on the held-out sentences.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Heldout {
    /// Similarity of all the sentences' speech to the clips.
    pub similarity: f32,
    /// The least alike pair of sentences.
    pub stability: f32,
}

/// Renders packs under a name of their own (registered with the engine for the time of the
/// tuning) as background work, and embeds the speech.
pub struct Renderer<'a> {
    engine: &'a Engine,
    embedder: &'a VoiceEmbedder,
    request: SpeechRequest,
}

impl<'a> Renderer<'a> {
    /// A renderer speaking `language`.
    #[must_use]
    pub fn new(engine: &'a Engine, embedder: &'a VoiceEmbedder, language: Language) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        Self {
            engine,
            embedder,
            request: SpeechRequest {
                voice: VoiceSpec::one(format!("tuning-candidate-{n}")),
                speed: 1.0,
                language: Some(language),
            },
        }
    }

    /// `text` spoken with `table`.
    pub fn speak(&self, table: &VoiceTable, text: &str) -> Result<Vec<f32>, VoiceMatchError> {
        self.engine
            .register_voice(&self.request.voice, table.clone());
        Ok(self
            .engine
            .synthesize(text, &self.request, Mode::Background)?)
    }

    fn embed(&self, audio: &[f32]) -> Result<Embedding, VoiceMatchError> {
        self.embedder.embed_audio(audio, SAMPLE_RATE)
    }

    /// The speaker embedding of `table`'s rendering of `text`.
    pub fn embedding(&self, table: &VoiceTable, text: &str) -> Result<Embedding, VoiceMatchError> {
        let audio = self.speak(table, text)?;
        self.embed(&audio)
    }

    /// Similarity of `table`'s rendering of `text` to `target`.
    pub fn score(
        &self,
        table: &VoiceTable,
        text: &str,
        target: &Embedding,
    ) -> Result<f32, VoiceMatchError> {
        Ok(self.embedding(table, text)?.cosine(target))
    }

    /// `table` on the held-out sentences: similarity to `target`, and stability.
    pub fn heldout(
        &self,
        table: &VoiceTable,
        target: &Embedding,
    ) -> Result<Heldout, VoiceMatchError> {
        let mut all = Vec::new();
        let mut each = Vec::new();
        for sentence in HELDOUT_TEXT.lines().filter(|l| !l.trim().is_empty()) {
            let audio = self.speak(table, sentence)?;
            each.push(self.embed(&audio)?);
            all.extend_from_slice(&audio);
        }
        let similarity = self.embed(&all)?.cosine(target);
        let mut stability = 1.0f32;
        for (i, a) in each.iter().enumerate() {
            for b in &each[i + 1..] {
                stability = stability.min(a.cosine(b));
            }
        }
        Ok(Heldout {
            similarity,
            stability,
        })
    }
}

/// The stock voice a recipe leans on most (its language and gender name a tuned voice).
#[must_use]
pub fn heaviest_stock(spec: &VoiceSpec) -> Option<StockVoice> {
    spec.terms
        .iter()
        .max_by(|a, b| a.weight.total_cmp(&b.weight))
        .and_then(|t| StockVoice::from_name(&t.voice))
}
