//! Rendering on other machines: the engine handle backed by servers instead of the local model
//! thread ([`Engine::remote`](crate::Engine::remote)).
//!
//! Voices and segments are resolved here, on the caller's machine, exactly as for a local
//! render; each segment then travels with its voice table to a [`SegmentServer`]. The
//! dispatcher spreads a stream's segments over every server that is up, hands the listener
//! the audio in order, and moves the segments of a server that goes away to the others,
//! telling the user which server failed.

mod server;

pub use server::{RemoteChunk, RemoteError, RemoteJob, SegmentServer};
