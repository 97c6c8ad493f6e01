//! espeak-ng's data files, embedded in the binary and unpacked on first use.
//!
//! Phoneme output depends on the exact espeak-ng data version (1.52 here; Debian ships 1.51,
//! which phonemizes differently), and an installed Banter has no build directory to read it
//! from. So `engine/build.rs` packs the data that `espeak-rs-sys` compiled from the same source
//! as the linked library into a tar.gz that is embedded here. On first use it is unpacked into a
//! directory named after the espeak version and the archive's hash, so different builds never
//! share a stale copy:
//!
//! 1. `$BANTER_ESPEAK_DATA`, if set: an existing espeak-ng-data directory, used as is;
//! 2. else `<user cache dir>/banter/espeak-ng-data-<version>-<hash>` (`~/.cache/banter/...`);
//! 3. else, if that cannot be written or its path is too long for espeak (which keeps the path in
//!    a 160-byte buffer), `<temp dir>/banter-<user>/espeak-ng-data-<version>-<hash>`.
//!
//! Unpacking goes to a private directory that is renamed into place only when complete, so
//! concurrent first runs and interrupted ones never leave a half-written directory in use.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use super::PhonemeError;

mod manifest {
    include!(concat!(env!("OUT_DIR"), "/espeak_data_manifest.rs"));
}

/// Version of the espeak-ng whose data is embedded (and whose library is linked).
pub const ESPEAK_NG_VERSION: &str = manifest::ESPEAK_NG_VERSION;

/// The packed espeak-ng-data directory (see `engine/build.rs`).
static ARCHIVE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/espeak-ng-data.tar.gz"));

/// Written last into an unpacked directory; holds the archive hash.
const MARKER: &str = ".banter-complete";

/// Environment variable naming an espeak-ng-data directory to use instead of the embedded one.
pub const DATA_ENV: &str = "BANTER_ESPEAK_DATA";

/// Longest data path espeak handles (it appends `/lang/...` names to it in 160-byte buffers).
const MAX_PATH_LEN: usize = 120;

/// The espeak-ng data directory to initialise espeak with, unpacking the embedded data if needed.
pub(super) fn data_dir() -> Result<PathBuf, PhonemeError> {
    if let Some(dir) = std::env::var_os(DATA_ENV) {
        let dir = PathBuf::from(dir);
        if !dir.join("phontab").is_file() {
            return Err(PhonemeError::DataPath {
                path: dir,
                reason: format!("${DATA_ENV} names no espeak-ng-data directory (no phontab)"),
            });
        }
        return Ok(dir);
    }
    let mut first_error = None;
    for base in candidate_bases() {
        match install_in(&base) {
            Ok(dir) => return Ok(dir),
            Err(e) => {
                tracing::debug!(base = %base.display(), error = %e, "cannot unpack espeak-ng data here");
                first_error.get_or_insert(e);
            }
        }
    }
    Err(first_error.unwrap_or(PhonemeError::DataPath {
        path: PathBuf::new(),
        reason: "no cache or temporary directory available".into(),
    }))
}

/// Directories to unpack into, most preferred first.
fn candidate_bases() -> Vec<PathBuf> {
    let mut bases = Vec::new();
    if let Some(cache) = dirs::cache_dir() {
        bases.push(cache.join("banter"));
    }
    let user = std::env::var("USER")
        .ok()
        .filter(|u| {
            !u.is_empty()
                && u.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        })
        .unwrap_or_else(|| "user".to_owned());
    bases.push(std::env::temp_dir().join(format!("banter-{user}")));
    bases
}

fn dir_name() -> String {
    format!(
        "espeak-ng-data-{}-{}",
        manifest::ESPEAK_NG_VERSION,
        &manifest::ARCHIVE_SHA256[..16]
    )
}

/// The unpacked data under `base`, unpacking it first if it is missing or incomplete.
fn install_in(base: &Path) -> Result<PathBuf, PhonemeError> {
    let target = base.join(dir_name());
    if target.as_os_str().len() > MAX_PATH_LEN {
        return Err(PhonemeError::DataPath {
            path: target,
            reason: format!("longer than espeak's limit of {MAX_PATH_LEN} bytes"),
        });
    }
    if is_complete(&target) {
        return Ok(target);
    }
    fs_err::create_dir_all(base).map_err(io_error(base))?;
    let nonce = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let partial = base.join(format!(
        ".{}.partial-{}-{nonce}",
        dir_name(),
        std::process::id()
    ));
    unpack(&partial)?;
    if std::fs::rename(&partial, &target).is_ok() {
        return Ok(target);
    }
    // Someone else got there first (or left a broken copy behind).
    if is_complete(&target) {
        let _ = std::fs::remove_dir_all(&partial);
        return Ok(target);
    }
    let _ = std::fs::remove_dir_all(&target);
    if std::fs::rename(&partial, &target).is_ok() {
        return Ok(target);
    }
    // The broken copy cannot be replaced; our complete private copy works just as well.
    tracing::warn!(dir = %target.display(), "cannot replace broken espeak-ng data; using a private copy");
    Ok(partial)
}

/// Whether `dir` holds every embedded file at its size and the completion marker.
fn is_complete(dir: &Path) -> bool {
    let marker_ok = std::fs::read_to_string(dir.join(MARKER))
        .is_ok_and(|m| m.trim() == manifest::ARCHIVE_SHA256);
    marker_ok
        && manifest::FILES.iter().all(|(name, size)| {
            std::fs::metadata(dir.join(name)).is_ok_and(|m| m.is_file() && m.len() == *size)
        })
}

/// Unpacks the embedded archive into the new directory `dir` and marks it complete.
fn unpack(dir: &Path) -> Result<(), PhonemeError> {
    fs_err::create_dir_all(dir).map_err(io_error(dir))?;
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(ARCHIVE));
    archive.set_preserve_permissions(false);
    archive.set_preserve_mtime(false);
    archive.unpack(dir).map_err(|e| PhonemeError::DataUnpack {
        path: dir.to_path_buf(),
        source: e,
    })?;
    let marker = dir.join(MARKER);
    fs_err::write(&marker, manifest::ARCHIVE_SHA256).map_err(io_error(&marker))?;
    if is_complete(dir) {
        Ok(())
    } else {
        Err(PhonemeError::DataUnpack {
            path: dir.to_path_buf(),
            source: io::Error::other("unpacked files do not match the manifest"),
        })
    }
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> PhonemeError + '_ {
    move |source| PhonemeError::DataUnpack {
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_lists_kokoro_languages() {
        for name in [
            "phontab",
            "phondata",
            "phonindex",
            "intonations",
            "en_dict",
            "cmn_dict",
            "lang/gmw/en-US",
        ] {
            assert!(
                manifest::FILES
                    .iter()
                    .any(|(f, size)| *f == name && *size > 0),
                "{name} missing from the embedded espeak data"
            );
        }
        assert!(manifest::ESPEAK_NG_VERSION.starts_with("1.52"));
    }

    #[test]
    fn unpacks_into_fresh_dir_and_reuses_it() -> Result<(), Box<dyn std::error::Error>> {
        let tmp = tempfile::tempdir()?;
        let start = std::time::Instant::now();
        let first = install_in(tmp.path())?;
        let unpack_time = start.elapsed();
        let start = std::time::Instant::now();
        assert!(is_complete(&first));
        println!(
            "unpack {unpack_time:?}, completeness check {:?}",
            start.elapsed()
        );
        assert!(first.ends_with(dir_name()));
        // A second call reuses the directory; a damaged one is replaced.
        assert_eq!(install_in(tmp.path())?, first);
        std::fs::write(first.join("phontab"), b"broken")?;
        assert!(!is_complete(&first));
        assert_eq!(install_in(tmp.path())?, first);
        assert!(is_complete(&first));
        // No partial directories are left behind.
        let leftovers = std::fs::read_dir(tmp.path())?.count();
        assert_eq!(leftovers, 1);
        Ok(())
    }
}
