//! The last step of every generator convolution: add the bias and, for the second convolution
//! of a residual layer, the layer's input, in one parallel pass over the output on the CPU
//! (candle's broadcast add and add would be two passes, each through its own thread pool).

use candle_core::{CpuStorage, CustomOp1, CustomOp2, DType, Layout, Result, Shape, Tensor};
use rayon::prelude::*;

/// `y + bias (+ residual)` on `[rows, C]` (`bias` as a `[1, C]` tensor and on the host): one
/// parallel pass on the CPU, candle ops elsewhere.
pub fn finish(
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
        return match residual {
            Some(r) => y.apply_op2_no_bwd(&r.contiguous()?, &op),
            None => y.apply_op1_no_bwd(&op),
        };
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

/// CPU epilogue of a convolution: adds a per-column bias and optionally a residual.
struct Epilogue<'a> {
    bias: Option<&'a [f32]>,
}

impl Epilogue<'_> {
    fn run(&self, y: &[f32], residual: Option<&[f32]>, cols: usize) -> Vec<f32> {
        let mut out = vec![0.0f32; y.len()];
        let rows_per = 256;
        out.par_chunks_mut(rows_per * cols)
            .enumerate()
            .for_each(|(i, chunk)| {
                let start = i * rows_per * cols;
                let ys = &y[start..start + chunk.len()];
                for (r, (o, yr)) in chunk.chunks_mut(cols).zip(ys.chunks(cols)).enumerate() {
                    o.copy_from_slice(yr);
                    if let Some(b) = self.bias {
                        for (v, &bv) in o.iter_mut().zip(b) {
                            *v += bv;
                        }
                    }
                    if let Some(res) = residual {
                        let at = start + r * cols;
                        for (v, &rv) in o.iter_mut().zip(&res[at..at + cols]) {
                            *v += rv;
                        }
                    }
                }
            });
        out
    }

    fn check(&self, layout: &Layout) -> Result<(usize, usize, usize)> {
        let (_, cols) = layout.shape().dims2()?;
        let Some((a, b)) = layout.contiguous_offsets() else {
            candle_core::bail!("conv epilogue: input must be contiguous");
        };
        if self.bias.is_some_and(|bias| bias.len() != cols) {
            candle_core::bail!("conv epilogue: bias does not match {cols} columns");
        }
        Ok((a, b, cols))
    }
}

impl CustomOp1 for Epilogue<'_> {
    fn name(&self) -> &'static str {
        "conv-epilogue"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> Result<(CpuStorage, Shape)> {
        let (a, b, cols) = self.check(layout)?;
        let y = &storage.as_slice::<f32>()?[a..b];
        let out = self.run(y, None, cols);
        Ok((CpuStorage::F32(out), layout.shape().clone()))
    }
}

impl CustomOp2 for Epilogue<'_> {
    fn name(&self) -> &'static str {
        "conv-epilogue-residual"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let (a, b, cols) = self.check(l1)?;
        if l1.shape() != l2.shape() {
            candle_core::bail!(
                "conv epilogue: residual {:?} vs output {:?}",
                l2.shape(),
                l1.shape()
            );
        }
        let Some((c, d)) = l2.contiguous_offsets() else {
            candle_core::bail!("conv epilogue: residual must be contiguous");
        };
        let y = &s1.as_slice::<f32>()?[a..b];
        let r = &s2.as_slice::<f32>()?[c..d];
        let out = self.run(y, Some(r), cols);
        Ok((CpuStorage::F32(out), l1.shape().clone()))
    }
}
