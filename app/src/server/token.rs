//! The API token: 32 random bytes as hex, made on the first `banter serve` and kept in
//! `$BANTER_CONFIG_DIR/api-token` (default: the platform config folder + `banter/`).
//!
//! Why a token on a loopback server: any local process or web page can reach 127.0.0.1, so the
//! port alone is no protection. The file is created with mode 0600 in one step (never chmod-ed
//! afterwards, which would leave a window where others could read it), and compared in constant
//! time so response timing does not leak it byte by byte.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Bytes of randomness in a token (64 hex characters).
const TOKEN_BYTES: usize = 32;
const FILE_NAME: &str = "api-token";

#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("no configuration folder on this system; set BANTER_CONFIG_DIR")]
    NoConfigDir,
    #[error("the API token file {path} is malformed (expected 64 hex characters); delete it and a new token is made on the next start")]
    Malformed { path: PathBuf },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// `$BANTER_CONFIG_DIR`, else the platform config folder + `banter`.
pub fn config_dir() -> Result<PathBuf, TokenError> {
    if let Some(dir) = std::env::var_os("BANTER_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    Ok(dirs::config_dir()
        .ok_or(TokenError::NoConfigDir)?
        .join("banter"))
}

/// The token file inside `dir`.
#[must_use]
pub fn token_path(dir: &Path) -> PathBuf {
    dir.join(FILE_NAME)
}

/// Reads the token from `dir`, creating it (and the folder) on first use.
pub fn load_or_create(dir: &Path) -> Result<String, TokenError> {
    let path = token_path(dir);
    match read(&path) {
        Ok(token) => return Ok(token),
        Err(TokenError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    create_private_dir(dir)?;
    let token = hex::encode(random_bytes()?);
    match create_private_file(&path) {
        Ok(mut file) => {
            file.write_all(token.as_bytes())?;
            file.write_all(b"\n")?;
            file.sync_all()?;
            Ok(token)
        }
        // Another `banter serve` made it between our read and create: use theirs.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => read(&path),
        Err(e) => Err(e.into()),
    }
}

fn read(path: &Path) -> Result<String, TokenError> {
    let mut text = String::new();
    fs_err::File::open(path)?.read_to_string(&mut text)?;
    let token = text.trim();
    if token.len() != TOKEN_BYTES * 2 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(TokenError::Malformed {
            path: path.to_owned(),
        });
    }
    Ok(token.to_ascii_lowercase())
}

fn random_bytes() -> Result<[u8; TOKEN_BYTES], TokenError> {
    // The kernel's CSPRNG; no extra crate for 32 bytes once per install.
    let mut bytes = [0u8; TOKEN_BYTES];
    fs_err::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes)
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    let result = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir);
    result.map_err(|e| std::io::Error::new(e.kind(), format!("creating {}: {e}", dir.display())))
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    fs_err::create_dir_all(dir)
}

#[cfg(unix)]
fn create_private_file(path: &Path) -> std::io::Result<fs_err::File> {
    use fs_err::os::unix::fs::OpenOptionsExt;
    fs_err::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

#[cfg(not(unix))]
fn create_private_file(path: &Path) -> std::io::Result<fs_err::File> {
    fs_err::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
}

/// Compares two secrets in time that depends only on their lengths.
#[must_use]
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_once_then_reused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let nested = dir.path().join("a").join("banter");
        let first = load_or_create(&nested).expect("create");
        assert_eq!(first.len(), 64);
        assert!(first.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(load_or_create(&nested).expect("reuse"), first);
        let other = tempfile::tempdir().expect("tempdir");
        assert_ne!(load_or_create(other.path()).expect("create"), first);
    }

    #[cfg(unix)]
    #[test]
    fn file_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        load_or_create(dir.path()).expect("create");
        let mode = std::fs::metadata(token_path(dir.path()))
            .expect("stat")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn malformed_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(token_path(dir.path()), "short").expect("write");
        let err = load_or_create(dir.path()).expect_err("malformed");
        assert!(err.to_string().contains("api-token"), "{err}");
    }

    #[test]
    fn compare() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
        assert!(!constant_time_eq(b"", b"a"));
    }
}
