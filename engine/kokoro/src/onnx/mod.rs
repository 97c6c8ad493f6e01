//! Converts the Kokoro-82M v1.0 int8 ONNX export into one safetensors file of f32 weights
//! named by torch module path, which the candle model loads.
//!
//! Why: the only int8 release that can be fetched is the ONNX graph (92 MB), while the native
//! port wants the weights of the reference torch modules. The conversion runs once after the
//! download, in Rust, without Python or an ONNX runtime:
//!
//! 1. [`proto`] (the shared `onnx-proto` crate) reads the protobuf (nodes and initializers only; payloads are borrowed).
//! 2. `graph` indexes producers and consumers.
//! 3. `mapping` walks the weight-consuming nodes and names every weight by the
//!    module scope of its consumer; `recipe` plans how to undo each storage
//!    format (per-column int8 `MatMul`, per-tensor uint8 Conv, per-direction int8 LSTM with
//!    ONNX gate order, int8 embeddings, f32 transposed-conv and linear weights).
//! 4. The result is checked against the model's parameter list (`params`):
//!    457 tensors, 81,140,664 values, every shape as in torch.
//! 5. `write` streams the tensors to disk and renames the file into place.
//!
//! Weight-norm modules come out as the folded `<module>.weight` (the export folded g·v/‖v‖).
//! The mapping reproduces `tools/kokoro-ref/kokoro_map.py` bit for bit; the details and the
//! ONNX facts behind it are in `docs/kokoro-port.md` §2.

mod error;
mod graph;
mod mapping;
mod params;
/// The shared ONNX reader (crate `onnx-proto`), under the name the converter's modules use.
pub use onnx_proto::read as proto;
mod recipe;
mod scope;
mod write;

#[cfg(test)]
use onnx_proto::encode as testutil;

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

pub use error::ConvertError;

/// Format tag written into the safetensors metadata, bumped when the output changes.
pub const CONVERTER_VERSION: &str = "banter-onnx-kokoro/1";

/// What a conversion produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvertReport {
    /// Tensors written (457 for Kokoro-82M v1.0).
    pub tensors: usize,
    /// f32 values written (81,140,664 for Kokoro-82M v1.0).
    pub values: u64,
    /// Of `tensors`, how many were dequantised from int8/uint8.
    pub dequantized: usize,
    /// Size of the written file in bytes.
    pub file_bytes: u64,
    /// Nodes and initializers in the source graph.
    pub onnx_nodes: usize,
    pub onnx_initializers: usize,
    /// Wall time of the whole conversion, reading and writing included.
    pub elapsed: Duration,
}

/// Converts `onnx_path` (the Kokoro-82M v1.0 int8 ONNX) into an f32 safetensors file at
/// `out_path`, replacing it atomically. Fails without touching `out_path` if the graph is not
/// the expected model: every parameter must be found once, with its torch shape.
pub fn convert_kokoro(onnx_path: &Path, out_path: &Path) -> Result<ConvertReport, ConvertError> {
    let start = Instant::now();
    let bytes = fs_err::read(onnx_path).map_err(|source| ConvertError::Read {
        path: onnx_path.to_owned(),
        source,
    })?;
    let model = proto::parse_model(&bytes).map_err(|source| ConvertError::Parse {
        path: onnx_path.to_owned(),
        source,
    })?;
    let graph = graph::Graph::new(model.graph.ok_or(ConvertError::NoGraph)?)?;
    let expected = params::kokoro_v1_parameters();
    let mapping = mapping::map_kokoro(&graph, &expected)?;

    let source_name = onnx_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let metadata = HashMap::from([
        ("format".to_owned(), "pt".to_owned()),
        ("converter".to_owned(), CONVERTER_VERSION.to_owned()),
        ("source".to_owned(), source_name),
    ]);
    let file_bytes = write::write_safetensors(&mapping.tensors, metadata, out_path)?;

    let report = ConvertReport {
        tensors: mapping.tensors.len(),
        values: mapping.tensors.iter().map(|t| t.len() as u64).sum(),
        dequantized: mapping.tensors.iter().filter(|t| t.is_quantized()).count(),
        file_bytes,
        onnx_nodes: graph.nodes.len(),
        onnx_initializers: graph.initializer_count(),
        elapsed: start.elapsed(),
    };
    tracing::info!(
        tensors = report.tensors,
        values = report.values,
        seconds = report.elapsed.as_secs_f64(),
        out = %out_path.display(),
        "converted Kokoro ONNX weights"
    );
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_input_file_names_its_path() {
        let dir = tempfile::tempdir().expect("temp dir");
        let onnx = dir.path().join("nope.onnx");
        let err = convert_kokoro(&onnx, &dir.path().join("out.safetensors")).expect_err("no file");
        assert!(matches!(&err, ConvertError::Read { path, .. } if path == &onnx));
        let chain = format!(
            "{err}: {}",
            std::error::Error::source(&err)
                .map(ToString::to_string)
                .unwrap_or_default()
        );
        assert!(chain.contains("nope.onnx"), "{chain}");
    }

    #[test]
    fn garbage_input_is_a_parse_error_and_writes_nothing() {
        let dir = tempfile::tempdir().expect("temp dir");
        let onnx = dir.path().join("bad.onnx");
        fs_err::write(&onnx, [0x0a, 0xff, 0xff, 0x01]).expect("writes");
        let out = dir.path().join("out.safetensors");
        let err = convert_kokoro(&onnx, &out).expect_err("garbage");
        assert!(matches!(err, ConvertError::Parse { .. }), "{err}");
        assert!(!out.exists());
    }

    #[test]
    fn a_graph_that_is_not_kokoro_is_rejected_before_writing() {
        let dir = tempfile::tempdir().expect("temp dir");
        let onnx = dir.path().join("tiny.onnx");
        let bytes = testutil::model(
            &[testutil::node("/encoder/x/Relu", "Relu", &["a"], &["b"])],
            &[],
        );
        fs_err::write(&onnx, bytes).expect("writes");
        let out = dir.path().join("out.safetensors");
        let err = convert_kokoro(&onnx, &out).expect_err("not kokoro");
        assert!(
            matches!(&err, ConvertError::MissingParameters { missing } if missing.len() == 457),
            "{err}"
        );
        assert!(
            err.to_string()
                .starts_with("457 Kokoro-82M parameters were not found"),
            "{err}"
        );
        assert!(!out.exists());
    }
}
