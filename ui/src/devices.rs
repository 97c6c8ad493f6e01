//! Choosing the audio output device (the status bar's Output picker), and hearing when the one
//! in use goes away (the backend reopens the default device off the UI thread and reports
//! [`DeviceNews`](crate::audio::DeviceNews); the status bar shows a device that could not be replaced as `audio_error`).
//!
//! Listing devices and opening one probe the sound system, which can take a while on some
//! hosts, so both run on a worker thread through an [`OutputCatalog`]; the UI thread only
//! attaches the opened device to the play buffer. [`CpalCatalog`] lists cpal's output devices;
//! [`MockCatalog`] stands in for tests with two named mock outputs.

use std::sync::Arc;

use crate::audio::{AudioOut, AudioOutError, CpalOut, MockOut};
use crate::work::SpawnError;

/// Why the output devices could not be listed.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    #[error("choosing an output device is not available here")]
    NotAvailable,
    #[error(transparent)]
    Audio(#[from] AudioOutError),
    #[error(transparent)]
    Spawn(#[from] SpawnError),
}

/// The output devices there are, and how to open one.
pub trait OutputCatalog: Send + Sync {
    /// Device names, the default first.
    fn names(&self) -> Result<Vec<String>, ListError>;
    /// Opens the device called `name` (not yet playing: the studio attaches its buffer).
    fn open(&self, name: &str) -> Result<Box<dyn AudioOut + Send>, AudioOutError>;
}

/// No choice of device (the default until the window sets one).
pub struct NoCatalog;

impl OutputCatalog for NoCatalog {
    fn names(&self) -> Result<Vec<String>, ListError> {
        Err(ListError::NotAvailable)
    }

    fn open(&self, name: &str) -> Result<Box<dyn AudioOut + Send>, AudioOutError> {
        Err(AudioOutError::Open {
            device: name.to_owned(),
            reason: "choosing an output device is not available here".into(),
        })
    }
}

/// cpal's output devices on the default host.
pub struct CpalCatalog;

impl OutputCatalog for CpalCatalog {
    fn names(&self) -> Result<Vec<String>, ListError> {
        Ok(CpalOut::output_names()?)
    }

    fn open(&self, name: &str) -> Result<Box<dyn AudioOut + Send>, AudioOutError> {
        Ok(Box::new(CpalOut::open_named(name)?))
    }
}

/// Two mock outputs sharing one recorder (tests).
pub struct MockCatalog(pub MockOut);

/// The mock outputs' names.
pub const MOCK_OUTPUTS: [&str; 2] = ["Mock speakers", "Mock headphones"];

impl OutputCatalog for MockCatalog {
    fn names(&self) -> Result<Vec<String>, ListError> {
        Ok(MOCK_OUTPUTS.iter().map(|s| (*s).to_owned()).collect())
    }

    fn open(&self, name: &str) -> Result<Box<dyn AudioOut + Send>, AudioOutError> {
        if !MOCK_OUTPUTS.contains(&name) {
            return Err(AudioOutError::Open {
                device: name.to_owned(),
                reason: "no such mock output".into(),
            });
        }
        Ok(Box::new(self.0.named(name)))
    }
}

/// What the device workers report (on the studio's background channel for outputs).
pub enum DeviceEvent {
    Names(Result<Vec<String>, ListError>),
    Opened {
        name: String,
        out: Result<Box<dyn AudioOut + Send>, AudioOutError>,
    },
}

/// The picker's state.
pub struct Outputs {
    pub catalog: Arc<dyn OutputCatalog>,
    pub names: Vec<String>,
    pub error: Option<ListError>,
    /// A device is being opened.
    pub opening: Option<String>,
}

impl Default for Outputs {
    fn default() -> Self {
        Self {
            catalog: Arc::new(NoCatalog),
            names: Vec::new(),
            error: None,
            opening: None,
        }
    }
}
