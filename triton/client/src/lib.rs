//! Banter's client for Triton Inference Server: a remote engine's segments spoken by model
//! `banter` over `KServe` v2 gRPC.
//!
//! The engine asks one thing of a server ([`engine::remote::SegmentServer`]: speak a segment,
//! stream its chunks); [`TritonServer`] answers it with one `ModelStreamInfer` call per segment,
//! the segment's phonemes and voice table travelling as the tensors `triton_wire::protocol`
//! defines, so the backend and this client share one parser. The transport lives here, above
//! the engine, so the engine stays free of gRPC, HTTP/2 and an async runtime.
//!
//! - `endpoint`: `triton://host:port` lists as a user types them, checked before any network.
//! - `convert`: protocol tensors ↔ gRPC messages, without I/O (what the tests pin down).
//! - `server`: the channel, the one shared runtime, and the stream read into chunks.
//! - `proto`: the generated messages and client.

mod convert;
mod endpoint;
mod proto;
mod server;

pub use endpoint::Endpoint;
pub use server::TritonServer;

/// What went wrong before or outside a segment's own answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientError {
    /// An endpoint as the user typed it is not `triton://host:port`.
    #[error("{0}")]
    Endpoint(String),
    /// The server could not be reached or the call broke off; the text names the server.
    #[error("{0}")]
    Unavailable(String),
}
