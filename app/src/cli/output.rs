//! Where a command's audio may go, decided before any work starts.
//!
//! A finished file is written under a temporary name and renamed over the target, so a crash or
//! Ctrl-C never leaves half a file in its place. A rename replaces whatever the name pointed to,
//! so the target is looked at first, by what it *is* rather than what it is called:
//! - the input itself (`render same.txt -o same.txt`, or another name for the same file) is
//!   refused: the author's script must never become audio;
//! - a FIFO, a character device (`/dev/null`, a terminal) or a socket is written to as a stream,
//!   never renamed over;
//! - a folder, a block device, a missing folder or one this user cannot write in is refused
//!   with its reason, before a second of synthesis is spent.

use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::exit::BadInput;

/// Where the audio goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Standard output (`-o -`).
    Stdout,
    /// A regular file, or a name not taken yet: written beside it, renamed when complete.
    File(PathBuf),
    /// A FIFO, character device or socket: opened and written to, never replaced.
    Stream(PathBuf),
}

impl Output {
    /// Standard output or a stream: captions and the other side files have nowhere to go.
    #[must_use]
    pub fn is_stream(&self) -> bool {
        !matches!(self, Self::File(_))
    }

    /// How messages name it.
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            Self::Stdout => "standard output".to_owned(),
            Self::File(p) | Self::Stream(p) => p.display().to_string(),
        }
    }

    /// Copies the finished file at `from` into a stream target (standard output, a FIFO, a
    /// device). A reader that went away (`| head`) ends the copy quietly: what it wanted, it
    /// has. For [`Output::File`] this does nothing (the file is renamed into place instead).
    pub fn copy_from(&self, from: &Path) -> anyhow::Result<()> {
        if let Self::File(_) = self {
            return Ok(());
        }
        let mut file = fs_err::File::open(from)?;
        let result = match self {
            Self::File(_) => Ok(()),
            Self::Stdout => {
                let mut out = std::io::stdout().lock();
                std::io::copy(&mut file, &mut out).and_then(|_| out.flush())
            }
            Self::Stream(path) => fs_err::OpenOptions::new()
                .write(true)
                .open(path)
                .and_then(|mut out| std::io::copy(&mut file, &mut out).and_then(|_| out.flush())),
        };
        match result {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            Err(e) => Err(anyhow::Error::new(e).context(format!("writing to {}", self.describe()))),
            Ok(()) => Ok(()),
        }
    }
}

/// Removes what killed Banter processes left in the folder `output` goes to (and in the
/// system's temporary folder): a render's raw draft, a half-written file. Says so when it
/// removes anything ([`engine::scratch`] says which files qualify).
pub fn sweep_leftovers(output: &Path) {
    let folder = output
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if output.as_os_str() == "-" {
        engine::scratch::sweep_and_report(&[]);
    } else {
        engine::scratch::sweep_and_report(&[folder]);
    }
}

/// Decides where `output` goes, refusing it when writing there would replace one of `inputs`
/// (files the command reads; `-` and names that do not exist are skipped) or cannot work.
pub fn check(output: &Path, inputs: &[&Path]) -> Result<Output, BadInput> {
    if output.as_os_str() == "-" {
        return Ok(Output::Stdout);
    }
    let shown = output.display();
    match std::fs::metadata(output) {
        Ok(meta) => {
            for input in inputs {
                if input.as_os_str() == "-" {
                    continue;
                }
                if let Ok(theirs) = std::fs::metadata(input) {
                    if theirs.dev() == meta.dev() && theirs.ino() == meta.ino() {
                        return Err(BadInput(format!(
                            "{shown}: is the input {}; writing the audio there would replace \
                             it: choose another output",
                            input.display()
                        )));
                    }
                }
            }
            let kind = meta.file_type();
            if kind.is_dir() {
                Err(BadInput(format!("{shown}: is a folder; give a file name")))
            } else if kind.is_fifo() || kind.is_char_device() || kind.is_socket() {
                Ok(Output::Stream(output.to_path_buf()))
            } else if kind.is_file() {
                writable_folder(output)?;
                Ok(Output::File(output.to_path_buf()))
            } else {
                Err(BadInput(format!(
                    "{shown}: is a device, not a file; give a file name"
                )))
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            writable_folder(output)?;
            Ok(Output::File(output.to_path_buf()))
        }
        Err(e) => Err(BadInput(format!("{shown}: {e}"))),
    }
}

/// The folder `output` would be renamed into exists and this user may create files there:
/// found out by creating (and removing) a hidden file, the one test that sees permissions,
/// read-only mounts and ACLs as the real write will.
fn writable_folder(output: &Path) -> Result<(), BadInput> {
    let folder = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !folder.is_dir() {
        return Err(BadInput(format!(
            "{}: the folder {} does not exist",
            output.display(),
            folder.display()
        )));
    }
    tempfile::Builder::new()
        .prefix(&engine::scratch::prefix("check"))
        .tempfile_in(&folder)
        .map(drop)
        .map_err(|e| {
            BadInput(format!(
                "{}: cannot write in {}: {}",
                output.display(),
                folder.display(),
                e.kind()
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_input_is_refused_by_identity_not_by_name() {
        let dir = tempfile::tempdir().expect("temp dir");
        let script = dir.path().join("same.txt");
        std::fs::write(&script, "Ann: Hi.\n").expect("write");
        let err = check(&script, &[&script]).expect_err("the script itself");
        assert!(err.0.contains("is the input"), "{}", err.0);
        // Another name for the same file: a hard link, and a path through "..".
        let link = dir.path().join("link.wav");
        std::fs::hard_link(&script, &link).expect("hard link");
        assert!(check(&link, &[&script]).is_err());
        let dotted = dir.path().join("sub/../same.txt");
        std::fs::create_dir(dir.path().join("sub")).expect("mkdir");
        assert!(check(&dotted, &[&script]).is_err());
        // A different file of the same name elsewhere is fine.
        let other = dir.path().join("sub/same.txt");
        assert_eq!(
            check(&other, &[&script]).expect("a new file"),
            Output::File(other.clone())
        );
        assert_eq!(
            std::fs::read_to_string(&script).expect("read"),
            "Ann: Hi.\n"
        );
    }

    #[test]
    fn devices_and_fifos_are_streams_and_folders_are_refused() {
        assert_eq!(
            check(Path::new("/dev/null"), &[]).expect("a device"),
            Output::Stream("/dev/null".into())
        );
        assert_eq!(check(Path::new("-"), &[]).expect("stdout"), Output::Stdout);
        let dir = tempfile::tempdir().expect("temp dir");
        let fifo = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo");
        assert!(made.success());
        assert_eq!(
            check(&fifo, &[]).expect("a fifo"),
            Output::Stream(fifo.clone())
        );
        let err = check(dir.path(), &[]).expect_err("a folder");
        assert!(err.0.contains("is a folder"), "{}", err.0);
        let err = check(&dir.path().join("no/such/out.wav"), &[]).expect_err("no folder");
        assert!(err.0.contains("does not exist"), "{}", err.0);
        // No temporary is left behind by the check.
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(left, ["pipe"]);
    }
}
