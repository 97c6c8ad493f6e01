//! A deep check of the store, for `banter models status` and right after a conversion: every
//! file against the sha256 that `manifest.json` recorded when it was fetched, and every weight
//! of the converted model finite. The cheap check ([`super::status`]) only compares sizes, and
//! a flipped byte keeps the size: four bytes of NaN in the weights made the model speak silence
//! with exit status 0. This reads every byte once (about a second for the 430 MB store).

use std::path::Path;

use super::error::AssetError;
use super::fsio::sha256_file;
use super::record::{StoreRecord, MANIFEST_FILE};

/// What the deep check found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// Files whose checksum was compared with the record.
    pub checked: usize,
    /// One line per problem (`FILE: …`); empty when the store is sound.
    pub problems: Vec<String>,
}

impl VerifyReport {
    #[must_use]
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Checks every file the record at `root` lists, and the weights file's values.
pub fn verify(root: &Path, weights: &Path) -> Result<VerifyReport, AssetError> {
    let mut report = VerifyReport::default();
    match StoreRecord::read(&root.join(MANIFEST_FILE)) {
        Ok(Some(record)) => {
            for (relative, expected) in &record.files {
                let path = root.join(relative);
                match sha256_file(&path) {
                    Ok(actual) if actual == expected.sha256 => report.checked += 1,
                    Ok(actual) => report.problems.push(format!(
                        "{}: checksum {actual} is not the {} recorded when it was fetched",
                        path.display(),
                        expected.sha256
                    )),
                    Err(e) => report.problems.push(format!("cannot be read: {e}")),
                }
            }
        }
        Ok(None) => report.problems.push(format!(
            "{MANIFEST_FILE}: missing, so nothing can be checked"
        )),
        Err(reason) => report.problems.push(reason),
    }
    report.problems.extend(non_finite_weights(weights)?);
    Ok(report)
}

/// The tensors of the safetensors file at `path` that hold a NaN or an infinity, as problems.
pub fn non_finite_weights(path: &Path) -> Result<Vec<String>, AssetError> {
    let bytes = fs_err::read(path).map_err(|e| AssetError::io(path, e))?;
    let tensors = safetensors::SafeTensors::deserialize(&bytes).map_err(|e| AssetError::Io {
        path: path.to_owned(),
        source: std::io::Error::other(format!("not a safetensors file: {e}")),
    })?;
    let mut problems = Vec::new();
    for (name, view) in tensors.tensors() {
        if view.dtype() != safetensors::Dtype::F32 {
            continue;
        }
        let bad = view
            .data()
            .chunks_exact(4)
            .filter(|b| !f32::from_le_bytes([b[0], b[1], b[2], b[3]]).is_finite())
            .count();
        if bad > 0 {
            problems.push(format!(
                "{}: tensor `{name}` holds {bad} values that are not finite numbers",
                path.display()
            ));
        }
    }
    Ok(problems)
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};

    use super::*;
    use crate::assets::manifest::KOKORO_V1;
    use crate::assets::record::FileRecord;

    fn weights(dir: &Path, values: &[f32]) -> std::path::PathBuf {
        let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let view = safetensors::tensor::TensorView::new(
            safetensors::Dtype::F32,
            vec![values.len()],
            &data,
        )
        .expect("view");
        let path = dir.join("kokoro-v1_0.safetensors");
        let bytes = safetensors::serialize([("decoder.w", view)], None::<HashMap<String, String>>)
            .expect("serialize");
        std::fs::write(&path, bytes).expect("write");
        path
    }

    #[test]
    fn a_nan_in_the_weights_and_a_changed_file_are_found() {
        let dir = tempfile::tempdir().expect("temp dir");
        let good = weights(dir.path(), &[0.5, -1.0, 2.0]);
        let sha = sha256_file(&good).expect("hash");
        let files = BTreeMap::from([(
            "kokoro-v1_0.safetensors".to_owned(),
            FileRecord {
                size: std::fs::metadata(&good).expect("meta").len(),
                sha256: sha,
            },
        )]);
        StoreRecord::new(&KOKORO_V1, files)
            .write(&dir.path().join(MANIFEST_FILE))
            .expect("record");
        let report = verify(dir.path(), &good).expect("verify");
        assert!(report.is_ok() && report.checked == 1, "{report:?}");

        // Four bytes of NaN, same size: the size check cannot see it, this one does.
        let bad = weights(dir.path(), &[0.5, f32::NAN, 2.0]);
        let report = verify(dir.path(), &bad).expect("verify");
        assert_eq!(report.problems.len(), 2, "{report:?}");
        assert!(report.problems[0].contains("checksum"));
        assert!(report.problems[1].contains("`decoder.w` holds 1 values"));
    }
}
