//! Reading ONNX model files, shared by every model family whose weights arrive as ONNX
//! (Kokoro's int8 export, a user's Piper voices).
//!
//! Why a crate of its own: the files are downloaded or brought by the user, so the one reader
//! that parses them is bounds-checked, fuzzed (`fuzz/`, target `onnx_model`) and never
//! duplicated per family. Each family keeps its own mapping from graph to weights; this crate
//! knows only the protobuf wire format and the part of the ONNX schema those mappings read.

pub mod encode;
pub mod read;

pub use read::{
    parse_model, AttributeProto, GraphProto, ModelProto, NodeProto, OpsetId, ProtoError,
    TensorProto,
};
