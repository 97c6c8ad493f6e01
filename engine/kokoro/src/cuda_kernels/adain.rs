//! `AdaIN` + activation as one CUDA op over time-major `[T, C]`, batched time-major `[B, T, C]`
//! (items of their own lengths and styles) or channel-major `[B, C, T]` data. The CPU reference
//! is `crate::adain`'s fused kernel (`AdaIN1d::forward_act{,_tm,_batch_tm}` on the CPU).

// Kernel launches through cudarc are unsafe calls; each carries its SAFETY comment.
#![allow(unsafe_code)]

use candle_core::cuda_backend::cudarc::driver::{LaunchConfig, PushKernelArg};
use candle_core::cuda_backend::WrapErr;
use candle_core::{
    CpuStorage, CudaStorage, CustomOp3, DType, Device, Layout, Result, Shape, Tensor,
};
use candle_nn::VarBuilder;

use super::{compare, data, kernel, KernelCheck};
use crate::adain::{Activation, AdaIN1d, Snake, INSTANCE_NORM_EPS};
use crate::rows::ValidRows;

/// The activation after the norm, as the kernel takes it.
#[derive(Debug, Clone, Copy)]
pub enum GpuAct<'a> {
    Identity,
    LeakyRelu(f32),
    /// α per channel: `[C]` values, any shape, on the same device.
    Snake(&'a Tensor),
}

#[derive(Debug, Clone)]
enum Frame {
    /// Time-major `[B, T, C]` in, item `b` valid for its first `valid[b]` rows (all `T` when
    /// `valid` is `None`; a `[B]` `u32` tensor on the device, each length in `1..=T`, which
    /// `ValidRows` checked where it was uploaded); `[B, before + T + after, C]` out, each
    /// item's rows at `before..before + valid[b]` and zeros around them.
    Tm {
        before: usize,
        after: usize,
        valid: Option<Tensor>,
    },
    /// `[B, C, T]` in and out.
    Cm,
}

struct AdaInAct {
    frame: Frame,
    act: i32,
    slope: f32,
}

/// `act((1+γ)·norm(x) + β)` over time-major `x` `[T, C]` (batch 1) with `h` = the style's
/// `fc` output `[1, 2C]` (γ then β), framed by `before`/`after` zero rows.
pub fn adain_act_tm(
    x: &Tensor,
    h: &Tensor,
    act: GpuAct<'_>,
    (before, after): (usize, usize),
) -> Result<Tensor> {
    let frame = Frame::Tm {
        before,
        after,
        valid: None,
    };
    apply(&x.unsqueeze(0)?, h, act, frame)?.squeeze(0)
}

/// The same for a batch: `x` `[B, T, C]`, item `b` valid for its first `lengths[b]` rows
/// (`lengths` `[B]` `u32` on the device, each in `1..=T`: `rows::ValidRows`
/// checks them on the host as it uploads them) with its own style affine `h[b]` (`h`
/// `[B, 2C]`), framed per item by zero rows to `[B, before + T + after, C]`: three launches
/// whatever `B` is, and no copy from the host.
pub fn adain_act_btm(
    x: &Tensor,
    h: &Tensor,
    act: GpuAct<'_>,
    lengths: &Tensor,
    (before, after): (usize, usize),
) -> Result<Tensor> {
    let valid = lengths.to_dtype(DType::U32)?.contiguous()?;
    apply(
        x,
        h,
        act,
        Frame::Tm {
            before,
            after,
            valid: Some(valid),
        },
    )
}

/// The same over channel-major `x` `[B, C, T]`, `h` `[B, 2C]`.
pub fn adain_act_cm(x: &Tensor, h: &Tensor, act: GpuAct<'_>) -> Result<Tensor> {
    apply(x, h, act, Frame::Cm)
}

fn apply(x: &Tensor, h: &Tensor, act: GpuAct<'_>, frame: Frame) -> Result<Tensor> {
    let (code, slope, alpha) = match act {
        GpuAct::Identity => (0, 0.0, h.clone()),
        GpuAct::LeakyRelu(s) => (1, s, h.clone()),
        GpuAct::Snake(alpha) => (2, 0.0, alpha.flatten_all()?.contiguous()?),
    };
    let op = AdaInAct {
        frame,
        act: code,
        slope,
    };
    x.contiguous()?
        .apply_op3_no_bwd(&h.contiguous()?, &alpha, &op)
}

fn u32_of(n: usize) -> Result<u32> {
    u32::try_from(n).map_err(|_| candle_core::Error::Msg(format!("{n} exceeds a CUDA grid")))
}

fn i32_of(n: usize) -> Result<i32> {
    i32::try_from(n).map_err(|_| candle_core::Error::Msg(format!("{n} exceeds an i32")))
}

impl CustomOp3 for AdaInAct {
    fn name(&self) -> &'static str {
        "kokoro-adain-act"
    }

    fn cpu_fwd(
        &self,
        _: &CpuStorage,
        _: &Layout,
        _: &CpuStorage,
        _: &Layout,
        _: &CpuStorage,
        _: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        candle_core::bail!("kokoro-adain-act is a CUDA kernel; the CPU has adain::fused")
    }

    fn cuda_fwd(
        &self,
        xs: &CudaStorage,
        xl: &Layout,
        hs: &CudaStorage,
        hl: &Layout,
        als: &CudaStorage,
        all: &Layout,
    ) -> Result<(CudaStorage, Shape)> {
        let dev = &xs.device;
        let x = data(xs, xl, "the adain kernel's x")?;
        let h = data(hs, hl, "the adain kernel's style affine")?;
        let alpha = data(als, all, "the adain kernel's alpha")?;
        let eps = INSTANCE_NORM_EPS as f32;
        let (act, slope) = (self.act, self.slope);
        match &self.frame {
            Frame::Tm {
                before,
                after,
                valid,
            } => {
                let (batch, t, c) = xl.shape().dims3()?;
                let lengths_ok = valid.as_ref().is_none_or(|valid| valid.dims() == [batch]);
                if hl.shape().elem_count() != 2 * c * batch || t == 0 || !lengths_ok {
                    candle_core::bail!(
                        "adain kernel: x [{batch}, {t}, {c}] with {} style values and lengths \
                         {:?}",
                        hl.shape().elem_count(),
                        valid.as_ref().map(Tensor::dims)
                    );
                }
                let (before, after) = (*before, *after);
                let rows = before + t + after;
                // Without lengths every item is valid for all T rows: the kernels read a null
                // pointer as that. With them, the kernels also clamp each to 1..=T, so even a
                // length that escaped the host's check cannot move a read or write.
                let storage = valid.as_ref().map(Tensor::storage_and_layout);
                let lengths = match &storage {
                    Some((s, l)) => {
                        let candle_core::Storage::Cuda(s) = &**s else {
                            candle_core::bail!("adain kernel: lengths off the GPU");
                        };
                        let Some((start, end)) = l.contiguous_offsets() else {
                            candle_core::bail!("adain kernel: lengths not contiguous");
                        };
                        Some(s.as_cuda_slice::<u32>()?.slice(start..end))
                    }
                    None => None,
                };
                let null: u64 = 0;
                let mut sums = dev.alloc_zeros::<f64>(batch * 2 * c)?;
                let (bn, ti, ci) = (i32_of(batch)?, i32_of(t)?, i32_of(c)?);
                let stats = kernel!(dev, "adain_stats_tm")?;
                let mut b = stats.builder();
                b.arg(&x);
                match &lengths {
                    Some(l) => b.arg(l),
                    None => b.arg(&null),
                };
                b.arg(&ti).arg(&ci).arg(&mut sums);
                let cfg = LaunchConfig {
                    // Fewer row blocks per item as the batch grows: the grid stays about as
                    // large as one long item's.
                    grid_dim: (
                        u32_of(c.div_ceil(32))?,
                        u32_of(t.div_ceil(32).min(128usize.div_ceil(batch)).max(1))?,
                        u32_of(batch)?,
                    ),
                    block_dim: (32, 32, 1),
                    shared_mem_bytes: 0,
                };
                // SAFETY: the argument list matches `adain_stats_tm`'s signature (lengths a
                // device array of B values or null); the kernel clamps every item's length to
                // 1..=T, so x is read below B·T·C and sums written below B·2C.
                unsafe { b.launch(cfg) }.w()?;
                let n = batch * rows * c;
                // SAFETY: every element is written by the kernel below.
                let mut y = unsafe { dev.alloc::<f32>(n)? };
                let (bi, ai) = (i32_of(before)?, i32_of(after)?);
                let apply = kernel!(dev, "adain_apply_tm")?;
                let mut b = apply.builder();
                b.arg(&x).arg(&h).arg(&alpha).arg(&sums);
                match &lengths {
                    Some(l) => b.arg(l),
                    None => b.arg(&null),
                };
                b.arg(&bn)
                    .arg(&ti)
                    .arg(&ci)
                    .arg(&bi)
                    .arg(&ai)
                    .arg(&act)
                    .arg(&slope)
                    .arg(&eps);
                b.arg(&mut y);
                let cfg = LaunchConfig {
                    grid_dim: (u32_of(n.div_ceil(256).min(132 * 32))?, 1, 1),
                    block_dim: (256, 1, 1),
                    shared_mem_bytes: 0,
                };
                // SAFETY: as above; the kernel writes exactly `B·rows·C` values.
                unsafe { b.launch(cfg) }.w()?;
                Ok((
                    CudaStorage::wrap_cuda_slice(y, dev.clone()),
                    Shape::from((batch, rows, c)),
                ))
            }
            Frame::Cm => {
                let (batch, c, t) = xl.shape().dims3()?;
                if hl.shape().elem_count() != 2 * c * batch || t == 0 {
                    candle_core::bail!(
                        "adain kernel: x [{batch}, {c}, {t}] with {} style values",
                        hl.shape().elem_count()
                    );
                }
                // SAFETY: every element is written by the kernel.
                let mut y = unsafe { dev.alloc::<f32>(batch * c * t)? };
                let (ci, ti) = (i32_of(c)?, i32_of(t)?);
                let k = kernel!(dev, "adain_cm")?;
                let mut b = k.builder();
                b.arg(&x)
                    .arg(&h)
                    .arg(&alpha)
                    .arg(&ci)
                    .arg(&ti)
                    .arg(&act)
                    .arg(&slope)
                    .arg(&eps);
                b.arg(&mut y);
                let cfg = LaunchConfig {
                    grid_dim: (u32_of(batch * c)?, 1, 1),
                    // The kernel's shared reduction is sized for exactly 256 threads.
                    block_dim: (256, 1, 1),
                    shared_mem_bytes: 0,
                };
                // SAFETY: one block per (b, c) row; each reads and writes its own T values.
                unsafe { b.launch(cfg) }.w()?;
                Ok((
                    CudaStorage::wrap_cuda_slice(y, dev.clone()),
                    Shape::from((batch, c, t)),
                ))
            }
        }
    }
}

/// `[B, T, C]` from `[T, C]` rows: item `b` is `x` rotated by `b` rows (so the items differ)
/// for its first `valid[b]` rows, then rows of 1e4: values no output may depend on, so a
/// kernel that read past an item's length would show it.
fn batch_of(x: &Tensor, valid: &[usize]) -> Result<Tensor> {
    let (t, c) = x.dims2()?;
    let items = valid
        .iter()
        .enumerate()
        .map(|(b, &v)| {
            let rolled = if b == 0 {
                x.clone()
            } else {
                Tensor::cat(&[x.narrow(0, b, t - b)?, x.narrow(0, 0, b)?], 0)?
            };
            let junk = (Tensor::ones((t - v, c), DType::F32, x.device())? * 1.0e4)?;
            Tensor::cat(&[rolled.narrow(0, 0, v)?, junk], 0)
        })
        .collect::<Result<Vec<_>>>()?;
    Tensor::stack(&items, 0)
}

/// The kernels through `AdaIN1d` on `device` against the same block on the CPU (whose fused
/// kernel is the reference), for each activation and both layouts.
pub(super) fn self_check(device: &Device) -> Result<Vec<KernelCheck>> {
    let (style_dim, c, t) = (128, 96, 2_999);
    let mut out = Vec::new();
    let weights = |dev: &Device| -> Result<(AdaIN1d, Snake, Tensor, Tensor, Tensor)> {
        let cpu = Device::Cpu;
        // Deterministic pseudo-random values (the same on both devices).
        let ramp = |n: usize, k: f64| -> Result<Tensor> {
            Tensor::arange(0u32, u32_of(n)?, &cpu)?
                .to_dtype(DType::F32)?
                .affine(k, 0.3)?
                .sin()
        };
        let mut map = std::collections::HashMap::new();
        map.insert(
            "fc.weight".to_string(),
            (ramp(2 * c * style_dim, 0.37)? * 0.05)?.reshape((2 * c, style_dim))?,
        );
        map.insert("fc.bias".to_string(), (ramp(2 * c, 1.3)? * 0.2)?);
        let vb = VarBuilder::from_tensors(map, DType::F32, dev);
        let norm = AdaIN1d::new(style_dim, c, vb)?;
        let alpha = (ramp(c, 0.7)?.abs()? + 0.2)?
            .reshape((1, c, 1))?
            .to_device(dev)?;
        let x_tm = ((ramp(t * c, 0.011)? * 3.0)? + 0.5)?
            .reshape((t, c))?
            .to_device(dev)?;
        let x_cm = ramp(2 * c * 321, 0.023)?
            .reshape((2, c, 321))?
            .to_device(dev)?;
        let s = ramp(2 * style_dim, 0.19)?
            .reshape((2, style_dim))?
            .to_device(dev)?;
        Ok((norm, Snake::new(alpha)?, x_tm, x_cm, s))
    };
    let (gn, gsnake, gx_tm, gx_cm, gs) = weights(device)?;
    let (cn, csnake, cx_tm, cx_cm, cs) = weights(&Device::Cpu)?;
    let acts = |snake: Snake| {
        [
            (
                [
                    "adain_tm/identity",
                    "adain_cm/identity",
                    "adain_btm/identity",
                ],
                Activation::Identity,
            ),
            (
                ["adain_tm/leaky", "adain_cm/leaky", "adain_btm/leaky"],
                Activation::LeakyRelu(0.2),
            ),
            (
                ["adain_tm/snake", "adain_cm/snake", "adain_btm/snake"],
                Activation::Snake(snake),
            ),
        ]
    };
    for (([tm, cm, btm], gact), (_, cact)) in acts(gsnake).into_iter().zip(acts(csnake)) {
        let got = gn.forward_act_tm(&gx_tm, &gs.narrow(0, 0, 1)?, &gact, (3, 2))?;
        let want = cn.forward_act_tm(&cx_tm, &cs.narrow(0, 0, 1)?, &cact, (3, 2))?;
        out.push(compare(tm, &got, &want)?);
        let got = gn.forward_act(&gx_cm, &gs, &gact)?;
        let want = cn.forward_act(&cx_cm, &cs, &cact)?;
        out.push(compare(cm, &got, &want)?);
        // A batch of three items of different lengths and styles (the last fills the rows),
        // against the CPU's per-item reference.
        let valid = [1_200, 7, t / 2];
        let (gb, cb) = (batch_of(&gx_tm, &valid)?, batch_of(&cx_tm, &valid)?);
        let styles = |s: &Tensor| Tensor::cat(&[s, &s.narrow(0, 0, 1)?], 0);
        let (gv, cv) = (
            ValidRows::upload(&valid, t, device)?,
            ValidRows::upload(&valid, t, &Device::Cpu)?,
        );
        let got = gn.forward_act_batch_tm(&gb, &styles(&gs)?, &gact, &gv, (3, 2))?;
        let want = cn.forward_act_batch_tm(&cb, &styles(&cs)?, &cact, &cv, (3, 2))?;
        out.push(compare(btm, &got, &want)?);
    }
    Ok(out)
}
