//! The bidirectional LSTM recurrence of a whole batch in one CUDA launch. The CPU reference is
//! `crate::lstm`'s host recurrence (`BiLstm::forward`/`forward_batch` on the CPU).

// Kernel launches through cudarc are unsafe calls; each carries its SAFETY comment.
#![allow(unsafe_code)]

use candle_core::cuda_backend::cudarc::driver::{LaunchConfig, PushKernelArg};
use candle_core::cuda_backend::WrapErr;
use candle_core::{
    CpuStorage, CudaStorage, CustomOp3, DType, Device, Layout, Result, Shape, Tensor,
};
use candle_nn::VarBuilder;

use super::{compare, data, kernel, KernelCheck};
use crate::lstm::BiLstm;

/// Largest hidden size the kernel takes: one thread per gate row, `4H` ≤ 1024 per block.
pub const MAX_HIDDEN: usize = 256;

struct BiLstmOp {
    lengths: Vec<i32>,
    hidden: usize,
}

/// `proj` `[B, T, 8H]` (`x·W_ihᵀ + b`, forward gates first), `W_hhᵀ` `[H, 4H]` of each
/// direction, item `b` valid for `lengths[b]` rows → `[B, T, 2H]`, padding rows zero.
pub fn bilstm(proj: &Tensor, w_fwd: &Tensor, w_rev: &Tensor, lengths: &[usize]) -> Result<Tensor> {
    let hidden = w_fwd.dim(0)?;
    if hidden > MAX_HIDDEN || hidden == 0 {
        candle_core::bail!("bilstm kernel: hidden {hidden} (at most {MAX_HIDDEN})");
    }
    let lengths = lengths
        .iter()
        .map(|&l| i32::try_from(l).map_err(|_| candle_core::Error::Msg(format!("length {l}"))))
        .collect::<Result<Vec<_>>>()?;
    let op = BiLstmOp { lengths, hidden };
    proj.contiguous()?
        .apply_op3_no_bwd(&w_fwd.contiguous()?, &w_rev.contiguous()?, &op)
}

impl CustomOp3 for BiLstmOp {
    fn name(&self) -> &'static str {
        "kokoro-bilstm"
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
        candle_core::bail!("kokoro-bilstm is a CUDA kernel; the CPU has lstm's host recurrence")
    }

    fn cuda_fwd(
        &self,
        ps: &CudaStorage,
        pl: &Layout,
        fs: &CudaStorage,
        fl: &Layout,
        rs: &CudaStorage,
        rl: &Layout,
    ) -> Result<(CudaStorage, Shape)> {
        let dev = &ps.device;
        let h = self.hidden;
        let (batch, steps, width) = pl.shape().dims3()?;
        if width != 8 * h
            || fl.shape().dims() != [h, 4 * h]
            || rl.shape().dims() != [h, 4 * h]
            || self.lengths.len() != batch
            || self.lengths.iter().any(|&l| l < 0 || l as usize > steps)
        {
            candle_core::bail!(
                "bilstm kernel: proj {:?}, W_hh {:?}/{:?}, lengths {:?}",
                pl.shape(),
                fl.shape(),
                rl.shape(),
                self.lengths
            );
        }
        let proj = data(ps, pl, "the bilstm kernel's projection")?;
        let w_fwd = data(fs, fl, "the bilstm kernel's forward weights")?;
        let w_rev = data(rs, rl, "the bilstm kernel's reverse weights")?;
        let lengths = dev.clone_htod(&self.lengths)?;
        // SAFETY: every element is written: valid rows by the recurrence, the rest zeroed.
        let mut out = unsafe { dev.alloc::<f32>(batch * steps * 2 * h)? };
        let (ti, hi) = (steps as i32, h as i32);
        let k = kernel!(dev, "bilstm")?;
        let mut b = k.builder();
        b.arg(&proj)
            .arg(&w_fwd)
            .arg(&w_rev)
            .arg(&lengths)
            .arg(&ti)
            .arg(&hi)
            .arg(&mut out);
        let cfg = LaunchConfig {
            grid_dim: (2, batch as u32, 1),
            block_dim: (4 * h as u32, 1, 1),
            shared_mem_bytes: (5 * h * std::mem::size_of::<f32>()) as u32,
        };
        // SAFETY: the arguments match `bilstm`'s signature; shapes were checked above, and the
        // kernel indexes proj below B·T·8H, W below H·4H and out below B·T·2H.
        unsafe { b.launch(cfg) }.w()?;
        Ok((
            CudaStorage::wrap_cuda_slice(out, dev.clone()),
            Shape::from((batch, steps, 2 * h)),
        ))
    }
}

/// `BiLstm` on `device` (this kernel) against the same weights on the CPU (the host
/// recurrence), one sequence and a batch of three lengths.
pub(super) fn self_check(device: &Device) -> Result<Vec<KernelCheck>> {
    let (in_dim, hidden, steps) = (96, 256, 201);
    let build = |dev: &Device| -> Result<(BiLstm, Tensor)> {
        let cpu = Device::Cpu;
        let ramp = |n: usize, k: f64, scale: f64| -> Result<Tensor> {
            Tensor::arange(0u32, n as u32, &cpu)?
                .to_dtype(DType::F32)?
                .affine(k, 0.1)?
                .sin()?
                .affine(scale, 0.0)
        };
        let g = 4 * hidden;
        let mut map = std::collections::HashMap::new();
        for (i, suffix) in ["", "_reverse"].into_iter().enumerate() {
            let k = 0.31 + i as f64 * 0.17;
            map.insert(
                format!("weight_ih_l0{suffix}"),
                ramp(g * in_dim, k, 0.1)?.reshape((g, in_dim))?,
            );
            map.insert(
                format!("weight_hh_l0{suffix}"),
                ramp(g * hidden, k * 1.7, 0.08)?.reshape((g, hidden))?,
            );
            map.insert(format!("bias_ih_l0{suffix}"), ramp(g, k * 2.3, 0.2)?);
            map.insert(format!("bias_hh_l0{suffix}"), ramp(g, k * 2.9, 0.2)?);
        }
        let lstm = BiLstm::new(
            in_dim,
            hidden,
            VarBuilder::from_tensors(map, DType::F32, dev),
        )?;
        let xs = ramp(3 * steps * in_dim, 0.013, 1.5)?
            .reshape((3, steps, in_dim))?
            .to_device(dev)?;
        Ok((lstm, xs))
    };
    let (gl, gx) = build(device)?;
    let (cl, cx) = build(&Device::Cpu)?;
    let one = compare(
        "bilstm/one",
        &gl.forward(&gx.get(0)?)?,
        &cl.forward(&cx.get(0)?)?,
    )?;
    let lengths = [steps, 117, 3];
    let batch = compare(
        "bilstm/batch",
        &gl.forward_batch(&gx, &lengths)?,
        &cl.forward_batch(&cx, &lengths)?,
    )?;
    Ok(vec![one, batch])
}
