//! Why a Piper voice could not be read or run, naming the file, field or weight.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum VitsError {
    #[error("{path}: cannot read: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not a Piper voice config: {reason}")]
    Config { path: PathBuf, reason: String },
    #[error("{path}: not an ONNX model: {source}")]
    Onnx {
        path: PathBuf,
        source: onnx_proto::ProtoError,
    },
    #[error("{path}: not a Piper VITS model: {reason}")]
    NotVits { path: PathBuf, reason: String },
    #[error("{path}: the .onnx.json does not match the model: {reason}")]
    Mismatch { path: PathBuf, reason: String },
    #[error("weight {name}: {reason}")]
    Weight { name: String, reason: String },
    #[error("input: {0}")]
    Input(String),
    #[error(transparent)]
    Candle(#[from] candle_core::Error),
}
