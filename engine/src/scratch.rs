//! Temporary files and folders: one naming rule, so that what a killed process left behind can
//! be recognised and swept by the next one.
//!
//! Banter writes every file the user keeps to a temporary beside it and renames it into place
//! (a crash never leaves half an episode under the real name), and renders an episode through
//! a raw draft on the same file system. A SIGTERM or Ctrl+C removes those on the way out; a
//! SIGKILL, a power cut or the OOM killer cannot. So every temporary is named
//! `.banter-PID-WHAT…` (hidden, with the process that owns it), and [`sweep`] removes, from a
//! folder about to be written to, those whose process is gone. A temporary of a live process,
//! or one touched in the last minute (a process in another PID namespace, whose PID means
//! nothing here), is never touched; neither is anything not named by this rule.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// What every temporary's name starts with.
const TAG: &str = ".banter-";

/// How long a dead process's temporary must have been left alone before it is swept.
const QUIET: Duration = Duration::from_mins(1);

/// The prefix of this process's temporaries of one kind (`render`, `say`, `check`…):
/// `.banter-PID-WHAT-`, for `tempfile::Builder::prefix` or a fixed name after it.
#[must_use]
pub fn prefix(what: &str) -> String {
    format!("{TAG}{}-{what}-", std::process::id())
}

/// The process a temporary's name says owns it (`None`: not a temporary of Banter's).
fn owner(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(TAG)?;
    let (pid, what) = rest.split_once('-')?;
    if what.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// Whether process `pid` is running (on Linux, its `/proc` entry exists; elsewhere, assumed).
fn alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        Path::new("/proc").join(pid.to_string()).exists()
    } else {
        true
    }
}

/// Removes from `dir` the temporaries of processes that are no longer running and that nobody
/// has touched for a minute: files, and folders with what is in them. Returns what it removed,
/// so the caller can say so; a folder that cannot be read, or an entry that cannot be removed,
/// is left as it is (sweeping is housekeeping, never a reason to fail the work that asked).
pub fn sweep(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let now = SystemTime::now();
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(owner) else {
            continue;
        };
        if pid == std::process::id() || alive(pid) {
            continue;
        }
        // symlink_metadata: a link named like a temporary is removed as a link, never followed.
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        let quiet = meta
            .modified()
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .is_some_and(|age| age >= QUIET);
        if !quiet {
            continue;
        }
        let path = entry.path();
        let gone = if meta.is_dir() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        if gone.is_ok() {
            tracing::info!(
                "removed {}, left by process {pid}, which is gone",
                path.display()
            );
            removed.push(path);
        }
    }
    removed
}

/// [`sweep`] for the folders a command is about to write to and the system's temporary
/// folder, with one line on standard error when anything was removed (never silent: the user
/// may wonder where a file went).
pub fn sweep_and_report(dirs: &[&Path]) {
    let mut removed = Vec::new();
    let temp = std::env::temp_dir();
    for dir in dirs.iter().copied().chain([temp.as_path()]) {
        removed.extend(sweep(dir));
    }
    if let Some(first) = removed.first() {
        eprintln!(
            "note: {} ({}{})",
            describe(removed.len(), None),
            first.display(),
            if removed.len() > 1 { ", …" } else { "" }
        );
    }
}

/// The sentence that reports a sweep of `count` files (in `dir`, when given).
#[must_use]
pub fn describe(count: usize, dir: Option<&Path>) -> String {
    format!(
        "removed {count} temporary file{} left{} by a Banter process that was killed",
        if count == 1 { "" } else { "s" },
        dir.map(|d| format!(" in {}", d.display()))
            .unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PID no process has: above the kernel's `pid_max` limit (4,194,304).
    const DEAD: u32 = 4_194_305;

    fn age(path: &Path, secs: u64) {
        let when = SystemTime::now() - Duration::from_secs(secs);
        let f = std::fs::File::options()
            .write(true)
            .open(path)
            .expect("open");
        f.set_modified(when).expect("set mtime");
    }

    #[test]
    fn names_carry_their_owner() {
        let p = prefix("render");
        assert_eq!(owner(&format!("{p}x1y2.raw")), Some(std::process::id()));
        assert_eq!(owner(".banter-12-say.wav"), Some(12));
        for not_ours in [
            ".banter-x-render",
            ".banter-12-",
            "banter-12-x",
            ".banter-",
            "episode.wav",
        ] {
            assert_eq!(owner(not_ours), None, "{not_ours}");
        }
    }

    #[test]
    fn only_quiet_temporaries_of_dead_processes_are_swept() {
        let dir = tempfile::tempdir().expect("temp dir");
        let dead_old = dir.path().join(format!(".banter-{DEAD}-render-ab.raw"));
        let dead_fresh = dir.path().join(format!(".banter-{DEAD}-say-cd.wav"));
        let live_old = dir.path().join(format!("{}old.part", prefix("check")));
        let user_file = dir.path().join("episode.wav");
        let dead_dir = dir.path().join(format!(".banter-{DEAD}-stream-ef"));
        for f in [&dead_old, &dead_fresh, &live_old, &user_file] {
            std::fs::write(f, b"x").expect("write");
        }
        std::fs::create_dir(&dead_dir).expect("mkdir");
        std::fs::write(dead_dir.join("episode.wav"), b"x").expect("write");
        for f in [&dead_old, &live_old, &user_file] {
            age(f, 3600);
        }
        // A folder's time is its own entry's; age it through a file handle on the folder.
        let when = SystemTime::now() - Duration::from_hours(1);
        std::fs::File::open(&dead_dir)
            .and_then(|f| f.set_modified(when))
            .expect("age folder");

        let mut removed = sweep(dir.path());
        removed.sort();
        let mut expected = vec![dead_old.clone(), dead_dir.clone()];
        expected.sort();
        assert_eq!(removed, expected);
        assert!(!dead_old.exists() && !dead_dir.exists());
        assert!(
            dead_fresh.exists(),
            "touched in the last minute: maybe another namespace's"
        );
        assert!(live_old.exists(), "this process is alive");
        assert!(user_file.exists(), "not a temporary");
        assert!(sweep(&dir.path().join("missing")).is_empty());
    }
}
