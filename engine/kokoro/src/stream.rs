//! Decoding one segment: encode once, then run the generator over one or more windows.
//!
//! A segment is encoded once (durations, F0/N, the decoder body and the harmonic source need the
//! whole segment and are cheap). The generator — nearly all of the work — can then run over
//! windows of decoder frames (one frame = 300 samples = 12.5 ms), each padded with `context`
//! frames of its neighbours so the convolutions see what they would see in one pass, and each
//! cross-faded into the one before over `fade` frames.
//!
//! But every `AdaIN` layer normalises over the whole time axis of what it is given, so a window's
//! statistics are its own, not the segment's: windowed output is *not* the reference audio (the
//! `streaming` tests measure SNR 2–4 dB against one pass, yet 332 dB with full context, which
//! shows the slicing itself is exact; the judge hears the same words and the same voice, see
//! [`ChunkPlan::streaming`]). [`ChunkPlan::whole`] decodes a segment in one window, exactly as
//! the reference does: exports and `synthesize` use it. [`ChunkPlan::streaming`] is for
//! listeners waiting on the first audio: the scheduler's interactive streams, whose later
//! segments start with a longer window ([`ChunkPlan::first_window`]).
//!
//! A window's generator pass runs a piece at a time ([`SegmentDecoder::advance`]), so the
//! scheduler can serve someone else between pieces.

use std::sync::Arc;

use candle_core::Tensor;

use super::generator::batch::BatchItem;
use super::generator::pass::GeneratorPass;
use super::model::{BatchLayout, Kokoro, Prosody};
use super::ModelError;

mod inputs;

pub(crate) use inputs::{decoder_inputs, decoder_inputs_batch, DecoderInputs};

/// Samples per decoder frame (the generator's input rate: 2 per predicted duration frame).
pub const SAMPLES_PER_FRAME: usize = 300;
/// First window (decoder frames, 0.8 s) of a stream's later segments ([`ChunkPlan::first_window`]).
pub const LATER_FIRST: usize = 64;
/// Windows longer than every bucket of their plan (whole segments) are padded to a multiple
/// of this many decoder frames (0.4 s) in a batched pass.
pub const WHOLE_BUCKET: usize = 32;
/// Spectrum frames (`har`, `conv_post`) per decoder frame.
pub(crate) const SPEC_PER_FRAME: usize = 60;

/// How a segment's decoder frames are cut into windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkPlan {
    /// Frames in the first window (time to first audio).
    pub first: usize,
    /// Later windows double in size up to this many frames (throughput).
    pub rest: usize,
    /// Frames of neighbouring context on each side of a window.
    pub context: usize,
    /// Frames over which a window fades into the one before (at most `context`).
    pub fade: usize,
    /// Segments with at most this many frames are decoded in a single window.
    pub whole_below: usize,
}

impl Default for ChunkPlan {
    fn default() -> Self {
        Self::whole()
    }
}

impl ChunkPlan {
    /// For a listener waiting: 0.25 s first, then 0.5, 1 and 1.6 s windows with 0.2 s of
    /// context and a 50 ms cross-fade. The first window costs the encoder plus ~36 frames of
    /// generator; each later one less than the audio already sent lasts at xRT ≥ 2. Approximate
    /// (see the module docs); measured against one pass with `banter bench windows`.
    #[must_use]
    pub fn streaming() -> Self {
        Self {
            first: 20,
            rest: 128,
            context: 16,
            fade: 4,
            whole_below: 0,
        }
    }

    /// Windows of 0.5 s first, doubling to 2 s, with 0.3 s of context: approximate.
    #[must_use]
    pub fn windowed() -> Self {
        Self {
            first: 40,
            rest: 160,
            context: 24,
            fade: 4,
            whole_below: 0,
        }
    }

    /// The first window of a stream's segment number `index` under this plan: [`Self::first`]
    /// for the first segment, where the listener waits; [`LATER_FIRST`] (when larger) for later
    /// ones, whose listener has the earlier audio in hand, so a longer first window (less
    /// context recomputed) is safe. By place, not by timing: the same request always gives the
    /// same audio.
    #[must_use]
    pub fn first_window(&self, index: usize) -> usize {
        if index == 0 {
            self.first
        } else {
            self.first.max(LATER_FIRST).min(self.rest)
        }
    }

    /// One window per segment: exactly the reference computation, no streaming inside a segment.
    #[must_use]
    pub fn whole() -> Self {
        Self {
            first: usize::MAX,
            rest: usize::MAX,
            context: 0,
            fade: 0,
            whole_below: usize::MAX,
        }
    }

    /// The frames (context included) that windows of this plan are padded to when several
    /// run in one batched pass ([`decode_batched`]), ascending. For each window size the plan
    /// makes — doubling up to [`Self::rest`] from [`Self::first_window`] of a first and of a
    /// later segment, and from a stream's first window (so that a later segment's plan has
    /// the set of its stream's first) — the longest span such a window can have: with context
    /// on both sides, or as a segment's last window, with context on the left and a merged
    /// sliver. Empty for [`Self::whole`], whose windows are whole segments of any length (see
    /// [`Self::bucket`]).
    #[must_use]
    pub fn buckets(&self) -> Vec<usize> {
        if self.rest == usize::MAX || self.first == usize::MAX {
            return Vec::new();
        }
        let sliver = self.context.max(8) - 1;
        let mut out = Vec::new();
        // A stream's later segments start longer ([`Self::first_window`]) but share its
        // first segment's buckets, whose windows start at `streaming().first`.
        let stream_first = Self::streaming().first.min(self.first);
        for first in [stream_first, self.first_window(0), self.first_window(1)] {
            let mut size = first.max(1);
            loop {
                let size_now = size.min(self.rest.max(1));
                out.push(size_now + self.context + self.context.max(sliver));
                if size_now >= self.rest.max(1) {
                    break;
                }
                size = size.saturating_mul(2);
            }
        }
        if self.whole_below > 0 {
            out.push(self.whole_below);
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The bucket a window spanning `span` frames (context included) is padded to in a
    /// batched pass: the smallest of [`Self::buckets`] that holds it, else `span` rounded up
    /// to a multiple of [`WHOLE_BUCKET`] frames.
    #[must_use]
    pub fn bucket(&self, span: usize) -> usize {
        self.buckets()
            .into_iter()
            .find(|&b| b >= span)
            .unwrap_or_else(|| span.max(1).next_multiple_of(WHOLE_BUCKET))
    }

    /// The `[start, end)` frame ranges of the windows for a segment of `frames` decoder frames.
    #[must_use]
    pub fn windows(&self, frames: usize) -> Vec<(usize, usize)> {
        if frames <= self.whole_below || frames == 0 {
            return vec![(0, frames)];
        }
        let mut out = Vec::new();
        let mut start = 0;
        let mut size = self.first.max(1);
        while start < frames {
            let mut end = start.saturating_add(size).min(frames);
            // Never leave a sliver: a last window shorter than the context joins this one.
            if frames - end < self.context.max(8) {
                end = frames;
            }
            out.push((start, end));
            start = end;
            size = size.saturating_mul(2).min(self.rest.max(1));
        }
        out
    }
}

/// A segment being decoded: its encoded features, where the next window starts, and the
/// generator pass of the window under way.
///
/// [`Self::advance`] runs one piece of a pass ([`crate::generator::pass`]), so a
/// scheduler's step is short whatever the window's size; [`Self::next_chunk`] runs pieces until
/// a window's audio is ready.
pub struct SegmentDecoder {
    model: Arc<Kokoro>,
    /// Decoder output, time-major `[L, 512]` (the generator's input): made so once, each
    /// window's rows are a view, not a transposed copy.
    body: Tensor,
    /// Source spectrum, time-major `[60L + 1, 22]`.
    har: Tensor,
    /// Acoustic style `[1, 128]`.
    style: Tensor,
    windows: Vec<(usize, usize)>,
    /// Index of the window under way (or next to start).
    next: usize,
    /// Its generator pass, once its first piece ran.
    pass: Option<GeneratorPass>,
    context: usize,
    fade: usize,
    /// The plan the windows come from (for [`ChunkPlan::bucket`]).
    plan: ChunkPlan,
    /// The previous window's audio for the first `fade` frames of the next one.
    tail: Vec<f32>,
    /// Frames per token (pads included) until [`Self::take_durations`] hands them on.
    durations: Option<Arc<[u32]>>,
}

impl SegmentDecoder {
    /// Encodes the segment (everything but the generator) and plans its windows.
    pub fn new(
        model: Arc<Kokoro>,
        ids: &[u32],
        style: &Tensor,
        speed: f32,
        plan: ChunkPlan,
    ) -> Result<Self, ModelError> {
        let prosody = model.encoder().encode(ids, style, speed)?;
        Self::from_prosody(model, &prosody, style, plan)
    }

    /// The rest of [`Self::new`] for a segment already encoded (alone or in a batch, see
    /// [`super::model::KokoroEncoder::encode_batch`]): the decoder's body and harmonic
    /// source, and the windows.
    pub fn from_prosody(
        model: Arc<Kokoro>,
        prosody: &Prosody,
        style: &Tensor,
        plan: ChunkPlan,
    ) -> Result<Self, ModelError> {
        let inputs = decoder_inputs(&model, prosody, style)?;
        Self::encoded(model, inputs, prosody, plan)
    }

    /// A segment from its decoder inputs, holding its encoder's durations for the caller.
    fn encoded(
        model: Arc<Kokoro>,
        inputs: DecoderInputs,
        prosody: &Prosody,
        plan: ChunkPlan,
    ) -> Result<Self, ModelError> {
        let mut decoder = Self::from_inputs(model, inputs, plan)?;
        decoder.durations = Some(prosody.pred_dur.clone().into());
        Ok(decoder)
    }

    /// [`Self::from_prosody`] for several segments at once, one result per item, in order:
    /// with [`BatchLayout::Padded`] (a GPU's) their decoder bodies run as one padded batch
    /// ([`super::decoder::Decoder::body_batch_tm`]); with [`BatchLayout::Packed`] (the CPU's,
    /// which pays per row) one by one. Should the batch fail, each item runs alone, so one
    /// item's failure is never another's.
    #[must_use]
    pub fn from_prosodies(
        model: &Arc<Kokoro>,
        items: &[(&Prosody, &Tensor, ChunkPlan)],
        layout: BatchLayout,
    ) -> Vec<Result<Self, ModelError>> {
        if items.len() > 1 && layout == BatchLayout::Padded {
            let pairs: Vec<(&Prosody, &Tensor)> = items.iter().map(|&(p, s, _)| (p, s)).collect();
            match decoder_inputs_batch(model, &pairs) {
                Ok(inputs) => {
                    return inputs
                        .into_iter()
                        .zip(items)
                        .map(|(inputs, &(prosody, _, plan))| {
                            Self::encoded(Arc::clone(model), inputs, prosody, plan)
                        })
                        .collect();
                }
                Err(err) => {
                    tracing::warn!("batched decoder bodies failed ({err}); running each alone");
                }
            }
        }
        items
            .iter()
            .map(|&(prosody, style, plan)| {
                Self::from_prosody(Arc::clone(model), prosody, style, plan)
            })
            .collect()
    }

    /// A segment whose decoder body and harmonic source are computed already.
    pub(crate) fn from_inputs(
        model: Arc<Kokoro>,
        inputs: DecoderInputs,
        plan: ChunkPlan,
    ) -> Result<Self, ModelError> {
        let DecoderInputs {
            body,
            har,
            acoustic,
        } = inputs;
        let frames = body.dim(0)?;
        Ok(Self {
            model,
            body,
            har,
            style: acoustic,
            windows: plan.windows(frames),
            next: 0,
            pass: None,
            context: plan.context,
            fade: plan.fade.min(plan.context),
            plan,
            tail: Vec::new(),
            durations: None,
        })
    }

    /// The same segment again from its first window (its encoding shared, not recomputed):
    /// for comparing two ways of decoding it.
    #[must_use]
    pub fn restarted(&self) -> Self {
        Self {
            model: Arc::clone(&self.model),
            body: self.body.clone(),
            har: self.har.clone(),
            style: self.style.clone(),
            windows: self.windows.clone(),
            next: 0,
            pass: None,
            context: self.context,
            fade: self.fade,
            plan: self.plan,
            tail: Vec::new(),
            durations: None,
        }
    }

    /// The frames the encoder gave each token, pads included (each is two decoder frames,
    /// `2 ×` [`SAMPLES_PER_FRAME`] samples), once: `None` after the first call.
    pub fn take_durations(&mut self) -> Option<Arc<[u32]>> {
        self.durations.take()
    }

    /// Decoder frames in this segment (each is [`SAMPLES_PER_FRAME`] samples).
    #[must_use]
    pub fn frames(&self) -> usize {
        self.windows.last().map_or(0, |w| w.1)
    }

    /// True when every window has been decoded.
    #[must_use]
    pub fn is_done(&self) -> bool {
        self.next >= self.windows.len()
    }

    /// The work of the next [`Self::advance`], in decoder frames of generator (0 when done).
    #[must_use]
    pub fn next_step_frames(&self) -> f64 {
        let piece = self.pass.as_ref().map_or(0, GeneratorPass::next_piece);
        let weights = self.model.decoder().generator().piece_weights();
        self.window_frames() * weights.get(piece).copied().unwrap_or(0.0)
    }

    /// The work left before the next audio (the rest of the window under way), in decoder
    /// frames of generator (0 when done).
    #[must_use]
    pub fn frames_to_audio(&self) -> f64 {
        let piece = self.pass.as_ref().map_or(0, GeneratorPass::next_piece);
        let weights = self.model.decoder().generator().piece_weights();
        let left: f64 = weights.iter().skip(piece).sum();
        self.window_frames() * left
    }

    /// Frames the window under way computes, context included (0 when done).
    fn window_frames(&self) -> f64 {
        self.windows.get(self.next).map_or(0.0, |&(start, end)| {
            let (lo, hi) = self.span(start, end);
            (hi - lo) as f64
        })
    }

    /// The frames a window computes: itself plus context, clipped to the segment.
    fn span(&self, start: usize, end: usize) -> (usize, usize) {
        let lo = start.saturating_sub(self.context);
        let hi = end.saturating_add(self.context).min(self.frames());
        (lo, hi)
    }

    /// Decodes the next window; `None` when the segment is finished.
    pub fn next_chunk(&mut self) -> candle_core::Result<Option<Vec<f32>>> {
        while !self.is_done() {
            if let Some(audio) = self.advance()? {
                return Ok(Some(audio));
            }
        }
        Ok(None)
    }

    /// Runs one piece of the window under way (starting it if need be); returns the window's
    /// audio when that piece finished it, `None` when there is more to do (or nothing left:
    /// see [`Self::is_done`]).
    pub fn advance(&mut self) -> candle_core::Result<Option<Vec<f32>>> {
        if self.is_done() {
            return Ok(None);
        }
        let generator = self.model.decoder().generator();
        if self.pass.is_none() {
            let (x, har) = self.window_input()?;
            self.pass = Some(generator.begin_pass(x, har));
        }
        let Some(pass) = self.pass.as_mut() else {
            candle_core::bail!("segment decoder: no pass under way");
        };
        let Some(audio) = generator.advance(pass, &self.style)? else {
            return Ok(None);
        };
        self.pass = None;
        Ok(Some(
            self.finish_window(&audio.flatten_all()?.to_vec1::<f32>()?)?,
        ))
    }

    /// The next window's generator input: time-major decoder output `[F, 512]` and source
    /// spectrum `[60·F + 1, 22]` over its span.
    fn window_input(&self) -> candle_core::Result<(Tensor, Tensor)> {
        let Some(&(start, end)) = self.windows.get(self.next) else {
            candle_core::bail!("segment decoder: no window left");
        };
        let (lo, hi) = self.span(start, end);
        let x = self.body.narrow(0, lo, hi - lo)?;
        let har = self
            .har
            .narrow(0, lo * SPEC_PER_FRAME, (hi - lo) * SPEC_PER_FRAME + 1)?;
        Ok((x, har))
    }

    /// The bucket the next window is padded to in a batched pass ([`ChunkPlan::bucket`] of
    /// its span); `None` when done.
    #[must_use]
    pub fn window_bucket(&self) -> Option<usize> {
        let &(start, end) = self.windows.get(self.next)?;
        let (lo, hi) = self.span(start, end);
        Some(self.plan.bucket(hi - lo))
    }

    /// Whether the next window can join a batched pass: one is left and no pass of this
    /// segment's own is under way.
    #[must_use]
    pub fn can_batch(&self) -> bool {
        !self.is_done() && self.pass.is_none()
    }

    /// The model this segment is decoded with.
    #[must_use]
    pub fn model(&self) -> &Arc<Kokoro> {
        &self.model
    }

    /// The audio of the window under way from its generator output `[1, samples]` (context
    /// included): cropped to the window, faded in over the previous window's tail; moves on.
    fn finish_window(&mut self, audio: &[f32]) -> candle_core::Result<Vec<f32>> {
        let Some(&(start, end)) = self.windows.get(self.next) else {
            candle_core::bail!("segment decoder: no window left");
        };
        let (lo, _) = self.span(start, end);
        self.next += 1;
        let from = (start - lo) * SAMPLES_PER_FRAME;
        let to = (end - lo) * SAMPLES_PER_FRAME;
        let mut keep = audio[from..to].to_vec();
        cross_fade(&self.tail, &mut keep);
        // What this window says about the first frames of the next, to fade from.
        let tail_end = (to + self.fade * SAMPLES_PER_FRAME).min(audio.len());
        self.tail = audio[to..tail_end].to_vec();
        Ok(keep)
    }
}

/// Decodes the next window of each of `decoders` in one batched generator pass (see
/// [`crate::generator::batch`]), each padded to the largest of their buckets
/// ([`SegmentDecoder::window_bucket`]); returns each window's audio, cropped and cross-faded
/// exactly as [`SegmentDecoder::advance`] would, in order.
///
/// Every decoder must [`SegmentDecoder::can_batch`] and share one model.
pub fn decode_batched(decoders: &mut [&mut SegmentDecoder]) -> candle_core::Result<Vec<Vec<f32>>> {
    let Some(first) = decoders.first() else {
        return Ok(Vec::new());
    };
    let model = Arc::clone(&first.model);
    let mut items = Vec::with_capacity(decoders.len());
    let mut bucket = 0;
    for d in decoders.iter() {
        if !d.can_batch() || !Arc::ptr_eq(&d.model, &model) {
            candle_core::bail!("decode_batched: a segment that is done, busy or of another model");
        }
        let (x, har) = d.window_input()?;
        bucket = bucket.max(d.window_bucket().unwrap_or(0));
        items.push(BatchItem {
            x,
            har,
            style: d.style.clone(),
        });
    }
    let audio = model
        .decoder()
        .generator()
        .forward_batch_host(&items, bucket)?;
    decoders
        .iter_mut()
        .zip(&audio)
        .map(|(d, a)| d.finish_window(a))
        .collect()
}

/// Fades `next` in over `tail` (the previous window's version of the same samples) with a
/// raised cosine, so windows whose levels differ slightly join without a click.
fn cross_fade(tail: &[f32], next: &mut [f32]) {
    let n = tail.len().min(next.len());
    for (i, (y, &t)) in next.iter_mut().zip(tail).take(n).enumerate() {
        let w = 0.5 - 0.5 * (std::f32::consts::PI * (i as f32 + 0.5) / n as f32).cos();
        *y = w * *y + (1.0 - w) * t;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_cover_every_frame_once() {
        let plan = ChunkPlan {
            first: 40,
            rest: 160,
            context: 24,
            fade: 4,
            whole_below: 0,
        };
        for frames in [1, 39, 40, 41, 64, 65, 200, 201, 777, 5000] {
            let w = plan.windows(frames);
            assert_eq!(w[0].0, 0);
            assert_eq!(w.last().unwrap().1, frames);
            assert!(w.windows(2).all(|p| p[0].1 == p[1].0), "{frames}: {w:?}");
            assert!(w.iter().all(|&(a, b)| b > a));
        }
        assert_eq!(plan.windows(300)[0], (0, 40));
        let sizes: Vec<usize> = plan.windows(1000).iter().map(|w| w.1 - w.0).collect();
        assert_eq!(
            &sizes[..4],
            &[40, 80, 160, 160],
            "windows double up to `rest`"
        );
        assert_eq!(ChunkPlan::whole().windows(300), vec![(0, 300)]);
        let short = ChunkPlan {
            whole_below: 100,
            ..plan
        };
        assert_eq!(short.windows(100), vec![(0, 100)]);
        assert_eq!(short.windows(101)[0], (0, 40));
    }

    #[test]
    fn every_streaming_window_falls_into_a_bucket() {
        for plan in [ChunkPlan::streaming(), ChunkPlan::windowed()] {
            let buckets = plan.buckets();
            assert!(!buckets.is_empty() && buckets.windows(2).all(|p| p[0] < p[1]));
            for index in [0, 1] {
                let segment_plan = ChunkPlan {
                    first: plan.first_window(index),
                    ..plan
                };
                for frames in 1..=1500 {
                    for (start, end) in segment_plan.windows(frames) {
                        let lo = start.saturating_sub(plan.context);
                        let hi = (end + plan.context).min(frames);
                        let span = hi - lo;
                        let bucket = segment_plan.bucket(span);
                        assert!(
                            buckets.contains(&bucket) && bucket >= span,
                            "{plan:?} segment {index}, {frames} frames: window {start}..{end} \
                             spans {span}, bucket {bucket} not in {buckets:?}"
                        );
                        assert_eq!(bucket, plan.bucket(span), "one bucket set per stream");
                    }
                }
            }
        }
        let streaming = ChunkPlan::streaming();
        // first windows (20 and 64 frames), the doubling ones, the steady one, with context
        assert_eq!(streaming.buckets(), vec![52, 72, 96, 112, 160]);
        let windowed = ChunkPlan::windowed();
        assert_eq!(windowed.buckets(), vec![68, 88, 112, 128, 176, 208]);
        // whole segments: multiples of WHOLE_BUCKET
        assert!(ChunkPlan::whole().buckets().is_empty());
        assert_eq!(ChunkPlan::whole().bucket(1), WHOLE_BUCKET);
        assert_eq!(ChunkPlan::whole().bucket(333), 352);
        assert_eq!(streaming.bucket(161), 192);
    }

    /// The model with random weights (built once to create the variables, then again after
    /// filling them: construction copies weights into its own layouts), with one residual
    /// block per generator stage instead of three, for speed.
    pub(super) fn random_model() -> Arc<Kokoro> {
        use crate::config::KokoroConfig;
        use candle_core::{DType, Device};
        use candle_nn::{VarBuilder, VarMap};
        let dev = Device::Cpu;
        let varmap = VarMap::new();
        let vb = VarBuilder::from_varmap(&varmap, DType::F32, &dev);
        let mut cfg = KokoroConfig::default();
        cfg.istftnet.resblock_kernel_sizes.truncate(1);
        cfg.istftnet.resblock_dilation_sizes.truncate(1);
        Kokoro::new(&cfg, vb.clone()).expect("model");
        crate::test_weights::fill_normal(&varmap, 0.05, 41);
        Arc::new(Kokoro::new(&cfg, vb).expect("model"))
    }

    /// A segment of `frames` decoder frames with random decoder inputs and style.
    fn segment(model: &Arc<Kokoro>, frames: usize, plan: ChunkPlan) -> SegmentDecoder {
        use candle_core::Device;
        let dev = Device::Cpu;
        let inputs = DecoderInputs {
            body: Tensor::randn(0f32, 1.0, (frames, 512), &dev).expect("body"),
            har: Tensor::randn(0f32, 1.0, (frames * SPEC_PER_FRAME + 1, 22), &dev).expect("har"),
            acoustic: Tensor::randn(0f32, 1.0, (1, 128), &dev).expect("style"),
        };
        SegmentDecoder::from_inputs(Arc::clone(model), inputs, plan).expect("decoder")
    }

    #[test]
    fn windows_decoded_in_batches_equal_each_alone() {
        let model = random_model();
        // The streaming plan scaled down (the generator runs at full width here).
        let small = ChunkPlan {
            first: 6,
            rest: 12,
            context: 4,
            fade: 2,
            whole_below: 0,
        };
        // Different lengths, first windows and styles.
        let plans = [0, 1, 0].map(|i| ChunkPlan {
            first: small.first_window(i),
            ..small
        });
        // A stream's first segment (windows of 6, 12 and 12 frames), a later one (12 and
        // 8), one shorter than any first window.
        let mut alone: Vec<SegmentDecoder> = [(30, 0), (20, 1), (5, 2)]
            .iter()
            .map(|&(frames, p)| segment(&model, frames, plans[p]))
            .collect();
        // The same segments, decoded in batches, as the CPU arranges a batch and as a GPU
        // does (one product per dilated convolution, masked rows for the upsamplers and the
        // inverse STFT), both run here.
        let batched: Vec<SegmentDecoder> = alone.iter().map(SegmentDecoder::restarted).collect();
        assert_eq!(alone[0].windows, vec![(0, 6), (6, 18), (18, 30)]);
        assert_eq!(alone[1].windows, vec![(0, 12), (12, 20)]);
        let want: Vec<Vec<Vec<f32>>> = alone
            .iter_mut()
            .map(|d| {
                let mut chunks = Vec::new();
                while let Some(c) = d.next_chunk().expect("chunk") {
                    chunks.push(c);
                }
                chunks
            })
            .collect();
        for gpu in [false, true] {
            let mut batched: Vec<SegmentDecoder> =
                batched.iter().map(SegmentDecoder::restarted).collect();
            crate::generator::conv::tests::ONE_PRODUCT_ON_CPU.with(|on| on.set(gpu));
            let mut got: Vec<Vec<Vec<f32>>> = vec![Vec::new(); batched.len()];
            let mut batches = 0;
            loop {
                let (idx, mut ready): (Vec<usize>, Vec<&mut SegmentDecoder>) = batched
                    .iter_mut()
                    .enumerate()
                    .filter(|(_, d)| d.can_batch())
                    .take(3)
                    .unzip();
                if ready.is_empty() {
                    break;
                }
                let chunks = decode_batched(&mut ready).expect("batch");
                batches += 1;
                for (i, c) in idx.into_iter().zip(chunks) {
                    got[i].push(c);
                }
            }
            crate::generator::conv::tests::ONE_PRODUCT_ON_CPU.with(|on| on.set(false));
            assert!(
                batches < want.iter().map(Vec::len).sum::<usize>(),
                "windows shared passes"
            );
            for (s, (w, g)) in want.iter().zip(&got).enumerate() {
                assert_eq!(w.len(), g.len(), "segment {s}: windows");
                for (k, (w, g)) in w.iter().zip(g).enumerate() {
                    let snr = crate::parity::snr_db(w, g);
                    assert!(
                        snr >= 100.0,
                        "gpu arrangement {gpu}: segment {s} window {k}: {snr:.1} dB"
                    );
                }
            }
        }
    }

    #[test]
    fn later_segments_start_with_a_longer_window() {
        let plan = ChunkPlan::streaming();
        assert_eq!(plan.first_window(0), plan.first);
        assert_eq!(plan.first_window(1), LATER_FIRST);
        assert_eq!(plan.first_window(7), LATER_FIRST);
        assert!(LATER_FIRST > plan.first && LATER_FIRST <= plan.rest);
        // a plan whose windows are already long keeps them
        assert_eq!(ChunkPlan::whole().first_window(3), usize::MAX);
    }

    #[test]
    fn cross_fade_goes_from_the_tail_to_the_new_window() {
        let mut next = vec![1.0f32; 8];
        cross_fade(&[0.0; 4], &mut next);
        assert!(next[0] < 0.1 && next[3] > 0.9, "{next:?}");
        assert!(next.windows(2).take(4).all(|p| p[0] <= p[1]));
        assert_eq!(&next[4..], &[1.0; 4]);
        let mut untouched = vec![0.5f32; 3];
        cross_fade(&[], &mut untouched);
        assert_eq!(untouched, vec![0.5; 3]);
    }
}
