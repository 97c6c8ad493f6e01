//! The studio window. It is built in a later issue; for now the crate exists so that the
//! one-way layering (`ui` knows nothing of candle, axum or `SQLite`) is checked from day one.
