//! File-system helpers for the model store: atomic writes, a self-removing scratch
//! directory and streaming sha256.
//!
//! The rule they enforce: a file under its final name is always complete and verified.
//! Data is written to a hidden `.NAME.partial` beside the target, synced to disk, then
//! renamed over the target; an interrupted fetch leaves only `.partial` files and the
//! scratch directory, which the next fetch removes.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::error::AssetError;

/// Suffix of files being written; never a final name.
pub const PARTIAL_SUFFIX: &str = ".partial";
/// Prefix of scratch directories inside the store.
pub const SCRATCH_PREFIX: &str = ".fetch-";

/// Lower-case hex of a finished hash.
pub fn hex_digest(hasher: Sha256) -> String {
    hex::encode(hasher.finalize())
}

/// sha256 of a whole file, streamed.
pub fn sha256_file(path: &Path) -> Result<String, AssetError> {
    let mut file = fs_err::File::open(path).map_err(|e| AssetError::io(path, e))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).map_err(|e| AssetError::io(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex_digest(hasher))
}

/// Size of a file, or `None` when it does not exist or is not a regular file
/// (symlinks are followed, so a store of links to real files counts as present).
pub fn file_size(path: &Path) -> Option<u64> {
    std::fs::metadata(path)
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map(|m| m.len())
}

/// Why a streamed copy stopped: the source could not be read, or the target not written.
#[derive(Debug)]
pub enum CopyError {
    Read(std::io::Error),
    Write(std::io::Error),
}

/// Copies `reader` into `writer`, feeding every byte to each hasher; returns the byte
/// count. Read and write failures are kept apart so the caller can name the right file.
pub fn copy_hashed(
    reader: &mut dyn Read,
    writer: &mut dyn Write,
    hashers: &mut [&mut Sha256],
) -> Result<u64, CopyError> {
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => return Ok(total),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(CopyError::Read(e)),
        };
        for h in hashers.iter_mut() {
            h.update(&buf[..n]);
        }
        writer.write_all(&buf[..n]).map_err(CopyError::Write)?;
        total += n as u64;
    }
}

/// A file being written under a temporary name; [`AtomicFile::commit`] makes it final.
/// Dropped without commit, the temporary file is removed.
pub struct AtomicFile {
    target: PathBuf,
    temp: PathBuf,
    file: Option<fs_err::File>,
    committed: bool,
}

impl AtomicFile {
    /// Starts writing `target` (its directory must exist).
    pub fn create(target: &Path) -> Result<Self, AssetError> {
        let temp = partial_path(target);
        let file = fs_err::File::create(&temp).map_err(|e| AssetError::io(&temp, e))?;
        Ok(Self {
            target: target.to_owned(),
            temp,
            file: Some(file),
            committed: false,
        })
    }

    /// Path of the temporary file (for tools that write by path, such as the converter).
    pub fn temp_path(&self) -> &Path {
        &self.temp
    }

    /// The open temporary file.
    pub fn writer(&mut self) -> Result<&mut fs_err::File, AssetError> {
        self.file.as_mut().ok_or_else(|| AssetError::Io {
            path: self.temp.clone(),
            source: std::io::Error::other("atomic file already closed"),
        })
    }

    /// Maps a write error on the temporary file.
    pub fn write_error(&self, e: std::io::Error) -> AssetError {
        AssetError::io(&self.temp, e)
    }

    /// Syncs the data to disk and renames it over the target, then syncs the directory
    /// so the rename itself survives a crash.
    pub fn commit(mut self) -> Result<(), AssetError> {
        let file = match self.file.take() {
            Some(f) => f,
            // Written by path (converter): reopen to sync what it wrote.
            None => fs_err::File::open(&self.temp).map_err(|e| AssetError::io(&self.temp, e))?,
        };
        file.sync_all().map_err(|e| AssetError::io(&self.temp, e))?;
        drop(file);
        fs_err::rename(&self.temp, &self.target).map_err(|e| AssetError::io(&self.target, e))?;
        self.committed = true;
        sync_dir(self.target.parent().unwrap_or(Path::new(".")));
        Ok(())
    }

    /// Closes the handle so another writer can write the temporary path.
    pub fn close_for_external_writer(&mut self) {
        self.file = None;
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        self.file = None;
        if !self.committed {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// Writes `bytes` to `target` atomically.
pub fn write_atomic(target: &Path, bytes: &[u8]) -> Result<(), AssetError> {
    let mut f = AtomicFile::create(target)?;
    let w = f.writer()?;
    if let Err(e) = w.write_all(bytes) {
        return Err(f.write_error(e));
    }
    f.commit()
}

/// `dir/.NAME.partial`.
pub fn partial_path(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    target.with_file_name(format!(".{name}{PARTIAL_SUFFIX}"))
}

/// Best effort: make a rename durable. Failure only weakens crash safety, so it is
/// logged rather than returned.
fn sync_dir(dir: &Path) {
    if let Err(e) = std::fs::File::open(dir).and_then(|d| d.sync_all()) {
        tracing::debug!(dir = %dir.display(), error = %e, "directory sync failed");
    }
}

/// A scratch directory inside the store (same file system, so renames are cheap);
/// removed with everything in it when dropped.
pub struct ScratchDir {
    path: PathBuf,
}

impl ScratchDir {
    pub fn create(root: &Path) -> Result<Self, AssetError> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = root.join(format!("{SCRATCH_PREFIX}{}-{nanos}", std::process::id()));
        fs_err::create_dir_all(&path).map_err(|e| AssetError::io(&path, e))?;
        Ok(Self { path })
    }

    #[cfg(test)]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A fresh, empty sub-directory for one download.
    pub fn subdir(&self, name: &str) -> Result<PathBuf, AssetError> {
        let p = self.path.join(name);
        if p.exists() {
            fs_err::remove_dir_all(&p).map_err(|e| AssetError::io(&p, e))?;
        }
        fs_err::create_dir_all(&p).map_err(|e| AssetError::io(&p, e))?;
        Ok(p)
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.path) {
            tracing::warn!(dir = %self.path.display(), error = %e, "could not remove scratch dir");
        }
    }
}

/// Removes what an interrupted fetch left in `dir`: scratch directories and `.partial`
/// files. Only one fetch per store may run at a time.
pub fn remove_leftovers(dir: &Path) -> Result<(), AssetError> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        if name.starts_with(SCRATCH_PREFIX) && path.is_dir() {
            fs_err::remove_dir_all(&path).map_err(|e| AssetError::io(&path, e))?;
        } else if name.starts_with('.') && name.ends_with(PARTIAL_SUFFIX) {
            fs_err::remove_file(&path).map_err(|e| AssetError::io(&path, e))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_file_is_invisible_until_commit() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("a.bin");
        let mut f = AtomicFile::create(&target).expect("create");
        f.writer()
            .expect("open")
            .write_all(b"hello")
            .expect("write");
        assert!(!target.exists(), "target must not exist before commit");
        assert!(partial_path(&target).exists());
        f.commit().expect("commit");
        assert_eq!(std::fs::read(&target).expect("read"), b"hello");
        assert!(!partial_path(&target).exists());
    }

    #[test]
    fn dropped_atomic_file_leaves_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("b.bin");
        {
            let mut f = AtomicFile::create(&target).expect("create");
            f.writer().expect("open").write_all(b"half").expect("write");
        }
        assert_eq!(std::fs::read_dir(dir.path()).expect("ls").count(), 0);
    }

    #[test]
    fn copy_hashed_hashes_what_it_copies() {
        let data = vec![7u8; 3_000_000];
        let mut out = Vec::new();
        let mut h1 = Sha256::new();
        let mut h2 = Sha256::new();
        let n = copy_hashed(&mut data.as_slice(), &mut out, &mut [&mut h1, &mut h2]).expect("copy");
        assert_eq!(n, 3_000_000);
        assert_eq!(out, data);
        let expected = hex::encode(Sha256::digest(&data));
        assert_eq!(hex_digest(h1), expected);
        assert_eq!(hex_digest(h2), expected);
    }

    #[test]
    fn scratch_dir_and_leftovers_are_removed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let scratch_path = {
            let s = ScratchDir::create(dir.path()).expect("scratch");
            std::fs::write(s.subdir("x").expect("sub").join("f"), b"1").expect("write");
            s.path().to_owned()
        };
        assert!(!scratch_path.exists());
        std::fs::create_dir(dir.path().join(".fetch-1-2")).expect("mkdir");
        std::fs::write(dir.path().join(".v.bin.partial"), b"x").expect("write");
        std::fs::write(dir.path().join("keep.bin"), b"x").expect("write");
        remove_leftovers(dir.path()).expect("clean");
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .expect("ls")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from("keep.bin")]);
    }
}
