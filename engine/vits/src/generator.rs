//! `Generator` (`dec`): HiFi-GAN, from the latent at the frame rate to samples.
//!
//! Transposed convolutions upsample (8·8·4 = 256 samples per frame in medium voices) and after
//! each, the mean of a set of residual blocks smooths the result. Both residual block kinds of
//! the reference are read: `ResBlock1` (`convs1`/`convs2` pairs) and `ResBlock2` (`convs`).
//! Every kernel, stride, padding and dilation comes from the graph.
//!
//! On the CPU the convolutions run on the shared product kernels, time-major, with weights
//! packed once ([`Generator::use_cpu_kernel`], [`crate::packed`]): candle's own CPU convolutions
//! made this stage about 80 % of a sentence and ten times slower than onnxruntime. candle's ops
//! remain the path on other devices, on CPUs without AVX-512, and where asked for (`None`).

use candle_core::{Device, Tensor};
use kernels::cpu_kernels::CpuKernel;

use crate::checkpoint::Checkpoint;
use crate::layers::{leaky_relu, Conv};
use crate::packed::PackedGenerator;
use crate::VitsError;

/// The reference's `LRELU_SLOPE` inside the generator.
const SLOPE: f64 = 0.1;

/// One residual block.
#[derive(Debug, Clone)]
pub enum ResBlock {
    /// `ResBlock1`: pairs of (dilated conv, conv), each after a leaky `ReLU`.
    Pairs(Vec<(Conv, Conv)>),
    /// `ResBlock2`: single dilated convs.
    Single(Vec<Conv>),
}

impl ResBlock {
    pub fn load(ck: &Checkpoint, name: &str, device: &Device) -> Result<Self, VitsError> {
        let pairs = ck.count(&format!("{name}.convs1"));
        if pairs > 0 {
            let convs = (0..pairs)
                .map(|i| {
                    Ok((
                        Conv::load(ck, &format!("{name}.convs1.{i}"), device)?,
                        Conv::load(ck, &format!("{name}.convs2.{i}"), device)?,
                    ))
                })
                .collect::<Result<_, VitsError>>()?;
            return Ok(Self::Pairs(convs));
        }
        let n = ck.count(&format!("{name}.convs"));
        if n == 0 {
            return Err(VitsError::Weight {
                name: name.to_owned(),
                reason: "neither convs1/convs2 nor convs".to_owned(),
            });
        }
        let convs = (0..n)
            .map(|i| Conv::load(ck, &format!("{name}.convs.{i}"), device))
            .collect::<Result<_, _>>()?;
        Ok(Self::Single(convs))
    }

    pub fn forward(&self, x: &Tensor) -> Result<Tensor, VitsError> {
        let mut x = x.clone();
        match self {
            Self::Pairs(convs) => {
                for (c1, c2) in convs {
                    let xt = c1.forward(&leaky_relu(&x, SLOPE)?)?;
                    let xt = c2.forward(&leaky_relu(&xt, SLOPE)?)?;
                    x = (xt + x)?;
                }
            }
            Self::Single(convs) => {
                for c in convs {
                    x = (c.forward(&leaky_relu(&x, SLOPE)?)? + x)?;
                }
            }
        }
        Ok(x)
    }
}

/// The decoder.
#[derive(Debug, Clone)]
pub struct Generator {
    conv_pre: Conv,
    cond: Option<Conv>,
    ups: Vec<Conv>,
    /// `kernels` blocks per upsampling stage.
    resblocks: Vec<ResBlock>,
    kernels: usize,
    conv_post: Conv,
    hop: usize,
    /// The same convolutions packed for the CPU kernels, where [`Self::use_cpu_kernel`] chose
    /// them and they fit.
    packed: Option<PackedGenerator>,
}

impl Generator {
    pub fn load(ck: &Checkpoint, device: &Device) -> Result<Self, VitsError> {
        let n_ups = ck.count("dec.ups");
        let n_blocks = ck.count("dec.resblocks");
        if n_ups == 0 || n_blocks == 0 || !n_blocks.is_multiple_of(n_ups) {
            return Err(VitsError::Weight {
                name: "dec".to_owned(),
                reason: format!("{n_ups} upsamplers and {n_blocks} residual blocks"),
            });
        }
        let ups = (0..n_ups)
            .map(|i| Conv::load(ck, &format!("dec.ups.{i}"), device))
            .collect::<Result<Vec<_>, _>>()?;
        let hop = (0..n_ups)
            .map(|i| ck.conv(&format!("dec.ups.{i}")).map(|a| a.stride))
            .product::<Result<usize, _>>()?;
        let cond = if ck.convs.contains_key("dec.cond") {
            Some(Conv::load(ck, "dec.cond", device)?)
        } else {
            None
        };
        Ok(Self {
            conv_pre: Conv::load(ck, "dec.conv_pre", device)?,
            cond,
            ups,
            resblocks: (0..n_blocks)
                .map(|i| ResBlock::load(ck, &format!("dec.resblocks.{i}"), device))
                .collect::<Result<_, _>>()?,
            kernels: n_blocks / n_ups,
            conv_post: Conv::load(ck, "dec.conv_post", device)?,
            hop,
            packed: None,
        })
    }

    /// Runs the convolutions on the CPU kernel `kernel` from now on (packing the weights
    /// once), or with `None` on candle's ops. Returns whether the kernels run them: not off
    /// the CPU, on CPUs without the kernel's instructions, or for a layer shape they decline.
    pub fn use_cpu_kernel(&mut self, kernel: Option<CpuKernel>) -> Result<bool, VitsError> {
        self.packed = None;
        let Some(kernel) = kernel else {
            return Ok(false);
        };
        if !self.conv_pre.weight().device().is_cpu() {
            return Ok(false);
        }
        self.packed = PackedGenerator::pack(
            &self.conv_pre,
            &self.ups,
            &self.resblocks,
            &self.conv_post,
            kernel,
        )?;
        Ok(self.packed.is_some())
    }

    /// The CPU kernel the convolutions run on, `None` for candle's ops.
    #[must_use]
    pub fn cpu_kernel(&self) -> Option<CpuKernel> {
        self.packed.as_ref().map(PackedGenerator::kernel)
    }

    /// Samples per latent frame (the product of the upsampling strides).
    #[must_use]
    pub fn hop(&self) -> usize {
        self.hop
    }

    /// `z` (`[1, channels, frames]`) to `[1, 1, frames · hop]` samples in `[-1, 1]`.
    pub fn forward(&self, z: &Tensor, g: Option<&Tensor>) -> Result<Tensor, VitsError> {
        if let Some(packed) = self.packed.as_ref().filter(|_| z.device().is_cpu()) {
            let cond = match (&self.cond, g) {
                (Some(cond), Some(g)) => Some(cond.forward(g)?.flatten_all()?.to_vec1::<f32>()?),
                _ => None,
            };
            let y = packed.forward(z, cond.as_deref(), SLOPE as f32)?;
            let n = y.len();
            return Ok(Tensor::from_vec(y, (1, 1, n), z.device())?);
        }
        let mut x = self.conv_pre.forward(z)?;
        if let (Some(cond), Some(g)) = (&self.cond, g) {
            x = x.broadcast_add(&cond.forward(g)?)?;
        }
        for (i, up) in self.ups.iter().enumerate() {
            x = up.forward(&leaky_relu(&x, SLOPE)?)?;
            let blocks = &self.resblocks[i * self.kernels..(i + 1) * self.kernels];
            let mut sum: Option<Tensor> = None;
            for block in blocks {
                let y = block.forward(&x)?;
                sum = Some(match sum {
                    Some(s) => (s + y)?,
                    None => y,
                });
            }
            let sum = sum.ok_or_else(|| VitsError::Input("no residual blocks".to_owned()))?;
            x = sum.affine(1.0 / self.kernels as f64, 0.0)?;
        }
        // torch's default slope here, not the generator's 0.1
        let x = self.conv_post.forward(&leaky_relu(&x, 0.01)?)?;
        Ok(x.tanh()?)
    }
}
