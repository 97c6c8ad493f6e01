//! Several sequences of different lengths through one [`BiLstm`] at once.
//!
//! The recurrence is the expensive, sequential part of the encoder, and its cost per step is
//! reading `W_hhᵀ` (1 MiB per direction at hidden 256), not arithmetic. Stepping `B` sequences
//! together reads each weight row once for all of them, so a batch of encoders costs much less
//! than the sum of its members (see `banter bench batch`).
//!
//! Layout: `[B, T, in]`, item `b` valid for its first `lengths[b]` rows, the rest padding. The
//! result equals running each item alone (`PyTorch`'s packed-sequence semantics): the forward
//! scan of an item stops at its length, its reverse scan starts there, and padding rows of the
//! output are zero.
//!
//! - On the CPU the items step in lockstep on plain slices: for each row of `W_hhᵀ`, every
//!   active item's gates take their `axpy` while the row is in L1.
//! - Elsewhere (CUDA) each item's valid rows are reversed in place by one gather, so both
//!   directions become left-aligned forward scans over `[B, H]` states with one matmul per step;
//!   a padded step can only follow an item's valid steps, never feed them.

use candle_core::{DType, Device, IndexOp, Module, Result, Tensor, D};

use super::{sigmoid, tanh, BiLstm, DirInput, Recurrence, MIN_STEPS_FOR_THREAD};

impl BiLstm {
    /// `xs` `[B, T, in]` with item `b` valid for `lengths[b]` rows → `[B, T, 2H]`, equal to
    /// [`Self::forward`] on each item's valid rows, padding rows zero.
    pub fn forward_batch(&self, xs: &Tensor, lengths: &[usize]) -> Result<Tensor> {
        let (batch, steps, _) = xs.dims3()?;
        check_lengths(lengths, batch, steps)?;
        let proj = self.input_proj.forward(xs)?;
        let host = match (&self.forward_dir.w_hh_t_host, &self.reverse_dir.w_hh_t_host) {
            (Some(wf), Some(wr)) if proj.device().is_cpu() && proj.dtype() == DType::F32 => {
                Some((wf, wr))
            }
            _ => None,
        };
        match host {
            Some((wf, wr)) => self.recur_host_batch(&proj, lengths, wf, wr),
            #[cfg(feature = "cuda")]
            None if self.fused_cuda(&proj) => self.recur_cuda(&proj, lengths),
            None => self.recur_tensor_ops_batch(&proj, lengths),
        }
    }

    /// The device-generic batched path (used off the CPU); same result as
    /// [`Self::forward_batch`].
    pub fn forward_batch_tensor_ops(&self, xs: &Tensor, lengths: &[usize]) -> Result<Tensor> {
        let (batch, steps, _) = xs.dims3()?;
        check_lengths(lengths, batch, steps)?;
        let proj = self.input_proj.forward(xs)?;
        self.recur_tensor_ops_batch(&proj, lengths)
    }

    pub(super) fn recur_host_batch(
        &self,
        proj: &Tensor,
        lengths: &[usize],
        w_fwd: &[f32],
        w_rev: &[f32],
    ) -> Result<Tensor> {
        let (batch, steps, width) = proj.dims3()?;
        let h_dim = self.hidden;
        let proj_host = proj.flatten_all()?.to_vec1::<f32>()?;
        let mut out_fwd = vec![0f32; batch * steps * h_dim];
        let mut out_rev = vec![0f32; batch * steps * h_dim];
        let fwd = DirInput {
            proj: &proj_host,
            width,
            offset: 0,
            w_hh_t: w_fwd,
            hidden: h_dim,
        };
        let rev = DirInput {
            offset: 4 * h_dim,
            w_hh_t: w_rev,
            ..fwd
        };
        let longest = lengths.iter().copied().max().unwrap_or(0);
        if longest >= MIN_STEPS_FOR_THREAD {
            // On the model's pool (`scheduler::pool`): another worker takes the other
            // direction, or this thread runs both if none is free.
            rayon::join(
                || run_dir_host_batch(&rev, true, lengths, steps, &mut out_rev),
                || run_dir_host_batch(&fwd, false, lengths, steps, &mut out_fwd),
            );
        } else {
            run_dir_host_batch(&fwd, false, lengths, steps, &mut out_fwd);
            run_dir_host_batch(&rev, true, lengths, steps, &mut out_rev);
        }
        let device = Device::Cpu;
        let fwd = Tensor::from_vec(out_fwd, (batch, steps, h_dim), &device)?;
        let rev = Tensor::from_vec(out_rev, (batch, steps, h_dim), &device)?;
        Tensor::cat(&[fwd, rev], 2)
    }

    fn recur_tensor_ops_batch(&self, proj: &Tensor, lengths: &[usize]) -> Result<Tensor> {
        let (batch, steps, width) = proj.dims3()?;
        let gates = 4 * self.hidden;
        let flat = proj.reshape((batch * steps, width))?;
        // Reversing each item's valid rows is an involution: the same gather undoes it.
        let flip = Tensor::from_vec(reversal_index(lengths, steps), batch * steps, proj.device())?;
        let fwd_in = flat
            .narrow(1, 0, gates)?
            .contiguous()?
            .reshape((batch, steps, gates))?;
        let rev_in = flat
            .narrow(1, gates, gates)?
            .contiguous()?
            .index_select(&flip, 0)?
            .reshape((batch, steps, gates))?;
        let fwd = self.scan_batch(&fwd_in, &self.forward_dir)?;
        let rev = self
            .scan_batch(&rev_in, &self.reverse_dir)?
            .reshape((batch * steps, self.hidden))?
            .contiguous()?
            .index_select(&flip, 0)?
            .reshape((batch, steps, self.hidden))?;
        let mask = valid_mask(lengths, steps, proj.device())?.to_dtype(proj.dtype())?;
        Tensor::cat(&[fwd, rev], 2)?.broadcast_mul(&mask)
    }

    /// A left-to-right scan of `[B, T, 4H]` pre-activations → `[B, T, H]`.
    fn scan_batch(&self, proj: &Tensor, dir: &Recurrence) -> Result<Tensor> {
        let (batch, steps, _) = proj.dims3()?;
        let h_dim = self.hidden;
        let mut h = Tensor::zeros((batch, h_dim), proj.dtype(), proj.device())?;
        let mut c = h.clone();
        let mut outs = Vec::with_capacity(steps);
        for t in 0..steps {
            let g = (proj.i((.., t))? + h.matmul(&dir.w_hh_t)?)?;
            let i = candle_nn::ops::sigmoid(&g.narrow(D::Minus1, 0, h_dim)?)?;
            let f = candle_nn::ops::sigmoid(&g.narrow(D::Minus1, h_dim, h_dim)?)?;
            let cand = g.narrow(D::Minus1, 2 * h_dim, h_dim)?.tanh()?;
            let o = candle_nn::ops::sigmoid(&g.narrow(D::Minus1, 3 * h_dim, h_dim)?)?;
            c = ((f * &c)? + (i * cand)?)?;
            h = (o * c.tanh()?)?;
            outs.push(h.clone());
        }
        if outs.is_empty() {
            return Tensor::zeros((batch, 0, h_dim), proj.dtype(), proj.device());
        }
        Tensor::stack(&outs, 1)
    }
}

fn check_lengths(lengths: &[usize], batch: usize, steps: usize) -> Result<()> {
    if lengths.len() != batch {
        candle_core::bail!("{} lengths for a batch of {batch}", lengths.len());
    }
    if let Some(&long) = lengths.iter().find(|&&n| n > steps) {
        candle_core::bail!("a length of {long} in a batch padded to {steps} steps");
    }
    Ok(())
}

/// Row `b·T + t` → the row holding step `len_b − 1 − t` of item `b` (padding rows stay put).
fn reversal_index(lengths: &[usize], steps: usize) -> Vec<u32> {
    let mut index = Vec::with_capacity(lengths.len() * steps);
    for (b, &len) in lengths.iter().enumerate() {
        for t in 0..steps {
            let src = if t < len { len - 1 - t } else { t };
            index.push(u32::try_from(b * steps + src).unwrap_or(u32::MAX));
        }
    }
    index
}

/// `[B, T, 1]` f32: 1 on each item's valid rows, 0 on padding.
pub fn valid_mask(lengths: &[usize], steps: usize, device: &Device) -> Result<Tensor> {
    let mask: Vec<f32> = lengths
        .iter()
        .flat_map(|&len| (0..steps).map(move |t| if t < len { 1.0 } else { 0.0 }))
        .collect();
    Tensor::from_vec(mask, (lengths.len(), steps, 1), device)
}

/// One direction of every item in lockstep on plain slices; writes `h_t` of item `b` into
/// `out[(b·T + t)·H ..]`, leaving padding rows zero.
fn run_dir_host_batch(
    input: &DirInput<'_>,
    reverse: bool,
    lengths: &[usize],
    steps: usize,
    out: &mut [f32],
) {
    let h_dim = input.hidden;
    let n_gates = 4 * h_dim;
    let batch = lengths.len();
    let mut h = vec![0f32; batch * h_dim];
    let mut c = vec![0f32; batch * h_dim];
    let mut gates = vec![0f32; batch * n_gates];
    let longest = lengths.iter().copied().max().unwrap_or(0);
    let mut active: Vec<(usize, usize)> = Vec::with_capacity(batch);
    for step in 0..longest {
        // (item, time step) of every item still running.
        active.clear();
        active.extend(
            lengths
                .iter()
                .enumerate()
                .filter(|&(_, &len)| step < len)
                .map(|(b, &len)| (b, if reverse { len - 1 - step } else { step })),
        );
        for &(b, t) in &active {
            let row = (b * steps + t) * input.width + input.offset;
            gates[b * n_gates..(b + 1) * n_gates].copy_from_slice(&input.proj[row..row + n_gates]);
        }
        // gates_b += W_hh · h_b: each row of W_hhᵀ is read once for every item.
        for (k, w_row) in input.w_hh_t.chunks_exact(n_gates).enumerate() {
            for &(b, _) in &active {
                let hk = h[b * h_dim + k];
                if hk != 0.0 {
                    let g = &mut gates[b * n_gates..(b + 1) * n_gates];
                    for (g, &w) in g.iter_mut().zip(w_row) {
                        *g += hk * w;
                    }
                }
            }
        }
        for &(b, t) in &active {
            let g = &gates[b * n_gates..(b + 1) * n_gates];
            let (gi, rest) = g.split_at(h_dim);
            let (gf, rest) = rest.split_at(h_dim);
            let (gg, go) = rest.split_at(h_dim);
            let hb = &mut h[b * h_dim..(b + 1) * h_dim];
            let cb = &mut c[b * h_dim..(b + 1) * h_dim];
            for k in 0..h_dim {
                let i = sigmoid(gi[k]);
                let f = sigmoid(gf[k]);
                let g = tanh(gg[k]);
                let o = sigmoid(go[k]);
                cb[k] = f * cb[k] + i * g;
                hb[k] = o * tanh(cb[k]);
            }
            let at = (b * steps + t) * h_dim;
            out[at..at + h_dim].copy_from_slice(hb);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::random_lstm;
    use super::*;

    fn max_abs_diff(a: &Tensor, b: &Tensor) -> Result<f32> {
        (a - b)?.abs()?.flatten_all()?.max(0)?.to_scalar::<f32>()
    }

    /// Each item of a padded batch comes out as it does alone, on both paths, and padding
    /// rows are zero.
    #[test]
    fn batch_equals_items_alone() -> Result<()> {
        let dev = Device::Cpu;
        let lstm = random_lstm(24, 16, 0x51ed_2701)?;
        for lengths in [vec![40usize, 3, 17], vec![9, 9], vec![1, 12, 0, 5], vec![6]] {
            let steps = lengths.iter().copied().max().unwrap_or(0) + 2;
            let xs = Tensor::randn(0f32, 1.0, (lengths.len(), steps, 24), &dev)?;
            let host = lstm.forward_batch(&xs, &lengths)?;
            let ops = lstm.forward_batch_tensor_ops(&xs, &lengths)?;
            assert_eq!(host.dims(), &[lengths.len(), steps, 32]);
            let d = max_abs_diff(&host, &ops)?;
            assert!(d < 1e-5, "{lengths:?}: host and tensor paths differ by {d}");
            for (b, &len) in lengths.iter().enumerate() {
                let got = host.get(b)?;
                if len > 0 {
                    let alone = lstm.forward(&xs.get(b)?.narrow(0, 0, len)?)?;
                    let d = max_abs_diff(&got.narrow(0, 0, len)?, &alone)?;
                    assert!(d < 1e-5, "{lengths:?} item {b}: differs by {d} from alone");
                }
                let pad = got.narrow(0, len, steps - len)?.abs()?.sum_all()?;
                assert!(
                    pad.to_scalar::<f32>()? == 0.0,
                    "{lengths:?} item {b}: padding"
                );
            }
        }
        Ok(())
    }

    #[test]
    fn lengths_must_fit_the_batch() -> Result<()> {
        let lstm = random_lstm(4, 2, 7)?;
        let xs = Tensor::zeros((2, 5, 4), DType::F32, &Device::Cpu)?;
        assert!(lstm.forward_batch(&xs, &[5]).is_err());
        assert!(lstm.forward_batch(&xs, &[5, 6]).is_err());
        Ok(())
    }

    #[test]
    fn reversal_flips_valid_rows_only() {
        assert_eq!(reversal_index(&[3, 1], 4), vec![2, 1, 0, 3, 4, 5, 6, 7]);
    }
}
