//! Batched decoding against decoding alone: the streaming windows of many segments decoded
//! `N` at a time in one generator pass ([`crate::stream::decode_batched`]) must give each
//! window the audio it gets in its own pass. `banter bench parity --batch N` prints it.
//!
//! The segments' preludes are compared the same way first ([`super::prelude`]).
//!
//! Both runs use the same model on the same device and the same encoder output, so anything
//! but rounding is a bug: the bar is 100 dB per window.

use std::sync::Arc;
use std::time::Instant;

use candle_core::{Device, Tensor};

use super::prelude::{self, PreludeParity};
use super::snr_db;
use crate::device_memory::{pool_use, PoolUse};
use crate::model::Kokoro;
use crate::precision::Precision;
use crate::stream::{decode_batched, ChunkPlan, SegmentDecoder};
use crate::ModelError;

/// The bar every window (and every batched decoder body) must clear.
pub const MIN_SNR_DB: f64 = 100.0;
/// The bar of the batched F0/N curves in f32 (relative to each curve's largest value): the
/// stage goldens' tolerance.
pub const F0_N_MAX_REL: f32 = 1e-4;

/// One segment to decode: phoneme ids, its voice's 256-wide style row, and its place in its
/// stream (0: the first segment, whose first window is the shortest; see
/// [`ChunkPlan::first_window`]).
#[derive(Debug, Clone)]
pub struct BatchSegment {
    pub ids: Vec<u32>,
    pub style: Vec<f32>,
    pub index: usize,
}

/// One window's agreement.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowParity {
    /// Index into the segments.
    pub segment: usize,
    /// Index of the window in its segment.
    pub window: usize,
    /// Its samples.
    pub samples: usize,
    /// Frames its batched pass padded it to (the largest bucket in the batch).
    pub padded_to: usize,
    /// Batched against alone.
    pub snr_db: f64,
}

/// What [`run`] found.
#[derive(Debug, Clone)]
pub struct BatchReport {
    pub windows: Vec<WindowParity>,
    /// Generator passes: alone (one per window) and batched.
    pub passes_alone: usize,
    pub passes_batched: usize,
    /// Wall time of all windows decoded alone, and batched (seconds; the encoder and the
    /// decoder body, shared by both, not included).
    pub alone_s: f64,
    pub batched_s: f64,
    /// The batched run again, every shape seen before (seconds), and its lowest window SNR
    /// against alone.
    pub again_s: f64,
    pub again_lowest_snr_db: f64,
    /// Batched shapes with a CUDA graph ready after both runs (`BANTER_CUDA_GRAPHS=1`; 0
    /// elsewhere).
    pub graphs: usize,
    /// On a CUDA device, what its memory pools held after the first batched run and after the
    /// repeated one: equal reserved bytes mean the steady state took nothing new from the
    /// driver.
    pub pools: Option<(PoolUse, PoolUse)>,
    /// Decoder frames the generator ran over (context included): alone, and batched (every
    /// item padded to its batch's bucket), so the timings can be read per frame.
    pub frames_alone: usize,
    pub frames_batched: usize,
    /// The segments' preludes (F0/N branches, decoder bodies) batched `N` at a time in the
    /// padded layout against alone.
    pub prelude: PreludeParity,
    /// Layers whose products run in bfloat16 or 8 bits (the CPU's default precision; 0 in
    /// f32 and on a GPU).
    pub reduced_layers: usize,
}

impl BatchReport {
    /// The lowest window SNR (∞ for no windows).
    #[must_use]
    pub fn lowest_snr_db(&self) -> f64 {
        self.windows
            .iter()
            .map(|w| w.snr_db)
            .fold(f64::INFINITY, f64::min)
    }

    /// Whether every window of both batched runs and every decoder body clears
    /// [`MIN_SNR_DB`], and, in f32 products, the batched F0/N curves stay within
    /// [`F0_N_MAX_REL`] of alone. (With bfloat16 products, the padded ALBERT's other
    /// blocking of the same sums flips roundings to bfloat16, which the duration LSTMs carry
    /// into the curves at up to about 10⁻² of their largest value; that figure is printed,
    /// not held to a bar.)
    #[must_use]
    pub fn passed(&self) -> bool {
        self.windows.iter().all(|w| w.snr_db >= MIN_SNR_DB)
            && self.again_lowest_snr_db >= MIN_SNR_DB
            && self.prelude.lowest_body_db >= MIN_SNR_DB
            && (self.reduced_layers > 0 || self.prelude.worst_f0_n_rel <= F0_N_MAX_REL)
    }
}

/// Loads the model from `weights` on `device` as the engine runs it there
/// (`BANTER_PRECISION`'s products on the CPU), encodes `segments` once, and decodes their
/// streaming windows alone and then `n` at a time.
pub fn run(
    weights: &std::path::Path,
    device: &Device,
    segments: &[BatchSegment],
    n: usize,
) -> Result<BatchReport, ModelError> {
    let mut model = Kokoro::load(weights, device)?;
    let reduced = match Precision::from_env().bf16_kernel() {
        Some(kernel) => model.use_bf16(kernel)?,
        None => 0,
    };
    let mut report = compare(&Arc::new(model), segments, n)?;
    report.reduced_layers = reduced;
    Ok(report)
}

/// [`run`] with a loaded model.
pub fn compare(
    model: &Arc<Kokoro>,
    segments: &[BatchSegment],
    n: usize,
) -> Result<BatchReport, ModelError> {
    let device = model.encoder().device().clone();
    let streaming = ChunkPlan::streaming();
    let styles = segments
        .iter()
        .map(|seg| Tensor::from_slice(&seg.style, (1, seg.style.len()), &device))
        .collect::<candle_core::Result<Vec<_>>>()?;
    let preludes: Vec<(&[u32], &Tensor)> = segments
        .iter()
        .zip(&styles)
        .map(|(seg, style)| (&seg.ids[..], style))
        .collect();
    let (prelude, prosodies) = prelude::compare(model, &preludes, n)?;
    let mut alone = Vec::with_capacity(segments.len());
    for ((seg, style), prosody) in segments.iter().zip(&styles).zip(&prosodies) {
        let plan = ChunkPlan {
            first: streaming.first_window(seg.index),
            ..streaming
        };
        alone.push(SegmentDecoder::from_prosody(
            Arc::clone(model),
            prosody,
            style,
            plan,
        )?);
    }
    let mut batched: Vec<SegmentDecoder> = alone.iter().map(SegmentDecoder::restarted).collect();

    let mut frames_alone = 0.0;
    let start = Instant::now();
    let mut want: Vec<Vec<Vec<f32>>> = Vec::with_capacity(alone.len());
    for d in &mut alone {
        let mut chunks = Vec::new();
        loop {
            // At a window's start, the work left before its audio is the whole window.
            frames_alone += d.frames_to_audio();
            let Some(chunk) = d.next_chunk()? else { break };
            chunks.push(chunk);
        }
        want.push(chunks);
    }
    let alone_s = start.elapsed().as_secs_f64();

    let start = Instant::now();
    let (got, passes_batched, frames_batched) = decode_all(&mut batched, n)?;
    let batched_s = start.elapsed().as_secs_f64();
    let pools_first = pool_use(&device);
    // Again from the start, every shape now seen before: the steady state (with
    // `BANTER_CUDA_GRAPHS=1`, replays of the graphs the first run captured).
    let mut again: Vec<SegmentDecoder> = alone.iter().map(SegmentDecoder::restarted).collect();
    let start = Instant::now();
    let (got_again, _, _) = decode_all(&mut again, n)?;
    let again_s = start.elapsed().as_secs_f64();
    let pools = pools_first.zip(pool_use(&device));
    let again_lowest_snr_db = want
        .iter()
        .zip(&got_again)
        .flat_map(|(w, g)| w.iter().zip(g).map(|(w, (g, _))| snr_db(w, g)))
        .fold(f64::INFINITY, f64::min);

    let mut windows = Vec::new();
    for (segment, (w, g)) in want.iter().zip(&got).enumerate() {
        if w.len() != g.len() {
            return Err(ModelError::Tensor(candle_core::Error::Msg(format!(
                "segment {segment}: {} windows alone, {} batched",
                w.len(),
                g.len()
            ))));
        }
        for (window, (w, (g, padded_to))) in w.iter().zip(g).enumerate() {
            windows.push(WindowParity {
                segment,
                window,
                samples: w.len(),
                padded_to: *padded_to,
                snr_db: snr_db(w, g),
            });
        }
    }
    Ok(BatchReport {
        passes_alone: windows.len(),
        passes_batched,
        windows,
        alone_s,
        batched_s,
        again_s,
        again_lowest_snr_db,
        graphs: model.decoder().generator().graphs_ready(),
        pools,
        frames_alone: frames_alone.round() as usize,
        frames_batched,
        prelude,
        reduced_layers: 0,
    })
}

/// Each segment's windows: the audio, and the bucket its pass padded it to.
type Windows = Vec<Vec<(Vec<f32>, usize)>>;

/// Every window of `decoders` decoded `n` at a time (the first `n` that have one left, each
/// pass): each window's audio with the bucket its pass padded it to, the passes, and the
/// frames they ran over.
fn decode_all(
    decoders: &mut [SegmentDecoder],
    n: usize,
) -> Result<(Windows, usize, usize), ModelError> {
    let mut got: Windows = vec![Vec::new(); decoders.len()];
    let mut passes = 0;
    let mut frames = 0;
    loop {
        let (idx, mut ready): (Vec<usize>, Vec<&mut SegmentDecoder>) = decoders
            .iter_mut()
            .enumerate()
            .filter(|(_, d)| d.can_batch())
            .take(n.max(1))
            .unzip();
        if ready.is_empty() {
            return Ok((got, passes, frames));
        }
        let padded_to = ready
            .iter()
            .filter_map(|d| d.window_bucket())
            .max()
            .unwrap_or(0);
        frames += padded_to * ready.len();
        let chunks = decode_batched(&mut ready)?;
        passes += 1;
        for (i, chunk) in idx.into_iter().zip(chunks) {
            got[i].push((chunk, padded_to));
        }
    }
}
