//! Text that is still being written: an LLM's reply arriving a few tokens at a time, a pipe.
//!
//! Speaking it well is a trade between waiting and cutting. Kokoro speaks a piece of text as a
//! whole (its prosody is planned over the piece), so every cut is audible; but waiting for a
//! whole reply, or a whole paragraph, is the latency a streaming client came to avoid.
//! [`Chunker`] decides where the text may be cut as it arrives: at the first clause boundary
//! for the first piece (the listener is waiting), at sentence ends (or long clauses) after, and
//! never inside a token, so `$29.99`, `e.g.`, `3:30` and `example.com/a.b` are never split
//! even when they arrive in pieces. A cut needs the whitespace after the punctuation; after a
//! full stop that may close an abbreviation (`Dr.`, `U.S.`) it waits for the next word too.
//!
//! Each piece becomes segments pushed into one open scheduler stream
//! ([`crate::Engine::open`]), so the audio and its timing run on across pieces.
//! [`char_times`] spreads a piece's word times over its characters, for clients that want
//! per-character alignment (ElevenLabs' protocol).

mod chars;
mod chunker;

pub use chars::{char_times, CharTime};
pub use chunker::{ChunkConfig, Chunker};
