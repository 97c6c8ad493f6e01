//! Element-wise maps of f32 CPU tensors, run on the pool.
//!
//! The pool is rayon's, the one the convolutions just ran on. candle's own element-wise pool
//! is left with no threads (`CANDLE_NUM_THREADS=1`, set by the app), so its ops run inline on
//! the caller instead of waiting at a barrier for a worker the two busy cores cannot schedule.
//!
//! candle runs a unary map (`affine`, `x * slope`) on the calling thread, and the model thread
//! is the one that calls: in a profile of lone first segments the leaky `ReLU`s in front of the
//! generator's upsamplers, the mean of a stage's residual blocks and ALBERT's `gelu_new` were a
//! tenth of the model thread's time, megabytes each while both pool threads waited. [`map`]
//! reads the tensor in place and writes each chunk of the output from a pool task
//! ([`super::fill::par_filled`]). Each value goes through the same scalar arithmetic a serial
//! loop (or candle's op) would do, so results are bit-identical.

use candle_core::{Result, Tensor};

use super::fill::par_filled;

/// Values per pool task: 64 KiB of input.
const CHUNK: usize = 16 * 1024;

pub(crate) use kernels::host::with_host;

/// `f` of every value of `x`, on the pool; `None` unless `x` is a contiguous f32 CPU tensor
/// (callers then use candle's ops).
pub fn map(x: &Tensor, f: impl Fn(f32) -> f32 + Sync) -> Result<Option<Tensor>> {
    let values = with_host(x, |src| {
        par_filled(src.len(), CHUNK, |task, out| {
            let src = &src[task * CHUNK..task * CHUNK + out.len()];
            for (o, &v) in out.iter_mut().zip(src) {
                *o = f(v);
            }
        })
    });
    values
        .map(|v| Tensor::from_vec(v, x.dims(), x.device()))
        .transpose()
}

/// Leaky `ReLU` for a negative slope below 1: `max(x, slope·x)`, on the pool for CPU tensors.
///
/// The same arithmetic as candle's `x.maximum(&(x * slope))` (an `affine` then a `maximum`), so
/// either path gives the same bits.
pub fn leaky_relu(x: &Tensor, slope: f64) -> Result<Tensor> {
    let s = slope as f32;
    let host = map(x, |v| {
        let scaled = v * s + 0.0;
        if v < scaled {
            scaled
        } else {
            v
        }
    })?;
    match host {
        Some(y) => Ok(y),
        None => x.maximum(&(x * slope)?),
    }
}

/// `x · k`, on the pool for CPU tensors (candle's `x * k`: an `affine` with no offset).
pub fn scale(x: &Tensor, k: f64) -> Result<Tensor> {
    let kf = k as f32;
    match map(x, |v| v * kf + 0.0)? {
        Some(y) => Ok(y),
        None => x * k,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    fn bits(t: &Tensor) -> Vec<u32> {
        t.flatten_all()
            .expect("flat")
            .to_vec1::<f32>()
            .expect("host")
            .iter()
            .map(|v| v.to_bits())
            .collect()
    }

    /// Bit-identical to candle's ops, across chunk boundaries, on signed zeros and on a
    /// narrowed (offset) tensor; a strided view falls back to candle.
    #[test]
    fn same_bits_as_candles_ops() {
        let dev = Device::Cpu;
        let rows = (2 * CHUNK + 77) / 7;
        let n = rows * 7;
        let mut v: Vec<f32> = (0..n)
            .map(|i| ((i as f32) * 0.731).sin() * 3.0 - 0.5)
            .collect();
        v[5] = -0.0;
        v[6] = 0.0;
        let x = Tensor::from_vec(v, (rows, 7), &dev).expect("tensor");
        let x = x.narrow(0, 1, rows - 1).expect("offset view");
        assert!(x.layout().start_offset() > 0);
        for slope in [0.1, 0.2, 0.01] {
            let want = x.maximum(&(&x * slope).expect("mul")).expect("max");
            assert_eq!(bits(&leaky_relu(&x, slope).expect("leaky")), bits(&want));
        }
        let want = (&x / 3.0).expect("div");
        assert_eq!(bits(&scale(&x, 1.0 / 3.0).expect("scale")), bits(&want));
        let strided = x.t().expect("t");
        assert!(map(&strided, |v| v).expect("map").is_none());
        assert_eq!(
            bits(&leaky_relu(&strided, 0.1).expect("fallback")),
            bits(
                &strided
                    .maximum(&(&strided * 0.1).expect("mul"))
                    .expect("max")
            )
        );
    }
}
