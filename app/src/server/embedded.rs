//! The API served from inside the studio: the same routes and security as `banter serve`, over
//! the engine the studio has already loaded, so the studio's playback, its exports and every
//! HTTP client share one scheduler (one model, one priority order).
//!
//! The server runs on its own thread with its own small tokio runtime, so starting and stopping
//! it never touches the window's thread; [`EmbeddedServer::stop`] (or dropping it) shuts the
//! listeners down and joins the thread.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use engine::Engine;
use tokio::sync::oneshot;

use super::listener::Listeners;
use super::scheduled::SchedulerBackend;
use super::security::Policy;
use super::{token, Limits, Shared};

/// Request bodies larger than this are refused (413), as by `banter serve`.
const BODY_LIMIT: usize = 1024 * 1024;
/// Idle connections are closed after this long.
const IDLE: Duration = Duration::from_secs(30);

/// A running loopback server; stops when dropped.
pub struct EmbeddedServer {
    url: String,
    token: String,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl EmbeddedServer {
    /// Binds 127.0.0.1 and ::1 on `port` (0 picks a free one) and serves `engine`, guarded by the token kept in `config_dir` (the one `banter serve` uses:
    /// [`token::config_dir`]). Returns once the port is bound, so the URL is live.
    pub fn start(engine: Engine, port: u16, config_dir: &Path) -> anyhow::Result<Self> {
        let token = token::load_or_create(config_dir)?;
        let shown_token = token.clone();
        let (ready_tx, ready_rx) = std::sync::mpsc::sync_channel(1);
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("studio-api".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .thread_name("studio-api-io")
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(anyhow::Error::new(e).context("async runtime")));
                        return;
                    }
                };
                let backend = SchedulerBackend::new(engine, runtime.handle().clone());
                let policy = Policy {
                    token,
                    allowed_origins: Vec::new(),
                    extra_hosts: Vec::new(),
                    any_ip_host: false,
                    body_limit: BODY_LIMIT,
                };
                let limits = Limits {
                    max_input_chars: 4096,
                    max_jobs: 64,
                };
                let state = Shared::new(policy, limits, Box::new(backend));
                runtime.block_on(async move {
                    let listeners = match Listeners::bind(None, port, IDLE).await {
                        Ok(l) => l,
                        Err(e) => {
                            let _ = ready_tx
                                .send(Err(anyhow::Error::new(e).context(format!("port {port}"))));
                            return;
                        }
                    };
                    let _ = ready_tx.send(Ok(listeners.local_addrs()));
                    tokio::select! {
                        result = super::serve(listeners, state) => {
                            if let Err(e) = result {
                                tracing::warn!("studio API stopped: {e}");
                            }
                        }
                        _ = stop_rx => {}
                    }
                });
            })
            .context("starting the API thread")?;
        let addrs = ready_rx
            .recv()
            .context("the API thread ended before binding")??;
        let first: SocketAddr = *addrs.first().context("no address bound")?;
        Ok(Self {
            url: format!("http://{first}"),
            token: shown_token,
            stop: Some(stop_tx),
            thread: Some(thread),
        })
    }

    /// Where clients reach it, e.g. `http://127.0.0.1:8717`.
    #[must_use]
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The bearer token clients must send.
    #[must_use]
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Stops serving and waits for the server thread.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for EmbeddedServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpStream;

    use engine::assets::ModelStore;
    use engine::device::DeviceChoice;

    use super::*;

    fn get(url: &str, path: &str, token: Option<&str>) -> std::io::Result<String> {
        let addr = url.trim_start_matches("http://");
        let mut stream = TcpStream::connect(addr)?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        let auth = token.map_or_else(String::new, |t| format!("Authorization: Bearer {t}\r\n"));
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}Connection: close\r\n\r\n"
        )?;
        let mut out = String::new();
        stream.read_to_string(&mut out)?;
        Ok(out)
    }

    #[test]
    fn serves_the_studio_engine_behind_its_token_and_stops() {
        let store = ModelStore::open_default().expect("model store location");
        if !store.is_ready() {
            assert!(
                std::env::var_os("CI").is_none(),
                "model assets missing in CI"
            );
            return;
        }
        let engine = Engine::load(&store, DeviceChoice::Cpu).expect("load");
        let config = tempfile::tempdir().expect("config dir");
        let server = EmbeddedServer::start(engine.clone(), 0, config.path()).expect("start");
        let url = server.url().to_owned();
        assert!(url.starts_with("http://127.0.0.1:"), "{url}");
        assert!(get(&url, "/health", None)
            .expect("health")
            .starts_with("HTTP/1.1 200"));
        let refused = get(&url, "/v1/voices", None).expect("voices");
        assert!(refused.starts_with("HTTP/1.1 401"), "{refused}");
        let voices = get(&url, "/v1/voices", Some(server.token())).expect("voices");
        assert!(voices.starts_with("HTTP/1.1 200") && voices.contains("af_heart"));
        // The token is the one `banter serve` would use from that config dir.
        let stored = token::load_or_create(config.path()).expect("token");
        assert_eq!(stored, server.token());
        server.stop();
        assert!(
            get(&url, "/health", None).is_err(),
            "stopped server still answers"
        );
        // The engine outlives the server: the studio keeps using it.
        assert_eq!(
            engine
                .metrics()
                .cancelled
                .load(std::sync::atomic::Ordering::Relaxed),
            0
        );
    }
}

/// The studio's API switch: `banter serve`'s port (8717) when free, else any free port; the
/// token from the user's config dir, shared with `banter serve`.
#[derive(Default)]
pub struct StudioApi {
    running: Option<EmbeddedServer>,
}

/// The port `banter serve` uses by default.
const STUDIO_PORT: u16 = 8717;

impl ui::api::LoopbackApi for StudioApi {
    fn start(&mut self, engine: Engine) -> Result<ui::api::ApiInfo, ui::api::ApiError> {
        self.stop();
        let dir = token::config_dir().map_err(ui::api::ApiError::new)?;
        let server = EmbeddedServer::start(engine.clone(), STUDIO_PORT, &dir)
            .or_else(|_| EmbeddedServer::start(engine, 0, &dir))
            .map_err(ui::api::ApiError::new)?;
        let info = ui::api::ApiInfo {
            url: server.url().to_owned(),
            token: server.token().to_owned(),
        };
        self.running = Some(server);
        Ok(info)
    }

    fn stop(&mut self) {
        if let Some(server) = self.running.take() {
            server.stop();
        }
    }
}
