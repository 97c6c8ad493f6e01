//! The building blocks every VITS module uses: convolutions configured by their graph node, and
//! the channel-wise layer norm.
//!
//! Why one conv type: the `.onnx` states each convolution's padding, dilation, groups and stride
//! ([`ConvAttrs`]), so a conv is built from its module path alone and cannot disagree with the
//! graph the reference runs. Depthwise convolutions (the duration predictor's, one group per
//! channel) are a few shifted multiply-adds instead of candle's one-product-per-group path.

use std::sync::Arc;

use candle_core::{DType, Device, Module, Tensor, D};
use kernels::cpu_kernels::CpuKernel;

use crate::checkpoint::{Checkpoint, ConvAttrs};
use crate::packed::PackedConv;
use crate::VitsError;

/// A tensor from the checkpoint, on `device`, with its expected shape checked.
pub fn tensor(
    ck: &Checkpoint,
    name: &str,
    device: &Device,
    expect: Option<&[usize]>,
) -> Result<Tensor, VitsError> {
    let p = ck.get(name)?;
    if let Some(want) = expect {
        if p.dims != want {
            return Err(VitsError::Weight {
                name: name.to_owned(),
                reason: format!("shape {:?}, expected {want:?}", p.dims),
            });
        }
    }
    Ok(Tensor::from_slice(&p.data, p.dims.as_slice(), device)?)
}

/// A 1-D convolution or transposed convolution as the graph runs it.
#[derive(Debug, Clone)]
pub struct Conv {
    weight: Tensor,
    /// `[1, out, 1]`, ready to broadcast.
    bias: Option<Tensor>,
    attrs: ConvAttrs,
    /// For depthwise convs: the kernel as `[k]` tensors of shape `[1, channels, 1]`.
    taps: Vec<Tensor>,
    /// The weights packed for a CPU kernel, where [`Self::use_cpu_kernel`] chose one.
    packed: Option<Arc<PackedConv>>,
}

impl Conv {
    /// The conv at module path `name` (`name.weight`, and `name.bias` where present).
    pub fn load(ck: &Checkpoint, name: &str, device: &Device) -> Result<Self, VitsError> {
        let attrs = ck.conv(name)?;
        let weight = tensor(ck, &format!("{name}.weight"), device, None)?;
        if weight.rank() != 3 {
            return Err(VitsError::Weight {
                name: format!("{name}.weight"),
                reason: format!("rank {} where a 1-D convolution has 3", weight.rank()),
            });
        }
        let bias_name = format!("{name}.bias");
        let bias = if ck.params.contains_key(&bias_name) {
            let b = tensor(ck, &bias_name, device, None)?;
            let n = b.elem_count();
            Some(b.reshape((1, n, 1))?)
        } else {
            None
        };
        let (out, in_per_group, k) = weight.dims3()?;
        let taps =
            if !attrs.transposed && attrs.groups > 1 && in_per_group == 1 && out == attrs.groups {
                (0..k)
                    .map(|i| weight.narrow(2, i, 1)?.reshape((1, out, 1)))
                    .collect::<candle_core::Result<Vec<_>>>()?
            } else {
                Vec::new()
            };
        Ok(Self {
            weight,
            bias,
            attrs,
            taps,
            packed: None,
        })
    }

    /// Runs this convolution's products on the CPU kernel `kernel` from now on (its weights
    /// packed once), or on candle's ops with `None`. Returns whether the kernel runs them: not
    /// for transposed, grouped or depthwise convolutions, off the CPU, or where the kernels
    /// decline the shape.
    pub fn use_cpu_kernel(&mut self, kernel: Option<CpuKernel>) -> Result<bool, VitsError> {
        self.packed = None;
        let Some(kernel) = kernel else {
            return Ok(false);
        };
        if !self.weight.device().is_cpu() || !self.taps.is_empty() {
            return Ok(false);
        }
        self.packed = PackedConv::pack(self, kernel)?.map(Arc::new);
        Ok(self.packed.is_some())
    }

    /// Output channels.
    #[must_use]
    pub fn out_channels(&self) -> usize {
        if self.attrs.transposed {
            self.weight.dim(1).unwrap_or(0) * self.attrs.groups
        } else {
            self.weight.dim(0).unwrap_or(0)
        }
    }

    /// The weights as the graph holds them: `[out, in / groups, k]`, or `[in, out / groups, k]`
    /// for a transposed convolution.
    #[must_use]
    pub fn weight(&self) -> &Tensor {
        &self.weight
    }

    /// The bias, `[1, out, 1]`, where the graph has one.
    #[must_use]
    pub fn bias(&self) -> Option<&Tensor> {
        self.bias.as_ref()
    }

    /// Padding, dilation, stride and groups, from the graph.
    #[must_use]
    pub fn attrs(&self) -> ConvAttrs {
        self.attrs
    }

    /// Runs the convolution on `x` (`[batch, channels, time]`).
    pub fn forward(&self, x: &Tensor) -> Result<Tensor, VitsError> {
        if let Some(p) = &self.packed {
            if x.device().is_cpu() && x.dim(0)? == 1 {
                return p.forward_cm(x);
            }
        }
        let a = self.attrs;
        let y = if !self.taps.is_empty() {
            self.depthwise(x)?
        } else if a.transposed {
            if a.pad_left != a.pad_right {
                return Err(VitsError::Input(
                    "asymmetric padding on a transposed convolution".to_owned(),
                ));
            }
            x.conv_transpose1d(&self.weight, a.pad_left, 0, a.stride, a.dilation, a.groups)?
        } else if a.pad_left == a.pad_right {
            x.conv1d(&self.weight, a.pad_left, a.stride, a.dilation, a.groups)?
        } else {
            x.pad_with_zeros(D::Minus1, a.pad_left, a.pad_right)?
                .conv1d(&self.weight, 0, a.stride, a.dilation, a.groups)?
        };
        Ok(match &self.bias {
            Some(b) => y.broadcast_add(b)?,
            None => y,
        })
    }

    /// One group per channel: the sum of the kernel's taps over shifted copies of the input.
    fn depthwise(&self, x: &Tensor) -> Result<Tensor, VitsError> {
        let a = self.attrs;
        let t = x.dim(D::Minus1)?;
        let padded = x.pad_with_zeros(D::Minus1, a.pad_left, a.pad_right)?;
        let span = (self.taps.len() - 1) * a.dilation;
        let len = (t + a.pad_left + a.pad_right)
            .checked_sub(span)
            .filter(|&l| l > 0)
            .ok_or_else(|| VitsError::Input("sequence shorter than the kernel".to_owned()))?;
        let mut acc: Option<Tensor> = None;
        for (i, tap) in self.taps.iter().enumerate() {
            let term = padded
                .narrow(D::Minus1, i * a.dilation, len)?
                .broadcast_mul(tap)?;
            acc = Some(match acc {
                Some(s) => (s + term)?,
                None => term,
            });
        }
        let y = acc.ok_or_else(|| VitsError::Input("a kernel without taps".to_owned()))?;
        Ok(if a.stride > 1 {
            let idx: Vec<u32> = (0..len).step_by(a.stride).map(|i| i as u32).collect();
            let n = idx.len();
            y.index_select(&Tensor::from_vec(idx, n, y.device())?, 2)?
        } else {
            y
        })
    }
}

/// VITS's `modules.LayerNorm`: normalises each frame over the channels (`[b, c, t]`), eps 1e-5.
#[derive(Debug, Clone)]
pub struct ChannelNorm {
    gamma: Tensor,
    beta: Tensor,
}

impl ChannelNorm {
    /// `name.gamma` and `name.beta`.
    pub fn load(ck: &Checkpoint, name: &str, device: &Device) -> Result<Self, VitsError> {
        let gamma = tensor(ck, &format!("{name}.gamma"), device, None)?;
        let c = gamma.elem_count();
        let beta = tensor(ck, &format!("{name}.beta"), device, Some(&[c]))?;
        Ok(Self {
            gamma: gamma.reshape((1, c, 1))?,
            beta: beta.reshape((1, c, 1))?,
        })
    }

    pub fn forward(&self, x: &Tensor) -> Result<Tensor, VitsError> {
        let mean = x.mean_keepdim(1)?;
        let centred = x.broadcast_sub(&mean)?;
        let var = centred.sqr()?.mean_keepdim(1)?;
        let normed = centred.broadcast_div(&(var + 1e-5)?.sqrt()?)?;
        Ok(normed
            .broadcast_mul(&self.gamma)?
            .broadcast_add(&self.beta)?)
    }
}

/// A one-speaker-or-more embedding table (`[n, dim]`): rows by id.
#[derive(Debug, Clone)]
pub struct Embedding {
    table: Tensor,
}

impl Embedding {
    pub fn load(ck: &Checkpoint, name: &str, device: &Device) -> Result<Self, VitsError> {
        let table = tensor(ck, &format!("{name}.weight"), device, None)?;
        table.dims2()?;
        Ok(Self { table })
    }

    /// Rows of the table (number of ids it knows).
    #[must_use]
    pub fn rows(&self) -> usize {
        self.table.dim(0).unwrap_or(0)
    }

    /// Columns (the embedding size).
    #[must_use]
    pub fn dim(&self) -> usize {
        self.table.dim(1).unwrap_or(0)
    }

    /// `[len, dim]` rows for `ids`; an id outside the table is an error naming it.
    pub fn lookup(&self, ids: &[i64]) -> Result<Tensor, VitsError> {
        let rows = self.rows();
        let idx: Vec<u32> = ids
            .iter()
            .map(|&id| {
                usize::try_from(id)
                    .ok()
                    .filter(|&i| i < rows)
                    .map(|i| i as u32)
                    .ok_or_else(|| VitsError::Input(format!("id {id} outside the table of {rows}")))
            })
            .collect::<Result<_, _>>()?;
        let n = idx.len();
        Ok(self
            .table
            .index_select(&Tensor::from_vec(idx, n, self.table.device())?, 0)?)
    }
}

/// Leaky `ReLU` with the given slope.
pub fn leaky_relu(x: &Tensor, slope: f64) -> Result<Tensor, VitsError> {
    Ok(candle_nn::ops::leaky_relu(x, slope)?)
}

/// Splits `[b, c, t]` into the first `n` channels and the rest.
pub fn split_channels(x: &Tensor, n: usize) -> Result<(Tensor, Tensor), VitsError> {
    let c = x.dim(1)?;
    Ok((x.narrow(1, 0, n)?, x.narrow(1, n, c - n)?))
}

/// `torch.flip(x, [1])`: the channels in reverse order.
pub fn flip_channels(x: &Tensor) -> Result<Tensor, VitsError> {
    let c = x.dim(1)?;
    let idx: Vec<u32> = (0..c as u32).rev().collect();
    Ok(x.index_select(&Tensor::from_vec(idx, c, x.device())?, 1)?)
}

/// A float scalar tensor for broadcasting on `device`.
pub fn scalar(v: f32, device: &Device) -> Result<Tensor, VitsError> {
    Ok(Tensor::new(&[v], device)?
        .reshape((1, 1, 1))?
        .to_dtype(DType::F32)?)
}

/// Runs a candle module, mapping its error.
pub fn run(m: &impl Module, x: &Tensor) -> Result<Tensor, VitsError> {
    Ok(m.forward(x)?)
}
