//! Does the model on another device (CUDA) compute what the f32 CPU port computes? Stage by
//! stage, on the same inputs, so a difference is pinned to the stage that makes it.
//!
//! Why stages and not whole renders: two correct ports drift apart sample by sample over a
//! render (the harmonic source's phase reaches 1e4–1e5 rad, so any F0 rounding shifts every
//! later sample, and a duration rounded the other way shifts every later frame). Here each
//! decoder is fed the *same* encoder output (the CPU's), so its audio can be held to the CPU's
//! sample for sample, and the encoders are compared on their own outputs.
//!
//! Per segment: the encoder alone (durations equal? F0 and text features' relative error), the
//! encoder in one batch with the other segments (as the scheduler runs it on CUDA), and the
//! decoder in one exact pass and in the streaming windows of a stream's later segment, each as
//! SNR against the CPU's audio. `banter bench parity` prints it.

use std::sync::Arc;

pub mod batch;
pub mod prelude;

use candle_core::{Device, Tensor};

use super::generator::pass::GeneratorPass;
use super::model::{EncodeInput, Kokoro, Prosody};
use super::precision::Precision;
use super::stream::{decoder_inputs, ChunkPlan, DecoderInputs, SegmentDecoder, LATER_FIRST};
use super::ModelError;

/// One segment's agreement between the reference (CPU, f32) and the other device.
#[derive(Debug, Clone, PartialEq)]
pub struct SegmentParity {
    /// Phoneme ids.
    pub tokens: usize,
    /// Decoder frames (reference).
    pub frames: usize,
    /// The encoder alone: same durations as the reference?
    pub durations_equal: bool,
    /// max |Δ| / max |reference| of F0, and of the frame text features.
    pub f0_rel: f32,
    pub asr_rel: f32,
    /// The encoder in one batch with every segment, against the same device alone: same
    /// durations, and F0's relative error.
    pub batch_durations_equal: bool,
    pub batch_f0_rel: f32,
    /// The decoder's stages before the generator, fed the reference's encoder output: the
    /// body (`[1, 512, F]`) and the harmonic source's spectrum, relative errors.
    pub body_rel: f32,
    pub har_rel: f32,
    /// The decoder on the reference's encoder output: one exact pass, and a later segment's
    /// streaming windows, each as SNR (dB) against the reference's audio of the same plan.
    pub whole_snr_db: f64,
    pub windowed_snr_db: f64,
}

/// What [`run`] found.
#[derive(Debug, Clone)]
pub struct Report {
    pub segments: Vec<SegmentParity>,
    /// [`generator_trace`] of the segment with the most frames.
    pub longest_trace: Vec<f32>,
    /// [`last_stage_input`] of the segment with the most frames.
    pub last_stage_input: Vec<(String, f32)>,
}

/// Loads the model twice from `weights`, in f32 on the CPU (the reference) and on `device` as
/// the engine runs it there (`BANTER_PRECISION`'s products on the CPU), and compares them on
/// `segments`: phoneme ids and the voice's 256-wide style row for them.
pub fn run(
    weights: &std::path::Path,
    device: &Device,
    segments: &[(Vec<u32>, Vec<f32>)],
) -> Result<Report, ModelError> {
    let reference = Arc::new(Kokoro::load(weights, &Device::Cpu)?);
    let mut other = Kokoro::load(weights, device)?;
    if let Some(kernel) = Precision::from_env().bf16_kernel() {
        other.use_bf16(kernel)?;
    }
    let other = Arc::new(other);
    let segments: Vec<(Vec<u32>, Tensor)> = segments
        .iter()
        .map(|(ids, row)| {
            Ok((
                ids.clone(),
                Tensor::from_slice(row, (1, row.len()), &Device::Cpu)?,
            ))
        })
        .collect::<candle_core::Result<_>>()?;
    let rows = compare(&reference, &other, &segments)?;
    let longest = rows
        .iter()
        .enumerate()
        .max_by_key(|(_, r)| r.frames)
        .map(|(i, _)| i);
    let (longest_trace, last_stage) = match longest {
        Some(i) => {
            let (tokens, style) = &segments[i];
            let prosody = reference.encoder().encode(tokens, style, 1.0)?;
            (
                generator_trace(&reference, &other, &prosody, style)?,
                last_stage_input(&reference, &other, &prosody, style)?,
            )
        }
        None => (Vec::new(), Vec::new()),
    };
    Ok(Report {
        segments: rows,
        longest_trace,
        last_stage_input: last_stage,
    })
}

/// Compares `other` (any device) with `reference` (the CPU port in f32) on `segments`:
/// phoneme ids and their `[1, 256]` style row (on the CPU).
pub fn compare(
    reference: &Arc<Kokoro>,
    other: &Arc<Kokoro>,
    segments: &[(Vec<u32>, Tensor)],
) -> Result<Vec<SegmentParity>, ModelError> {
    let device = other.encoder().device().clone();
    let styles: Vec<Tensor> = segments
        .iter()
        .map(|(_, s)| s.to_device(&device))
        .collect::<candle_core::Result<_>>()?;
    let inputs: Vec<EncodeInput<'_>> = segments
        .iter()
        .zip(&styles)
        .map(|((tokens, _), style)| EncodeInput {
            tokens,
            style,
            speed: 1.0,
        })
        .collect();
    let batch = other.encoder().encode_batch(&inputs);
    let windowed = ChunkPlan {
        first: LATER_FIRST,
        ..ChunkPlan::streaming()
    };
    let mut out = Vec::with_capacity(segments.len());
    for (((tokens, style), style_dev), batched) in segments.iter().zip(&styles).zip(batch) {
        let want = reference.encoder().encode(tokens, style, 1.0)?;
        let got = other.encoder().encode(tokens, style_dev, 1.0)?;
        let batched = batched?;
        let fed = on_device(&want, &device)?;
        let decode = |model: &Arc<Kokoro>, p: &Prosody, s: &Tensor, plan| {
            audio(SegmentDecoder::from_prosody(Arc::clone(model), p, s, plan)?)
        };
        let inputs_ref = decoder_inputs(reference, &want, style)?;
        let inputs = decoder_inputs(other, &fed, style_dev)?;
        let whole_ref = decode(reference, &want, style, ChunkPlan::whole())?;
        let whole = decode(other, &fed, style_dev, ChunkPlan::whole())?;
        let windowed_ref = decode(reference, &want, style, windowed)?;
        let windowed_got = decode(other, &fed, style_dev, windowed)?;
        out.push(SegmentParity {
            tokens: tokens.len(),
            frames: want.frames(),
            durations_equal: got.pred_dur == want.pred_dur,
            f0_rel: rel_err(&got.f0, &want.f0)?,
            asr_rel: if got.pred_dur == want.pred_dur {
                rel_err(&got.asr, &want.asr)?
            } else {
                f32::NAN
            },
            batch_durations_equal: batched.pred_dur == got.pred_dur,
            batch_f0_rel: rel_err(&batched.f0, &got.f0)?,
            body_rel: rel_err(&inputs.body, &inputs_ref.body)?,
            har_rel: rel_err(&inputs.har, &inputs_ref.har)?,
            whole_snr_db: snr_db(&whole_ref, &whole),
            windowed_snr_db: snr_db(&windowed_ref, &windowed_got),
        });
    }
    Ok(out)
}

/// The generator's pass over the whole of `prosody`'s segment on both models, piece by piece
/// (each stage's input, each residual block, the output): the largest relative error of
/// what the pass holds after each piece, so a divergence is pinned to the piece that starts it.
pub fn generator_trace(
    reference: &Kokoro,
    other: &Kokoro,
    prosody: &Prosody,
    style: &Tensor,
) -> Result<Vec<f32>, ModelError> {
    let device = other.encoder().device().clone();
    let fed = on_device(prosody, &device)?;
    let style_dev = style.to_device(&device)?;
    let (mut a, s_ref) = begin_pass(reference, prosody, style)?;
    let (mut b, s_dev) = begin_pass(other, &fed, &style_dev)?;
    let (ga, gb) = (reference.decoder().generator(), other.decoder().generator());
    let mut out = Vec::new();
    for _ in 0..ga.pieces() {
        let ya = ga.advance(&mut a, &s_ref)?;
        let yb = gb.advance(&mut b, &s_dev)?;
        let err = match (ya, yb) {
            (Some(ya), Some(yb)) => rel_err(&yb, &ya)?,
            _ => a
                .held()
                .iter()
                .zip(b.held())
                .map(|(x, y)| rel_err(y, x))
                .collect::<candle_core::Result<Vec<_>>>()?
                .into_iter()
                .fold(0f32, f32::max),
        };
        out.push(err);
    }
    Ok(out)
}

/// The last stage's input piece broken into its layers, both devices fed the reference's
/// activation after the earlier stages: `(layer, relative error)`.
pub fn last_stage_input(
    reference: &Kokoro,
    other: &Kokoro,
    prosody: &Prosody,
    style: &Tensor,
) -> Result<Vec<(String, f32)>, ModelError> {
    let device = other.encoder().device().clone();
    let generator = reference.decoder().generator();
    let DecoderInputs {
        body,
        har,
        acoustic: s,
    } = decoder_inputs(reference, prosody, style)?;
    let mut pass = generator.begin_pass(body, har.clone());
    let last = generator.stages() - 1;
    for _ in 0..last * (1 + generator.blocks_per_stage()) {
        generator.advance(&mut pass, &s)?;
    }
    let x = pass.held()[0].clone();
    let want = generator.stage_input_parts(last, &x, &har, &s)?;
    let got = other.decoder().generator().stage_input_parts(
        last,
        &x.to_device(&device)?,
        &har.to_device(&device)?,
        &s.to_device(&device)?,
    )?;
    Ok(want
        .iter()
        .zip(&got)
        .map(|((name, a), (_, b))| Ok((format!("{name} {:?}", a.dims()), rel_err(b, a)?)))
        .collect::<candle_core::Result<_>>()?)
}

/// The generator's own layers, with random weights, on `device` against the CPU at
/// growing lengths (`[T, C]` time-major rows): `(what, rows, relative error)`. Finds an op
/// whose device kernel breaks past some size.
pub fn op_sweep(device: &Device) -> candle_core::Result<Vec<(String, usize, f32)>> {
    use super::adain::instance_norm;
    use super::generator::{Conv1d, ConvTranspose1d};
    let cpu = Device::Cpu;
    let mut out = Vec::new();
    let convs = [
        (128, 128, 3, 1),
        (128, 128, 7, 3),
        (128, 128, 11, 5),
        (128, 22, 7, 1),
        (22, 128, 1, 1),
    ];
    let transposed = [(22, 1, 20, 5), (256, 128, 12, 6)];
    for rows in [4_000, 17_000, 30_000, 40_000] {
        for &(c_in, c_out, k, d) in &convs {
            let w = Tensor::randn(0f32, 0.1, (c_out, c_in, k), &cpu)?;
            let x = Tensor::randn(0f32, 1.0, (rows, c_in), &cpu)?;
            let pad = d * (k - 1) / 2;
            let a = Conv1d::from_tensors(&w, None, pad, d, 1)?.forward_tm(&x)?;
            let b = Conv1d::from_tensors(&w.to_device(device)?, None, pad, d, 1)?
                .forward_tm(&x.to_device(device)?)?;
            out.push((
                format!("conv1d {c_in}->{c_out} k{k} d{d}"),
                rows,
                rel_err(&b, &a)?,
            ));
        }
        for &(c_in, c_out, k, s) in &transposed {
            let t = rows;
            let w = Tensor::randn(0f32, 0.1, (c_in, c_out, k), &cpu)?;
            let x = Tensor::randn(0f32, 1.0, (t, c_in), &cpu)?;
            let a = ConvTranspose1d::from_tensors(&w, None, s, (k - s) / 2)?.forward_tm(&x)?;
            let b = ConvTranspose1d::from_tensors(&w.to_device(device)?, None, s, (k - s) / 2)?
                .forward_tm(&x.to_device(device)?)?;
            out.push((
                format!("conv_transpose1d {c_in}->{c_out} k{k} s{s} (input rows)"),
                t,
                rel_err(&b, &a)?,
            ));
        }
        let x = Tensor::randn(0f32, 1.0, (rows, 128), &cpu)?;
        let a = instance_norm(&x.t()?.unsqueeze(0)?)?;
        let b = instance_norm(&x.to_device(device)?.t()?.unsqueeze(0)?)?;
        out.push((
            "instance_norm [1, 128, T] (transposed view)".into(),
            rows,
            rel_err(&b, &a)?,
        ));
    }
    Ok(out)
}

/// A generator pass over the whole segment, and the acoustic style it runs with.
fn begin_pass(
    model: &Kokoro,
    prosody: &Prosody,
    style: &Tensor,
) -> Result<(GeneratorPass, Tensor), ModelError> {
    let DecoderInputs {
        body,
        har,
        acoustic,
    } = decoder_inputs(model, prosody, style)?;
    let pass = model.decoder().generator().begin_pass(body, har);
    Ok((pass, acoustic))
}

/// The prosody's tensors moved to `device` (durations stay as they are).
fn on_device(p: &Prosody, device: &Device) -> candle_core::Result<Prosody> {
    Ok(Prosody {
        pred_dur: p.pred_dur.clone(),
        asr: p.asr.to_device(device)?,
        f0: p.f0.to_device(device)?,
        n: p.n.to_device(device)?,
    })
}

/// Every window of `decoder`, one after another.
fn audio(mut decoder: SegmentDecoder) -> Result<Vec<f32>, ModelError> {
    let mut out = Vec::new();
    while let Some(chunk) = decoder.next_chunk()? {
        out.extend(chunk);
    }
    Ok(out)
}

/// max |a − b| / max |b| over the common length (∞ when the shapes differ).
fn rel_err(a: &Tensor, b: &Tensor) -> candle_core::Result<f32> {
    if a.dims() != b.dims() {
        return Ok(f32::INFINITY);
    }
    let a = a.flatten_all()?.to_device(&Device::Cpu)?.to_vec1::<f32>()?;
    let b = b.flatten_all()?.to_device(&Device::Cpu)?.to_vec1::<f32>()?;
    let scale = b
        .iter()
        .fold(0f32, |m, v| m.max(v.abs()))
        .max(f32::MIN_POSITIVE);
    let diff = a
        .iter()
        .zip(&b)
        .fold(0f32, |m, (x, y)| m.max((x - y).abs()));
    Ok(diff / scale)
}

/// Kokoro's own CUDA kernels against their CPU references on random inputs, as
/// `(kernel, max |Δ|, max |reference|)`; empty off CUDA (or in a build without it).
pub fn cuda_kernels(device: &Device) -> candle_core::Result<Vec<(String, f32, f32)>> {
    #[cfg(feature = "cuda")]
    if device.is_cuda() {
        return Ok(crate::cuda_kernels::self_check(device)?
            .into_iter()
            .map(|c| (c.name.to_string(), c.max_abs_diff, c.max_abs_ref))
            .collect());
    }
    let _ = device;
    Ok(Vec::new())
}

/// SNR (dB) of `got` against `want` over the common length; −∞ for lengths that differ.
#[must_use]
pub fn snr_db(want: &[f32], got: &[f32]) -> f64 {
    if want.len() != got.len() {
        return f64::NEG_INFINITY;
    }
    let signal: f64 = want.iter().map(|&x| f64::from(x).powi(2)).sum();
    let noise: f64 = want
        .iter()
        .zip(got)
        .map(|(&x, &y)| (f64::from(x) - f64::from(y)).powi(2))
        .sum();
    10.0 * (signal / noise.max(1e-30)).log10()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snr_is_high_for_close_signals_and_refuses_other_lengths() {
        let a: Vec<f32> = (0..100).map(|i| (i as f32 * 0.1).sin()).collect();
        let b: Vec<f32> = a.iter().map(|x| x + 1e-4).collect();
        let s = snr_db(&a, &b);
        assert!(s > 60.0 && s < 90.0, "{s}");
        assert!(snr_db(&a, &a) > 200.0);
        assert!(snr_db(&a, &b[..99]).is_infinite());
        let flipped: Vec<f32> = a.iter().map(|x| -x).collect();
        assert!(snr_db(&a, &flipped) < 0.0);
    }

    #[test]
    fn rel_err_is_relative_to_the_reference() {
        let dev = Device::Cpu;
        let a = Tensor::new(&[1f32, 2.0, 4.0], &dev).unwrap();
        let b = Tensor::new(&[1f32, 2.5, 4.0], &dev).unwrap();
        assert!((rel_err(&b, &a).unwrap() - 0.125).abs() < 1e-6);
        let c = Tensor::new(&[1f32, 2.0], &dev).unwrap();
        assert!(rel_err(&a, &c).unwrap().is_infinite());
    }
}
