//! The studio's cast work that goes beyond picking a voice: matching a voice to a dropped clip,
//! the "these two sound alike" check, and previews. The state lives in [`Studio`]; this file
//! starts the workers and folds their reports in, so `app/mod.rs` stays about the frame loop.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use engine::assets::ModelStore;
use engine::script::{ENGLISH_FEMALE, ENGLISH_MALE, OTHER_LANGUAGE_FEMALE, OTHER_LANGUAGE_MALE};
use engine::voice::StockVoice;
use engine::voicematch::CastPair;

use crate::app::{EngineState, Studio};
use crate::doc::CastChoice;
use crate::work::matcher::EngineMatcher;
use crate::work::preview::PreviewEvent;
use crate::work::voicematch::{self, CancelFlag, ClipJob, MatchReport, MatchState, ToolsOrigin};

impl Studio {
    /// Installs the engine's voice tools once the model is loaded (unless a caller set others).
    pub(crate) fn install_voice_tools(&mut self) {
        if self.tools_origin == ToolsOrigin::Caller {
            return;
        }
        let EngineState::Ready(engine) = &self.engine else {
            return;
        };
        let store = match self.config.models.clone() {
            Some(p) => ModelStore::at(p),
            None => match ModelStore::open_default() {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!("voice matching unavailable: {e}");
                    return;
                }
            },
        };
        self.matcher = Arc::new(EngineMatcher::new(
            engine.engine.clone(),
            store,
            self.config.library.clone(),
            self.config.fetch_models,
            self.match_options.clone(),
        ));
        self.tools_origin = ToolsOrigin::Engine;
    }

    /// The voice tools can run (the model is loaded, or a caller set them).
    fn voice_tools_ready(&self) -> bool {
        self.tools_origin != ToolsOrigin::StandIn
    }

    /// Matches a voice for `speaker` from `clip` (a dropped file) on a worker thread.
    pub(crate) fn start_voice_match(&mut self, speaker: String, clip: PathBuf) {
        self.start_clip_job(speaker, clip, ClipJob::Match);
    }

    /// Tunes a voice for `speaker` toward `clip` on a worker thread (minutes; cancellable).
    pub(crate) fn start_voice_tune(&mut self, speaker: String, clip: PathBuf) {
        self.start_clip_job(speaker, clip, ClipJob::Tune(CancelFlag::default()));
    }

    /// Cancels `speaker`'s tuning, if one runs: it stops before its next render, saving nothing.
    pub(crate) fn cancel_voice_tune(&mut self, speaker: &str) {
        if let Some(MatchState::Running {
            cancel: Some(flag), ..
        }) = self.matching.get(speaker)
        {
            flag.0.store(true, Ordering::Relaxed);
            self.say(format!("cancelling the tuning for {speaker}…"));
        }
    }

    fn start_clip_job(&mut self, speaker: String, clip: PathBuf, job: ClipJob) {
        if matches!(
            self.matching.get(&speaker),
            Some(MatchState::Running { .. })
        ) {
            self.say(format!(
                "a voice is already being matched or tuned for {speaker}"
            ));
            return;
        }
        let cancel = match &job {
            ClipJob::Match => {
                self.say(format!("matching a voice for {speaker}…"));
                None
            }
            ClipJob::Tune(flag) => {
                self.say(format!(
                    "tuning a voice for {speaker} toward {} (a few minutes, in the background). \
                     {}",
                    clip.display(),
                    engine::voicematch::tune::CONSENT
                ));
                Some(flag.clone())
            }
        };
        self.matching.insert(
            speaker.clone(),
            MatchState::Running {
                text: "starting…".into(),
                fraction: None,
                cancel,
            },
        );
        voicematch::start(
            Arc::clone(&self.matcher),
            job,
            speaker,
            clip,
            self.tasks.matches.tx.clone(),
            self.waker.clone(),
        );
    }

    /// Where `speaker`'s latest voice match stands.
    #[must_use]
    pub fn match_state(&self, speaker: &str) -> Option<&MatchState> {
        self.matching.get(speaker)
    }

    /// The cast as `(speaker, voice)`, what the cast check compares.
    pub(crate) fn cast_pairs(&self) -> Vec<(String, String)> {
        self.doc
            .speakers()
            .into_iter()
            .map(|(s, c)| (s, c.voice))
            .collect()
    }

    /// The warnings for the current cast (pairs of speakers whose voices are too alike).
    #[must_use]
    pub fn cast_warnings(&self) -> Vec<CastPair> {
        self.cast_check.warnings_for(&self.cast_pairs()).to_vec()
    }

    /// Starts a cast check when the cast changed since the last one (at most one at a time).
    pub(crate) fn schedule_cast_check(&mut self) {
        if self.cast_check.running || !self.voice_tools_ready() {
            return;
        }
        let cast = self.cast_pairs();
        if self.cast_check.asked.as_ref() == Some(&cast) {
            return;
        }
        self.cast_check.asked = Some(cast.clone());
        if cast.len() < 2 {
            self.cast_check.pairs.clear();
            self.cast_check.checked = Some(cast);
            return;
        }
        self.cast_check.running = true;
        voicematch::check(
            Arc::clone(&self.matcher),
            cast,
            self.tasks.checks.tx.clone(),
            self.waker.clone(),
        );
    }

    /// Speaks a sample sentence in `speaker`'s voice and speed (stops playback first).
    pub fn preview_speaker(&mut self, speaker: &str) {
        let Some((_, choice)) = self.doc.speakers().into_iter().find(|(s, _)| s == speaker) else {
            self.say(format!("{speaker} is not in the cast"));
            return;
        };
        self.preview_voice(speaker, &choice.voice, choice.speed);
    }

    /// Speaks a sample sentence for `speaker` as `voice` (a stock voice or blend) at `speed`.
    pub fn preview_voice(&mut self, speaker: &str, voice: &str, speed: f32) {
        if let Some(e) = &self.audio_error {
            // A preview is only for hearing: without an output it would render into the play
            // buffer unheard and throw the rendered timeline away for nothing.
            let text = format!("cannot preview {speaker}: nothing can be heard ({e})");
            self.say(text);
            return;
        }
        let EngineState::Ready(engine) = &self.engine else {
            self.say("the model is not loaded yet: previews need it");
            return;
        };
        let handle = engine.engine.clone();
        self.stop();
        self.buffer.clear();
        // Matches no document revision, so Play afterwards renders the episode afresh.
        self.waveform = crate::waveform::Waveform::new(u64::MAX, usize::MAX);
        self.tasks.preview = Some(crate::work::preview::start(
            handle,
            self.config.library.clone(),
            speaker.to_owned(),
            voice.to_owned(),
            speed,
            crate::work::preview::SAMPLE,
            self.waker.clone(),
        ));
        self.sound_on();
        self.say(format!("previewing {speaker}: {voice} at {speed:.2}×"));
    }

    /// The speaker being previewed, if any.
    #[must_use]
    pub fn previewing(&self) -> Option<&str> {
        self.tasks.preview.as_ref().map(|p| p.speaker.as_str())
    }

    fn drain_preview(&mut self) {
        let Some(job) = &self.tasks.preview else {
            return;
        };
        let mut finished = None;
        for event in job.rx.try_iter() {
            match event {
                PreviewEvent::Audio(samples) => self.buffer.append(&samples),
                PreviewEvent::Done => finished = Some(None),
                PreviewEvent::Failed(e) => finished = Some(Some(e)),
            }
        }
        if let Some(error) = finished {
            self.buffer.set_complete(true);
            self.tasks.preview = None;
            if let Some(e) = error {
                self.say(format!("preview failed: {e}"));
            }
        }
    }

    pub(crate) fn drain_voice_tools(&mut self) {
        self.drain_preview();
        let reports: Vec<_> = self.tasks.matches.rx.try_iter().collect();
        for report in reports {
            match report {
                MatchReport::Progress {
                    speaker,
                    text,
                    fraction,
                } => {
                    let cancel = match self.matching.get(&speaker) {
                        Some(MatchState::Running { cancel, .. }) => cancel.clone(),
                        _ => None,
                    };
                    self.matching.insert(
                        speaker,
                        MatchState::Running {
                            text,
                            fraction,
                            cancel,
                        },
                    );
                }
                MatchReport::Done {
                    speaker,
                    clip,
                    result: Ok(found),
                } => {
                    let speed = self
                        .doc
                        .speakers()
                        .into_iter()
                        .find(|(s, _)| *s == speaker)
                        .map_or(1.0, |(_, c)| c.speed);
                    self.doc.set_choice(
                        &speaker,
                        CastChoice {
                            voice: found.name.clone(),
                            speed,
                        },
                    );
                    self.say(match found.tuned_from {
                        None => format!(
                            "{speaker} now speaks in the library voice \"{}\" ({}), similarity \
                             {:.2} to {}: the closest voice Banter has, a match, not a clone",
                            found.name,
                            found.recipe,
                            found.similarity,
                            clip.display()
                        ),
                        Some(before) => format!(
                            "{speaker} now speaks in the tuned voice \"{}\": similarity to {} \
                             on held-out sentences {before:.2} (best blend), now {:.2}; tuned, not \
                             cloned",
                            found.name,
                            clip.display(),
                            found.similarity
                        ),
                    });
                    self.matching.insert(speaker, MatchState::Done(found));
                    self.library.send(crate::work::library::LibCmd::ListVoices);
                }
                MatchReport::Done {
                    speaker,
                    clip,
                    result: Err(e),
                } => {
                    self.say(format!(
                        "no voice matched for {speaker} from {}: {e}",
                        clip.display()
                    ));
                    self.matching
                        .insert(speaker, MatchState::Failed(e.to_string()));
                }
            }
        }
        let checks: Vec<_> = self.tasks.checks.rx.try_iter().collect();
        for checked in checks {
            self.cast_check.running = false;
            match checked.result {
                Ok(pairs) => {
                    self.cast_check.pairs = pairs;
                    self.cast_check.checked = Some(checked.cast);
                    self.cast_check.error = None;
                }
                Err(e) => {
                    tracing::warn!("cast check: {e}");
                    self.cast_check.error = Some(e.to_string());
                }
            }
        }
    }

    /// The stock voices the cast offers: the store's when loaded, else the names the script
    /// parser knows.
    pub(crate) fn voice_choices(&self) -> Vec<StockVoice> {
        if let EngineState::Ready(engine) = &self.engine {
            if !engine.voices.is_empty() {
                return engine.voices.clone();
            }
        }
        let mut v: Vec<StockVoice> = ENGLISH_FEMALE
            .iter()
            .chain(ENGLISH_MALE.iter())
            .chain(OTHER_LANGUAGE_FEMALE.iter())
            .chain(OTHER_LANGUAGE_MALE.iter())
            .filter_map(|n| StockVoice::from_name(n))
            .collect();
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    }
}
