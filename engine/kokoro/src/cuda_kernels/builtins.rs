//! NVRTC's built-in headers library, loaded from where NVRTC itself was found.
//!
//! Why: NVRTC opens `libnvrtc-builtins.so.<major>.<minor>` by name each time it compiles, so
//! the dynamic loader searches `LD_LIBRARY_PATH` and the system's cache for it, not the
//! directory the binary's RUNPATH found `libnvrtc.so` in. With the CUDA libraries in a private
//! directory (`scripts/build-cuda.sh` puts them in a venv), `libnvrtc.so` loads and every compile
//! then fails, and Banter's kernels fall back to candle's slower ops. Loading the builtins from
//! `libnvrtc.so`'s own directory first fixes that: a later open of the same soname finds the
//! library already loaded. Where it is not there (a system-wide CUDA), nothing is done.

// One `dlopen` call, with its SAFETY comment.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The directory of the `libnvrtc.so*` this process has loaded, from `/proc/self/maps`.
fn nvrtc_dir() -> Option<PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .map(Path::new)
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.as_bytes().starts_with(b"libnvrtc.so"))
        })
        .and_then(Path::parent)
        .map(Path::to_path_buf)
}

/// The builtins libraries beside `libnvrtc.so` in `dir` (not the `.alt.` variant, which
/// NVRTC opens only for its alternative headers).
fn builtins_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().is_some_and(|n| {
                let n = n.as_bytes();
                n.starts_with(b"libnvrtc-builtins.so.") && !n.windows(5).any(|w| w == b".alt.")
            })
        })
        .collect();
    found.sort();
    found
}

/// Loads NVRTC's builtins from beside the loaded `libnvrtc.so`, once per process; returns
/// the file loaded, if any (a failure is logged: compiling then says what is missing).
pub(super) fn preload() -> Option<PathBuf> {
    let dir = nvrtc_dir()?;
    for path in builtins_in(&dir) {
        let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
            continue;
        };
        // SAFETY: `c` is a NUL-terminated path; the library is NVRTC's own, which NVRTC loads
        // itself when it compiles (its initialisers run either way), and the handle is kept
        // for the life of the process, as NVRTC would keep it.
        let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
        if handle.is_null() {
            tracing::debug!(path = %path.display(), "could not load NVRTC's builtins");
            continue;
        }
        return Some(path);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_builtins_but_not_the_alternative_headers() {
        let dir = tempfile::tempdir().expect("dir");
        for name in [
            "libnvrtc.so.13",
            "libnvrtc-builtins.so.13.0",
            "libnvrtc-builtins.alt.so.13.0",
            "libcublas.so.13",
        ] {
            std::fs::write(dir.path().join(name), b"").expect("file");
        }
        let found = builtins_in(dir.path());
        assert_eq!(found, vec![dir.path().join("libnvrtc-builtins.so.13.0")]);
        assert!(builtins_in(&dir.path().join("missing")).is_empty());
    }
}
