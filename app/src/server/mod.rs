//! `banter serve`: an OpenAI-compatible text-to-speech API on the loopback interface.
//!
//! Layout: [`listener`] binds and accepts (loopback only unless told otherwise, idle
//! connections closed), [`security`] guards every request (Host, Origin, token, body size),
//! [`routes`] answers, [`backend`] is the seam to the speech engine, [`body`] streams audio out,
//! [`format`](mod@format) and [`sse`] encode it, [`metrics`] counts, [`token`] keeps the API token and
//! [`errors`] is the one error type clients see. [`dialogue`] speaks a whole script
//! (`POST /v1/dialogue`) over the same scheduler; [`embedded`] runs it inside the studio. Why a
//! server at all: editors, chat tools and scripts already speak OpenAI's `/v1/audio/speech`;
//! pointing them at Banter gives them Kokoro's voices locally.

pub mod backend;
mod body;
pub mod dialogue;
mod elevenlabs_voices;
pub mod embedded;
pub mod errors;
pub(crate) mod format;
pub(crate) mod input_language;
pub mod listener;
mod metrics;
mod routes;
pub mod scheduled;
mod scheduled_follow;
pub mod security;
mod sse;
mod sse_dialogue;
mod timestamped;
mod timestamped_dialogue;
pub mod token;
pub mod ws;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use backend::SpeechBackend;
use listener::{Connection, Listeners};
use metrics::Metrics;
use security::Policy;

/// Limits on the work one request may ask for.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Longest `input` accepted, in characters.
    pub max_input_chars: usize,
    /// Speech jobs accepted at once (waiting or streaming); beyond it, 429.
    pub max_jobs: usize,
}

/// Everything the handlers share.
pub struct Shared {
    pub policy: Policy,
    pub limits: Limits,
    pub backend: Box<dyn SpeechBackend>,
    metrics: Metrics,
    jobs: JobSlots,
}

pub type AppState = Arc<Shared>;

impl Shared {
    #[must_use]
    pub fn new(policy: Policy, limits: Limits, backend: Box<dyn SpeechBackend>) -> AppState {
        Arc::new(Self {
            policy,
            limits,
            backend,
            metrics: Metrics::default(),
            jobs: JobSlots::default(),
        })
    }

    /// A state for handler tests: token `t`, no extra origins or hosts, a 64 KiB body limit,
    /// 100 characters and 4 jobs at most.
    #[cfg(test)]
    pub(crate) fn for_tests(backend: Box<dyn SpeechBackend>) -> AppState {
        Self::new(
            Policy {
                token: "t".to_owned(),
                allowed_origins: Vec::new(),
                extra_hosts: Vec::new(),
                any_ip_host: false,
                body_limit: 1 << 16,
            },
            Limits {
                max_input_chars: 100,
                max_jobs: 4,
            },
            backend,
        )
    }
}

/// Counts accepted speech jobs; a [`JobSlot`] gives its place back when dropped.
#[derive(Debug, Default)]
struct JobSlots(Arc<AtomicUsize>);

impl JobSlots {
    fn acquire(&self, max: usize) -> Option<JobSlot> {
        let taken = self
            .0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            });
        taken.ok().map(|_| JobSlot(Arc::clone(&self.0)))
    }
}

#[derive(Debug)]
pub struct JobSlot(Arc<AtomicUsize>);

impl Drop for JobSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Serves `state` on `listeners`; returns only if the server fails.
pub async fn serve(listeners: Listeners, state: AppState) -> std::io::Result<()> {
    let app = routes::router(state).into_make_service_with_connect_info::<Connection>();
    axum::serve(listeners, app).await
}
