//! A segment's prelude batched against alone, on the real weights: the encoder's F0/N branches
//! and the decoder bodies of `N` segments run as one padded batch (the layout a GPU uses,
//! forced here on any device) must give each segment what it gets alone. Part of
//! `banter bench parity --batch N` ([`super::batch`]); the unit tests check the same on random
//! weights.
//!
//! The bodies are fed the segments' lone encoder outputs, so a body's error is its own and
//! not the batched encoder's passed on.

use std::time::Instant;

use candle_core::Tensor;

use super::{rel_err, snr_db};
use crate::model::{BatchLayout, EncodeInput, Kokoro, Prosody};
use crate::stream::{decoder_inputs, decoder_inputs_batch};
use crate::ModelError;

/// What [`compare`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct PreludeParity {
    /// The largest relative error (of the curve's largest magnitude) of any segment's F0 and
    /// N curves, batched against alone, over the segments whose durations agree. Not an SNR:
    /// the padded ALBERT sums in another order than alone, and the duration LSTMs carry that
    /// rounding into the curves at about 2·10⁻³ of their RMS (measured: 54–69 dB, the same
    /// whether the F0/N blocks are batched or not), so relative error is what the stage
    /// goldens bound.
    pub worst_f0_n_rel: f32,
    /// Segments whose batched encoder rounded a duration otherwise than alone (their curves
    /// differ in length and are not compared).
    pub durations_differ: usize,
    /// The lowest SNR of any segment's decoder body, batched against alone.
    pub lowest_body_db: f64,
    /// Wall time of every segment's encoder and decoder inputs alone, and in batches of `N`
    /// (seconds).
    pub alone_s: f64,
    pub batched_s: f64,
}

/// Every segment `(ids, style [1, 256])` encoded and given its decoder inputs alone, then the
/// same `n` at a time in the padded layout; the lone runs' outputs are returned for reuse.
pub fn compare(
    model: &Kokoro,
    segments: &[(&[u32], &Tensor)],
    n: usize,
) -> Result<(PreludeParity, Vec<Prosody>), ModelError> {
    let start = Instant::now();
    let mut alone = Vec::with_capacity(segments.len());
    let mut bodies = Vec::with_capacity(segments.len());
    for &(ids, style) in segments {
        let prosody = model.encoder().encode(ids, style, 1.0)?;
        bodies.push(decoder_inputs(model, &prosody, style)?.body);
        alone.push(prosody);
    }
    let alone_s = start.elapsed().as_secs_f64();

    let flat = |t: &Tensor| -> Result<Vec<f32>, ModelError> { Ok(t.flatten_all()?.to_vec1()?) };
    let mut found = PreludeParity {
        worst_f0_n_rel: 0.0,
        durations_differ: 0,
        lowest_body_db: f64::INFINITY,
        alone_s,
        batched_s: 0.0,
    };
    let start = Instant::now();
    let mut encoded = Vec::with_capacity(segments.len());
    let mut batched_bodies = Vec::with_capacity(segments.len());
    for (group, lone) in segments.chunks(n.max(1)).zip(alone.chunks(n.max(1))) {
        let inputs: Vec<EncodeInput<'_>> = group
            .iter()
            .map(|&(tokens, style)| EncodeInput {
                tokens,
                style,
                speed: 1.0,
            })
            .collect();
        for p in model
            .encoder()
            .encode_batch_pass(&inputs, BatchLayout::Padded)?
        {
            encoded.push(p?);
        }
        let pairs: Vec<(&Prosody, &Tensor)> =
            lone.iter().zip(group).map(|(p, &(_, s))| (p, s)).collect();
        batched_bodies.extend(
            decoder_inputs_batch(model, &pairs)?
                .into_iter()
                .map(|i| i.body),
        );
    }
    found.batched_s = start.elapsed().as_secs_f64();

    for ((want, got), (body, batched_body)) in alone
        .iter()
        .zip(&encoded)
        .zip(bodies.iter().zip(&batched_bodies))
    {
        if want.pred_dur == got.pred_dur {
            for (a, b) in [(&want.f0, &got.f0), (&want.n, &got.n)] {
                found.worst_f0_n_rel = found.worst_f0_n_rel.max(rel_err(b, a)?);
            }
        } else {
            found.durations_differ += 1;
        }
        found.lowest_body_db = found
            .lowest_body_db
            .min(snr_db(&flat(body)?, &flat(batched_body)?));
    }
    Ok((found, alone))
}
