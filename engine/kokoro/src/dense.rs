//! Fully connected layers with their weight stored transposed: `[in, out]`, contiguous.
//!
//! candle's `Linear` keeps the checkpoint's `[out, in]` layout and multiplies by a transposed view of
//! it. On the CPU, candle's GEMM runs that layout 2–4× slower than a contiguous `[in, out]`
//! matrix when the input has few rows — which is every layer of the encoder, where a row is a
//! phoneme (measured on the 2-core CI machine: 52×2048×768 in 4.0 ms against 0.92 ms, and the
//! ALBERT that runs before every segment's first audio went from 134 ms to under half that).
//! The transposed copy is made once at load time.

// candle's convention is `new(…, vb: VarBuilder)` by value (see `adain.rs`).
#![allow(clippy::needless_pass_by_value)]

use candle_core::{Module, Result, Tensor, D};
use candle_nn::VarBuilder;

use super::cpu_kernels::{CpuKernel, Product, ProductWeights, Stored};

/// `y = x·Wᵀ + b` over the last dimension of `x`, any leading dimensions.
#[derive(Debug, Clone)]
pub struct Dense {
    /// `[in, out]` (or its bfloat16 panels, once [`Self::use_bf16`] chose the faster
    /// products).
    weight_t: ProductWeights,
    in_dim: usize,
    out_dim: usize,
    /// `[out]`.
    bias: Option<Tensor>,
}

impl Dense {
    /// Loads `weight` `[out, in]` and `bias` `[out]` from `vb` (a `nn.Linear`).
    pub fn new(in_dim: usize, out_dim: usize, vb: VarBuilder) -> Result<Self> {
        // The init hints are candle_nn::linear's: they only matter for a `VarMap` (tests with
        // random weights); loaded checkpoints ignore them.
        let weight = vb.get_with_hints(
            (out_dim, in_dim),
            "weight",
            candle_nn::init::DEFAULT_KAIMING_NORMAL,
        )?;
        let bound = 1. / (in_dim as f64).sqrt();
        let bias = vb.get_with_hints(
            out_dim,
            "bias",
            candle_nn::Init::Uniform {
                lo: -bound,
                up: bound,
            },
        )?;
        let mut dense = Self::from_parts(&weight, Some(bias))?;
        dense.weight_t = dense.weight_t.named(format!("{}.weight", vb.prefix()));
        Ok(dense)
    }

    /// From the checkpoint's `weight` `[out, in]` and an optional `bias` `[out]`.
    pub fn from_parts(weight: &Tensor, bias: Option<Tensor>) -> Result<Self> {
        let (out_dim, in_dim) = weight.dims2()?;
        Ok(Self {
            weight_t: ProductWeights::stored(weight.clone(), Stored::Dense),
            in_dim,
            out_dim,
            bias,
        })
    }

    /// From now on multiplies in bfloat16 (see [`crate::cpu_kernels`]) where the CPU can;
    /// returns whether it does.
    pub fn use_bf16(&mut self, kernel: CpuKernel) -> Result<bool> {
        self.weight_t.use_bf16(1, self.in_dim, kernel)
    }

    /// Output width.
    #[must_use]
    pub fn out_dim(&self) -> usize {
        self.out_dim
    }
}

impl Module for Dense {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let dims = x.dims();
        let in_dim = x.dim(D::Minus1)?;
        let rows = x.elem_count() / in_dim.max(1);
        let x = x.contiguous()?.reshape((rows, in_dim))?;
        let y = match self.weight_t.product()? {
            Product::F32(w) => x.matmul(&w)?,
            Product::Bf16(w) => w.product(&x, rows, 1, 1)?,
        };
        let y = match &self.bias {
            Some(b) => y.broadcast_add(b)?,
            None => y,
        };
        let mut out_dims = dims.to_vec();
        if let Some(last) = out_dims.last_mut() {
            *last = self.out_dim;
        }
        y.reshape(out_dims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    #[test]
    fn matches_candle_linear_for_any_leading_dims() {
        let dev = Device::Cpu;
        let w = Tensor::randn(0f32, 1.0, (5, 3), &dev).expect("w");
        let b = Tensor::randn(0f32, 1.0, 5, &dev).expect("b");
        let dense = Dense::from_parts(&w, Some(b.clone())).expect("dense");
        let linear = candle_nn::Linear::new(w, Some(b));
        let one = dense
            .forward(&Tensor::randn(0f32, 1.0, 3, &dev).expect("x"))
            .expect("1-d input");
        assert_eq!(one.dims(), &[5]);
        for shape in [vec![4, 3], vec![2, 4, 3]] {
            let x = Tensor::randn(0f32, 1.0, shape.clone(), &dev).expect("x");
            let got = dense.forward(&x).expect("dense");
            let want = linear.forward(&x).expect("linear");
            assert_eq!(got.dims(), want.dims(), "{shape:?}");
            let diff = (got - want)
                .expect("diff")
                .abs()
                .expect("abs")
                .flatten_all()
                .expect("flat")
                .max(0)
                .expect("max")
                .to_scalar::<f32>()
                .expect("scalar");
            assert!(diff < 1e-5, "{shape:?}: {diff}");
        }
    }
}
