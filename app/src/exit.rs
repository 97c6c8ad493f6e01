//! Exit statuses and how errors are shown: one line, `error: …`, then the causes.

use engine::render::RenderError;
use engine::voicematch::VoiceMatchError;
use engine::SchedulerError;
use engine::SynthError;

/// The error was the user's input (bad text, voice, speed, path...), not a fault of ours.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadInput(pub String);

/// The user stopped the command (Ctrl-C, `kill`): not an error, but not a success either. The
/// command returns it like an error, so every destructor on the way out runs (temporaries are
/// removed), and [`report`] prints its message and gives status 130.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Stopped(pub String);

/// Status 130 for a user who stopped the command.
pub const STOPPED: i32 = 130;

/// A second Ctrl-C while a command is stopping: leave at once, without waiting for it.
pub fn stop_now() -> ! {
    std::process::exit(STOPPED)
}

/// Prints the error and returns the exit status: 2 for bad input, 130 for a command the user
/// stopped, 1 for everything else.
pub fn report(err: &anyhow::Error) -> i32 {
    if let Some(stopped) = err.downcast_ref::<Stopped>() {
        eprintln!("{stopped}");
        return STOPPED;
    }
    let bad_input = err.chain().any(is_input_error);
    let mut message = err.to_string();
    for cause in err.chain().skip(1) {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
    }
    eprintln!("error: {}", message.replace('\n', " "));
    if bad_input {
        2
    } else {
        1
    }
}

/// Whether one error of a chain says the user's input was at fault. The engine's wrappers are
/// asked too: `#[error(transparent)]` hides the wrapped error from the chain, so a model error
/// inside a scheduler or render error would otherwise read as an internal fault.
fn is_input_error(cause: &(dyn std::error::Error + 'static)) -> bool {
    cause.downcast_ref::<BadInput>().is_some()
        || cause.downcast_ref::<clap::Error>().is_some()
        || cause
            .downcast_ref::<SynthError>()
            .is_some_and(SynthError::is_input_error)
        || cause
            .downcast_ref::<SchedulerError>()
            .is_some_and(SchedulerError::is_input_error)
        || cause
            .downcast_ref::<RenderError>()
            .is_some_and(RenderError::is_input_error)
        || cause
            .downcast_ref::<VoiceMatchError>()
            .is_some_and(VoiceMatchError::is_input_error)
}

/// A panic is a bug. Outside a guard the user gets one readable line and exit status 1 (not
/// Rust's 101 and its backtrace hint); inside [`engine::panic_guard::catch`] (the decoder's guard
/// against malformed clips) the hook says nothing and lets the panic unwind to the guard, which
/// reports it as an ordinary error.
///
/// An unguarded panic ends the process here, on whichever thread it happens, rather than
/// unwinding to `main`: most threads (the model thread, the studio's workers, the server's
/// runtime) have nobody to report to, and a thread that dies holding work leaves its callers
/// waiting forever. Exiting at once is the answer that never hangs; output files are safe
/// either way, since renders write temporaries and rename them only when complete.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let location = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let payload = info
            .payload()
            .downcast_ref::<&str>()
            .map(ToString::to_string)
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        if engine::panic_guard::is_catching() {
            // Not fatal: the guard turns it into an error the user sees; keep the detail for
            // `BANTER_LOG=debug`.
            tracing::debug!("panic caught by its guard{location}: {payload}");
            return;
        }
        eprintln!("error: internal error{location}: {payload}. Please report this bug.");
        std::process::exit(1);
    }));
}

#[cfg(test)]
mod input_error_tests {
    use engine::{EncodeError, ModelError};

    use super::*;

    /// A command the user stopped (Ctrl-C, kill) leaves with 130 through the same door as
    /// every error, so its destructors have run.
    #[test]
    fn a_stopped_command_is_status_130() {
        let stopped = anyhow::Error::new(Stopped("render cancelled".into()));
        assert_eq!(report(&stopped), STOPPED);
        assert_eq!(report(&anyhow::anyhow!("boom")), 1);
    }

    /// An input error found deep in the model (too many phonemes for one pass) still exits 2
    /// however it is wrapped on its way out, and a model fault exits 1.
    #[test]
    fn model_input_errors_exit_2_through_every_wrapper() {
        let too_long = || {
            SynthError::Model(ModelError::Encode(EncodeError::TooLong {
                len: 600,
                max: 510,
            }))
        };
        let wrapped: Vec<anyhow::Error> = vec![
            too_long().into(),
            SchedulerError::Synth(too_long()).into(),
            RenderError::from(SchedulerError::Synth(too_long())).into(),
            anyhow::Error::from(SchedulerError::Synth(too_long())).context("rendering line 3"),
        ];
        for e in &wrapped {
            assert_eq!(report(e), 2, "{e:#}");
        }
        let fault = SchedulerError::Synth(SynthError::Start(std::io::Error::other("no threads")));
        assert_eq!(report(&fault.into()), 1);
        assert_eq!(report(&SchedulerError::Shutdown.into()), 1);
    }
}

#[cfg(test)]
mod tests {
    use std::process::{Command, Output};

    /// Set for the child process, which then plays the scenario instead of checking it.
    const CHILD: &str = "BANTER_PANIC_HOOK_CHILD";

    /// Runs this module's test `name` again in a child process of the test binary with [`CHILD`]
    /// set: the hook is process-wide and exits on an unguarded panic, so it must not be installed
    /// where the other tests run.
    fn in_child(name: &str) -> (Output, String, String) {
        let module = module_path!()
            .split_once("::")
            .map_or(module_path!(), |(_, path)| path);
        let out = Command::new(std::env::current_exe().expect("test binary"))
            .args([&format!("{module}::{name}"), "--exact", "--nocapture"])
            .args(["--test-threads", "1"])
            .env(CHILD, "1")
            .output()
            .expect("test binary runs");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out, stdout, stderr)
    }

    /// The symphonia guard's case: a panic inside `panic_guard::catch` reaches the guard, the
    /// process goes on, and nothing says "internal error". Before the fix the hook called
    /// `exit(1)` first, so the guard never ran.
    #[test]
    fn a_guarded_panic_unwinds_to_its_guard_and_the_process_goes_on() {
        if std::env::var_os(CHILD).is_some() {
            super::install_panic_hook();
            let caught = engine::panic_guard::catch(|| panic!("the decoder gave up"));
            assert!(caught.is_err());
            println!("still running after the guarded panic");
            return;
        }
        let (out, stdout, stderr) =
            in_child("a_guarded_panic_unwinds_to_its_guard_and_the_process_goes_on");
        assert!(
            out.status.success() && stdout.contains("still running after the guarded panic"),
            "{:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
            out.status
        );
        assert!(!stderr.contains("internal error"), "{stderr}");
    }

    /// An unguarded panic (even after a guard has come and gone on the same thread) is still one
    /// `error: internal error…` line and exit status 1, not 101.
    #[test]
    fn an_unguarded_panic_is_one_line_and_exit_status_1() {
        if std::env::var_os(CHILD).is_some() {
            super::install_panic_hook();
            let _ = engine::panic_guard::catch(|| panic!("caught"));
            panic!("not caught");
        }
        let (out, stdout, stderr) = in_child("an_unguarded_panic_is_one_line_and_exit_status_1");
        assert_eq!(
            out.status.code(),
            Some(1),
            "stdout:\n{stdout}\nstderr:\n{stderr}"
        );
        let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("error")).collect();
        assert_eq!(errors.len(), 1, "{stderr}");
        assert!(
            errors[0].starts_with("error: internal error at app/src/exit.rs:")
                && errors[0].ends_with(": not caught. Please report this bug."),
            "{stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}
