//! Banter on Triton Inference Server, the part both ends share.
//!
//! Why a crate of its own: the Triton backend (`triton/backend`, inside `tritonserver`)
//! and the remote engine (`triton/client` behind `engine::remote`, inside `banter`) must agree on every tensor's name,
//! type and shape. [`protocol`] is that agreement, written once and used by both: the backend
//! parses a request with [`protocol::Request::from_tensors`] and the client builds it with
//! [`protocol::Request::to_tensors`], so the two cannot drift. It knows nothing of the model;
//! the engine depends on it, not the other way round.

pub mod protocol;
