//! The last step of a transposed convolution on the CPU: a product's taps unrolled into output
//! rows, with the bias (and, for the generator's last stage, the reflected top row) in the same
//! pass.
//!
//! Why: summed with candle's ops, the `Q` shifted slabs of the taps cost a buffer each plus
//! one per partial sum, every one the size of the output. At the last upsampler that output is
//! the generator's largest activation (tens of megabytes in a long segment), so those buffers
//! set the process's peak memory. Here each output row is read from the taps and written once.
//! The arithmetic is the slab sum's, in the same order (tap group 0, then each next group
//! added, zeros where a slab was padded, then the bias), so results are bit-identical.

use candle_core::{Result, Tensor};

use crate::elementwise::with_host;
use crate::fill::par_filled;

/// Output rows per pool task.
const ROWS_PER_TASK: usize = 256;

/// What to unroll: a product `[T, Q·stride·C]` of `T` input steps into output rows.
pub(super) struct Unroll<'a> {
    pub steps: usize,
    pub q: usize,
    pub stride: usize,
    pub channels: usize,
    /// Output rows cropped from the top.
    pub padding: usize,
    /// Output rows kept after the crop.
    pub len: usize,
    pub bias: Option<&'a [f32]>,
    /// Prepend a copy of output row 1 (`nn.ReflectionPad1d((1, 0))`).
    pub reflect_top1: bool,
}

impl Unroll<'_> {
    /// `[len (+1), C]`, or `None` when `taps` is not a contiguous f32 CPU tensor (callers then
    /// sum the slabs with candle's ops).
    pub(super) fn run(&self, taps: &Tensor) -> Result<Option<Tensor>> {
        let (s, c, q) = (self.stride, self.channels, self.q);
        let width = q * s * c;
        if taps.dims() != [self.steps, width] {
            candle_core::bail!(
                "conv_transpose1d: taps {:?}, expected [{}, {width}]",
                taps.dims(),
                self.steps
            );
        }
        if self.reflect_top1 && self.len < 2 {
            candle_core::bail!("reflection pad: {} output rows, need 2", self.len);
        }
        let rows = self.len + usize::from(self.reflect_top1);
        let values = with_host(taps, |taps| {
            par_filled(rows * c, ROWS_PER_TASK * c, |task, out| {
                for (k, row) in out.chunks_mut(c).enumerate() {
                    self.fill_row(taps, task * ROWS_PER_TASK + k, row);
                }
            })
        });
        values
            .map(|v| Tensor::from_vec(v, (rows, c), taps.device()))
            .transpose()
    }

    /// Output row `i` (after the crop and any reflected row) from the host taps.
    fn fill_row(&self, taps: &[f32], i: usize, row: &mut [f32]) {
        let (s, c, q) = (self.stride, self.channels, self.q);
        let kept = match (self.reflect_top1, i) {
            (false, i) => i,
            (true, 0) => 1,
            (true, i) => i - 1,
        };
        let (u, r) = ((kept + self.padding) / s, (kept + self.padding) % s);
        for j in 0..q {
            // Slab `j` is the taps' group `j`, shifted down `j` rows, zero outside.
            let src = u
                .checked_sub(j)
                .filter(|&v| v < self.steps)
                .map(|v| &taps[v * q * s * c + (j * s + r) * c..][..c]);
            match (j, src) {
                (0, Some(src)) => row.copy_from_slice(src),
                (0, None) => row.fill(0.0),
                (_, Some(src)) => row.iter_mut().zip(src).for_each(|(a, &b)| *a += b),
                (_, None) => row.iter_mut().for_each(|a| *a += 0.0),
            }
        }
        if let Some(bias) = self.bias {
            row.iter_mut().zip(bias).for_each(|(a, &b)| *a += b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    /// The slab sum with candle's ops, as `ConvTranspose1d` did it before this module.
    fn slab_sum(taps: &Tensor, u: &Unroll) -> Tensor {
        let (s, c, q) = (u.stride, u.channels, u.q);
        let mut sum: Option<Tensor> = None;
        for j in 0..q {
            let slab = taps
                .narrow(1, j * s * c, s * c)
                .and_then(|t| t.pad_with_zeros(0, j, q - 1 - j))
                .expect("slab");
            sum = Some(match sum {
                None => slab,
                Some(acc) => (acc + slab).expect("add"),
            });
        }
        let mut y = sum
            .expect("groups")
            .reshape(((u.steps + q - 1) * s, c))
            .and_then(|y| y.narrow(0, u.padding, u.len))
            .expect("crop");
        if let Some(b) = u.bias {
            let b = Tensor::from_slice(b, (1, c), &Device::Cpu).expect("bias");
            y = y.broadcast_add(&b).expect("bias add");
        }
        if u.reflect_top1 {
            y = super::super::reflection_pad_top1(&y).expect("pad");
        }
        y
    }

    fn bits(t: &Tensor) -> Vec<u32> {
        let v = t.flatten_all().and_then(|t| t.to_vec1::<f32>());
        v.expect("host").iter().map(|v| v.to_bits()).collect()
    }

    /// Bit-identical to the slab sum, with and without bias and reflection, over several
    /// pool tasks, on signed zeros (a padded slab adds +0.0, which turns −0.0 into +0.0).
    #[test]
    fn same_bits_as_the_slab_sum() {
        for (steps, q, stride, channels, padding, reflect, bias) in [
            (700, 2, 6, 5, 3, true, true),
            (40, 2, 10, 3, 5, false, true),
            (9, 3, 2, 4, 1, false, false),
            (1, 2, 3, 2, 0, true, true),
        ] {
            let width = q * stride * channels;
            let mut v: Vec<f32> = (0..steps * width)
                .map(|i| ((i as f32) * 0.377).sin())
                .collect();
            v[0] = -0.0;
            v[1] = -0.0;
            let taps = Tensor::from_vec(v, (steps, width), &Device::Cpu).expect("taps");
            let b: Vec<f32> = (0..channels).map(|i| i as f32 * 0.25 - 0.5).collect();
            let u = Unroll {
                steps,
                q,
                stride,
                channels,
                padding,
                len: (steps + q - 1) * stride - 2 * padding,
                bias: bias.then_some(&b[..]),
                reflect_top1: reflect,
            };
            let got = u.run(&taps).expect("run").expect("host taps");
            let want = slab_sum(&taps, &u);
            assert_eq!(got.dims(), want.dims());
            assert_eq!(
                bits(&got),
                bits(&want),
                "{steps} steps, q {q}, stride {stride}"
            );
        }
    }

    #[test]
    fn refuses_a_wrong_shape_and_passes_a_strided_view_back() {
        let taps = Tensor::zeros((4, 12), candle_core::DType::F32, &Device::Cpu).expect("t");
        let u = Unroll {
            steps: 4,
            q: 2,
            stride: 3,
            channels: 2,
            padding: 0,
            len: 15,
            bias: None,
            reflect_top1: false,
        };
        assert!(Unroll { steps: 5, ..u }.run(&taps).is_err());
        let strided = Tensor::zeros((12, 4), candle_core::DType::F32, &Device::Cpu)
            .and_then(|t| t.t())
            .expect("view");
        assert!(u.run(&strided).expect("shape fits").is_none());
    }
}
