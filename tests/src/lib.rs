//! Shared fixtures for Banter's end-to-end tests live in `tests/tests/e2e/`.
