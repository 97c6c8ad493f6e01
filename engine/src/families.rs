//! Both model families behind the one model interface: Kokoro ([`crate::synth`]) and the
//! Piper voices the user added ([`crate::piper_synth`]).
//!
//! Why a composite and not a second scheduler: one model thread decides, for all streams of
//! both families, whose work runs next, so a Piper line and a Kokoro line share the machine
//! fairly and a waiting listener is served first whatever voice they asked for. Each request
//! names its family through its voice ([`crate::voice::VoiceSpec::piper_key`]); encoders are
//! batched only within Kokoro, Piper segments begin one by one.
//!
//! Kokoro is loaded when the engine starts, or (for a command that speaks only Piper voices,
//! [`crate::Engine::load_on_demand`]) when it is first asked for: a Piper voice then starts in
//! the time its own model takes to load, and the 300 MB of Kokoro's weights stay on disk.

use std::cell::OnceCell;

use candle_core::Device;

use crate::piper_synth::{is_piper, PiperModels};
use crate::scheduler::{advance_each, BeginItem, SegmentJob, SegmentModel, Windowing};
use crate::speech::{Segment, SpeechRequest, SynthError};
use crate::synth::{encoder_batch_on, kokoro_windowing, Synthesizer};

/// Loads Kokoro on the model thread.
pub(crate) type KokoroLoader = Box<dyn Fn() -> Result<Synthesizer, SynthError>>;

/// Kokoro and the Piper voices, on the model thread.
pub(crate) struct Families {
    kokoro: OnceCell<Synthesizer>,
    load_kokoro: KokoroLoader,
    device: Device,
    piper: PiperModels,
}

impl Families {
    /// Both families on `device`; Kokoro loaded now when `eager`, else on first use.
    pub(crate) fn new(
        load_kokoro: KokoroLoader,
        device: Device,
        piper: PiperModels,
        eager: bool,
    ) -> Result<Self, SynthError> {
        let families = Self {
            kokoro: OnceCell::new(),
            load_kokoro,
            device,
            piper,
        };
        if eager {
            families.kokoro()?;
        }
        Ok(families)
    }

    /// Kokoro, loaded the first time (a failed load is tried again by the next request).
    fn kokoro(&self) -> Result<&Synthesizer, SynthError> {
        if let Some(k) = self.kokoro.get() {
            return Ok(k);
        }
        let loaded = (self.load_kokoro)()?;
        Ok(self.kokoro.get_or_init(|| loaded))
    }
}

impl SegmentModel for Families {
    fn device(&self) -> Device {
        self.device.clone()
    }

    fn begin(
        &self,
        segment: &Segment,
        request: &SpeechRequest,
        first_window: Option<usize>,
    ) -> Result<Box<dyn SegmentJob>, SynthError> {
        if is_piper(request) {
            self.piper.begin(segment, request, first_window)
        } else {
            SegmentModel::begin(self.kokoro()?, segment, request, first_window)
        }
    }

    fn begin_batch(&self, items: &[BeginItem<'_>]) -> Vec<Result<Box<dyn SegmentJob>, SynthError>> {
        let kokoro_items: Vec<BeginItem<'_>> = items
            .iter()
            .filter(|(_, request, _)| !is_piper(request))
            .copied()
            .collect();
        let mut from_kokoro: std::vec::IntoIter<Result<Box<dyn SegmentJob>, SynthError>> =
            if kokoro_items.is_empty() {
                Vec::new()
            } else {
                match self.kokoro() {
                    Ok(k) => SegmentModel::begin_batch(k, &kokoro_items),
                    // Each item fails with the load's reason.
                    Err(e) => {
                        let reason = e.to_string();
                        let mut out = vec![Err(e)];
                        out.extend((1..kokoro_items.len()).map(|_| {
                            Err(SynthError::Inference(candle_core::Error::Msg(
                                reason.clone(),
                            )))
                        }));
                        out
                    }
                }
            }
            .into_iter();
        items
            .iter()
            .map(|(segment, request, first_window)| {
                if is_piper(request) {
                    self.piper.begin(segment, request, *first_window)
                } else {
                    from_kokoro.next().unwrap_or_else(|| {
                        Err(SynthError::Inference(candle_core::Error::Msg(
                            "the batched encoder returned too few results".into(),
                        )))
                    })
                }
            })
            .collect()
    }

    fn batch_limit(&self) -> usize {
        encoder_batch_on(&self.device)
    }

    fn window_batch_limit(&self) -> usize {
        Synthesizer::window_batch()
    }

    /// Kokoro batches its own windows and runs anything else (a Piper job) one by one.
    fn advance_windows(
        &self,
        jobs: &mut [Box<dyn SegmentJob>],
    ) -> Vec<Result<Option<Vec<f32>>, SynthError>> {
        match self.kokoro.get() {
            Some(k) => k.advance_windows(jobs),
            None => advance_each(jobs),
        }
    }

    fn windowing(&self) -> Windowing {
        kokoro_windowing()
    }
}
