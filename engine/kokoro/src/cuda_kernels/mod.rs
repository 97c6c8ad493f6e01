//! Kokoro's own CUDA kernels, for the two places where candle's op-by-op execution is bound by
//! kernel launches rather than arithmetic (issue 41):
//!
//! - **`AdaIN` + activation** ([`adain_act_tm`], [`adain_act_btm`], [`adain_act_cm`]): composed
//!   from candle ops it is about 20 launches (statistics, normalise, affine, then Snake's five
//!   element-wise ops), each a pass over memory; here it is one kernel over channel-major rows,
//!   or three (zero, statistics, apply) over time-major data, whose rows are channels side by
//!   side. A batch of decoder windows of different lengths (`generator::batch`) takes the same
//!   three launches for all its items, each normalised over its own valid rows with its own
//!   style, where one launch sequence per item would undo what batching saves.
//! - **The bidirectional LSTM recurrence** ([`bilstm`]): with tensor ops each step of each
//!   direction is a dozen launches (the `shared` LSTM steps once per output frame, ~80 per second
//!   of audio); here the whole recurrence of a batch, both directions, is one launch.
//!
//! The source (`kernels.cu`) is compiled by NVRTC the first time a kernel runs in the process
//! (a few hundred milliseconds; the driver then JIT-compiles the PTX for the GPU at hand) and the
//! module is cached on the device. Each kernel has a CPU reference that the crate's unit tests
//! already hold to `PyTorch`'s semantics: `adain::fused` and `lstm`'s host recurrence;
//! [`self_check`] compares the two on random inputs and `banter bench parity --device cuda`
//! prints it first. `BANTER_CUDA_KERNELS=candle` turns these kernels off (candle ops instead), for
//! an A/B measurement or as a way out should one misbehave on some GPU.

mod adain;
mod builtins;
mod lstm;

pub use adain::{adain_act_btm, adain_act_cm, adain_act_tm, GpuAct};
pub use lstm::{bilstm, MAX_HIDDEN};

use std::sync::OnceLock;

use candle_core::cuda_backend::cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};
use candle_core::{Device, Result, Tensor};

const SOURCE: &str = include_str!("kernels.cu");
const MODULE: &str = "banter_kokoro_kernels";

/// True unless `BANTER_CUDA_KERNELS=candle` asked for candle's own ops.
#[must_use]
pub fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("BANTER_CUDA_KERNELS").map_or(true, |v| v != "candle"))
}

/// True when `t` is on a CUDA device, the kernels are on and they compiled. Should NVRTC
/// refuse them (an unusual driver or NVRTC), the model runs on candle's ops instead, slower but
/// the same, and says so once.
#[must_use]
pub fn applies(t: &Tensor) -> bool {
    t.device().is_cuda() && t.dtype() == candle_core::DType::F32 && enabled() && compiled()
}

/// Whether `kernels.cu` compiled; the first failure is logged as a warning.
fn compiled() -> bool {
    static WARNED: OnceLock<()> = OnceLock::new();
    match ptx() {
        Ok(_) => true,
        Err(e) => {
            WARNED.get_or_init(|| {
                tracing::warn!(error = %e, "Banter's CUDA kernels did not compile; using candle's ops (slower)");
            });
            false
        }
    }
}

/// The PTX of `kernels.cu`, compiled once per process.
fn ptx() -> Result<&'static str> {
    static PTX: OnceLock<std::result::Result<String, String>> = OnceLock::new();
    let compiled = PTX.get_or_init(|| {
        if let Some(path) = builtins::preload() {
            tracing::debug!(path = %path.display(), "NVRTC's builtins loaded from beside libnvrtc");
        }
        let opts = CompileOptions {
            // Any GPU of compute capability 8.0 or later JIT-compiles it (double atomicAdd
            // needs 6.0); the H100/H200 are 9.0.
            arch: Some("compute_80"),
            ..CompileOptions::default()
        };
        compile_ptx_with_opts(SOURCE, opts)
            .map(|ptx| ptx.to_src())
            .map_err(|e| format!("{e:?}"))
    });
    match compiled {
        Ok(src) => Ok(src.as_str()),
        Err(e) => candle_core::bail!("compiling Kokoro's CUDA kernels with NVRTC: {e}"),
    }
}

/// Loads kernel `name` (compiling the module on first use) into `$dev`'s module cache.
/// A macro because candle does not export the function type it returns.
macro_rules! kernel {
    ($dev:expr, $name:literal) => {
        $dev.get_or_load_custom_func($name, super::MODULE, super::ptx()?)
    };
}
use kernel;

/// One kernel against its CPU reference on random inputs: the largest absolute difference and
/// the largest absolute value of the reference.
#[derive(Debug, Clone)]
pub struct KernelCheck {
    pub name: &'static str,
    pub max_abs_diff: f32,
    pub max_abs_ref: f32,
}

/// Every kernel on `device` (a CUDA device) against its CPU reference.
pub fn self_check(device: &Device) -> Result<Vec<KernelCheck>> {
    let mut checks = adain::self_check(device)?;
    checks.extend(lstm::self_check(device)?);
    Ok(checks)
}

/// The contiguous f32 data of a kernel's input (`what` names it in the error).
fn data<'a>(
    s: &'a candle_core::CudaStorage,
    l: &candle_core::Layout,
    what: &str,
) -> Result<candle_core::cuda_backend::cudarc::driver::CudaView<'a, f32>> {
    let Some((start, end)) = l.contiguous_offsets() else {
        candle_core::bail!("{what} is not contiguous");
    };
    Ok(s.as_cuda_slice::<f32>()?.slice(start..end))
}

/// Largest absolute value and largest absolute difference of two same-shaped tensors.
fn compare(name: &'static str, got: &Tensor, want: &Tensor) -> Result<KernelCheck> {
    let got = got
        .to_device(&Device::Cpu)?
        .flatten_all()?
        .to_vec1::<f32>()?;
    let want = want
        .to_device(&Device::Cpu)?
        .flatten_all()?
        .to_vec1::<f32>()?;
    if got.len() != want.len() {
        candle_core::bail!("{name}: {} values against {}", got.len(), want.len());
    }
    let mut check = KernelCheck {
        name,
        max_abs_diff: 0.0,
        max_abs_ref: 0.0,
    };
    for (g, w) in got.iter().zip(&want) {
        let d = if g.is_finite() {
            (g - w).abs()
        } else {
            f32::INFINITY
        };
        check.max_abs_diff = check.max_abs_diff.max(d);
        check.max_abs_ref = check.max_abs_ref.max(w.abs());
    }
    Ok(check)
}

#[cfg(test)]
mod tests {
    /// Every kernel the crate launches (`kernel!(dev, "name")` in these modules).
    fn launched() -> Vec<&'static str> {
        [include_str!("adain.rs"), include_str!("lstm.rs")]
            .iter()
            .flat_map(|src| src.split("kernel!(dev, \"").skip(1))
            .filter_map(|rest| rest.split('"').next())
            .collect()
    }

    /// `kernels.cu` compiles with NVRTC for compute capability 8.0, and its PTX has an entry
    /// for every kernel the Rust side launches by name. Needs NVRTC, not a GPU:
    /// `scripts/check-cuda-kernels.sh` runs it on a machine without one.
    #[test]
    fn kernels_compile_and_export_every_launched_name() {
        let ptx = super::ptx().expect("NVRTC compiles kernels.cu");
        let names = launched();
        // The scan found them all: every kernel `kernels.cu` defines is launched.
        let defined = super::SOURCE.matches("__global__ void ").count();
        let mut distinct = names.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), defined, "found {names:?}");
        for name in names {
            assert!(
                ptx.contains(&format!(".entry {name}(")),
                "kernel {name} is launched but not in the PTX"
            );
        }
    }
}
