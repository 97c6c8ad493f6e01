//! The residual blocks of a segment's prelude (the F0/N branches, the decoder body) over a
//! padded batch of segments of their own lengths and styles.
//!
//! Why: on a GPU every block of a segment's prelude is a few dozen launches whatever its
//! length, and a scheduler starting many streams at once starts many segments: run one at a
//! time, their preludes cost launches, not arithmetic. Batched, each norm is one launch
//! sequence for all items and each convolution one product. Each item is what it is alone:
//! the norms read only its valid rows ([`crate::rows::ValidRows`]), and the convolutions read
//! the zeros the norms frame their outputs with, as alone.

use candle_core::{Result, Tensor};

use super::{Activation, AdainResBlk1d, DepthwiseUpsample, RES_BLK_LEAKY_SLOPE};
use crate::generator::batch::frame_valid;
use crate::rows::ValidRows;

impl DepthwiseUpsample {
    /// Time-major for a batch: `x` `[B, T, C]` → `[B, 2T, C]`, each item as
    /// [`Self::forward_tm`] computes it alone where its rows past its own length are zero (the
    /// `next` row of its last valid one).
    pub fn forward_btm(&self, x: &Tensor) -> Result<Tensor> {
        let (b, t, c) = x.dims3()?;
        let [w0, w1, w2] = &self.taps_tm;
        let even = x.broadcast_mul(w1)?;
        let next = x.narrow(1, 1, t - 1)?.pad_with_zeros(1, 0, 1)?;
        let odd = (x.broadcast_mul(w2)? + next.broadcast_mul(w0)?)?;
        // Interleave: [B, T, 2, C] → [B, 2T, C].
        let out = Tensor::stack(&[even, odd], 2)?.reshape((b, 2 * t, c))?;
        out.broadcast_add(&self.bias_tm)
    }
}

impl AdainResBlk1d {
    /// [`Self::forward_tm`] for a padded batch of segments of their own lengths and styles:
    /// `x` `[B, T, dim_in]` whose item `b` is valid for its first `valid.host()[b]` rows, `s`
    /// `[B, style_dim]` → `[B, T, dim_out]` (`[B, 2T, dim_out]` where the block upsamples),
    /// item `b` valid for its first `out_valid.host()[b]` rows (`valid`'s, or twice them) and
    /// those rows what the block computes for the item alone, up to the order of float sums.
    /// The rows past an item's length hold finite values no valid row of any later block
    /// reads: its norms read valid rows only, and its convolutions read the zeros they frame
    /// their inputs with.
    ///
    /// Each norm is one launch sequence for the whole batch on a GPU
    /// ([`AdaIN1d::forward_act_batch_tm`]), each convolution one product over all items
    /// (`Conv1d::forward_batch_framed`): the launches of a segment's prelude (the F0/N
    /// branches, the decoder body) paid once per batch instead of once per segment.
    pub fn forward_batch_tm(
        &self,
        x: &Tensor,
        s: &Tensor,
        valid: &ValidRows,
        out_valid: &ValidRows,
    ) -> Result<Tensor> {
        let (_, t_in, _) = x.dims3()?;
        let factor = if self.pool.is_some() { 2 } else { 1 };
        let t = t_in * factor;
        let lengths_agree = valid.len() == out_valid.len()
            && valid
                .host()
                .iter()
                .zip(out_valid.host())
                .all(|(&v, &o)| o == v * factor);
        if !lengths_agree || out_valid.rows() < t {
            candle_core::bail!(
                "residual block batch: valid rows {:?} in, {:?} out, for a block of factor {factor} over {t_in} rows",
                valid.host(),
                out_valid.host()
            );
        }
        let act = Activation::LeakyRelu(RES_BLK_LEAKY_SLOPE);
        let r = match &self.pool {
            // As alone: the transposed conv between the norm and conv1, its output cut to each
            // item's own rows (past them it would be the bias) and framed after it.
            Some(pool) => {
                let r = self.norm1.forward_act_batch_tm(x, s, &act, valid, (0, 0))?;
                frame_valid(&pool.forward_btm(&r)?, out_valid, self.conv1.frame())?
            }
            None => self
                .norm1
                .forward_act_batch_tm(x, s, &act, valid, self.conv1.frame())?,
        };
        let r = self.conv1.forward_batch_framed(&r, t, false, None)?;
        let r = self
            .norm2
            .forward_act_batch_tm(&r, s, &act, out_valid, self.conv2.frame())?;
        let r = self.conv2.forward_batch_framed(&r, t, true, None)?;

        let mut sc = if self.pool.is_some() {
            upsample_nearest2_btm(x)?
        } else {
            x.clone()
        };
        if let Some(c) = &self.conv1x1 {
            sc = c.forward_batch_framed(&sc, t, false, None)?;
        }
        (r + sc)? * std::f64::consts::FRAC_1_SQRT_2
    }
}

/// Time-major nearest-neighbour ×2 for a batch: `[B, T, C]` → `[B, 2T, C]`.
pub fn upsample_nearest2_btm(x: &Tensor) -> Result<Tensor> {
    let (b, t, c) = x.dims3()?;
    x.unsqueeze(2)?
        .broadcast_as((b, t, 2, c))?
        .reshape((b, 2 * t, c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parity::snr_db;
    use candle_core::{DType, Device};
    use candle_nn::{VarBuilder, VarMap};

    fn block(dim_in: usize, dim_out: usize, upsample: bool, seed: u64) -> AdainResBlk1d {
        let dev = Device::Cpu;
        let varmap = VarMap::new();
        let vb = VarBuilder::from_varmap(&varmap, DType::F32, &dev);
        AdainResBlk1d::new(dim_in, dim_out, 16, upsample, vb.clone()).expect("block");
        crate::test_weights::fill_normal(&varmap, 0.3, seed);
        AdainResBlk1d::new(dim_in, dim_out, 16, upsample, vb).expect("block")
    }

    fn wave(rows: usize, cols: usize, seed: f32) -> Tensor {
        let v: Vec<f32> = (0..rows * cols)
            .map(|i| (i as f32 * 0.37 + seed).sin() * (1.0 + seed * 0.2))
            .collect();
        Tensor::from_vec(v, (rows, cols), &Device::Cpu).expect("wave")
    }

    /// Every item of a batch, with garbage (not zeros) in its padded rows, against the block
    /// run on the item alone; for a block that keeps the length and one that doubles it and
    /// changes the width (the pool, the nearest shortcut and the 1×1 shortcut convolution).
    #[test]
    fn a_batched_block_gives_each_item_what_it_gives_alone() {
        for (dim_in, dim_out, upsample) in [(12, 12, false), (12, 8, true)] {
            let b = block(dim_in, dim_out, upsample, 7 + dim_out as u64);
            let lengths = [9usize, 3, 14, 1];
            let rows = 14;
            let factor = if upsample { 2 } else { 1 };
            let items: Vec<Tensor> = lengths
                .iter()
                .enumerate()
                .map(|(k, &v)| wave(v, dim_in, k as f32 * 1.1))
                .collect();
            let styles: Vec<Tensor> = (0..lengths.len())
                .map(|k| wave(1, 16, 3.0 + k as f32))
                .collect();
            let padded: Vec<Tensor> = items
                .iter()
                .zip(&lengths)
                .map(|(x, &v)| {
                    let junk = (wave(rows - v, dim_in, 9.0) * 50.0).expect("junk");
                    Tensor::cat(&[x, &junk], 0).expect("pad")
                })
                .collect();
            let x = Tensor::stack(&padded, 0).expect("batch");
            let s = Tensor::cat(&styles, 0).expect("styles");
            let valid = ValidRows::upload(&lengths, rows, &Device::Cpu).expect("valid");
            let out_lengths: Vec<usize> = lengths.iter().map(|v| v * factor).collect();
            let out_valid =
                ValidRows::upload(&out_lengths, rows * factor, &Device::Cpu).expect("out");
            let got = b
                .forward_batch_tm(&x, &s, &valid, &out_valid)
                .expect("batch");
            assert_eq!(got.dims(), [lengths.len(), rows * factor, dim_out]);
            for (k, (x, style)) in items.iter().zip(&styles).enumerate() {
                let want = b.forward_tm(x, style).expect("alone");
                let mine = got
                    .get(k)
                    .and_then(|g| g.narrow(0, 0, out_lengths[k]))
                    .expect("item");
                let flat = |t: &Tensor| -> Vec<f32> {
                    t.flatten_all().and_then(|t| t.to_vec1()).expect("values")
                };
                let snr = snr_db(&flat(&want), &flat(&mine));
                assert!(
                    snr >= 100.0,
                    "upsample {upsample}, item {k}: {snr:.1} dB from alone"
                );
            }
            // Lengths that do not match the block's factor are refused.
            assert!(b.forward_batch_tm(&x, &s, &valid, &valid).is_err() == upsample);
        }
    }
}
