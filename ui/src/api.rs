//! The loopback API switch in the status bar.
//!
//! The HTTP server lives in the app crate (the ui knows nothing of HTTP); the studio reaches it
//! through [`LoopbackApi`], handing it the engine it already has, so the studio's playback, its
//! exports and every API client share one scheduler. Starting binds a loopback port (a few
//! milliseconds, no network), so it is done on the UI thread when the author flips the switch.

use engine::Engine;

/// Why the API could not start, as the app's server said it. The ui cannot name the server's
/// error types (it knows nothing of HTTP), so it keeps the error whole and says it with its
/// causes, `what failed: why: why`.
#[derive(Debug)]
pub struct ApiError(Box<dyn std::error::Error + Send + Sync>);

impl ApiError {
    pub fn new(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self(error.into())
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut cause = self.0.source();
        while let Some(e) = cause {
            write!(f, ": {e}")?;
            cause = e.source();
        }
        Ok(())
    }
}

impl std::error::Error for ApiError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// A running API, as the status bar shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiInfo {
    /// Where clients reach it, e.g. `http://127.0.0.1:8717`.
    pub url: String,
    /// The bearer token clients send.
    pub token: String,
}

/// Starts and stops the API server over the studio's engine.
pub trait LoopbackApi: Send {
    /// Serves `engine` on the loopback interface.
    ///
    /// # Errors
    /// For the status bar: port taken, config dir unwritable…
    fn start(&mut self, engine: Engine) -> Result<ApiInfo, ApiError>;

    /// Stops serving (no-op when stopped). The scheduler keeps running for the studio.
    fn stop(&mut self);
}

/// The switch's state: the server (if the app gave one), what it is serving, the last error.
#[derive(Default)]
pub struct ApiSwitch {
    backend: Option<Box<dyn LoopbackApi>>,
    running: Option<ApiInfo>,
    error: Option<String>,
}

impl ApiSwitch {
    #[must_use]
    pub fn new(backend: Box<dyn LoopbackApi>) -> Self {
        Self {
            backend: Some(backend),
            running: None,
            error: None,
        }
    }

    /// Whether this studio can serve at all (the app provides the server).
    #[must_use]
    pub fn available(&self) -> bool {
        self.backend.is_some()
    }

    #[must_use]
    pub fn running(&self) -> Option<&ApiInfo> {
        self.running.as_ref()
    }

    #[must_use]
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Starts serving the studio's engine; the error, if any, is kept for the status bar.
    pub fn start(&mut self, engine: Engine) {
        let Some(backend) = self.backend.as_mut() else {
            return;
        };
        match backend.start(engine) {
            Ok(info) => {
                self.running = Some(info);
                self.error = None;
            }
            Err(e) => {
                self.running = None;
                self.error = Some(e.to_string());
            }
        }
    }

    pub fn stop(&mut self) {
        if let Some(backend) = self.backend.as_mut() {
            backend.stop();
        }
        self.running = None;
    }
}
