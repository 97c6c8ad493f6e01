//! Loading the converted f32 weights tensor by tensor, as the model asks for them.
//!
//! `candle_core::safetensors::load` reads the whole 325 MB file into one buffer and then copies
//! every tensor out of it, so the peak is twice the model. Reading every tensor into its own
//! buffer up front still held the whole file until the model was built, beside the layers'
//! own copies (time-major convolution weights, transposed dense ones): a 646 MB peak at load,
//! over the 600 MB budget. So the `VarBuilder` here reads a tensor from the file only when a
//! layer asks for it, and the layer's copy is all that outlives the call: the peak stays near
//! the built model plus its largest tensor (a few MB). No `unsafe` mmap needed.

use std::collections::{HashMap, HashSet};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use candle_core::{DType, Device, Shape, Tensor};
use candle_nn::var_builder::SimpleBackend;
use candle_nn::VarBuilder;

/// Largest header we accept (the real one is about 40 KB).
const MAX_HEADER: u64 = 16 << 20;

/// Where one tensor lies in the file.
#[derive(Debug)]
struct Entry {
    shape: Vec<usize>,
    /// Byte range from the start of the file.
    begin: u64,
    end: u64,
}

/// An open safetensors file of F32 tensors, read tensor by tensor on request.
#[derive(Debug)]
struct WeightsFile {
    path: PathBuf,
    file: Mutex<fs_err::File>,
    entries: HashMap<String, Entry>,
    /// Tensors not read: their packed panels come from the packed-weights cache instead
    /// (`cpu_kernels::cache`), so the layer gets a placeholder of the right shape.
    placeholders: HashSet<String>,
}

impl WeightsFile {
    /// Opens `path` and checks its header: JSON, every tensor F32 with offsets that fit its
    /// shape and the file.
    fn open(path: &Path) -> candle_core::Result<Self> {
        let bad = |what: String| candle_core::Error::Msg(format!("{}: {what}", path.display()));
        let mut file = fs_err::File::open(path)?;
        let file_len = file.metadata()?.len();
        let mut len = [0u8; 8];
        file.read_exact(&mut len)?;
        let header_len = u64::from_le_bytes(len);
        if header_len > MAX_HEADER || header_len + 8 > file_len {
            return Err(bad(format!("implausible header length {header_len}")));
        }
        let mut header = vec![0u8; header_len as usize];
        file.read_exact(&mut header)?;
        let header: HashMap<String, serde_json::Value> =
            serde_json::from_slice(&header).map_err(|e| bad(format!("header is not JSON: {e}")))?;
        let data_start = 8 + header_len;
        let mut entries = HashMap::with_capacity(header.len());
        for (name, info) in header {
            if name == "__metadata__" {
                continue;
            }
            let dtype = info["dtype"].as_str().unwrap_or_default();
            if dtype != "F32" {
                return Err(bad(format!(
                    "tensor {name} has dtype {dtype}, expected F32"
                )));
            }
            let shape: Option<Vec<usize>> = info["shape"].as_array().map(|a| {
                a.iter()
                    .filter_map(|d| d.as_u64().map(|d| d as usize))
                    .collect()
            });
            let offsets: Option<(u64, u64)> = info["data_offsets"]
                .as_array()
                .and_then(|a| Some((a.first()?.as_u64()?, a.get(1)?.as_u64()?)));
            let (Some(shape), Some((begin, end))) = (shape, offsets) else {
                return Err(bad(format!("tensor {name} has a malformed entry")));
            };
            let elements: usize = shape.iter().product();
            if end < begin || end - begin != elements as u64 * 4 || data_start + end > file_len {
                return Err(bad(format!(
                    "tensor {name} has offsets {begin}..{end} that do not fit its shape {shape:?}"
                )));
            }
            entries.insert(
                name,
                Entry {
                    shape,
                    begin: data_start + begin,
                    end: data_start + end,
                },
            );
        }
        Ok(Self {
            path: path.to_path_buf(),
            file: Mutex::new(file),
            entries,
            placeholders: HashSet::new(),
        })
    }

    /// Reads tensor `name` from the file onto `device`.
    fn read(&self, name: &str, device: &Device) -> candle_core::Result<Tensor> {
        let Some(e) = self.entries.get(name) else {
            return Err(candle_core::Error::CannotFindTensor {
                path: name.to_owned(),
            });
        };
        if self.placeholders.contains(name) {
            // One zero seen through a stride-0 view: the shape without the memory.
            return Tensor::zeros((), DType::F32, device)?.broadcast_as(e.shape.clone());
        }
        // Read straight into the f32 buffer (the file is little-endian, as this machine is).
        let mut values = vec![0f32; (e.end - e.begin) as usize / 4];
        {
            // A poisoned lock only means another read panicked; the file itself is fine.
            let mut file = self
                .file
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            file.seek(SeekFrom::Start(e.begin))?;
            file.read_exact(bytemuck::cast_slice_mut(&mut values))?;
        }
        if cfg!(target_endian = "big") {
            for v in &mut values {
                *v = f32::from_bits(u32::from_le(v.to_bits()));
            }
        }
        Tensor::from_vec(values, e.shape.clone(), device)
    }
}

impl SimpleBackend for WeightsFile {
    fn get(
        &self,
        shape: Shape,
        name: &str,
        _init: candle_nn::Init,
        dtype: DType,
        device: &Device,
    ) -> candle_core::Result<Tensor> {
        let t = self.get_unchecked(name, dtype, device)?;
        if t.shape() != &shape {
            return Err(candle_core::Error::Msg(format!(
                "{}: tensor {name} has shape {:?}, the model expects {:?}",
                self.path.display(),
                t.dims(),
                shape.dims()
            )));
        }
        Ok(t)
    }

    fn get_unchecked(
        &self,
        name: &str,
        dtype: DType,
        device: &Device,
    ) -> candle_core::Result<Tensor> {
        self.read(name, device)?.to_dtype(dtype)
    }

    fn contains_tensor(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }
}

/// A `VarBuilder` over the weights in `path`, named like the `PyTorch` checkpoint: the header
/// is read and checked now, each tensor when a layer asks for it.
pub fn var_builder(path: &Path, device: &Device) -> candle_core::Result<VarBuilder<'static>> {
    Ok(VarBuilder::from_backend(
        Box::new(WeightsFile::open(path)?),
        DType::F32,
        device.clone(),
    ))
}

/// [`var_builder`], but the tensors named in `placeholders` are not read: each is a
/// placeholder of its shape holding zeros, for layers whose packed panels come from the
/// packed-weights cache (`cpu_kernels::cache`). A layer that computed with one would compute
/// with zeros, so only names that cache holds belong here.
pub fn var_builder_with_placeholders(
    path: &Path,
    device: &Device,
    placeholders: impl IntoIterator<Item = String>,
) -> candle_core::Result<VarBuilder<'static>> {
    let mut file = WeightsFile::open(path)?;
    file.placeholders = placeholders.into_iter().collect();
    Ok(VarBuilder::from_backend(
        Box::new(file),
        DType::F32,
        device.clone(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_candle_writes_and_rejects_garbage() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.safetensors");
        let a = Tensor::arange(0f32, 6.0, &Device::Cpu)
            .unwrap()
            .reshape((2, 3))
            .unwrap();
        let b = Tensor::new(&[7f32], &Device::Cpu).unwrap();
        candle_core::safetensors::save(
            &HashMap::from([("a.weight".to_owned(), a.clone()), ("b".to_owned(), b)]),
            &path,
        )
        .unwrap();
        let vb = var_builder(&path, &Device::Cpu).unwrap();
        assert_eq!(
            vb.get((2, 3), "a.weight")
                .unwrap()
                .to_vec2::<f32>()
                .unwrap(),
            a.to_vec2::<f32>().unwrap()
        );
        assert_eq!(vb.get(1, "b").unwrap().to_vec1::<f32>().unwrap(), vec![7.0]);
        assert!(vb.contains_tensor("b") && !vb.contains_tensor("c"));
        let wrong = vb.get((3, 2), "a.weight").unwrap_err().to_string();
        assert!(
            wrong.contains("a.weight") && wrong.contains("[2, 3]"),
            "{wrong}"
        );
        assert!(vb.get(1, "c").is_err(), "a missing tensor");

        std::fs::write(&path, b"\xff\xff\xff\xff\xff\xff\xff\x7fjunk").unwrap();
        assert!(var_builder(&path, &Device::Cpu).is_err());
        std::fs::write(&path, b"\x02\x00\x00\x00\x00\x00\x00\x00{}").unwrap();
        assert!(!var_builder(&path, &Device::Cpu)
            .unwrap()
            .contains_tensor("a.weight"));
        let json = br#"{"x":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}"#;
        let mut file = (json.len() as u64).to_le_bytes().to_vec();
        file.extend_from_slice(json);
        file.extend_from_slice(&[0u8; 8]);
        std::fs::write(&path, file).unwrap();
        assert!(
            var_builder(&path, &Device::Cpu).is_err(),
            "offsets past the end of the file"
        );
    }
}
