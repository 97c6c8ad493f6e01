//! Encoding several segments — of different streams, voices and speeds — in one pass.
//!
//! Why: the scheduler often has more than one segment waiting for its encoder (a burst of new
//! requests, an export's next sentences). Run one at a time, each pays ALBERT's twelve layer
//! calls and six LSTM scans alone; together, ALBERT multiplies one taller matrix per layer and
//! the LSTM scans read their recurrent weights once per step for every item
//! ([`super::super::lstm`]'s `batch`). On a GPU the same batch is one launch where there were
//! `B`.
//!
//! How: on the CPU, ALBERT runs on the items packed one after another (its products cost per
//! row, so padding would be pure waste; each item attends within its own rows); elsewhere the
//! ids are right-padded to the longest item with an attention mask (padding keys get no
//! weight), one launch per layer. The LSTM stacks take a padded batch and each item's length
//! (the reverse scan starts at the item's own end); the text encoder zeroes the
//! padding before every convolution. Durations, and so frame counts, differ per item, so the
//! frame-rate `shared` LSTM runs on a second padded batch over frames; the F0/N residual
//! blocks (instance-normalised over each item's own frames) run item by item on the CPU and
//! over that padded batch elsewhere (`ProsodyPredictor::f0_n_batch`).
//! Every item comes out as [`KokoroEncoder::encode`] computes it alone, up to float rounding
//! (tests in `tests/e2e/stages_encoder.rs` hold the batch to the single path).

use candle_core::Tensor;

use super::{at, EncodeError, KokoroEncoder, Prosody, Result};
use crate::config::PAD_ID;
use crate::predictor;

/// One segment to encode: its phoneme ids (without boundary pads), the full `[1, 256]` voice
/// row, and its speed.
#[derive(Debug, Clone, Copy)]
pub struct EncodeInput<'a> {
    pub tokens: &'a [u32],
    pub style: &'a Tensor,
    pub speed: f32,
}

/// How a batch is laid out: for ALBERT, and for the F0/N branches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchLayout {
    /// The items one after another, no padding; attention within each item's rows, and the
    /// F0/N branches item by item. Best where products cost per row (the CPU).
    Packed,
    /// Right-padded to the longest item, with an attention mask and each item's valid frames:
    /// one launch sequence per layer for the whole batch (GPUs).
    Padded,
}

impl BatchLayout {
    /// Packed on the CPU, padded elsewhere.
    #[must_use]
    pub fn for_device(device: &candle_core::Device) -> Self {
        if device.is_cpu() {
            Self::Packed
        } else {
            Self::Padded
        }
    }
}

/// An input that passed validation.
struct Checked {
    ids: Vec<u32>,
    s: Tensor,
    speed: f32,
}

impl KokoroEncoder {
    /// [`Self::encode`] for several inputs in one pass; one result per input, in order.
    ///
    /// An invalid input (empty, too long, bad style or speed) gets its own error and leaves
    /// the others batched. Should the batched pass itself fail, every item is encoded alone,
    /// so one item's failure is never another's.
    #[must_use]
    pub fn encode_batch(&self, inputs: &[EncodeInput<'_>]) -> Vec<Result<Prosody>> {
        self.encode_batch_as(inputs, BatchLayout::for_device(&self.device))
    }

    /// [`Self::encode_batch`] with the batch's layout chosen (tests hold both to the lone encode).
    #[must_use]
    pub fn encode_batch_as(
        &self,
        inputs: &[EncodeInput<'_>],
        layout: BatchLayout,
    ) -> Vec<Result<Prosody>> {
        match self.encode_batch_pass(inputs, layout) {
            Ok(results) => results,
            Err(err) => {
                let why = std::error::Error::source(&err)
                    .map_or_else(|| err.to_string(), ToString::to_string);
                tracing::warn!("batched encoder failed ({why}); encoding each item alone");
                inputs
                    .iter()
                    .map(|input| self.encode(input.tokens, input.style, input.speed))
                    .collect()
            }
        }
    }

    /// [`Self::encode_batch_as`] without its fallback: an error of the batched pass itself is
    /// returned instead of every item encoded alone, so the tests that hold the batch to the
    /// lone encode see the batch's own results (with the fallback, a broken batch would pass).
    pub fn encode_batch_pass(
        &self,
        inputs: &[EncodeInput<'_>],
        layout: BatchLayout,
    ) -> Result<Vec<Result<Prosody>>> {
        let mut results: Vec<Option<Result<Prosody>>> = Vec::with_capacity(inputs.len());
        let mut valid: Vec<(usize, Checked)> = Vec::with_capacity(inputs.len());
        for (i, input) in inputs.iter().enumerate() {
            match self.check(input) {
                Ok(c) => {
                    valid.push((i, c));
                    results.push(None);
                }
                Err(e) => results.push(Some(Err(e))),
            }
        }
        if valid.len() > 1 {
            let items: Vec<&Checked> = valid.iter().map(|(_, c)| c).collect();
            let prosodies = at("batch", self.encode_checked(&items, layout))?;
            for ((i, _), p) in valid.iter().zip(prosodies) {
                results[*i] = Some(Ok(p));
            }
        }
        Ok(results
            .into_iter()
            .zip(inputs)
            .map(|(r, input)| {
                r.unwrap_or_else(|| self.encode(input.tokens, input.style, input.speed))
            })
            .collect())
    }

    fn check(&self, input: &EncodeInput<'_>) -> Result<Checked> {
        let ids = self.checked_ids(input.tokens)?;
        let s = self.predictor_style(input.style)?;
        if !crate::config::SPEED_RANGE.contains(&input.speed) {
            return Err(EncodeError::Speed { speed: input.speed });
        }
        Ok(Checked {
            ids,
            s,
            speed: input.speed,
        })
    }

    fn encode_checked(
        &self,
        items: &[&Checked],
        layout: BatchLayout,
    ) -> candle_core::Result<Vec<Prosody>> {
        let lengths: Vec<usize> = items.iter().map(|c| c.ids.len()).collect();
        let longest = lengths.iter().copied().max().unwrap_or(0);
        let mut ids = Vec::with_capacity(items.len() * longest);
        let mut keep = Vec::with_capacity(items.len() * longest);
        for c in items {
            ids.extend_from_slice(&c.ids);
            ids.resize(ids.len() + longest - c.ids.len(), PAD_ID);
            keep.extend((0..longest).map(|t| u32::from(t < c.ids.len())));
        }
        let shape = (items.len(), longest);
        let ids = Tensor::from_vec(ids, shape, &self.device)?;
        let keep = Tensor::from_vec(keep, shape, &self.device)?;
        let styles: Vec<Tensor> = items.iter().map(|c| c.s.clone()).collect();
        let s = Tensor::cat(&styles, 0)?;

        let d_en = match layout {
            BatchLayout::Packed => self.packed_bert(items, &lengths, longest)?,
            BatchLayout::Padded => {
                let bert = self.bert.forward(&ids, Some(&keep))?;
                candle_core::Module::forward(&self.bert_encoder, &bert)?
            }
        };
        let d = self.predictor.encode_durations_batch(&d_en, &s, &lengths)?;
        let logits = self.predictor.duration_logits_batch(&d, &lengths)?;
        let mut frames = Vec::with_capacity(items.len());
        let mut ens = Vec::with_capacity(items.len());
        for (b, (c, &len)) in items.iter().zip(&lengths).enumerate() {
            let dur = predictor::durations(&logits.get(b)?.narrow(0, 0, len)?, c.speed)?;
            let d_b = d.get(b)?.narrow(0, 0, len)?.t()?.unsqueeze(0)?;
            ens.push(predictor::expand(&d_b, &dur.frames)?);
            frames.push(dur.frames);
        }
        let f0_n = match layout {
            // The CPU pays per row: the branches item by item on each item's own frames.
            BatchLayout::Packed => self
                .predictor
                .shared_lstm_batch(&ens)?
                .iter()
                .enumerate()
                .map(|(b, shared)| self.predictor.f0_n_branches(shared, &s.narrow(0, b, 1)?))
                .collect::<candle_core::Result<Vec<_>>>()?,
            BatchLayout::Padded => self.predictor.f0_n_batch(&ens, &s)?,
        };
        let t_en = self.text_encoder.forward_batch(&ids, &lengths)?;
        let mut out = Vec::with_capacity(items.len());
        for (b, (frames, (f0, n))) in frames.into_iter().zip(f0_n).enumerate() {
            let t_en_b = t_en.narrow(0, b, 1)?.narrow(2, 0, lengths[b])?;
            let asr = predictor::expand(&t_en_b, &frames)?;
            out.push(Prosody {
                pred_dur: frames,
                asr,
                f0,
                n,
            });
        }
        Ok(out)
    }

    /// ALBERT and its output mapping on the items packed without padding (the CPU pays per
    /// row), returned padded to `[B, longest, hidden]` for the LSTMs.
    fn packed_bert(
        &self,
        items: &[&Checked],
        lengths: &[usize],
        longest: usize,
    ) -> candle_core::Result<Tensor> {
        let flat: Vec<u32> = items.iter().flat_map(|c| c.ids.iter().copied()).collect();
        let n = flat.len();
        let ids = Tensor::from_vec(flat, n, &self.device)?;
        let d_en = candle_core::Module::forward(
            &self.bert_encoder,
            &self.bert.forward_packed(&ids, lengths)?,
        )?;
        let mut start = 0;
        let mut rows = Vec::with_capacity(items.len());
        for &len in lengths {
            rows.push(
                d_en.narrow(0, start, len)?
                    .pad_with_zeros(0, 0, longest - len)?,
            );
            start += len;
        }
        Tensor::stack(&rows, 0)
    }
}
