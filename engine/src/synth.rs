//! The model as the model thread holds it. The words it shares with every other layer (what to
//! say, how precisely, what can go wrong) are in [`crate::speech`].
//!
//! [`Synthesizer`](crate::synth::Synthesizer) is crate-private and neither `Send` nor `Sync`: the scheduler's model thread
//! loads it and it never leaves that thread, so nothing else in the program can run Kokoro
//! beside the scheduler (the type system, not a comment, keeps the rule). Everyone else asks
//! [`crate::Engine`], which queues the work. Cutting text into segments needs no model and
//! lives in [`crate::segments`]; voice tables live in [`crate::voice::VoiceBook`].

use std::marker::PhantomData;
use std::sync::Arc;

use candle_core::{Device, Tensor};

use crate::assets::ModelStore;
use crate::scheduler::{advance_each, BeginItem, SegmentJob, SegmentModel, Windowing};
use crate::speech::{check_speed, Precision, Segment, SpeechRequest, SynthError};
use crate::voice::{VoiceBook, VoiceTable};
use kokoro::model::{BatchLayout, EncodeInput, Kokoro, Prosody};
use kokoro::stream::{ChunkPlan, SegmentDecoder};
use kokoro::ModelError;

/// Where the packed bfloat16 weights are kept between starts (`kokoro::cpu_kernels::cache`):
/// `BANTER_CACHE_DIR` (empty: nowhere, every start packs), else `$XDG_CACHE_HOME/banter`.
fn packed_cache_dir() -> Option<std::path::PathBuf> {
    match std::env::var_os("BANTER_CACHE_DIR") {
        Some(dir) if dir.is_empty() => None,
        Some(dir) => Some(dir.into()),
        None => dirs::cache_dir().map(|d| d.join("banter")),
    }
}

/// The loaded model, on the model thread. Not `Send`: see the module docs.
pub(crate) struct Synthesizer {
    model: Arc<Kokoro>,
    /// The weights file, named when the model turns out to be damaged.
    weights: Arc<str>,
    device: Device,
    voices: Arc<VoiceBook>,
    /// Keeps the type on the thread that loaded it.
    _model_thread_only: PhantomData<*const ()>,
}

impl Synthesizer {
    /// Loads the converted weights from `store` onto `device` (opened by the caller); voice
    /// tables come from `voices`.
    pub(crate) fn load(
        store: &ModelStore,
        device: Device,
        voices: Arc<VoiceBook>,
    ) -> Result<Self, SynthError> {
        if !store.is_ready() {
            return Err(SynthError::ModelMissing {
                dir: store.root().display().to_string(),
            });
        }
        let path = store.kokoro_weights();
        let load_error = |source| SynthError::Load {
            path: path.display().to_string(),
            source,
        };
        let model_error = |e| match e {
            ModelError::Tensor(e) => load_error(e),
            other => SynthError::Model(other),
        };
        let model = match Precision::from_env().bf16_kernel() {
            Some(kernel) => {
                let cache = packed_cache_dir();
                let (model, used) = Kokoro::load_bf16(&path, &device, kernel, cache.as_deref())
                    .map_err(model_error)?;
                tracing::debug!(?used, "packed weights");
                model
            }
            None => Kokoro::load(&path, &device).map_err(model_error)?,
        };
        Ok(Self {
            model: Arc::new(model),
            weights: Arc::from(path.display().to_string()),
            device,
            voices,
            _model_thread_only: PhantomData,
        })
    }

    /// The device the model runs on.
    pub(crate) fn device(&self) -> &Device {
        &self.device
    }

    /// How many segments' encoders the scheduler should batch in one pass: 8 on CUDA, where a
    /// batch costs about one launch sequence instead of `B`; 1 on the CPU, where a batch
    /// costs ~0.9–1.0× its members one by one (`banter bench batch`) and would only delay
    /// the first member's audio. `BANTER_ENCODER_BATCH=N` overrides (1–64).
    pub(crate) fn encoder_batch(&self) -> usize {
        encoder_batch_on(&self.device)
    }

    /// How many streams' next windows the scheduler should decode in one generator pass
    /// (`kokoro::stream::decode_batched`): 1 unless `BANTER_WINDOW_BATCH=N` (1–64) says
    /// otherwise. On the CPU a batch costs more than its members one by one (the padding to
    /// a bucket; `banter bench parity --batch N` prints both timings) and would only delay
    /// the first member; on a GPU it should pay, since a pass is launch-bound, but until
    /// `bench parity --batch` there shows the batched time below the alone time it stays 1.
    pub(crate) fn window_batch() -> usize {
        count_from_env("BANTER_WINDOW_BATCH").unwrap_or(1)
    }

    /// Encodes `segment` (everything before its first audio) and returns its decoder, which
    /// yields the audio in the windows of `plan`.
    pub(crate) fn begin(
        &self,
        segment: &Segment,
        request: &SpeechRequest,
        plan: ChunkPlan,
    ) -> Result<SegmentDecoder, SynthError> {
        check_speed(request.speed)?;
        let voice = self.voices.voice(&request.voice)?;
        let style = self.style(&voice, segment.ids.len())?;
        Ok(SegmentDecoder::new(
            Arc::clone(&self.model),
            &segment.ids,
            &style,
            request.speed,
            plan,
        )?)
    }

    /// [`Self::begin`] for several segments (of any requests) at once: their encoders run as
    /// one padded batch ([`kokoro::model::KokoroEncoder::encode_batch`]), then each
    /// gets its decoder. One result per item, in order; an item's error is its own.
    pub(crate) fn begin_batch(
        &self,
        items: &[(&Segment, &SpeechRequest, ChunkPlan)],
    ) -> Vec<Result<SegmentDecoder, SynthError>> {
        let mut out: Vec<Option<Result<SegmentDecoder, SynthError>>> = Vec::new();
        let mut ready: Vec<(usize, Tensor)> = Vec::new();
        for (i, (segment, request, _)) in items.iter().enumerate() {
            let style = check_speed(request.speed)
                .and_then(|()| self.voices.voice(&request.voice).map_err(SynthError::from))
                .and_then(|voice| self.style(&voice, segment.ids.len()));
            match style {
                Ok(style) => {
                    ready.push((i, style));
                    out.push(None);
                }
                Err(e) => out.push(Some(Err(e))),
            }
        }
        let inputs: Vec<EncodeInput<'_>> = ready
            .iter()
            .map(|(i, style)| EncodeInput {
                tokens: &items[*i].0.ids,
                style,
                speed: items[*i].1.speed,
            })
            .collect();
        let encoded = self.model.encoder().encode_batch(&inputs);
        // The encoded items' decoders start together (their decoder bodies in one batch
        // where the device batches); the others keep their errors.
        let mut starting: Vec<(usize, Prosody, &Tensor)> = Vec::new();
        for ((i, style), prosody) in ready.iter().zip(encoded) {
            match prosody {
                Ok(p) => starting.push((*i, p, style)),
                Err(e) => out[*i] = Some(Err(ModelError::from(e).into())),
            }
        }
        let plans: Vec<(&Prosody, &Tensor, ChunkPlan)> = starting
            .iter()
            .map(|(i, p, style)| (p, *style, items[*i].2))
            .collect();
        let layout = BatchLayout::for_device(self.model.encoder().device());
        let decoders = SegmentDecoder::from_prosodies(&self.model, &plans, layout);
        for ((i, _, _), d) in starting.iter().zip(decoders) {
            out[*i] = Some(d.map_err(SynthError::from));
        }
        out.into_iter()
            .map(|r| {
                // `encode_batch` and `from_prosodies` return one result per input; an item
                // left without one is a bug of ours, reported as the model's fault rather
                // than a panic.
                r.unwrap_or_else(|| {
                    Err(SynthError::Inference(candle_core::Error::Msg(
                        "the batched start returned too few results".into(),
                    )))
                })
            })
            .collect()
    }

    fn style(&self, voice: &VoiceTable, ids: usize) -> Result<Tensor, SynthError> {
        Ok(Tensor::from_slice(
            voice.style_for(ids),
            (1, crate::voice::STYLE_DIM),
            &self.device,
        )?)
    }
}

/// [`Synthesizer::encoder_batch`] for a model on `device` (known before the model loads).
pub(crate) fn encoder_batch_on(device: &Device) -> usize {
    if let Some(n) = count_from_env("BANTER_ENCODER_BATCH") {
        return n;
    }
    if device.is_cuda() {
        8
    } else {
        1
    }
}

/// A count from 1 to 64 set in the environment variable `name` (the batch and look-ahead
/// knobs); `None` when unset, and when set to anything else, which is warned about.
pub(crate) fn count_from_env(name: &str) -> Option<usize> {
    let v = std::env::var(name).ok()?;
    match v.trim().parse::<usize>() {
        Ok(n) if (1..=64).contains(&n) => Some(n),
        _ => {
            tracing::warn!("{name}={v:?} is not a number from 1 to 64; ignored");
            None
        }
    }
}

// --- Kokoro through the one model interface (`scheduler::model`) ---

impl SegmentModel for Synthesizer {
    fn device(&self) -> candle_core::Device {
        Synthesizer::device(self).clone()
    }

    fn begin(
        &self,
        segment: &Segment,
        request: &SpeechRequest,
        first_window: Option<usize>,
    ) -> Result<Box<dyn SegmentJob>, SynthError> {
        let decoder = Synthesizer::begin(self, segment, request, plan_for(first_window))?;
        Ok(Box::new(Checked::new(decoder, &self.weights)))
    }

    fn begin_batch(&self, items: &[BeginItem<'_>]) -> Vec<Result<Box<dyn SegmentJob>, SynthError>> {
        let items: Vec<(&Segment, &SpeechRequest, ChunkPlan)> = items
            .iter()
            .map(|&(segment, request, first)| (segment, request, plan_for(first)))
            .collect();
        Synthesizer::begin_batch(self, &items)
            .into_iter()
            .map(|r| r.map(|job| Box::new(Checked::new(job, &self.weights)) as Box<dyn SegmentJob>))
            .collect()
    }

    fn batch_limit(&self) -> usize {
        Synthesizer::encoder_batch(self)
    }

    fn window_batch_limit(&self) -> usize {
        Synthesizer::window_batch()
    }

    fn advance_windows(
        &self,
        jobs: &mut [Box<dyn SegmentJob>],
    ) -> Vec<Result<Option<Vec<f32>>, SynthError>> {
        let ours = |job: &mut Box<dyn SegmentJob>| {
            job.as_any_mut()
                .and_then(|any| any.downcast_mut::<Checked>())
                .is_some_and(|c| c.decoder.can_batch())
        };
        if jobs.len() < 2 || !jobs.iter_mut().all(ours) {
            return advance_each(jobs);
        }
        let mut checked: Vec<&mut Checked> = jobs
            .iter_mut()
            .filter_map(|job| job.as_any_mut()?.downcast_mut::<Checked>())
            .collect();
        let mut decoders: Vec<&mut SegmentDecoder> =
            checked.iter_mut().map(|c| &mut c.decoder).collect();
        match kokoro::stream::decode_batched(&mut decoders) {
            Ok(chunks) => chunks
                .into_iter()
                .zip(&checked)
                .map(|(audio, c)| c.check(audio).map(Some))
                .collect(),
            Err(e) => checked
                .iter()
                .map(|_| {
                    Err(SynthError::from(ModelError::from(candle_core::Error::Msg(
                        format!("a batched generator pass failed: {e}"),
                    ))))
                })
                .collect(),
        }
    }

    fn windowing(&self) -> Windowing {
        kokoro_windowing()
    }
}

/// How Kokoro streams (fixed by its chunk plan, known before the model loads).
pub(crate) fn kokoro_windowing() -> Windowing {
    let plan = ChunkPlan::streaming();
    Windowing {
        first: plan.first_window(0),
        later_first: plan.first_window(1),
        context: plan.context,
    }
}

/// The chunk plan for a first window (`None`: whole).
fn plan_for(first_window: Option<usize>) -> ChunkPlan {
    first_window.map_or_else(ChunkPlan::whole, |first| ChunkPlan {
        first,
        ..ChunkPlan::streaming()
    })
}

/// A Kokoro decoder session whose audio is checked before anyone hears it: damaged weights (a
/// few bytes of NaN in the file) make the model sing NaN, which every later stage turns into
/// silence or a crash far from the cause. A chunk that is not finite fails the segment as an
/// internal error naming the weights file, so the user knows what to fetch again.
struct Checked {
    decoder: SegmentDecoder,
    weights: Arc<str>,
}

impl Checked {
    fn new(decoder: SegmentDecoder, weights: &Arc<str>) -> Self {
        Self {
            decoder,
            weights: Arc::clone(weights),
        }
    }
}

impl Checked {
    /// `audio` if every sample is finite; else the weights are damaged.
    fn check(&self, audio: Vec<f32>) -> Result<Vec<f32>, SynthError> {
        if audio.iter().all(|x| x.is_finite()) {
            Ok(audio)
        } else {
            Err(SynthError::DamagedModel {
                path: self.weights.to_string(),
            })
        }
    }
}

impl SegmentJob for Checked {
    fn advance(&mut self) -> Result<Option<Vec<f32>>, SynthError> {
        let chunk = self.decoder.advance().map_err(ModelError::from)?;
        chunk.map(|audio| self.check(audio)).transpose()
    }

    fn window_bucket(&self) -> Option<usize> {
        if self.decoder.can_batch() {
            self.decoder.window_bucket()
        } else {
            None
        }
    }

    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }

    fn is_done(&self) -> bool {
        self.decoder.is_done()
    }

    fn next_step_frames(&self) -> f64 {
        self.decoder.next_step_frames()
    }

    fn frames_to_audio(&self) -> f64 {
        self.decoder.frames_to_audio()
    }

    fn frames(&self) -> usize {
        self.decoder.frames()
    }

    fn take_durations(&mut self) -> Option<Arc<[u32]>> {
        self.decoder.take_durations()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::{Mode, StreamEvent};

    /// The scheduler's window batches on the real model: three streams at once, their
    /// encoders and windows run in shared passes (`BANTER_ENCODER_BATCH=4`,
    /// `BANTER_WINDOW_BATCH=4`, as a GPU would), give each stream the audio it gets one
    /// window a step.
    #[test]
    #[ignore = "needs the model files (`banter models fetch`); run with --ignored"]
    fn scheduled_window_batches_give_the_audio_of_windows_alone() {
        let store = ModelStore::open_default().expect("model store");
        let streams = [
            (
                "Hello there, this is the first of three streams.",
                "af_heart",
            ),
            ("A second voice joins in, a little later.", "am_michael"),
            (
                "And a third one, longer than the others, so that its windows outlast theirs \
                 and run on alone at the end.",
                "bf_emma",
            ),
        ];
        let render = |batch: &str| {
            std::env::set_var("BANTER_ENCODER_BATCH", batch);
            std::env::set_var("BANTER_WINDOW_BATCH", batch);
            let engine =
                crate::Engine::load(&store, crate::device::DeviceChoice::Cpu).expect("engine");
            let mut handles: Vec<_> = streams
                .iter()
                .map(|(text, voice)| {
                    let request = SpeechRequest::new(voice, 1.0).expect("request");
                    engine
                        .submit_text(text, request, Mode::Interactive)
                        .expect("submit")
                })
                .collect();
            let audio: Vec<Vec<f32>> = handles
                .iter_mut()
                .map(|h| {
                    let mut audio = Vec::new();
                    while let Some(event) = h.blocking_next() {
                        match event {
                            StreamEvent::Audio { samples, .. } => audio.extend(samples),
                            StreamEvent::Failed(e) => panic!("{e}"),
                        }
                    }
                    audio
                })
                .collect();
            let sizes = engine.metrics().batch_size.snapshot();
            (audio, sizes.sum / sizes.count.max(1) as f64)
        };
        let (alone, one) = render("1");
        let (batched, mean) = render("4");
        std::env::remove_var("BANTER_ENCODER_BATCH");
        std::env::remove_var("BANTER_WINDOW_BATCH");
        assert!((one - 1.0).abs() < 1e-9, "one window a step: {one}");
        assert!(mean > 1.0, "no step batched: {mean}");
        for (i, (a, b)) in alone.iter().zip(&batched).enumerate() {
            let snr = kokoro::parity::snr_db(a, b);
            eprintln!("stream {i}: {} samples, {snr:.1} dB", a.len());
            assert!(snr >= 100.0, "stream {i}: {snr:.1} dB");
        }
    }

    #[test]
    fn speed_limits() {
        assert!(check_speed(1.0).is_ok());
        assert!(check_speed(0.5).is_ok());
        assert!(check_speed(2.0).is_ok());
        for bad in [0.49, 2.01, f32::NAN, f32::INFINITY, -1.0] {
            assert!(matches!(check_speed(bad), Err(SynthError::Speed { .. })));
        }
    }
}
