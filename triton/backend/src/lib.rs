//! Banter's engine as a Triton Inference Server backend: `libtriton_banter.so`, model `banter`.
//!
//! Triton owns the network side (HTTP/gRPC, `KServe` v2, health, metrics, many clients); the
//! backend gives each model instance one [`engine::Engine`], so every stream of that instance
//! is scheduled by Banter's one model thread (windows for listeners, exact whole segments for
//! renders, cancellation) exactly as in `banter serve`. The model is *decoupled*: a request is
//! answered by one response per audio chunk, then a final flag, from a thread of its own, so
//! `Execute` returns at once and Triton keeps feeding the instance's scheduler.
//!
//! The tensors are those of [`triton_wire::protocol`], parsed by its one checked parser.
//!
//! | file | what it does |
//! |---|---|
//! | `ffi` | the C API this backend calls, declared by hand, behind safe wrappers |
//! | `entry` | the exported `TRITONBACKEND_*` functions, each guarded against panics |
//! | `config` | the model's `config.pbtxt` (as Triton's JSON): store, precision, decoupled |
//! | `model`, `instance` | per model: its configuration; per instance: its engine and streams |
//! | `execute` | a batch of requests: read, check, map onto the engine, start each stream |
//! | `plan` | a checked request → segments, speech request and mode (no Triton) |
//! | `stream` | one stream's thread: engine events → resampled chunks → responses |

use std::fmt;

pub mod config;
mod entry;
mod execute;
pub mod ffi;
pub mod instance;
pub mod model;
pub mod plan;
mod stream;

pub use ffi::Code;

/// Why something failed, with the `TRITONSERVER_Error_Code` Triton reports it as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub code: Code,
    pub message: String,
}

impl Failure {
    #[must_use]
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// The client's input was at fault.
    #[must_use]
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(Code::InvalidArg, message)
    }

    /// Banter or Triton was at fault.
    #[must_use]
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(Code::Internal, message)
    }

    /// An engine error, keeping whether the input or the engine was at fault.
    #[must_use]
    pub fn from_scheduler(error: &engine::SchedulerError) -> Self {
        if error.is_input_error() {
            Self::invalid(error.to_string())
        } else {
            Self::internal(error.to_string())
        }
    }

    /// A panic's payload, as an internal error (a panic is a bug; it must not reach C).
    #[must_use]
    pub fn from_panic(payload: &(dyn std::any::Any + Send)) -> Self {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_owned());
        Self::internal(format!("internal error in the banter backend: {what}"))
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<triton_wire::protocol::FieldError> for Failure {
    fn from(error: triton_wire::protocol::FieldError) -> Self {
        Self::invalid(error.to_string())
    }
}

/// Runs `f` under [`engine::panic_guard::catch`]; a panic becomes an internal [`Failure`].
pub(crate) fn guarded<T>(f: impl FnOnce() -> Result<T, Failure>) -> Result<T, Failure> {
    engine::panic_guard::catch(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|payload| Err(Failure::from_panic(payload.as_ref())))
}
