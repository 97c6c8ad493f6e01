//! Exit statuses and how errors are shown: one line, `error: …`, then the causes.

use engine::synth::SynthError;

/// The error was the user's input (bad text, voice, speed, path...), not a fault of ours.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadInput(pub String);

/// Prints the error and returns the exit status: 2 for bad input, 1 for everything else.
pub fn report(err: &anyhow::Error) -> i32 {
    let bad_input = err.chain().any(|cause| {
        cause.downcast_ref::<BadInput>().is_some()
            || cause
                .downcast_ref::<SynthError>()
                .is_some_and(SynthError::is_input_error)
            || cause.downcast_ref::<clap::Error>().is_some()
    });
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
