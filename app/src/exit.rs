//! Exit statuses and how errors are shown: one line, `error: …`, then the causes.

use engine::render::RenderError;
use engine::synth::SynthError;
use engine::voicematch::VoiceMatchError;
use engine::SchedulerError;

/// The error was the user's input (bad text, voice, speed, path...), not a fault of ours.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadInput(pub String);

/// Prints the error and returns the exit status: 2 for bad input, 1 for everything else.
pub fn report(err: &anyhow::Error) -> i32 {
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

/// A panic is a bug, but the user still gets a readable message and exit status 1, not 101.
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
        eprintln!("error: internal error{location}: {payload}. Please report this bug.");
        std::process::exit(1);
    }));
}

#[cfg(test)]
mod input_error_tests {
    use engine::{EncodeError, ModelError};

    use super::*;

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
