//! Reading an f32 CPU tensor's values in place, without a copy.
//!
//! Every kernel here works on host slices; candle hands its storage out only through a
//! guard, so this is the one place that unwraps it (and says no for anything else: another
//! dtype, a GPU tensor, a strided view).

use candle_core::{CpuStorage, DType, Storage, Tensor};

/// `f` of the values of a contiguous f32 CPU tensor, read in place; `None` for any other.
pub fn with_host<R>(t: &Tensor, f: impl FnOnce(&[f32]) -> R) -> Option<R> {
    if !t.is_contiguous() || t.dtype() != DType::F32 || !t.device().is_cpu() {
        return None;
    }
    let (storage, layout) = t.storage_and_layout();
    let Storage::Cpu(CpuStorage::F32(v)) = &*storage else {
        return None;
    };
    let start = layout.start_offset();
    v.get(start..start + t.elem_count()).map(f)
}
