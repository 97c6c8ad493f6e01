//! [`Engine`]: the one handle to the model, shared by the studio, the CLI and the HTTP server.
//!
//! It owns the model thread (the scheduler) and the voice tables, and it is the only way to
//! get audio: every render, playback sentence, API request, voice-matching probe and cast check
//! becomes a stream of the one scheduler, in its priority class ([`Mode`]). The model itself
//! (`synth::Synthesizer`) is made on the model thread and cannot leave it, so there is no
//! second path to Kokoro that could run beside the scheduler and stall a playing stream.
//!
//! What does not need the model is here too, so callers need nothing else: text → segments
//! ([`crate::segments`], on the caller's thread) and voice tables ([`VoiceBook`]).
//!
//! ```text
//!  studio / CLI / HTTP ──► Engine ──submit──► Scheduler queue ──► model thread (Kokoro)
//!          ▲                 │                                          │
//!          └── StreamHandle ◄┴────────────── audio chunks ◄─────────────┘
//! ```

use std::sync::Arc;
use std::time::Instant;

use candle_core::Device;

use crate::assets::ModelStore;
use crate::device::DeviceChoice;
use crate::families::{Families, KokoroLoader};
use crate::piper_synth::PiperModels;
use crate::remote::{Dispatcher, SegmentServer};
use crate::scheduler::{
    Metrics, Mode, Scheduler, SchedulerConfig, SchedulerError, SegmentModel, StreamFeed,
    StreamHandle, TimedAudio,
};
use crate::segments;
use crate::speech::Segment;
use crate::speech::{check_speed, SpeechRequest, SynthError};
use crate::synth::Synthesizer;
use crate::voice::{PiperVoice, StockVoice, VoiceBook, VoiceSpec, VoiceTable};
use crate::words::WordTrack;

/// The loaded engine: cheap to clone, every clone the same model thread. The model thread
/// stops when the last clone (and the last stream handle) is dropped.
#[derive(Clone)]
pub struct Engine {
    backend: Backend,
    voices: Arc<VoiceBook>,
    device: Device,
    device_name: Arc<str>,
}

/// Where the audio is made: the model thread here, or servers elsewhere ([`Engine::remote`]).
#[derive(Clone)]
enum Backend {
    Local(Scheduler),
    Remote(Arc<RemoteBackend>),
}

struct RemoteBackend {
    dispatcher: Dispatcher,
    metrics: Arc<Metrics>,
}

impl Engine {
    /// Loads Kokoro from `store` onto `device` on a new model thread, with the default
    /// scheduling (pressing first, windowed interactive streams).
    pub fn load(store: &ModelStore, device: DeviceChoice) -> Result<Self, SynthError> {
        Self::load_with(store, device, SchedulerConfig::default())
    }

    /// [`Self::load`] with the scheduler configured (`banter serve` and the benchmarks).
    pub fn load_with(
        store: &ModelStore,
        device: DeviceChoice,
        config: SchedulerConfig,
    ) -> Result<Self, SynthError> {
        Self::start(store, device, config, true)
    }

    /// [`Self::load`], but Kokoro is loaded only when a request first needs it: for a command
    /// that speaks a Piper voice, which then starts in the time its own model takes to load.
    /// A Kokoro request pays Kokoro's load then, and a missing or damaged Kokoro model fails
    /// that request instead of the start.
    pub fn load_on_demand(store: &ModelStore, device: DeviceChoice) -> Result<Self, SynthError> {
        Self::start(store, device, SchedulerConfig::default(), false)
    }

    fn start(
        store: &ModelStore,
        device: DeviceChoice,
        config: SchedulerConfig,
        eager: bool,
    ) -> Result<Self, SynthError> {
        let voices = Arc::new(VoiceBook::new(store));
        let for_model = Arc::clone(&voices);
        let store = store.clone();
        let load = move || -> Result<Box<dyn SegmentModel>, SynthError> {
            let device = device.open()?;
            let piper = PiperModels::new(Arc::clone(&for_model), device.clone());
            let on = device.clone();
            let loader: KokoroLoader =
                Box::new(move || Synthesizer::load(&store, on.clone(), Arc::clone(&for_model)));
            Ok(Box::new(Families::new(loader, device, piper, eager)?))
        };
        let (scheduler, device) = Scheduler::start(load, config)?;
        Ok(Self {
            backend: Backend::Local(scheduler),
            voices,
            device_name: crate::device::describe(&device).into(),
            device,
        })
    }

    /// An engine whose audio is made by `servers` (Triton endpoints, from `triton/client`), each
    /// given `slots` segments at once ([`crate::remote`]). Voices and segments resolve here
    /// from `store`'s voice tables, exactly as for a local render; no model is loaded here.
    pub fn remote(
        store: &ModelStore,
        servers: Vec<Arc<dyn SegmentServer>>,
        slots: usize,
    ) -> Result<Self, SynthError> {
        let names: Vec<&str> = servers.iter().map(|s| s.name()).collect();
        let device_name = format!("remote: {}", names.join(", "));
        let dispatcher = Dispatcher::start(servers, slots)?;
        Ok(Self {
            backend: Backend::Remote(Arc::new(RemoteBackend {
                dispatcher,
                metrics: Arc::new(Metrics::default()),
            })),
            voices: Arc::new(VoiceBook::new(store)),
            device: Device::Cpu,
            device_name: device_name.into(),
        })
    }

    /// For a remote engine, each server with the segments it has spoken; empty for a local one.
    #[must_use]
    pub fn remote_spoken(&self) -> Vec<(String, usize)> {
        match &self.backend {
            Backend::Local(_) => Vec::new(),
            Backend::Remote(r) => r.dispatcher.spoken(),
        }
    }

    /// How many sentences an export renders ahead of the one it places
    /// (`render::first_pass::render_draft`): 1 on a local CPU, where one segment already
    /// fills the cores and more would only hold audio; on a GPU as many as the scheduler
    /// batches in one pass (encoders or windows); for remote servers, their slots together.
    /// `BANTER_RENDER_AHEAD=N` (1–64) overrides it.
    #[must_use]
    pub fn render_lookahead(&self) -> usize {
        if let Some(n) = crate::synth::count_from_env("BANTER_RENDER_AHEAD") {
            return n;
        }
        match &self.backend {
            Backend::Local(_) if self.device.is_cpu() => 1,
            Backend::Local(scheduler) => scheduler
                .config()
                .max_batch
                .max(crate::synth::Synthesizer::window_batch()),
            Backend::Remote(r) => r.dispatcher.capacity(),
        }
    }

    /// The device the model runs on, in words (`CPU`, `CUDA:0 (NVIDIA H100)`, …).
    #[must_use]
    pub fn device_name(&self) -> &str {
        &self.device_name
    }

    /// The device the model runs on, for the small models that run beside it on the
    /// caller's threads (the speaker encoder).
    #[must_use]
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The stock voices in the model store, sorted by name.
    #[must_use]
    pub fn stock_voices(&self) -> Vec<StockVoice> {
        self.voices.stock_voices()
    }

    /// The table a voice spec renders with (loaded once; a registered library voice wins).
    pub fn voice(&self, spec: &VoiceSpec) -> Result<Arc<VoiceTable>, SynthError> {
        Ok(self.voices.voice(spec)?)
    }

    /// Makes `spec` render with `table` (a saved library voice keeps its exact table).
    pub fn register_voice(&self, spec: &VoiceSpec, table: VoiceTable) {
        self.voices.register(spec, table);
    }

    /// Makes a Piper voice speakable by this engine, under its key ([`PiperVoice::key`]).
    pub fn register_piper(&self, voice: PiperVoice) {
        self.voices.register_piper(voice);
    }

    /// The registered Piper voice a spec names, if it names one.
    pub fn piper_voice(&self, spec: &VoiceSpec) -> Result<Option<Arc<PiperVoice>>, SynthError> {
        match spec.piper_key() {
            Some(key) => Ok(Some(self.voices.piper(key)?)),
            None => Ok(None),
        }
    }

    /// Checks the request (speed, voice) and cuts `text` into segments, on this thread: a
    /// Kokoro voice's by Banter's pipeline, a Piper voice's as piper-tts cuts them.
    pub fn segments(
        &self,
        text: &str,
        request: &SpeechRequest,
    ) -> Result<Vec<Segment>, SynthError> {
        check_speed(request.speed)?;
        if let Some(voice) = self.piper_voice(&request.voice)? {
            return segments::piper_segments(text, &voice);
        }
        self.voices.voice(&request.voice)?;
        segments::segments(text, request)
    }

    /// [`Self::segments`], and the [`WordTrack`] that times the words as the segments are
    /// spoken (from each segment's durations, on its first chunk).
    pub fn segments_with_words(
        &self,
        text: &str,
        request: &SpeechRequest,
    ) -> Result<(Vec<Segment>, WordTrack), SynthError> {
        check_speed(request.speed)?;
        if let Some(voice) = self.piper_voice(&request.voice)? {
            return segments::piper_segments_with_words(text, &voice);
        }
        self.voices.voice(&request.voice)?;
        segments::segments_with_words(text, request)
    }

    /// One segment per sentence of phonemes (episodes), see [`segments::sentence_segments`].
    #[must_use]
    pub fn sentence_segments(&self, phonemes: &str) -> Vec<Segment> {
        segments::sentence_segments(phonemes)
    }

    /// [`Self::sentence_segments`] for the request's voice: a Piper sentence (its phonemes as
    /// [`segments::piper_sentences`] gave them) is one segment with the voice's ids.
    pub fn sentence_segments_for(
        &self,
        phonemes: &str,
        request: &SpeechRequest,
    ) -> Result<Vec<Segment>, SynthError> {
        match self.piper_voice(&request.voice)? {
            Some(voice) => Ok(segments::piper_segment(phonemes, &voice)?
                .into_iter()
                .collect()),
            None => Ok(segments::sentence_segments(phonemes)),
        }
    }

    /// Phonemizes `text` on this thread, then queues it in `mode`.
    pub fn submit_text(
        &self,
        text: &str,
        request: SpeechRequest,
        mode: Mode,
    ) -> Result<StreamHandle, SchedulerError> {
        let segments = self.segments(text, &request)?;
        self.submit(segments, request, mode)
    }

    /// Queues segments; interactive streams are decoded in windows when the scheduler is
    /// configured so ([`SchedulerConfig::windowed`]), everything else whole and exact.
    pub fn submit(
        &self,
        segments: Vec<Segment>,
        request: SpeechRequest,
        mode: Mode,
    ) -> Result<StreamHandle, SchedulerError> {
        self.check(&request)?;
        match &self.backend {
            Backend::Local(scheduler) => scheduler.submit(segments, request, mode),
            Backend::Remote(r) => {
                let table = self.remote_table(&request)?;
                let whole = mode != Mode::Interactive;
                r.dispatcher.submit(segments, &table, &request, mode, whole)
            }
        }
    }

    /// Opens a stream for text that is still being written (an LLM's reply, a pipe): push its
    /// segments with the [`StreamFeed`] as each piece of text is complete enough to speak
    /// ([`crate::follow`] decides when), drop the feed when the text ends. Later pieces join the
    /// same stream, so its audio and word times run on from the earlier ones.
    pub fn open(
        &self,
        request: SpeechRequest,
        mode: Mode,
    ) -> Result<(StreamFeed, StreamHandle), SchedulerError> {
        self.check(&request)?;
        match &self.backend {
            Backend::Local(scheduler) => scheduler.open(request, mode),
            Backend::Remote(r) => {
                let table = self.remote_table(&request)?;
                let whole = mode != Mode::Interactive;
                Ok(r.dispatcher.open_feed(&table, &request, mode, whole))
            }
        }
    }

    /// Queues segments to be decoded whole, exactly as one pass computes them, whatever the
    /// mode (consumers that wait for a sentence's end anyway gain nothing from windows).
    pub fn submit_whole(
        &self,
        segments: Vec<Segment>,
        request: SpeechRequest,
        mode: Mode,
    ) -> Result<StreamHandle, SchedulerError> {
        self.check(&request)?;
        match &self.backend {
            Backend::Local(scheduler) => scheduler.submit_whole(segments, request, mode),
            Backend::Remote(r) => {
                let table = self.remote_table(&request)?;
                r.dispatcher.submit(segments, &table, &request, mode, true)
            }
        }
    }

    /// Speaks `text` whole in `mode` and waits for all of it (not from an async runtime).
    pub fn synthesize(
        &self,
        text: &str,
        request: &SpeechRequest,
        mode: Mode,
    ) -> Result<Vec<f32>, SchedulerError> {
        let segments = self.segments(text, request)?;
        self.render_segments(segments, request, mode)
    }

    /// Renders segments whole, exactly, in `mode`, and waits for all of them.
    pub fn render_segments(
        &self,
        segments: Vec<Segment>,
        request: &SpeechRequest,
        mode: Mode,
    ) -> Result<Vec<f32>, SchedulerError> {
        self.submit_whole(segments, request.clone(), mode)?
            .collect()
    }

    /// [`Self::render_segments`], with the frames per token of each segment (word timing).
    pub fn render_segments_timed(
        &self,
        segments: Vec<Segment>,
        request: &SpeechRequest,
        mode: Mode,
    ) -> Result<TimedAudio, SchedulerError> {
        self.submit_whole(segments, request.clone(), mode)?
            .collect_timed()
    }

    /// The scheduler's figures (struct and Prometheus text).
    #[must_use]
    pub fn metrics(&self) -> Arc<Metrics> {
        match &self.backend {
            Backend::Local(scheduler) => scheduler.metrics(),
            Backend::Remote(r) => Arc::clone(&r.metrics),
        }
    }

    /// How the scheduler was configured.
    #[must_use]
    pub fn config(&self) -> SchedulerConfig {
        match &self.backend {
            Backend::Local(scheduler) => scheduler.config(),
            Backend::Remote(_) => SchedulerConfig::default(),
        }
    }

    /// Speed and voice, checked before anything is queued, so a bad request fails at once
    /// with its own error instead of later on the model thread.
    fn check(&self, request: &SpeechRequest) -> Result<(), SynthError> {
        check_speed(request.speed)?;
        self.voices.check(&request.voice)?;
        Ok(())
    }

    /// The table a remote segment travels with; a Piper voice's model stays here, refused.
    fn remote_table(&self, request: &SpeechRequest) -> Result<Arc<VoiceTable>, SynthError> {
        if request.voice.piper_key().is_some() {
            return Err(crate::remote::piper_refused(&request.voice.canonical()));
        }
        self.voice(&request.voice)
    }
}

/// What encoding several segments in one pass costs beside encoding them one by one, measured
/// on the model thread by [`Engine::time_encoder_batch`].
#[derive(Debug, Clone, Copy)]
pub struct BatchTiming {
    /// Seconds of the fastest run beginning each segment alone, and as one batch.
    pub one_by_one: f64,
    pub batched: f64,
}

impl Engine {
    /// Times the scheduler's first step (encoder, decoder body, harmonic source) of `items`
    /// one by one and as one batch, best of `runs` after a warm-up, on the model thread (every
    /// stream waits meanwhile: for `banter bench batch`, not for serving).
    pub fn time_encoder_batch(
        &self,
        items: Vec<(Segment, SpeechRequest)>,
        runs: usize,
    ) -> Result<BatchTiming, SchedulerError> {
        for (_, request) in &items {
            self.check(request)?;
        }
        let first = kokoro::stream::ChunkPlan::streaming().first;
        let Backend::Local(scheduler) = &self.backend else {
            return Err(SynthError::Remote {
                server: self.device_name.to_string(),
                message: "timing the encoder needs the model on this machine".into(),
            }
            .into());
        };
        scheduler.run_on_model(move |model| {
            let begins: Vec<crate::scheduler::BeginItem<'_>> = items
                .iter()
                .map(|(segment, request)| (segment, request, Some(first)))
                .collect();
            let alone = || -> Result<(), SynthError> {
                for (segment, request, first) in &begins {
                    model.begin(segment, request, *first)?;
                }
                Ok(())
            };
            let batched = || -> Result<(), SynthError> {
                for r in model.begin_batch(&begins) {
                    r?;
                }
                Ok(())
            };
            Ok(BatchTiming {
                one_by_one: best_of(runs, alone)?,
                batched: best_of(runs, batched)?,
            })
        })?
    }
}

/// Seconds of the fastest of `runs` calls, after a warm-up.
fn best_of(
    runs: usize,
    mut f: impl FnMut() -> Result<(), SynthError>,
) -> Result<f64, SchedulerError> {
    f()?;
    let mut best = f64::INFINITY;
    for _ in 0..runs.max(1) {
        let started = Instant::now();
        f()?;
        best = best.min(started.elapsed().as_secs_f64());
    }
    Ok(best)
}
