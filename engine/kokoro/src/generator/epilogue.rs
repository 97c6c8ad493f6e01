//! The last step of every generator convolution: add the bias and, for the second convolution
//! of a residual layer, the layer's input. On the CPU this is one parallel pass that updates the
//! convolution's fresh output in place (candle's broadcast add and add would be two passes, each
//! allocating a new buffer); elsewhere it is those candle ops. The generator also adds a stage's
//! noise branch and its running sum of residual blocks through it (no bias), into a fresh
//! output, so that neither needs a third buffer of the stage's size.

use candle_core::{CpuStorage, DType, InplaceOp1, InplaceOp2, Layout, Result, Tensor};
use rayon::prelude::*;

/// `y + bias (+ residual)` on `[rows, C]` (`bias` as a `[1, C]` tensor and on the host).
///
/// `y` must be an intermediate that nothing else holds (the convolutions pass their own fresh
/// output): on the CPU its storage is updated in place.
pub(super) fn finish(
    y: &Tensor,
    bias: Option<(&Tensor, &[f32])>,
    residual: Option<&Tensor>,
) -> Result<Tensor> {
    if bias.is_none() && residual.is_none() {
        return Ok(y.clone());
    }
    if y.device().is_cpu() && y.dtype() == DType::F32 {
        let op = Epilogue {
            bias: bias.map(|(_, host)| host),
        };
        let y = y.contiguous()?;
        match residual {
            Some(r) => y.inplace_op2(&r.contiguous()?, &op)?,
            None => y.inplace_op1(&op)?,
        }
        return Ok(y);
    }
    let y = match bias {
        Some((b, _)) => y.broadcast_add(b)?,
        None => y.clone(),
    };
    match residual {
        Some(r) => y + r,
        None => Ok(y),
    }
}

/// Adds a per-column bias and optionally a residual, in place.
struct Epilogue<'a> {
    bias: Option<&'a [f32]>,
}

/// Rows per parallel task.
const ROWS_PER_TASK: usize = 256;

impl Epilogue<'_> {
    fn run(&self, y: &mut [f32], residual: Option<&[f32]>, cols: usize) {
        y.par_chunks_mut(ROWS_PER_TASK * cols)
            .enumerate()
            .for_each(|(i, chunk)| {
                let start = i * ROWS_PER_TASK * cols;
                for (r, row) in chunk.chunks_mut(cols).enumerate() {
                    if let Some(b) = self.bias {
                        for (v, &bv) in row.iter_mut().zip(b) {
                            *v += bv;
                        }
                    }
                    if let Some(res) = residual {
                        let at = start + r * cols;
                        for (v, &rv) in row.iter_mut().zip(&res[at..at + cols]) {
                            *v += rv;
                        }
                    }
                }
            });
    }

    /// The contiguous `[start, end)` range of `layout` and its column count.
    fn check(&self, layout: &Layout) -> Result<(usize, usize, usize)> {
        let (_, cols) = layout.shape().dims2()?;
        let Some((start, end)) = layout.contiguous_offsets() else {
            candle_core::bail!("conv epilogue: input must be contiguous");
        };
        if self.bias.is_some_and(|bias| bias.len() != cols) {
            candle_core::bail!("conv epilogue: bias does not match {cols} columns");
        }
        Ok((start, end, cols))
    }
}

fn f32_mut(storage: &mut CpuStorage) -> Result<&mut [f32]> {
    match storage {
        CpuStorage::F32(v) => Ok(v),
        _ => candle_core::bail!("conv epilogue: expected f32 storage"),
    }
}

impl InplaceOp1 for Epilogue<'_> {
    fn name(&self) -> &'static str {
        "conv-epilogue"
    }

    fn cpu_fwd(&self, storage: &mut CpuStorage, layout: &Layout) -> Result<()> {
        let (start, end, cols) = self.check(layout)?;
        self.run(&mut f32_mut(storage)?[start..end], None, cols);
        Ok(())
    }
}

impl InplaceOp2 for Epilogue<'_> {
    fn name(&self) -> &'static str {
        "conv-epilogue-residual"
    }

    fn cpu_fwd(
        &self,
        s1: &mut CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> Result<()> {
        let (start, end, cols) = self.check(l1)?;
        if l1.shape() != l2.shape() {
            candle_core::bail!(
                "conv epilogue: residual {:?} vs output {:?}",
                l2.shape(),
                l1.shape()
            );
        }
        let Some((rs, re)) = l2.contiguous_offsets() else {
            candle_core::bail!("conv epilogue: residual must be contiguous");
        };
        let residual = &s2.as_slice::<f32>()?[rs..re];
        self.run(&mut f32_mut(s1)?[start..end], Some(residual), cols);
        Ok(())
    }
}
