//! Tests of the library, one file per concern; all use temporary directories.

mod support;

mod cache;
mod concurrency;
mod corrupt;
mod crash;
mod crud;
mod migrate;
mod tunings;
