//! State the views draw: each panel's or dialog's settings, kept in [`crate::Studio`], and the
//! rules that keep them consistent (Opus has no 44.1 kHz, a destination gets the format's
//! extension, a blend needs a weight above zero), beside the state, so a view file is left with
//! drawing and a test can check a rule without a window.

pub mod blend;
pub mod export;
