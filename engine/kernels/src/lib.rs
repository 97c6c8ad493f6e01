//! The CPU kernel layer the model crates share: products of time-major activations with
//! weights packed once ([`cpu_kernels`]: AVX-512 bf16, f32 FMA, int8 VNNI and AMX, chosen per
//! layer), output buffers filled in parallel ([`fill`]), host-side axis permutations
//! ([`permute`]) and in-place reads of f32 tensors ([`host`]).
//!
//! Why a crate of its own: Kokoro's generator and VITS's (Piper's HiFi-GAN) spend most of
//! their time in the same kind of convolution products, and candle's CPU `conv1d` is far
//! slower than these kernels at those sizes. One copy serves both; it depends on nothing of
//! Banter's, so the model crates stay at the bottom of the layering.

#![warn(unreachable_pub)]

pub mod cpu_kernels;
pub mod fill;
pub mod host;
pub mod permute;
