//! Weight layouts for f32 products: a permutation of a tensor's axes, copied on the host.
//!
//! The f32 products read time-major convolution weights `[K·C_in, C_out]` and transposed dense
//! weights `[in, out]`. Layers packed for bfloat16 read the checkpoint's layout in place and
//! never need this (`cpu_kernels::StoredWeights`); the others permute once, on first use. candle's
//! `permute(…).contiguous()` copies a permutation that moves the last axis element by
//! element through its general strided path, and on the model's 300 MB that was about a third
//! of a start (0.35 s of `banter say "Hi."` on the 2-core CI machine). Here the output is
//! written in order, in tiles that keep both sides' cache lines in L1.

use candle_core::{Result, Tensor};

/// `t.permute(perm)?.contiguous()`, for any tensor; f32 tensors on the CPU take the fast path.
pub fn permuted(t: &Tensor, perm: &[usize]) -> Result<Tensor> {
    if !t.device().is_cpu() || t.dtype() != candle_core::DType::F32 || t.rank() != perm.len() {
        return t.permute(perm)?.contiguous();
    }
    let dims = t.dims().to_vec();
    let data = t.flatten_all()?.to_vec1::<f32>()?;
    let out = permute_host(&data, &dims, perm);
    let out_dims: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
    Tensor::from_vec(out, out_dims, t.device())
}

/// The row-major array `data` of shape `dims` with its axes reordered: output axis `i` is
/// input axis `perm[i]`. `perm` must be a permutation of `0..dims.len()`.
///
/// When the input's last axis moves, the two axes that are contiguous on either side (the
/// output axis that reads the input's last, and the output's last) are copied in tiles of
/// `TILE` × `TILE`, so every cache line read or written is used whole while it is in L1;
/// the other axes are walked around them.
fn permute_host(data: &[f32], dims: &[usize], perm: &[usize]) -> Vec<f32> {
    const TILE: usize = 32;
    let rank = dims.len();
    let total: usize = dims.iter().product();
    if total == 0 || rank == 0 {
        return data.to_vec();
    }
    let row_major = |d: &[usize]| {
        let mut st = vec![1usize; d.len()];
        for i in (0..d.len().saturating_sub(1)).rev() {
            st[i] = st[i + 1] * d[i + 1];
        }
        st
    };
    let in_strides = row_major(dims);
    let out_dims: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
    let out_strides = row_major(&out_dims);
    let src: Vec<usize> = perm.iter().map(|&p| in_strides[p]).collect();
    let last = rank - 1;
    // The output axis that walks the input's last (contiguous) axis.
    let p = perm.iter().position(|&a| a == last).unwrap_or(last);
    let outer: Vec<usize> = (0..rank).filter(|&i| i != p && i != last).collect();
    let mut out = vec![0f32; total];
    let mut index = vec![0usize; outer.len()];
    loop {
        let base_in: usize = outer.iter().zip(&index).map(|(&ax, &i)| i * src[ax]).sum();
        let base_out: usize = outer
            .iter()
            .zip(&index)
            .map(|(&ax, &i)| i * out_strides[ax])
            .sum();
        if p == last {
            let run = &data[base_in..base_in + out_dims[last]];
            out[base_out..base_out + run.len()].copy_from_slice(run);
        } else {
            for a0 in (0..out_dims[p]).step_by(TILE) {
                for b0 in (0..out_dims[last]).step_by(TILE) {
                    for a in a0..(a0 + TILE).min(out_dims[p]) {
                        let o = base_out + a * out_strides[p];
                        let i = base_in + a;
                        for b in b0..(b0 + TILE).min(out_dims[last]) {
                            out[o + b] = data[i + b * src[last]];
                        }
                    }
                }
            }
        }
        // Next index over the outer axes (the last of them fastest).
        let mut k = outer.len();
        loop {
            if k == 0 {
                return out;
            }
            k -= 1;
            index[k] += 1;
            if index[k] < out_dims[outer[k]] {
                break;
            }
            index[k] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    #[test]
    fn matches_candles_permute() {
        let dev = Device::Cpu;
        for (dims, perm) in [
            (vec![4usize, 3, 5], vec![2usize, 1, 0]),
            (vec![4, 3, 5], vec![0, 2, 1]),
            (vec![2, 3, 4, 5], vec![3, 1, 0, 2]),
            (vec![7, 9], vec![1, 0]),
            (vec![6], vec![0]),
            (vec![3, 0, 2], vec![2, 0, 1]),
        ] {
            let n: usize = dims.iter().product();
            let t = Tensor::arange(0f32, n as f32, &dev)
                .and_then(|t| t.reshape(dims.clone()))
                .expect("tensor");
            let want = t
                .permute(perm.clone())
                .and_then(|t| t.contiguous())
                .expect("candle");
            let got = permuted(&t, &perm).expect("permuted");
            assert_eq!(got.dims(), want.dims(), "{dims:?} {perm:?}");
            assert_eq!(
                got.flatten_all()
                    .and_then(|t| t.to_vec1::<f32>())
                    .expect("got"),
                want.flatten_all()
                    .and_then(|t| t.to_vec1::<f32>())
                    .expect("want"),
                "{dims:?} {perm:?}"
            );
        }
    }
}
