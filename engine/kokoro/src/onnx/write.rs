//! Streams planned tensors into a safetensors file, atomically.
//!
//! Each tensor is computed only when the writer reaches it (a lazy [`View`]), so the f32
//! weights never sit in memory all at once. The file is written under a temporary name in
//! the destination directory, flushed to disk, then renamed over `out_path`: a crash or a
//! full disk leaves either the old file or none, never a truncated one that would load.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use safetensors::{Dtype, View};

use super::recipe::Planned;
use super::ConvertError;

/// A planned tensor seen through safetensors' [`View`]: values are computed in `data()`.
struct LazyTensor<'p, 'g>(&'p Planned<'g>);

impl View for LazyTensor<'_, '_> {
    fn dtype(&self) -> Dtype {
        Dtype::F32
    }

    fn shape(&self) -> &[usize] {
        &self.0.shape
    }

    fn data(&self) -> Cow<'_, [u8]> {
        Cow::Owned(self.0.to_le_bytes())
    }

    fn data_len(&self) -> usize {
        self.0.len() * std::mem::size_of::<f32>()
    }
}

/// Writes `tensors` (all F32) with `metadata` to `out_path`; returns the file size in bytes.
pub(crate) fn write_safetensors(
    tensors: &[Planned<'_>],
    metadata: HashMap<String, String>,
    out_path: &Path,
) -> Result<u64, ConvertError> {
    let tmp = temp_path(out_path);
    let result = write_then_rename(tensors, metadata, &tmp, out_path);
    if result.is_err() {
        // Best effort: the temporary file may not exist, and the original error matters more.
        let _ = fs_err::remove_file(&tmp);
    }
    result
}

fn write_then_rename(
    tensors: &[Planned<'_>],
    metadata: HashMap<String, String>,
    tmp: &Path,
    out_path: &Path,
) -> Result<u64, ConvertError> {
    let views = tensors.iter().map(|t| (t.name.as_str(), LazyTensor(t)));
    safetensors::serialize_to_file(views, Some(metadata), tmp).map_err(|source| {
        ConvertError::Write {
            path: tmp.to_owned(),
            source,
        }
    })?;
    let finish = |source| ConvertError::Finish {
        path: out_path.to_owned(),
        source,
    };
    // Opened for writing because Windows refuses to flush a read-only handle.
    let file = fs_err::OpenOptions::new()
        .write(true)
        .open(tmp)
        .map_err(finish)?;
    file.sync_all().map_err(finish)?;
    let size = file.metadata().map_err(finish)?.len();
    drop(file);
    fs_err::rename(tmp, out_path).map_err(finish)?;
    Ok(size)
}

/// `dir/.name.<pid>.partial` beside `out_path`, so the final rename stays on one filesystem.
fn temp_path(out_path: &Path) -> PathBuf {
    let name = out_path
        .file_name()
        .map_or_else(|| "weights".into(), |n| n.to_string_lossy().into_owned());
    out_path.with_file_name(format!(".{name}.{}.partial", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::onnx::graph::{Floats, Tensor};
    use crate::onnx::recipe::Layout;

    fn planned(name: &str, dims: Vec<usize>, values: &'static [f32]) -> Planned<'static> {
        let t = Tensor {
            name: "src",
            dims,
            data: Floats::Unpacked(values),
        };
        Planned::float(name.to_owned(), "node", &t, Layout::AsIs).expect("valid")
    }

    #[test]
    fn writes_a_loadable_file_and_no_leftovers() {
        let dir = tempfile::tempdir().expect("temp dir");
        let out = dir.path().join("w.safetensors");
        let tensors = [
            planned("b", vec![2], &[1.0, -2.0]),
            planned("a.weight", vec![1, 3], &[0.5, 0.25, 0.125]),
        ];
        let meta = HashMap::from([("format".to_owned(), "pt".to_owned())]);
        let size = write_safetensors(&tensors, meta, &out).expect("writes");
        let bytes = fs_err::read(&out).expect("reads back");
        assert_eq!(size, bytes.len() as u64);
        let st = safetensors::SafeTensors::deserialize(&bytes).expect("valid safetensors");
        let a = st.tensor("a.weight").expect("a present");
        assert_eq!(a.dtype(), Dtype::F32);
        assert_eq!(a.shape(), &[1, 3]);
        let vals: Vec<f32> = a
            .data()
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        assert_eq!(vals, vec![0.5, 0.25, 0.125]);
        let (_, meta) = safetensors::SafeTensors::read_metadata(&bytes).expect("header");
        assert_eq!(
            meta.metadata()
                .as_ref()
                .and_then(|m| m.get("format"))
                .map(String::as_str),
            Some("pt")
        );
        let names: Vec<_> = fs_err::read_dir(dir.path())
            .expect("lists")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("w.safetensors")]);
    }

    #[test]
    fn failure_names_the_path_and_leaves_nothing() {
        let dir = tempfile::tempdir().expect("temp dir");
        let out = dir.path().join("missing-dir").join("w.safetensors");
        let err = write_safetensors(&[planned("b", vec![1], &[1.0])], HashMap::new(), &out)
            .expect_err("parent does not exist");
        let msg = err.to_string();
        assert!(msg.contains("missing-dir"), "{msg}");
        assert!(!out.exists());
        assert_eq!(fs_err::read_dir(dir.path()).expect("lists").count(), 0);
    }
}
