//! Single-layer bidirectional LSTM with `PyTorch`'s parameter layout (`nn.LSTM(bidirectional=True)`).
//!
//! Kokoro has six of them (text encoder, three in the duration encoder, the duration LSTM and the
//! `shared` LSTM that runs once per output frame), all with hidden size 256. The recurrence is
//! inherently sequential, so its cost is per-step overhead, not arithmetic: a candle op costs
//! microseconds of dispatch while one step is only a 1024×256 gemv. The forward pass therefore:
//!
//! 1. projects every time step of both directions with one matmul (`x·W_ihᵀ + b_ih + b_hh`);
//! 2. on the CPU, runs the recurrence on plain `f32` slices with the recurrent weights stored
//!    transposed, so the gemv is a sequence of contiguous `axpy`s the compiler vectorises, and the
//!    two directions run side by side on rayon's pool (the loop lives in `batch`: one sequence
//!    is a batch of one);
//! 3. on a CUDA device, runs the whole recurrence of both directions as one kernel launch
//!    (`cuda_kernels::bilstm`; with tensor ops each step was a dozen launches);
//! 4. elsewhere (and with `BANTER_CUDA_KERNELS=candle`), runs the same recurrence with tensor
//!    ops, so the code is device-generic. [`BiLstm::forward_tensor_ops`] is public so tests can
//!    check the paths agree.
//!
//! Gates are in `PyTorch` order i, f, g, o; zero initial state. [`BiLstm::forward`] takes one
//! sequence; [`BiLstm::forward_batch`] (in `batch`) several of different lengths at once.

// candle's convention is `new(cfg, vb: VarBuilder)`; the builder is cheap to clone and the
// by-value signature keeps call sites as `Block::new(.., vb.pp("name"))`.
#![allow(clippy::needless_pass_by_value)]

use candle_core::{DType, Module, Result, Tensor, D};
use candle_nn::VarBuilder;

use super::dense::Dense;

mod batch;

pub use batch::valid_mask;

/// Below this many time steps both directions run on the calling thread: handing one to the
/// pool costs more than the work it would save.
const MIN_STEPS_FOR_THREAD: usize = 8;

/// One direction's recurrent weights.
#[derive(Debug, Clone)]
struct Recurrence {
    /// `W_hhᵀ` `[H, 4H]`, for the tensor-op path (`h·W_hhᵀ`).
    w_hh_t: Tensor,
    /// The same matrix as a row-major host copy, present only when the model lives on the CPU.
    w_hh_t_host: Option<Vec<f32>>,
}

/// A bidirectional single-layer LSTM, batch 1: `[T, in] → [T, 2H]` (forward half, then reverse).
#[derive(Debug, Clone)]
pub struct BiLstm {
    hidden: usize,
    /// Input projection of both directions: weight `[8H, in]` (forward rows first), bias
    /// `b_ih + b_hh`.
    input_proj: Dense,
    forward_dir: Recurrence,
    reverse_dir: Recurrence,
}

impl BiLstm {
    /// `vb` points at the module (e.g. `predictor.shared`) and holds `weight_ih_l0`,
    /// `weight_hh_l0`, `bias_ih_l0`, `bias_hh_l0` and their `_reverse` twins.
    pub fn new(in_dim: usize, hidden: usize, vb: VarBuilder) -> Result<Self> {
        let gates = 4 * hidden;
        let mut w_ih = Vec::with_capacity(2);
        let mut bias = Vec::with_capacity(2);
        let mut dirs = Vec::with_capacity(2);
        for suffix in ["", "_reverse"] {
            w_ih.push(vb.get((gates, in_dim), &format!("weight_ih_l0{suffix}"))?);
            let b_ih = vb.get(gates, &format!("bias_ih_l0{suffix}"))?;
            let b_hh = vb.get(gates, &format!("bias_hh_l0{suffix}"))?;
            bias.push((b_ih + b_hh)?);
            let w_hh = vb.get((gates, hidden), &format!("weight_hh_l0{suffix}"))?;
            let w_hh_t = w_hh.t()?.contiguous()?;
            let w_hh_t_host = if w_hh_t.device().is_cpu() {
                Some(
                    w_hh_t
                        .to_dtype(DType::F32)?
                        .flatten_all()?
                        .to_vec1::<f32>()?,
                )
            } else {
                None
            };
            dirs.push(Recurrence {
                w_hh_t,
                w_hh_t_host,
            });
        }
        let input_proj = Dense::from_parts(&Tensor::cat(&w_ih, 0)?, Some(Tensor::cat(&bias, 0)?))?;
        let reverse_dir = dirs.pop().expect("two directions were pushed");
        let forward_dir = dirs.pop().expect("two directions were pushed");
        Ok(Self {
            hidden,
            input_proj,
            forward_dir,
            reverse_dir,
        })
    }

    /// Hidden size of one direction (the output is twice as wide).
    #[must_use]
    pub fn hidden(&self) -> usize {
        self.hidden
    }

    /// `xs` `[T, in]` → `[T, 2H]`, picking the fastest path for the device.
    pub fn forward(&self, xs: &Tensor) -> Result<Tensor> {
        let proj = self.project(xs)?;
        match (&self.forward_dir.w_hh_t_host, &self.reverse_dir.w_hh_t_host) {
            (Some(wf), Some(wr)) if proj.device().is_cpu() && proj.dtype() == DType::F32 => {
                self.recur_host(&proj, wf, wr)
            }
            #[cfg(feature = "cuda")]
            _ if self.fused_cuda(&proj) => {
                let steps = proj.dim(0)?;
                self.recur_cuda(&proj.unsqueeze(0)?, &[steps])?.squeeze(0)
            }
            _ => self.recur_tensor_ops(&proj),
        }
    }

    /// True when `proj` is on a GPU where the one-launch recurrence applies.
    #[cfg(feature = "cuda")]
    fn fused_cuda(&self, proj: &Tensor) -> bool {
        crate::cuda_kernels::applies(proj) && self.hidden <= crate::cuda_kernels::MAX_HIDDEN
    }

    /// The whole recurrence of `proj` `[B, T, 8H]` in one CUDA launch.
    #[cfg(feature = "cuda")]
    fn recur_cuda(&self, proj: &Tensor, lengths: &[usize]) -> Result<Tensor> {
        crate::cuda_kernels::bilstm(
            proj,
            &self.forward_dir.w_hh_t,
            &self.reverse_dir.w_hh_t,
            lengths,
        )
    }

    /// The device-generic path used off the CPU; same result as [`Self::forward`].
    pub fn forward_tensor_ops(&self, xs: &Tensor) -> Result<Tensor> {
        let proj = self.project(xs)?;
        self.recur_tensor_ops(&proj)
    }

    /// All time steps of both directions at once: `[T, 8H]`.
    fn project(&self, xs: &Tensor) -> Result<Tensor> {
        let (_steps, _in_dim) = xs.dims2()?;
        self.input_proj.forward(xs)
    }

    fn recur_tensor_ops(&self, proj: &Tensor) -> Result<Tensor> {
        let (steps, _) = proj.dims2()?;
        let gates = 4 * self.hidden;
        let fwd = self.run_dir_tensor_ops(&proj.narrow(1, 0, gates)?, &self.forward_dir, false)?;
        let rev =
            self.run_dir_tensor_ops(&proj.narrow(1, gates, gates)?, &self.reverse_dir, true)?;
        debug_assert_eq!(fwd.dims2()?.0, steps);
        Tensor::cat(&[fwd, rev], 1)
    }

    /// One direction with tensor ops: `proj` `[T, 4H]` → `[T, H]`.
    fn run_dir_tensor_ops(&self, proj: &Tensor, dir: &Recurrence, reverse: bool) -> Result<Tensor> {
        let (steps, _) = proj.dims2()?;
        let h_dim = self.hidden;
        let mut h = Tensor::zeros((1, h_dim), proj.dtype(), proj.device())?;
        let mut c = h.clone();
        let mut outs = vec![None; steps];
        for step in 0..steps {
            let t = if reverse { steps - 1 - step } else { step };
            let g = (proj.narrow(0, t, 1)? + h.matmul(&dir.w_hh_t)?)?;
            let i = candle_nn::ops::sigmoid(&g.narrow(D::Minus1, 0, h_dim)?)?;
            let f = candle_nn::ops::sigmoid(&g.narrow(D::Minus1, h_dim, h_dim)?)?;
            let cand = g.narrow(D::Minus1, 2 * h_dim, h_dim)?.tanh()?;
            let o = candle_nn::ops::sigmoid(&g.narrow(D::Minus1, 3 * h_dim, h_dim)?)?;
            c = ((f * &c)? + (i * cand)?)?;
            h = (o * c.tanh()?)?;
            outs[t] = Some(h.clone());
        }
        let outs: Vec<Tensor> = outs.into_iter().flatten().collect();
        if outs.is_empty() {
            return Tensor::zeros((0, h_dim), proj.dtype(), proj.device());
        }
        Tensor::cat(&outs, 0)
    }

    /// One sequence is a batch of one: the host recurrence lives in `batch`.
    fn recur_host(&self, proj: &Tensor, w_fwd: &[f32], w_rev: &[f32]) -> Result<Tensor> {
        let steps = proj.dim(0)?;
        self.recur_host_batch(&proj.unsqueeze(0)?, &[steps], w_fwd, w_rev)?
            .squeeze(0)
    }
}

/// One direction's view of the projected inputs on the host.
#[derive(Clone, Copy)]
struct DirInput<'a> {
    /// `[T, width]` row-major projections of both directions.
    proj: &'a [f32],
    width: usize,
    /// Column where this direction's `4H` gates start.
    offset: usize,
    /// `W_hhᵀ` `[H, 4H]` row-major.
    w_hh_t: &'a [f32],
    hidden: usize,
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// `tanh x = 2σ(2x) − 1`: `expf` is several times cheaper than `tanhf`; the absolute error
/// (≈1e-7 near 0) is far below what the recurrence cares about.
fn tanh(x: f32) -> f32 {
    2.0 / (1.0 + (-2.0 * x).exp()) - 1.0
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use candle_core::Device;
    use std::collections::HashMap;

    pub(in crate::lstm) fn random_lstm(in_dim: usize, hidden: usize, seed: u64) -> Result<BiLstm> {
        let dev = Device::Cpu;
        let mut rng = seed;
        let mut next = |n: usize| -> Vec<f32> {
            (0..n)
                .map(|_| {
                    // xorshift, mapped to [-0.5, 0.5)
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    (rng >> 40) as f32 / (1u64 << 24) as f32 - 0.5
                })
                .collect()
        };
        let g = 4 * hidden;
        let mut ts = HashMap::new();
        for suffix in ["", "_reverse"] {
            for (name, shape) in [
                ("weight_ih_l0", (g, in_dim)),
                ("weight_hh_l0", (g, hidden)),
                ("bias_ih_l0", (g, 1)),
                ("bias_hh_l0", (g, 1)),
            ] {
                let t = Tensor::from_vec(next(shape.0 * shape.1), shape, &dev)?;
                let t = if shape.1 == 1 { t.squeeze(1)? } else { t };
                ts.insert(format!("{name}{suffix}"), t);
            }
        }
        BiLstm::new(
            in_dim,
            hidden,
            VarBuilder::from_tensors(ts, DType::F32, &dev),
        )
    }

    fn max_abs_diff(a: &Tensor, b: &Tensor) -> Result<f32> {
        (a - b)?.abs()?.flatten_all()?.max(0)?.to_scalar::<f32>()
    }

    /// The sliced CPU path, with and without its directions side by side, equals the tensor-op path.
    /// Times the host recurrence at Kokoro's size (hidden 256, 300 steps, one sequence).
    #[test]
    #[ignore = "timing report, run explicitly"]
    fn recurrence_timing() -> Result<()> {
        let lstm = random_lstm(512, 256, 0x1234_5678)?;
        let xs = Tensor::randn(0f32, 1.0, (300, 512), &Device::Cpu)?;
        let proj = lstm.project(&xs)?;
        let (Some(wf), Some(wr)) = (&lstm.forward_dir.w_hh_t_host, &lstm.reverse_dir.w_hh_t_host)
        else {
            panic!("host weights on the CPU");
        };
        let time = |f: &dyn Fn()| {
            (0..60)
                .map(|_| {
                    let t = std::time::Instant::now();
                    f();
                    t.elapsed().as_secs_f64()
                })
                .fold(f64::MAX, f64::min)
        };
        let projection = time(&|| drop(lstm.project(&xs).expect("projection")));
        let recurrence = time(&|| drop(lstm.recur_host(&proj, wf, wr).expect("recurrence")));
        println!(
            "300 steps, hidden 256: projection {:.2} ms, recurrence {:.2} ms ({:.1} µs a step)",
            projection * 1e3,
            recurrence * 1e3,
            recurrence * 1e6 / 300.0
        );
        Ok(())
    }

    #[test]
    fn host_and_tensor_paths_agree() -> Result<()> {
        let lstm = random_lstm(24, 16, 0x9e37_79b9)?;
        for steps in [1, 5, 40] {
            let xs = Tensor::randn(0f32, 1.0, (steps, 24), &Device::Cpu)?;
            let a = lstm.forward(&xs)?;
            let b = lstm.forward_tensor_ops(&xs)?;
            assert_eq!(a.dims(), &[steps, 32]);
            let d = max_abs_diff(&a, &b)?;
            assert!(d < 1e-5, "steps {steps}: max diff {d}");
        }
        Ok(())
    }

    /// A 1-unit LSTM computed by hand: checks the gate order (i, f, g, o), the bias sum and the
    /// direction of the reverse scan.
    #[test]
    fn scalar_cell_by_hand() -> Result<()> {
        let dev = Device::Cpu;
        let w_ih = [0.5f32, -0.3, 0.8, 0.1];
        let w_hh = [0.2f32, 0.4, -0.6, 0.7];
        let b_ih = [0.1f32, 0.0, -0.2, 0.05];
        let b_hh = [0.0f32, 0.3, 0.1, -0.05];
        let mut ts = HashMap::new();
        for suffix in ["", "_reverse"] {
            ts.insert(
                format!("weight_ih_l0{suffix}"),
                Tensor::from_slice(&w_ih, (4, 1), &dev)?,
            );
            ts.insert(
                format!("weight_hh_l0{suffix}"),
                Tensor::from_slice(&w_hh, (4, 1), &dev)?,
            );
            ts.insert(
                format!("bias_ih_l0{suffix}"),
                Tensor::from_slice(&b_ih, 4, &dev)?,
            );
            ts.insert(
                format!("bias_hh_l0{suffix}"),
                Tensor::from_slice(&b_hh, 4, &dev)?,
            );
        }
        let lstm = BiLstm::new(1, 1, VarBuilder::from_tensors(ts, DType::F32, &dev))?;
        let xs = [1.0f32, -2.0, 0.5];
        let cell = |x: f32, h: f32, c: f32| {
            let pre: Vec<f32> = (0..4)
                .map(|k| w_ih[k] * x + w_hh[k] * h + b_ih[k] + b_hh[k])
                .collect();
            let c = sigmoid(pre[1]) * c + sigmoid(pre[0]) * pre[2].tanh();
            (sigmoid(pre[3]) * c.tanh(), c)
        };
        let mut expect_f = Vec::new();
        let (mut h, mut c) = (0.0, 0.0);
        for &x in &xs {
            (h, c) = cell(x, h, c);
            expect_f.push(h);
        }
        let mut expect_r = [0.0; 3];
        let (mut h, mut c) = (0.0, 0.0);
        for t in (0..3).rev() {
            (h, c) = cell(xs[t], h, c);
            expect_r[t] = h;
        }
        let got = lstm
            .forward(&Tensor::from_slice(&xs, (3, 1), &dev)?)?
            .to_vec2::<f32>()?;
        for t in 0..3 {
            assert!((got[t][0] - expect_f[t]).abs() < 1e-6, "fwd t={t}");
            assert!((got[t][1] - expect_r[t]).abs() < 1e-6, "rev t={t}");
        }
        Ok(())
    }
}
