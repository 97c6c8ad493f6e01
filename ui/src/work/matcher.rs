//! The real [`VoiceTools`]: the engine's voice matching, tuning and cast check over the studio's library
//! and loaded engine (probes are background work on its scheduler). Runs only on worker threads (it embeds audio, renders probes, opens
//! the `SQLite` library); the speaker encoder is loaded on first use and kept.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Mutex, PoisonError};

use engine::assets::ModelStore;
use engine::library::Library;
use engine::voicematch::cast::check_cast;
use engine::voicematch::matching::save_match;
use engine::voicematch::tune::{save_tuned, tune_voice, TuneEvent, TuneOptions};
use engine::voicematch::{
    match_voice, CastPair, MatchEvent, MatchOptions, VoiceEmbedder, CAST_WARN_SIMILARITY,
};
use engine::Engine;

use super::voicematch::{Matched, Progress, ToolError, VoiceTools};

pub struct EngineMatcher {
    engine: Engine,
    store: ModelStore,
    /// The library file (`None`: the user's default library).
    library: Option<PathBuf>,
    /// May fetch the speaker encoder (17 MB) when it is missing.
    fetch: bool,
    options: MatchOptions,
    embedder: Mutex<Option<VoiceEmbedder>>,
}

impl EngineMatcher {
    #[must_use]
    pub fn new(
        engine: Engine,
        store: ModelStore,
        library: Option<PathBuf>,
        fetch: bool,
        options: MatchOptions,
    ) -> Self {
        Self {
            engine,
            store,
            library,
            fetch,
            options,
            embedder: Mutex::new(None),
        }
    }

    fn library(&self) -> Result<Library, ToolError> {
        match &self.library {
            Some(p) => Library::open(p),
            None => Library::open_default(),
        }
        .map_err(|e| ToolError::LibraryUnavailable(Box::new(e)))
    }

    fn embedder(&self) -> Result<VoiceEmbedder, ToolError> {
        let mut slot = self.embedder.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(e) = slot.as_ref() {
            return Ok(e.clone());
        }
        if !self.store.speaker_encoder_ready() {
            if !self.fetch {
                return Err(ToolError::EncoderMissing {
                    root: self.store.root().to_owned(),
                });
            }
            self.store
                .ensure_speaker_encoder(&mut |_| {})
                .map_err(|e| ToolError::FetchEncoder(Box::new(e)))?;
        }
        let e = VoiceEmbedder::load(&self.store, self.engine.device())
            .map_err(|e| ToolError::LoadEncoder(Box::new(e)))?;
        *slot = Some(e.clone());
        Ok(e)
    }
}

/// A free library name for `speaker`'s matched (or tuned: `what`) voice.
fn free_name(library: &Library, speaker: &str, what: &'static str) -> Result<String, ToolError> {
    let base = format!("{speaker} ({what})");
    for n in 1..1000 {
        let name = if n == 1 {
            base.clone()
        } else {
            format!("{base} {n}")
        };
        if library.get_voice(&name)?.is_none() {
            return Ok(name);
        }
    }
    Err(ToolError::NoFreeName { what, base })
}

fn describe(event: &MatchEvent) -> (String, Option<f32>) {
    match event {
        MatchEvent::ClipEmbedded(c) => (
            format!(
                "clip embedded ({:.1} s{})",
                c.embedded_secs,
                c.speech_secs
                    .map(|s| format!(", {s:.1} s of speech"))
                    .unwrap_or_default()
            ),
            Some(0.05),
        ),
        MatchEvent::Stock {
            name, done, total, ..
        } => (
            format!("comparing with {name} ({done}/{total})"),
            Some(0.05 + 0.6 * *done as f32 / (*total).max(1) as f32),
        ),
        MatchEvent::Blend {
            recipe,
            similarity,
            render,
            budget,
        } => (
            format!("blend {render}/{budget}: {recipe}: similarity {similarity:.2}"),
            Some(0.65 + 0.35 * *render as f32 / (*budget).max(1) as f32),
        ),
    }
}

/// A tuning event as a progress line, the fraction by time spent.
fn describe_tune(event: &TuneEvent, total_secs: f32) -> (String, Option<f32>) {
    match event {
        TuneEvent::Clips(_) => ("clip embedded and checked".into(), Some(0.02)),
        TuneEvent::Match(e) => {
            let (text, _) = describe(e);
            (format!("finding the best blend: {text}"), None)
        }
        TuneEvent::Started { recipe, before, .. } => (
            format!("searching from {recipe} (similarity {before:.2})"),
            None,
        ),
        TuneEvent::Candidate {
            tried,
            estimate,
            elapsed,
            left,
            ..
        } => (
            format!(
                "candidate {tried}: similarity so far about {estimate:.2}, {:.0} s left",
                left.as_secs_f32()
            ),
            Some((elapsed.as_secs_f32() / total_secs.max(1.0)).min(0.97)),
        ),
        TuneEvent::Checking => ("checking on held-out sentences…".into(), Some(0.97)),
    }
}

impl VoiceTools for EngineMatcher {
    fn match_clip(
        &self,
        speaker: &str,
        clip: &Path,
        progress: Progress<'_>,
    ) -> Result<Matched, ToolError> {
        progress("loading the speaker encoder…".into(), Some(0.0));
        let embedder = self.embedder()?;
        let library = self.library()?;
        progress("embedding the clip…".into(), Some(0.01));
        let found = match_voice(
            &embedder,
            &self.engine,
            &library,
            clip,
            &self.options,
            &mut |e| {
                let (text, fraction) = describe(e);
                progress(text, fraction);
            },
        )?;
        let name = free_name(&library, speaker, "matched")?;
        save_match(&library, &self.engine, &name, clip, &found)?;
        let mut notes = Vec::new();
        if found.clip.truncated {
            notes.push(format!(
                "the clip is long; its first {:.0} s were used",
                found.clip.embedded_secs
            ));
        }
        if let Some(damage) = &found.clip.damaged {
            notes.push(format!(
                "the clip is damaged ({damage}); the part before it was used"
            ));
        }
        // Never silent: a Piper voice whose model file is gone was not a candidate.
        for skipped in &found.skipped {
            notes.push(format!(
                "Piper voice `{}` was not compared ({}): {}",
                skipped.name,
                skipped.model.display(),
                skipped.reason
            ));
        }
        Ok(Matched {
            name,
            // "joe (Piper voice, en-us)" for a Piper winner, not its engine key.
            recipe: found.label(),
            similarity: found.similarity,
            nearest: found.nearest_stock,
            notes,
            clip: clip.to_owned(),
            tuned_from: None,
        })
    }

    fn tune_clip(
        &self,
        speaker: &str,
        clip: &Path,
        cancel: &AtomicBool,
        progress: Progress<'_>,
    ) -> Result<Matched, ToolError> {
        progress("loading the speaker encoder…".into(), Some(0.0));
        let embedder = self.embedder()?;
        let library = self.library()?;
        let options = TuneOptions {
            matching: self.options.clone(),
            ..TuneOptions::default()
        };
        let total = options.time_limit.as_secs_f32();
        let tuned = tune_voice(
            &embedder,
            &self.engine,
            &library,
            &[clip.to_owned()],
            &options,
            cancel,
            &mut |e| {
                let (text, fraction) = describe_tune(e, total);
                progress(text, fraction);
            },
        )?;
        tuned.accept()?;
        let name = free_name(&library, speaker, "tuned")?;
        save_tuned(&library, &name, &tuned)?;
        Ok(Matched {
            name,
            recipe: tuned.start_recipe,
            similarity: tuned.after,
            nearest: tuned.nearest_stock,
            notes: vec![format!(
                "stability {:.2} (two different sentences alike); {} candidates tried in {:.0} s",
                tuned.stability,
                tuned.tried,
                tuned.elapsed.as_secs_f64()
            )],
            clip: clip.to_owned(),
            tuned_from: Some(tuned.before),
        })
    }

    fn check_cast(&self, cast: &[(String, String)]) -> Result<Vec<CastPair>, ToolError> {
        let embedder = self.embedder()?;
        let library = self.library()?;
        check_cast(
            &embedder,
            &self.engine,
            &library,
            cast,
            CAST_WARN_SIMILARITY,
        )
        .map_err(ToolError::from)
    }
}
