//! What a segment's generator windows start from: the decoder body and the harmonic
//! source's spectrum, computed once per segment before its first window, alone or for several
//! segments at once.
//!
//! Why a batch: a scheduler on a GPU starts many segments together (a burst of new streams,
//! an export's next sentences); their encoders already run as one batch
//! (`model::batch`), and here their decoder bodies do too, so a segment's prelude costs a
//! GPU its launches once per batch rather than once per segment.

use candle_core::{Tensor, D};

use crate::decoder::BodyInput;
use crate::generator::to_time_major;
use crate::model::{Kokoro, Prosody};
use crate::ModelError;

/// What a segment's generator passes start from, time-major as the generator reads them.
pub(crate) struct DecoderInputs {
    /// The decoder body's output `[2F, 512]`.
    pub body: Tensor,
    /// The harmonic source's spectrum `[120F + 1, 22]`.
    pub har: Tensor,
    /// The acoustic half of the style row `[1, 128]`.
    pub acoustic: Tensor,
}

/// The decoder body and the harmonic source for `prosody` with the full style row `style`.
pub(crate) fn decoder_inputs(
    model: &Kokoro,
    prosody: &Prosody,
    style: &Tensor,
) -> Result<DecoderInputs, ModelError> {
    let acoustic = style.narrow(D::Minus1, 0, model.style_dim())?;
    let body = model
        .decoder()
        .body_tm(&prosody.asr, &prosody.f0, &prosody.n, &acoustic)?;
    with_source(model, body, &prosody.f0, acoustic)
}

/// [`decoder_inputs`] for several segments: their decoder bodies as one padded batch
/// ([`crate::decoder::Decoder::body_batch_tm`]), each harmonic source alone.
pub(crate) fn decoder_inputs_batch(
    model: &Kokoro,
    items: &[(&Prosody, &Tensor)],
) -> Result<Vec<DecoderInputs>, ModelError> {
    let acoustic = items
        .iter()
        .map(|(_, style)| style.narrow(D::Minus1, 0, model.style_dim()))
        .collect::<candle_core::Result<Vec<_>>>()?;
    let inputs: Vec<BodyInput<'_>> = items
        .iter()
        .zip(&acoustic)
        .map(|((p, _), style)| BodyInput {
            asr: &p.asr,
            f0: &p.f0,
            n: &p.n,
            style,
        })
        .collect();
    let bodies = model.decoder().body_batch_tm(&inputs)?;
    bodies
        .into_iter()
        .zip(items)
        .zip(acoustic)
        .map(|((body, (p, _)), acoustic)| with_source(model, body, &p.f0, acoustic))
        .collect()
}

/// A segment's decoder inputs from its body: the harmonic source's spectrum of `f0` added.
fn with_source(
    model: &Kokoro,
    body: Tensor,
    f0: &Tensor,
    acoustic: Tensor,
) -> Result<DecoderInputs, ModelError> {
    let generator = model.decoder().generator();
    let har = to_time_major(&generator.source_spectrum(&generator.harmonic_source(f0)?)?)?;
    Ok(DecoderInputs {
        body,
        har,
        acoustic,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::BatchLayout;
    use crate::parity::snr_db;
    use crate::stream::tests::random_model;
    use crate::stream::{ChunkPlan, SegmentDecoder};
    use candle_core::Device;

    /// A segment's encoder output of `frames` frames (random text features, a pitch curve
    /// with an unvoiced stretch, an energy curve) and a full style row, all its own.
    fn prosody(frames: usize, seed: f32) -> (Prosody, Tensor) {
        let dev = Device::Cpu;
        let wave = |n: usize, f: f32, scale: f32| -> Vec<f32> {
            (0..n)
                .map(|i| (i as f32 * f + seed).sin() * scale)
                .collect()
        };
        let asr = Tensor::from_vec(wave(512 * frames, 0.31, 1.0), (1, 512, frames), &dev);
        let f0: Vec<f32> = wave(2 * frames, 0.05, 40.0)
            .into_iter()
            .enumerate()
            .map(|(i, v)| if i % 11 < 3 { 0.0 } else { 180.0 + v })
            .collect();
        let f0 = Tensor::from_vec(f0, (1, 2 * frames), &dev);
        let n = Tensor::from_vec(wave(2 * frames, 0.13, 2.0), (1, 2 * frames), &dev);
        let style = Tensor::from_vec(wave(256, 0.7, 0.5), (1, 256), &dev);
        let p = Prosody {
            pred_dur: vec![1; frames],
            asr: asr.expect("asr"),
            f0: f0.expect("f0"),
            n: n.expect("n"),
        };
        (p, style.expect("style"))
    }

    fn values(t: &Tensor) -> Vec<f32> {
        t.flatten_all().and_then(|t| t.to_vec1()).expect("values")
    }

    /// Segments of different lengths and voices: each one's decoder body from the padded
    /// batch against the body it gets alone, and the source and style unchanged.
    #[test]
    fn batched_decoder_bodies_equal_each_alone() {
        let model = random_model();
        let segments: Vec<(Prosody, Tensor)> = [(7, 0.0), (3, 1.7), (12, 3.1)]
            .iter()
            .map(|&(f, seed)| prosody(f, seed))
            .collect();
        let pairs: Vec<(&Prosody, &Tensor)> = segments.iter().map(|(p, s)| (p, s)).collect();
        let batch = decoder_inputs_batch(&model, &pairs).expect("the batched bodies");
        assert_eq!(batch.len(), segments.len());
        for (k, ((p, style), got)) in segments.iter().zip(&batch).enumerate() {
            let want = decoder_inputs(&model, p, style).expect("alone");
            assert_eq!(got.body.dims(), want.body.dims(), "segment {k}");
            let snr = snr_db(&values(&want.body), &values(&got.body));
            assert!(snr >= 100.0, "segment {k}: body {snr:.1} dB from alone");
            assert_eq!(values(&got.har), values(&want.har), "segment {k}: source");
            assert_eq!(values(&got.acoustic), values(&want.acoustic));
        }
        // Through the decoders' constructor, in both layouts: the same windows and durations.
        let items: Vec<(&Prosody, &Tensor, ChunkPlan)> = segments
            .iter()
            .map(|(p, s)| (p, s, ChunkPlan::streaming()))
            .collect();
        for layout in [BatchLayout::Padded, BatchLayout::Packed] {
            let decoders = SegmentDecoder::from_prosodies(&model, &items, layout);
            for ((p, _), d) in segments.iter().zip(decoders) {
                let mut d = d.expect("decoder");
                assert_eq!(d.frames(), 2 * p.frames());
                assert_eq!(d.take_durations().as_deref(), Some(&p.pred_dur[..]));
            }
        }
        // A bad item fails the batch; each then gets its own result.
        let bad = Prosody {
            f0: segments[0].0.f0.narrow(1, 0, 5).expect("short f0"),
            ..segments[0].0.clone()
        };
        let with_bad = [pairs[1], (&bad, pairs[0].1), pairs[2]];
        assert!(decoder_inputs_batch(&model, &with_bad).is_err());
        let items: Vec<(&Prosody, &Tensor, ChunkPlan)> = with_bad
            .iter()
            .map(|&(p, s)| (p, s, ChunkPlan::streaming()))
            .collect();
        let each = SegmentDecoder::from_prosodies(&model, &items, BatchLayout::Padded);
        assert!(each[0].is_ok() && each[1].is_err() && each[2].is_ok());
    }
}
