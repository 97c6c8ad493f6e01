//! What a CUDA device's memory pools hold: the check that a steady state allocates nothing.
//!
//! Why: candle allocates every tensor stream-ordered from the device's default pool, and graph
//! replays (`generator::graphs`) take theirs from the device's graph pool. Once the engine has
//! seen every shape it decodes, neither should need more memory from the driver: the pool
//! keeps what it has (its release threshold is raised where the device opens) and a replay
//! reuses its graph's memory. Reading both pools' reserved bytes before and after a repeated
//! run (`banter bench parity --batch N`) shows whether that holds; a growth is memory the
//! steady state still asks the driver for.

// Driver queries (`cuda` feature only), each with its SAFETY comment.
#![cfg_attr(feature = "cuda", allow(unsafe_code))]

#[cfg(feature = "cuda")]
use candle_core::cuda_backend::cudarc::driver::sys;
use candle_core::Device;

/// Bytes the device's memory pools hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolUse {
    /// The default pool (every tensor): reserved from the driver, and in use now.
    pub reserved: u64,
    pub used: u64,
    /// The graph pool (graph replays' own allocations): reserved from the driver.
    pub graph_reserved: u64,
}

/// What `device`'s pools hold now; `None` off CUDA (and without the `cuda` feature) or where
/// the driver will not say.
#[must_use]
#[cfg(not(feature = "cuda"))]
pub fn pool_use(_device: &Device) -> Option<PoolUse> {
    None
}

/// What `device`'s pools hold now; `None` off CUDA or where the driver will not say.
#[must_use]
#[cfg(feature = "cuda")]
pub fn pool_use(device: &Device) -> Option<PoolUse> {
    let Device::Cuda(cuda) = device else {
        return None;
    };
    let stream = cuda.cuda_stream();
    let ctx = stream.context();
    ctx.bind_to_thread().ok()?;
    let dev = ctx.cu_device();
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: `pool` is a valid out-pointer; `dev` comes from the live, bound context.
    let got = unsafe { sys::cuDeviceGetDefaultMemPool(&raw mut pool, dev) };
    if got != sys::CUresult::CUDA_SUCCESS {
        return None;
    }
    let pool_attr = |attr: sys::CUmemPool_attribute| -> Option<u64> {
        let mut v: u64 = 0;
        // SAFETY: the reserved and used attributes are u64s, which `v` is; `pool` was just
        // returned by the driver.
        let got = unsafe { sys::cuMemPoolGetAttribute(pool, attr, (&raw mut v).cast()) };
        (got == sys::CUresult::CUDA_SUCCESS).then_some(v)
    };
    let mut graph_reserved: u64 = 0;
    // SAFETY: the graph memory attributes are u64s, which `graph_reserved` is; `dev` as above.
    let got = unsafe {
        sys::cuDeviceGetGraphMemAttribute(
            dev,
            sys::CUgraphMem_attribute::CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT,
            (&raw mut graph_reserved).cast(),
        )
    };
    Some(PoolUse {
        reserved: pool_attr(sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?,
        used: pool_attr(sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)?,
        graph_reserved: if got == sys::CUresult::CUDA_SUCCESS {
            graph_reserved
        } else {
            0
        },
    })
}
