//! End-to-end tests of `banter` against the real, fetched model.
mod phonemes;
