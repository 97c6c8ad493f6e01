//! Both model families behind the one model interface: Kokoro ([`crate::synth`]) and the
//! Piper voices the user added ([`crate::piper_synth`]).
//!
//! Why a composite and not a second scheduler: one model thread decides, for all streams of
//! both families, whose work runs next, so a Piper line and a Kokoro line share the machine
//! fairly and a waiting listener is served first whatever voice they asked for. Each request
//! names its family through its voice ([`crate::voice::VoiceSpec::piper_key`]); encoders are
//! batched only within Kokoro, Piper segments begin one by one.

use crate::piper_synth::{is_piper, PiperModels};
use crate::scheduler::{BeginItem, SegmentJob, SegmentModel, Windowing};
use crate::speech::{Segment, SpeechRequest, SynthError};
use crate::synth::Synthesizer;

/// Kokoro and the Piper voices, on the model thread.
pub(crate) struct Families {
    kokoro: Synthesizer,
    piper: PiperModels,
}

impl Families {
    pub(crate) fn new(kokoro: Synthesizer, piper: PiperModels) -> Self {
        Self { kokoro, piper }
    }
}

impl SegmentModel for Families {
    fn device(&self) -> candle_core::Device {
        SegmentModel::device(&self.kokoro)
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
            SegmentModel::begin(&self.kokoro, segment, request, first_window)
        }
    }

    fn begin_batch(&self, items: &[BeginItem<'_>]) -> Vec<Result<Box<dyn SegmentJob>, SynthError>> {
        let kokoro: Vec<BeginItem<'_>> = items
            .iter()
            .filter(|(_, request, _)| !is_piper(request))
            .copied()
            .collect();
        let mut from_kokoro = if kokoro.is_empty() {
            Vec::new()
        } else {
            SegmentModel::begin_batch(&self.kokoro, &kokoro)
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
        self.kokoro.batch_limit()
    }

    fn window_batch_limit(&self) -> usize {
        self.kokoro.window_batch_limit()
    }

    /// Kokoro batches its own windows and runs anything else (a Piper job) one by one.
    fn advance_windows(
        &self,
        jobs: &mut [Box<dyn SegmentJob>],
    ) -> Vec<Result<Option<Vec<f32>>, SynthError>> {
        self.kokoro.advance_windows(jobs)
    }

    fn windowing(&self) -> Windowing {
        self.kokoro.windowing()
    }
}
