//! Settings of a freshly opened CUDA device that only pay because Banter drives it from one
//! stream (see `open_cuda`): candle's defaults are made for several.
//!
//! - **Event tracking off.** In cudarc's multi-stream mode (which `new_cuda_with_stream` enters)
//!   every allocation creates two CUDA events and every launch records and waits on events for
//!   each of its arguments: several driver calls per op, in a model whose cost on a GPU is
//!   already launches (issue 41). With one stream, stream order alone orders every kernel, copy
//!   and library call, which is exactly what the events would enforce.
//! - **The memory pool keeps what it has.** cudarc allocates stream-ordered from the device's
//!   default pool, whose release threshold is 0: at every synchronisation (each audio window
//!   copied back) the pool hands its memory back to the driver, and the next window allocates it
//!   again. A threshold of "everything" keeps it; the pool is still shared with nothing else.
//! - **TF32 products when asked** (`BANTER_PRECISION=tf32`): cuBLAS's f32 GEMMs on tensor
//!   cores. A process-wide switch of candle's, so it is set here, where the device opens.

// Two driver calls and candle's own unsafe switch, each with its SAFETY comment.
#![allow(unsafe_code)]

use candle_core::cuda_backend::cudarc::driver::sys;
use candle_core::Device;

/// Applies both settings to `device` (no-op off CUDA); a failure is logged, never fatal: the
/// device works either way, only slower.
pub(super) fn tune(device: &Device) {
    let Device::Cuda(cuda) = device else {
        return;
    };
    // SAFETY: called right after the device was opened, before any tensor exists on it, and
    // every operation of this device goes to its one stream (`open_cuda`), so no slice can be
    // used on another stream before its allocation or freed before a use finishes.
    unsafe { cuda.disable_event_tracking() };
    if crate::Precision::from_env().cuda_tf32() {
        candle_core::cuda_backend::set_gemm_reduced_precision_f32(true);
        tracing::info!("CUDA: f32 products on TF32 tensor cores (BANTER_PRECISION=tf32)");
    }
    let stream = cuda.cuda_stream();
    let ctx = stream.context();
    if let Err(err) = ctx.bind_to_thread() {
        tracing::debug!(
            ?err,
            "CUDA: could not bind the context to set the memory pool"
        );
        return;
    }
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: `pool` is a valid out-pointer; the device handle comes from the live context.
    let got = unsafe { sys::cuDeviceGetDefaultMemPool(&raw mut pool, ctx.cu_device()) };
    if got != sys::CUresult::CUDA_SUCCESS {
        tracing::debug!(?got, "CUDA: no default memory pool");
        return;
    }
    let mut threshold = u64::MAX;
    // SAFETY: the release threshold attribute takes a pointer to a u64, which `threshold` is,
    // and `pool` was just returned by the driver.
    let set = unsafe {
        sys::cuMemPoolSetAttribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            (&raw mut threshold).cast(),
        )
    };
    if set != sys::CUresult::CUDA_SUCCESS {
        tracing::debug!(
            ?set,
            "CUDA: the memory pool's release threshold was not raised"
        );
    }
}
