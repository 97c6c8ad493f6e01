//! The ONNX → safetensors weight conversion on the real model.
//!
//! Converts the fetched `kokoro-v1.0.int8.onnx` into a temporary directory and checks
//! every tensor against `tests/fixtures/goldens/weights_fingerprint.json`, a fingerprint of
//! the Python reference mapping (`tools/goldens/weights_fingerprint.py`): names, shapes, f64
//! sums and sums of squares, and 8 exact values per tensor.
//!
//! With `BANTER_REF_SAFETENSORS` pointing at the reference tool's full output
//! (`kokoro-ref.safetensors`, developer machines only) it also compares every value.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use kokoro::onnx::convert_kokoro;
use serde_json::Value;

/// The fetched int8 model, or `None` when skipped (see `support::model_store`).
fn model_onnx() -> Option<PathBuf> {
    Some(crate::support::model_store()?.kokoro_onnx())
}

/// One header entry: dtype, shape and byte range within the data section.
#[derive(Debug, Clone)]
struct Entry {
    dtype: String,
    shape: Vec<usize>,
    range: (u64, u64),
}

/// A minimal safetensors reader (header + seek per tensor), independent of the writer under
/// test and light on memory: the converted file is 325 MB.
struct SafetensorsFile {
    file: File,
    data_start: u64,
    tensors: BTreeMap<String, Entry>,
    metadata: BTreeMap<String, String>,
}

impl SafetensorsFile {
    fn open(path: &Path) -> Self {
        let mut file = File::open(path).unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
        let mut len = [0u8; 8];
        file.read_exact(&mut len).expect("header length");
        let len = u64::from_le_bytes(len);
        assert!(len < 10 << 20, "header of {len} bytes");
        let mut header = vec![0u8; len as usize];
        file.read_exact(&mut header).expect("header");
        let header: BTreeMap<String, Value> =
            serde_json::from_slice(&header).expect("header is JSON");
        let mut tensors = BTreeMap::new();
        let mut metadata = BTreeMap::new();
        for (name, v) in header {
            if name == "__metadata__" {
                for (k, v) in v.as_object().expect("metadata object") {
                    metadata.insert(k.clone(), v.as_str().expect("metadata string").to_owned());
                }
                continue;
            }
            let dtype = v["dtype"].as_str().expect("dtype").to_owned();
            let shape = v["shape"]
                .as_array()
                .expect("shape")
                .iter()
                .map(|d| d.as_u64().expect("dim") as usize)
                .collect();
            let offsets = v["data_offsets"].as_array().expect("offsets");
            let range = (
                offsets[0].as_u64().expect("begin"),
                offsets[1].as_u64().expect("end"),
            );
            tensors.insert(
                name,
                Entry {
                    dtype,
                    shape,
                    range,
                },
            );
        }
        Self {
            file,
            data_start: 8 + len,
            tensors,
            metadata,
        }
    }

    fn read_f32(&mut self, name: &str) -> Vec<f32> {
        let Entry {
            dtype,
            shape,
            range: (begin, end),
        } = self.tensors[name].clone();
        assert_eq!(dtype, "F32", "{name}");
        let n: usize = shape.iter().product();
        assert_eq!((end - begin) as usize, 4 * n, "{name}: byte range vs shape");
        self.file
            .seek(SeekFrom::Start(self.data_start + begin))
            .expect("seek");
        let mut bytes = vec![0u8; 4 * n];
        self.file.read_exact(&mut bytes).expect("tensor data");
        bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }
}

fn fingerprint() -> Value {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/goldens/weights_fingerprint.json");
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).expect("fingerprint is JSON")
}

#[test]
fn converted_weights_match_the_reference_mapping() {
    let Some(onnx) = model_onnx() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("kokoro-v1.0.f32.safetensors");
    let report = convert_kokoro(&onnx, &out).expect("conversion succeeds");
    println!("{report:?}");
    assert_eq!(report.tensors, 457);
    assert_eq!(report.values, 81_140_664);
    assert_eq!(
        report.file_bytes,
        std::fs::metadata(&out).expect("output exists").len()
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .expect("list temp dir")
        .map(|e| e.expect("entry").file_name())
        .filter(|n| n != "kokoro-v1.0.f32.safetensors")
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");

    let mut st = SafetensorsFile::open(&out);
    assert_eq!(
        st.metadata.get("source").map(String::as_str),
        Some("kokoro-v1.0.int8.onnx")
    );
    let golden = fingerprint();
    let entries = golden["entries"].as_object().expect("entries");
    let want: Vec<&String> = entries.keys().collect();
    let got: Vec<&String> = st.tensors.keys().collect();
    assert_eq!(got, want, "tensor names");

    for (name, e) in entries {
        let shape: Vec<usize> = e["shape"]
            .as_array()
            .expect("shape")
            .iter()
            .map(|d| d.as_u64().expect("dim") as usize)
            .collect();
        assert_eq!(st.tensors[name].shape, shape, "{name}: shape");
        let v = st.read_f32(name);
        let (mut sum, mut sum_sq, mut abs_sum) = (0f64, 0f64, 0f64);
        for &x in &v {
            let x = f64::from(x);
            sum += x;
            sum_sq += x * x;
            abs_sum += x.abs();
        }
        let close = |got: f64, key: &str, scale: f64| {
            let want = e[key].as_f64().expect("number");
            assert!(
                (got - want).abs() <= 1e-9 * scale + 1e-12,
                "{name}: {key} {got} vs golden {want}"
            );
        };
        let golden_abs = e["abs_sum"].as_f64().expect("abs_sum");
        close(abs_sum, "abs_sum", golden_abs);
        close(sum, "sum", golden_abs);
        close(sum_sq, "sum_sq", e["sum_sq"].as_f64().expect("sum_sq"));
        for s in e["samples"].as_array().expect("samples") {
            let i = s[0].as_u64().expect("index") as usize;
            let want = s[1].as_f64().expect("value") as f32;
            assert_eq!(
                v[i].to_bits(),
                want.to_bits(),
                "{name}[{i}]: {} vs golden {want}",
                v[i]
            );
        }
    }

    if let Some(reference) = std::env::var_os("BANTER_REF_SAFETENSORS") {
        compare_with_reference(&mut st, Path::new(&reference));
    }
}

/// Every value against the Python reference's own safetensors file.
fn compare_with_reference(st: &mut SafetensorsFile, reference: &Path) {
    let mut rf = SafetensorsFile::open(reference);
    let names: Vec<String> = st.tensors.keys().cloned().collect();
    assert_eq!(
        names,
        rf.tensors.keys().cloned().collect::<Vec<_>>(),
        "tensor names vs reference"
    );
    let (mut max_err, mut worst, mut differing) = (0f32, String::new(), 0usize);
    for name in &names {
        assert_eq!(
            st.tensors[name].shape, rf.tensors[name].shape,
            "{name}: shape vs reference"
        );
        let (a, b) = (st.read_f32(name), rf.read_f32(name));
        for (x, y) in a.iter().zip(&b) {
            if x.to_bits() != y.to_bits() {
                differing += 1;
                let err = (x - y).abs();
                if err > max_err || err.is_nan() {
                    max_err = err;
                    worst.clone_from(name);
                }
            }
        }
    }
    println!(
        "vs {}: {} tensors, {differing} values differ in bits, max |error| {max_err:e} ({worst})",
        reference.display(),
        names.len()
    );
    assert_eq!(
        differing, 0,
        "bit-identical to the reference; max |error| {max_err:e} in {worst}"
    );
}
