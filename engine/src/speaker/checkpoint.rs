//! Reads resemblyzer's `pretrained.pt` and turns it into f32 safetensors.
//!
//! The file predates `PyTorch`'s zip checkpoints: it is the *legacy* serialization, which
//! candle's `pickle` module does not open (it expects a zip with `data.pkl`). The legacy layout
//! is a run of pickles followed by raw storages:
//!
//! 1. a magic-number pickle, 2. the protocol version (1001), 3. a dict describing the
//!    writer's type sizes, 4. the checkpoint object itself, whose tensors point at storages by
//!    key through persistent ids `('storage', <type>, key, location, size, view)`,
//! 5. the list of storage keys, in the order the storages follow;
//! 6. per storage: its element count as a little-endian `u64`, then the raw little-endian data.
//!
//! Pickles 2–5 are parsed with candle's pickle [`Stack`]; only the tensors under
//! `model_state` whose names start with `lstm.` or `linear.` are kept (the checkpoint also
//! carries the GE2E loss parameters and the optimizer state). The fetch verifies the file's
//! sha256 before this runs, so the parser never sees untrusted bytes, but it still returns
//! errors rather than panicking on anything unexpected.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{Cursor, Read};
use std::path::Path;

use candle_core::pickle::{Object, Stack};

use super::SpeakerError;

/// The magic-number pickle every legacy checkpoint starts with
/// (`PROTO 2`, `LONG1` of 10 bytes holding `0x1950a86a20f9469cfc6c`, `STOP`).
const LEGACY_MAGIC: [u8; 15] = [
    0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19, 0x2e,
];
/// The legacy format's protocol version, the second pickle.
const LEGACY_PROTOCOL: i32 = 1001;

/// One f32 tensor taken out of the checkpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedTensor {
    pub name: String,
    pub shape: Vec<usize>,
    pub values: Vec<f32>,
}

fn bad(path: &Path, detail: impl Into<String>) -> SpeakerError {
    SpeakerError::Checkpoint {
        path: path.to_owned(),
        detail: detail.into(),
    }
}

/// Reads the encoder's tensors (`lstm.*`, `linear.*` under `model_state`) from the bytes of a
/// legacy `PyTorch` checkpoint; `path` only names the file in errors.
pub fn read_encoder_tensors(bytes: &[u8], path: &Path) -> Result<Vec<NamedTensor>, SpeakerError> {
    if bytes.get(..LEGACY_MAGIC.len()) != Some(&LEGACY_MAGIC[..]) {
        return Err(bad(path, "not a legacy PyTorch checkpoint (magic number)"));
    }
    let mut cursor = Cursor::new(&bytes[LEGACY_MAGIC.len()..]);
    let mut next_pickle = |what: &str| -> Result<Object, SpeakerError> {
        let mut stack = Stack::empty();
        stack
            .read_loop(&mut cursor)
            .and_then(|()| stack.finalize())
            .map_err(|e| bad(path, format!("{what}: {e}")))
    };
    match next_pickle("protocol version")? {
        Object::Int(LEGACY_PROTOCOL) => {}
        other => return Err(bad(path, format!("unexpected protocol {other:?}"))),
    }
    let _sys_info = next_pickle("system info")?;
    let checkpoint = next_pickle("checkpoint")?;
    let keys = match next_pickle("storage keys")? {
        Object::List(keys) => keys
            .into_iter()
            .map(|k| match k {
                Object::Unicode(s) => Ok(s),
                other => Err(bad(path, format!("storage key {other:?}"))),
            })
            .collect::<Result<Vec<_>, _>>()?,
        other => return Err(bad(path, format!("storage keys are {other:?}"))),
    };
    let mut elem_sizes = HashMap::new();
    collect_storage_types(&checkpoint, &mut elem_sizes);

    // The storages follow in key order; keep the f32 ones as values.
    let mut storages: HashMap<String, Vec<f32>> = HashMap::new();
    for key in keys {
        let elem = *elem_sizes
            .get(&key)
            .ok_or_else(|| bad(path, format!("storage {key} has no known type")))?;
        let mut count = [0u8; 8];
        cursor
            .read_exact(&mut count)
            .map_err(|e| bad(path, format!("storage {key} header: {e}")))?;
        let len = usize::try_from(u64::from_le_bytes(count))
            .ok()
            .and_then(|n| n.checked_mul(elem))
            .filter(|&n| n <= bytes.len())
            .ok_or_else(|| bad(path, format!("storage {key} is larger than the file")))?;
        let start = usize::try_from(cursor.position()).unwrap_or(usize::MAX);
        let data = start
            .checked_add(len)
            .and_then(|end| cursor.get_ref().get(start..end))
            .ok_or_else(|| bad(path, format!("storage {key} is cut short")))?;
        if elem == 4 {
            let values = data
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            storages.insert(key, values);
        }
        cursor.set_position((start + len) as u64);
    }

    let state = dict_get(checkpoint, "model_state")
        .ok_or_else(|| bad(path, "no model_state in the checkpoint"))?;
    let Object::Dict(entries) = state else {
        return Err(bad(path, "model_state is not a dict"));
    };
    let mut tensors = Vec::new();
    for (name, value) in entries {
        let Object::Unicode(name) = name else {
            continue;
        };
        if !(name.starts_with("lstm.") || name.starts_with("linear.")) {
            continue;
        }
        let info = value
            .into_tensor_info(Object::Unicode(name.clone()), Path::new(""))
            .map_err(|e| bad(path, format!("{name}: {e}")))?
            .ok_or_else(|| bad(path, format!("{name} is not a tensor")))?;
        let layout = &info.layout;
        if !layout.is_contiguous() || info.dtype != candle_core::DType::F32 {
            return Err(bad(path, format!("{name} is not a contiguous f32 tensor")));
        }
        let key = info.path.trim_start_matches('/');
        let storage = storages
            .get(key)
            .ok_or_else(|| bad(path, format!("{name}: storage {key} missing")))?;
        let offset = layout.start_offset() / 4;
        let count = layout.shape().elem_count();
        let values = storage
            .get(offset..offset + count)
            .ok_or_else(|| bad(path, format!("{name} lies outside its storage")))?
            .to_vec();
        tensors.push(NamedTensor {
            name,
            shape: layout.dims().to_vec(),
            values,
        });
    }
    tensors.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(tensors)
}

/// `dict[key]` for a pickled dict with string keys.
fn dict_get(obj: Object, key: &str) -> Option<Object> {
    match obj {
        Object::Dict(entries) => entries
            .into_iter()
            .find(|(k, _)| matches!(k, Object::Unicode(s) if s == key))
            .map(|(_, v)| v),
        _ => None,
    }
}

/// Walks the object tree and records the element size of every storage a persistent id names.
fn collect_storage_types(obj: &Object, out: &mut HashMap<String, usize>) {
    match obj {
        Object::PersistentLoad(id) => {
            if let Object::Tuple(parts) = id.as_ref() {
                if let (Some(Object::Class { class_name, .. }), Some(Object::Unicode(key))) =
                    (parts.get(1), parts.get(2))
                {
                    out.insert(key.clone(), storage_elem_size(class_name));
                }
            }
        }
        Object::Tuple(items) | Object::List(items) => {
            for o in items {
                collect_storage_types(o, out);
            }
        }
        Object::Dict(entries) => entries.iter().for_each(|(k, v)| {
            collect_storage_types(k, out);
            collect_storage_types(v, out);
        }),
        Object::Reduce { callable, args } | Object::Build { callable, args } => {
            collect_storage_types(callable, out);
            collect_storage_types(args, out);
        }
        _ => {}
    }
}

/// Bytes per element of a `torch.*Storage` class.
fn storage_elem_size(class: &str) -> usize {
    match class {
        "DoubleStorage" | "LongStorage" => 8,
        "HalfStorage" | "BFloat16Storage" | "ShortStorage" => 2,
        "ByteStorage" | "CharStorage" | "BoolStorage" => 1,
        _ => 4,
    }
}

/// One tensor seen through safetensors' `View`.
struct F32View<'a>(&'a NamedTensor);

impl safetensors::View for F32View<'_> {
    fn dtype(&self) -> safetensors::Dtype {
        safetensors::Dtype::F32
    }
    fn shape(&self) -> &[usize] {
        &self.0.shape
    }
    fn data(&self) -> Cow<'_, [u8]> {
        Cow::Owned(self.0.values.iter().flat_map(|v| v.to_le_bytes()).collect())
    }
    fn data_len(&self) -> usize {
        self.0.values.len() * 4
    }
}

/// Serializes `tensors` as safetensors bytes with `metadata` in the header.
pub(crate) fn to_safetensors(
    tensors: &[NamedTensor],
    metadata: HashMap<String, String>,
    path: &Path,
) -> Result<Vec<u8>, SpeakerError> {
    let views = tensors.iter().map(|t| (t.name.as_str(), F32View(t)));
    safetensors::serialize(views, Some(metadata)).map_err(|e| bad(path, e.to_string()))
}

/// Reads the `__metadata__` of a safetensors file without loading its tensors; `None` when the
/// file is missing or unreadable.
#[must_use]
pub fn safetensors_metadata(path: &Path) -> Option<HashMap<String, String>> {
    let mut file = std::fs::File::open(path).ok()?;
    let mut len = [0u8; 8];
    file.read_exact(&mut len).ok()?;
    let len = usize::try_from(u64::from_le_bytes(len)).ok()?;
    if len > 1 << 20 {
        return None;
    }
    let mut header = vec![0u8; len];
    file.read_exact(&mut header).ok()?;
    let value: serde_json::Value = serde_json::from_slice(&header).ok()?;
    let meta = value.get("__metadata__")?.as_object()?;
    Some(
        meta.iter()
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_a_checkpoint_is_an_error_not_a_panic() {
        let path = Path::new("x.pt");
        for bytes in [
            &b""[..],
            b"PK\x03\x04zip",
            &LEGACY_MAGIC[..],
            &LEGACY_MAGIC[..10],
        ] {
            let err = read_encoder_tensors(bytes, path).expect_err("garbage");
            assert!(err.to_string().contains("x.pt"), "{err}");
        }
    }

    #[test]
    fn safetensors_round_trip_keeps_metadata() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("w.safetensors");
        let t = NamedTensor {
            name: "linear.bias".into(),
            shape: vec![2],
            values: vec![1.5, -2.0],
        };
        let meta = HashMap::from([("source".to_owned(), "test".to_owned())]);
        let bytes = to_safetensors(&[t], meta.clone(), &path).expect("serialize");
        std::fs::write(&path, bytes).expect("write");
        assert_eq!(safetensors_metadata(&path), Some(meta));
        let loaded =
            candle_core::safetensors::load(&path, &candle_core::Device::Cpu).expect("load");
        let v: Vec<f32> = loaded["linear.bias"].to_vec1().expect("vec");
        assert_eq!(v, [1.5, -2.0]);
    }
}
