//! End-to-end tests: the `banter` binary as a user runs it, and the Kokoro port against the
//! reference goldens. One test binary (as uv and ripgrep do); `support` holds the shared fixtures.

mod support;

mod api;
mod assets;
mod cli;
mod convert;
mod phonemes;
mod piper;
mod piper_match;
mod render;
mod sound;
mod speaker;
mod stages_decoder;
mod stages_encoder;
mod streaming;
mod studio;
mod triton;
mod voicelib;
mod voicetune;
