//! Loading the converted f32 weights tensor by tensor.
//!
//! `candle_core::safetensors::load` reads the whole 325 MB file into one buffer and then copies
//! every tensor out of it, so the peak is twice the model. Reading each tensor straight from the
//! file into its own buffer keeps the peak at the model plus its largest tensor (a few MB), which
//! is what keeps Banter under its 600 MB budget with the model loaded. No `unsafe` mmap needed.

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;

/// Largest header we accept (the real one is about 40 KB).
const MAX_HEADER: u64 = 16 << 20;

/// Reads every F32 tensor of a safetensors file onto `device`.
pub fn load_tensors(path: &Path, device: &Device) -> candle_core::Result<HashMap<String, Tensor>> {
    let bad = |what: String| candle_core::Error::Msg(format!("{}: {what}", path.display()));
    let mut file = std::io::BufReader::new(fs_err::File::open(path)?);
    let file_len = file.get_ref().metadata()?.len();
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

    let mut entries: Vec<(String, Vec<usize>, u64, u64)> = Vec::with_capacity(header.len());
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
        entries.push((name, shape, begin, end));
    }
    // Read in file order so the reads are sequential.
    entries.sort_by_key(|e| e.2);
    let mut tensors = HashMap::with_capacity(entries.len());
    let mut bytes = Vec::new();
    for (name, shape, begin, end) in entries {
        file.seek(SeekFrom::Start(data_start + begin))?;
        bytes.resize((end - begin) as usize, 0);
        file.read_exact(&mut bytes)?;
        let values: Vec<f32> = bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        tensors.insert(name, Tensor::from_vec(values, shape, device)?);
    }
    Ok(tensors)
}

/// A `VarBuilder` over the weights in `path`, named like the `PyTorch` checkpoint.
pub fn var_builder(path: &Path, device: &Device) -> candle_core::Result<VarBuilder<'static>> {
    Ok(VarBuilder::from_tensors(
        load_tensors(path, device)?,
        DType::F32,
        device,
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
        let t = load_tensors(&path, &Device::Cpu).unwrap();
        assert_eq!(
            t["a.weight"].to_vec2::<f32>().unwrap(),
            a.to_vec2::<f32>().unwrap()
        );
        assert_eq!(t["b"].to_vec1::<f32>().unwrap(), vec![7.0]);

        std::fs::write(&path, b"\xff\xff\xff\xff\xff\xff\xff\x7fjunk").unwrap();
        assert!(load_tensors(&path, &Device::Cpu).is_err());
        std::fs::write(&path, b"\x02\x00\x00\x00\x00\x00\x00\x00{}").unwrap();
        assert!(load_tensors(&path, &Device::Cpu).unwrap().is_empty());
        let json = br#"{"x":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}"#;
        let mut file = (json.len() as u64).to_le_bytes().to_vec();
        file.extend_from_slice(json);
        file.extend_from_slice(&[0u8; 8]);
        std::fs::write(&path, file).unwrap();
        assert!(
            load_tensors(&path, &Device::Cpu).is_err(),
            "offsets past the end of the file"
        );
    }
}
