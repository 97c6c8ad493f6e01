//! Loading the model for bfloat16 products with the packed-weights cache
//! ([`crate::cpu_kernels::cache`]): read the panels a previous start packed, or pack them and
//! keep them for the next start.
//!
//! Any trouble with the cache (a damaged file, a read-only directory, a layer that does not
//! take its panels) costs only the cache: it is reported, the file deleted, and the model
//! loaded and packed from the checkpoint as if there were none.

use std::path::Path;

use candle_core::Device;

use super::Kokoro;
use crate::cpu_kernels::CpuKernel;
use crate::ModelError;

/// What the packed-weights cache did for a load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PackedCache {
    /// The panels of this many layers came from the cache.
    Read(usize),
    /// The cache was (re)built with this many layers' panels.
    Written(usize),
    /// Not used: no cache directory, not on this CPU or device, or it could not be written
    /// (the reason is logged).
    Unused,
}

impl Kokoro {
    /// Loads the checkpoint at `path` onto `device` and switches its products to bfloat16
    /// with `kernel` ([`Self::use_bf16`]), taking the packed panels from the cache in
    /// `cache_dir` when it has them for this checkpoint, kernel and CPU, and writing them
    /// there when it does not. The model is the same either way, to the bit.
    ///
    /// # Errors
    ///
    /// As [`Self::load`] and [`Self::use_bf16`]; a cache that cannot be used is not an error.
    pub fn load_bf16(
        path: &Path,
        device: &Device,
        kernel: CpuKernel,
        cache_dir: Option<&Path>,
    ) -> Result<(Self, PackedCache), ModelError> {
        #[cfg(target_arch = "x86_64")]
        if let Some(dir) =
            cache_dir.filter(|_| device.is_cpu() && crate::cpu_kernels::bf16::supported())
        {
            return cached(path, device, kernel, dir);
        }
        let _ = cache_dir;
        Ok((packed_afresh(path, device, kernel)?, PackedCache::Unused))
    }
}

/// The model loaded from the checkpoint and packed there and then: no cache involved.
fn packed_afresh(path: &Path, device: &Device, kernel: CpuKernel) -> Result<Kokoro, ModelError> {
    let mut model = Kokoro::load(path, device)?;
    model.use_bf16(kernel)?;
    Ok(model)
}

#[cfg(target_arch = "x86_64")]
fn cached(
    path: &Path,
    device: &Device,
    kernel: CpuKernel,
    dir: &Path,
) -> Result<(Kokoro, PackedCache), ModelError> {
    use crate::cpu_kernels::cache;

    let fingerprint = match cache::fingerprint(path, kernel) {
        Ok(f) => f,
        Err(e) => {
            tracing::warn!(
                path = %path.display(), error = %e,
                "packed-weights cache off: cannot fingerprint the checkpoint"
            );
            return Ok((packed_afresh(path, device, kernel)?, PackedCache::Unused));
        }
    };
    let file = dir.join(cache::file_name(kernel, &fingerprint));
    match cache::read(&file, &fingerprint) {
        Ok(packed) => {
            let layers = packed.len();
            match from_cache(path, device, kernel, packed) {
                Ok(model) => return Ok((model, PackedCache::Read(layers))),
                Err(e) => tracing::warn!(
                    file = %file.display(), error = %e,
                    "packed-weights cache does not fit the model; deleting it and packing afresh"
                ),
            }
            let _ = std::fs::remove_file(&file);
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            tracing::warn!(
                file = %file.display(), error = %e,
                "packed-weights cache unreadable; deleting it and packing afresh"
            );
            let _ = std::fs::remove_file(&file);
        }
    }
    let (model, packed) = cache::recording(|| packed_afresh(path, device, kernel));
    let model = model?;
    if packed.is_empty() {
        return Ok((model, PackedCache::Unused));
    }
    match cache::write(dir, kernel, &fingerprint, &packed) {
        Ok(written) => {
            tracing::debug!(
                file = %written.display(), layers = packed.len(),
                "packed-weights cache written"
            );
            Ok((model, PackedCache::Written(packed.len())))
        }
        Err(e) => {
            tracing::warn!(
                dir = %dir.display(), error = %e,
                "packed-weights cache not written; the next start packs again"
            );
            Ok((model, PackedCache::Unused))
        }
    }
}

/// The model with the panels in `packed` taken from the cache: their f32 tensors are never
/// read. Fails if any cached layer goes unclaimed (a placeholder must never reach a product).
#[cfg(target_arch = "x86_64")]
fn from_cache(
    path: &Path,
    device: &Device,
    kernel: CpuKernel,
    packed: std::collections::HashMap<String, std::sync::Arc<crate::cpu_kernels::Bf16Weights>>,
) -> Result<Kokoro, ModelError> {
    use crate::config::KokoroConfig;
    use crate::cpu_kernels::cache;

    let names: Vec<String> = packed.keys().cloned().collect();
    let vb = crate::weights::var_builder_with_placeholders(path, device, names)?;
    let mut model = Kokoro::new(&KokoroConfig::default(), vb)?;
    let (switched, unused) = cache::reading(packed, || model.use_bf16(kernel));
    switched?;
    if !unused.is_empty() {
        return Err(ModelError::Tensor(candle_core::Error::Msg(format!(
            "no layer took the cached panels of {}",
            unused.join(", ")
        ))));
    }
    Ok(model)
}
