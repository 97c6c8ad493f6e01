//! Products in bfloat16 on CPUs with AVX-512 BF16, accumulated in f32.
//!
//! The decoder's convolutions are ~80 % of a line's compute, and candle's f32 GEMM already ran
//! them at about half of the f32 peak. `VDPBF16PS` multiplies pairs of bfloat16 values into f32
//! sums at twice the f32 rate (measured on this project's 2-core EPYC: 453 against 238
//! GFLOP/s per core in a register-only loop), so those products are done here, by
//! [`kernels`], with the weights packed to bfloat16 once at load. bfloat16 keeps f32's range
//! with an 8-bit mantissa, so each product is off by at most 2⁻⁸ relative while every sum is
//! f32: on the stage goldens the decoder's audio lands 37–42 dB from the f32 port's and as
//! close to the reference (`stages_decoder::decoder_in_bf16_sounds_like_oracle`).
//!
//! [`Bf16Weights`] is the portable face: it declines (`None`) off x86-64, on CPUs without the
//! instructions, and for tensors not on the CPU, and the caller keeps its f32 product.

use candle_core::{Result, Tensor};

#[cfg(target_arch = "x86_64")]
pub mod kernels;

/// A layer's weights packed for the bfloat16 products.
#[derive(Debug)]
pub struct Bf16Weights {
    #[cfg(target_arch = "x86_64")]
    packed: kernels::PackedWeights,
}

impl Bf16Weights {
    /// Packs the time-major `[K·C_in, C_out]` weights of a `K`-tap convolution (`K` = 1 for a
    /// dense layer), or `None` where the products cannot run (not a CPU tensor, no AVX-512
    /// BF16, odd `C_in`).
    #[allow(clippy::unnecessary_wraps)] // Ok(None) only, off x86-64
    pub fn pack(weight_tm: &Tensor, taps: usize, c_in: usize) -> Result<Option<Self>> {
        #[cfg(target_arch = "x86_64")]
        {
            if !weight_tm.device().is_cpu() || !kernels::supported() {
                return Ok(None);
            }
            let c_out = weight_tm.dim(1)?;
            let w = weight_tm.flatten_all()?.to_vec1::<f32>()?;
            Ok(kernels::PackedWeights::pack(&w, taps, c_in, c_out).map(|packed| Self { packed }))
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (weight_tm, taps, c_in);
            Ok(None)
        }
    }

    /// The convolution of the contiguous f32 `[rows, C_in]` input `x`: `rows_out` rows, row
    /// `r` reading its taps `dilation` apart from input row `r·stride`; `[rows_out, C_out]`
    /// without bias. `None` if `x` is not an f32 CPU tensor long enough for that.
    #[allow(clippy::unnecessary_wraps)] // Ok(None) only, off x86-64
    pub fn conv(
        &self,
        x: &Tensor,
        rows_out: usize,
        stride: usize,
        dilation: usize,
    ) -> Result<Option<Tensor>> {
        #[cfg(target_arch = "x86_64")]
        {
            use candle_core::{CpuStorage, Storage};
            if !x.is_contiguous() {
                return Ok(None);
            }
            let input = {
                let (storage, layout) = x.storage_and_layout();
                let Storage::Cpu(CpuStorage::F32(v)) = &*storage else {
                    return Ok(None);
                };
                let start = layout.start_offset();
                let Some(values) = v.get(start..start + x.elem_count()) else {
                    return Ok(None);
                };
                kernels::convert(values)
            };
            let g = kernels::Geometry {
                rows: rows_out,
                stride,
                dilation,
            };
            kernels::conv(&input, &self.packed, g)
                .map(|y| Tensor::from_vec(y, (rows_out, self.packed.c_out()), x.device()))
                .transpose()
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (x, rows_out, stride, dilation);
            Ok(None)
        }
    }
}
