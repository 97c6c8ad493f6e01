//! What the engine asks of a server it renders on: speak one segment, stream its chunks back.
//!
//! The engine knows no network: a transport (Triton over `KServe` v2 gRPC, in `triton/client`)
//! implements [`SegmentServer`] in a crate above it and hands it to
//! [`Engine::remote`](crate::Engine::remote). Everything else, which server gets which
//! segment, the order the listener hears, what happens when a server goes away, is the
//! engine's, and is tested here with servers made of functions.

use std::sync::Arc;

/// One segment to speak, with the voice already resolved on this machine (the library stays
/// local; its table travels), so a remote render is the same samples as a local one.
#[derive(Debug, Clone)]
pub struct RemoteJob {
    /// The segment's phonemes, as cut on this machine.
    pub phonemes: String,
    /// The voice table: 510 rows × 256 values, row-major.
    pub style: Arc<[f32]>,
    pub speed: f32,
    /// Decode whole and exact (renders) rather than in windows (listeners).
    pub whole: bool,
}

/// One streamed piece of a segment's 24 kHz audio.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteChunk {
    pub samples: Vec<f32>,
    /// On the segment's first chunk: frames per token, pads included (word timing).
    pub durations: Option<Vec<u32>>,
    /// True on the segment's last chunk.
    pub end: bool,
}

/// Why a server did not finish a segment.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RemoteError {
    /// The server cannot be reached or went away mid-segment: the segment goes to another
    /// server, and this one is left alone until it answers again.
    #[error("{0}")]
    Unavailable(String),
    /// The server answered and refused the segment (bad input, a model error): no other server
    /// would do better, so the stream fails with this message.
    #[error("{0}")]
    Refused(String),
}

/// A place that speaks segments: a Triton endpoint, or a test's function.
pub trait SegmentServer: Send + Sync {
    /// How the user knows this server (`triton://gpu-a:8001`).
    fn name(&self) -> &str;

    /// Speaks `job`, handing each chunk to `sink` as it arrives, in order, the last with
    /// `end` set; returns when the segment is complete. `sink` returns false when nobody
    /// wants the rest (the stream was cancelled): stop then and return `Ok`.
    fn speak(
        &self,
        job: &RemoteJob,
        sink: &mut dyn FnMut(RemoteChunk) -> bool,
    ) -> Result<(), RemoteError>;

    /// Whether the server is up and its model loaded (asked before a server that failed is
    /// given work again).
    fn ready(&self) -> bool;
}
