//! CUDA graphs of whole batched generator passes, one per (bucket, batch size), replayed over
//! fixed input buffers (issue 41; on only with `BANTER_CUDA_GRAPHS=1` until a GPU measures it).
//!
//! Why: a batched window pass (`generator::batch`) is some hundreds of kernel launches whatever
//! its batch size; on a GPU the host's launch cost, not the arithmetic, sets its time. A CUDA
//! graph records the launches once and replays them with one call. What makes that possible is
//! that [`Generator::run_batch`] reads nothing from the host but shapes: every length and mask
//! comes from the pass's one upload (`crate::rows`), so a replay over the same buffers
//! loaded with another batch's contents computes that batch.
//!
//! How, per shape (bucket, items):
//! - the first pass of a shape runs eagerly (shapes seen once are not worth a capture);
//! - the second runs eagerly too (the reference, and the warm-up capture needs: kernels
//!   compiled, library handles and caches set up), then again under stream capture over its own
//!   input buffers, which the graph keeps; the graph is replayed once and must give the eager
//!   audio (`generator::shapes::replay_agrees`) or the shape stays eager, with a warning;
//! - later passes copy their inputs into the kept buffers, replay, and read the output buffer
//!   (a graph allocation, at a fixed address for the graph's lifetime; freed and taken again at
//!   each launch, `CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH`) before the next replay,
//!   all under one lock.
//!
//! A capture that fails (an operation the driver will not capture) leaves that shape eager; the
//! audio is the eager pass's either way, so a graph can make a pass faster, never different.

// Stream capture and graph launches through cudarc, and `Send` for a graph kept under a lock.
#![allow(unsafe_code)]

use std::sync::{Mutex, OnceLock, PoisonError};

use candle_core::cuda_backend::cudarc::driver::{sys, CudaGraph};
use candle_core::cuda_backend::WrapErr;
use candle_core::{Device, Result, Tensor};

use super::batch::{cut, BatchInputs};
use super::shapes::{replay_agrees, Decision, ShapeCache};
use super::Generator;

/// Shapes kept at most (graphs and their buffers): beyond it, new shapes run eagerly.
const MAX_SHAPES: usize = 96;

/// True when `BANTER_CUDA_GRAPHS=1` asks for graphs.
#[must_use]
pub fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("BANTER_CUDA_GRAPHS").is_ok_and(|v| v.trim() == "1"))
}

/// The graphs of one generator, by shape (`generator::shapes`).
pub struct Graphs {
    shapes: Mutex<ShapeCache<Captured>>,
}

impl Default for Graphs {
    fn default() -> Self {
        Self {
            shapes: Mutex::new(ShapeCache::new(MAX_SHAPES)),
        }
    }
}

impl std::fmt::Debug for Graphs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shapes = self.shapes.lock().map_or(0, |s| s.len());
        write!(f, "Graphs {{ {shapes} shapes }}")
    }
}

struct Captured {
    graph: CudaGraph,
    /// The buffers the graph reads: loaded with each batch's contents before a replay.
    inputs: BatchInputs,
    /// The buffer the graph writes, `[B, N]`.
    out: Tensor,
}

// SAFETY: CUDA graph objects are not internally synchronised and must not be used from two
// threads at once. A `Captured` lives only inside `Graphs::shapes`, and every use of it (load,
// launch, read back, drop on replacement) happens with that mutex held, so moving it between
// threads never lets two use it together.
unsafe impl Send for Captured {}

impl Graphs {
    /// Every item's audio of the pass over `inputs` through a graph, when graphs are on and
    /// this shape has one (or gets one now); `None` where the caller should run it eagerly.
    pub fn run(&self, g: &Generator, inputs: &BatchInputs) -> Result<Option<Vec<Vec<f32>>>> {
        if !enabled() || !inputs.device().is_cuda() {
            return Ok(None);
        }
        let key = (inputs.bucket(), inputs.len());
        let mut shapes = self.shapes.lock().unwrap_or_else(PoisonError::into_inner);
        match shapes.decide(key) {
            Decision::Eager => Ok(None),
            Decision::Replay(c) => {
                c.inputs.load(inputs)?;
                if let Err(err) = c.graph.launch().w() {
                    tracing::warn!(%err, bucket = key.0, items = key.1, "CUDA graph replay failed; this shape runs eagerly");
                    shapes.failed(key);
                    return Ok(None);
                }
                cut(&c.out, &g.batch_samples(&c.inputs)?).map(Some)
            }
            Decision::Capture => {
                let (graph, audio) = capture(g, inputs.clone());
                shapes.captured(key, graph);
                audio.map(Some)
            }
        }
    }

    /// Shapes with a graph ready to replay.
    #[must_use]
    pub fn ready(&self) -> usize {
        self.shapes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .ready()
    }
}

/// The eager pass over `inputs` (its audio is what the caller gets), then a graph of it over
/// the same buffers, kept if its replay gives that audio.
fn capture(g: &Generator, inputs: BatchInputs) -> (Option<Captured>, Result<Vec<Vec<f32>>>) {
    let (bucket, items) = (inputs.bucket(), inputs.len());
    let device = inputs.device().clone();
    let eager = g
        .batch_samples(&inputs)
        .and_then(|samples| Ok((cut(&g.run_batch(&inputs)?, &samples)?, samples)));
    let (eager, samples) = match eager {
        Ok(e) => e,
        Err(e) => return (None, Err(e)),
    };
    let captured = match record(g, &inputs) {
        Ok((graph, out)) => match graph.launch().w().and_then(|()| cut(&out, &samples)) {
            Ok(replayed) => {
                let (agrees, worst) = replay_agrees(&eager, &replayed);
                if agrees {
                    tracing::debug!(bucket, items, worst_db = worst, "CUDA graph captured");
                    Some(Captured { graph, inputs, out })
                } else {
                    tracing::warn!(bucket, items, worst_db = worst, "a CUDA graph's replay differs from its eager pass; this shape runs eagerly");
                    None
                }
            }
            Err(err) => {
                tracing::warn!(%err, bucket, items, "CUDA graph's first replay failed; this shape runs eagerly");
                None
            }
        },
        Err(err) => {
            tracing::warn!(%err, bucket, items, "CUDA graph capture failed; this shape runs eagerly");
            None
        }
    };
    // A failed capture's frees are refused and recorded by cudarc for the next call to report:
    // cleared here, so no later, unrelated operation fails with them.
    if let Device::Cuda(cuda) = &device {
        if let Err(err) = cuda.cuda_stream().context().check_err() {
            tracing::debug!(%err, "CUDA: an error recorded during graph capture, cleared");
        }
    }
    (captured, Ok(eager))
}

/// [`Generator::run_batch`] over `inputs` recorded into a graph (not run): the graph and the
/// tensor its replays write.
fn record(g: &Generator, inputs: &BatchInputs) -> Result<(CudaGraph, Tensor)> {
    let Device::Cuda(cuda) = inputs.device() else {
        candle_core::bail!("CUDA graphs: inputs off the GPU");
    };
    let stream = cuda.cuda_stream();
    // Nothing of the eager pass may still be queued: capture records only what follows.
    stream.synchronize().w()?;
    stream
        .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        .w()?;
    let out = g.run_batch(inputs);
    // Always ended, even after a failed pass, so the stream leaves capture mode.
    let graph = stream
        .end_capture(sys::CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH)
        .w();
    let out = out?;
    let Some(graph) = graph? else {
        candle_core::bail!("CUDA graphs: the capture recorded nothing");
    };
    Ok((graph, out))
}
