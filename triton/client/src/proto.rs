//! The KServe v2 messages and gRPC client that `build.rs` generates from
//! `proto/kserve_v2.proto` (Banter's own subset of Triton's protocol). Generated code follows
//! prost's and tonic's style, not this workspace's lints, so they are relaxed here only.

#![allow(
    clippy::all,
    clippy::pedantic,
    clippy::unwrap_used,
    unreachable_pub,
    missing_docs
)]

tonic::include_proto!("inference");
