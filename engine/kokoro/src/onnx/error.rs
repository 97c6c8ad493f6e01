//! Errors of the ONNX → safetensors weight conversion, each naming the initializer, node,
//! parameter or file at fault, so a bad download or an unexpected export can be diagnosed
//! from the message alone.

use std::fmt::Write as _;
use std::path::PathBuf;

use super::proto::ProtoError;

/// Why [`convert_kokoro`](super::convert_kokoro) failed.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    #[error("cannot read ONNX model {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not a valid ONNX protobuf")]
    Parse {
        path: PathBuf,
        #[source]
        source: ProtoError,
    },
    #[error("the ONNX model has no graph")]
    NoGraph,
    #[error("initializer {name:?} appears twice in the graph")]
    DuplicateInitializer { name: String },
    #[error("value {value:?} is produced by two nodes, {first:?} and {second:?}")]
    DuplicateProducer {
        value: String,
        first: String,
        second: String,
    },
    #[error("node {node:?} ({op_type}) has no input {index}")]
    MissingInput {
        node: String,
        op_type: String,
        index: usize,
    },
    #[error("node {node:?} needs initializer {name:?}, which is not in the graph")]
    MissingInitializer { node: String, name: String },
    #[error("node {node:?} consumes {value:?} through {consumer:?}, expected {expected}")]
    UnexpectedConsumer {
        node: String,
        value: String,
        consumer: String,
        expected: &'static str,
    },
    #[error("initializer {name:?} keeps its data in an external file; only self-contained models are supported")]
    ExternalData { name: String },
    #[error(
        "initializer {name:?} (used by {node:?}) has ONNX data type {found}, expected {expected}"
    )]
    DataType {
        name: String,
        node: String,
        expected: &'static str,
        found: i32,
    },
    #[error("initializer {name:?} has invalid dims {dims:?}")]
    BadDims { name: String, dims: Vec<i64> },
    #[error(
        "initializer {name:?} with dims {dims:?} needs {expected} stored elements, has {found}"
    )]
    DataLength {
        name: String,
        dims: Vec<usize>,
        expected: usize,
        found: usize,
    },
    #[error("initializer {name:?} (used by {node:?}) has shape {found:?}, expected {expected}")]
    Shape {
        name: String,
        node: String,
        expected: String,
        found: Vec<usize>,
    },
    #[error("node name {node:?} has no module scope to name its weights by")]
    NoScope { node: String },
    #[error("parameter {param} would come from {first:?} and also from {second:?}")]
    Conflict {
        param: String,
        first: Vec<String>,
        second: Vec<String>,
    },
    #[error("node {node:?} maps to parameter {param}, which Kokoro-82M does not have")]
    UnknownParameter { param: String, node: String },
    #[error("parameter {param} has shape {found:?}, Kokoro-82M expects {expected:?}")]
    ParameterShape {
        param: String,
        expected: Vec<usize>,
        found: Vec<usize>,
    },
    #[error("{} Kokoro-82M parameters were not found in the graph: {}", .missing.len(), preview(.missing))]
    MissingParameters { missing: Vec<String> },
    #[error("cannot write safetensors file {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: safetensors::SafeTensorError,
    },
    #[error("cannot finish writing {path}")]
    Finish {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The first few names of a long list, for an error message.
fn preview(names: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut s = names
        .iter()
        .take(SHOWN)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        let _ = write!(s, ", … ({} more)", names.len() - SHOWN);
    }
    s
}
