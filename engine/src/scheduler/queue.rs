//! The queue in front of the model thread: starting it, and submitting or opening streams in
//! their priority class. Cheap to clone; the last clone stops the thread.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use tokio::sync::mpsc;

use super::config::SchedulerConfig;
use super::cost::CostModel;
use super::error::SchedulerError;
use super::feed::{LocalFeed, StreamFeed};
use super::handle::LocalTie;
use super::handle::StreamHandle;
use super::metrics::Metrics;
use super::model::{SegmentModel, Windowing};
use super::policy::Mode;
use super::pool;
use super::run::run;
use super::state::{Entry, Link, Owner, Shared, State};
use crate::speech::{Segment, SpeechRequest, SynthError};

/// The queue in front of the model thread (cheap to clone); [`crate::Engine`] holds it.
#[derive(Clone)]
pub(crate) struct Scheduler {
    pub(super) shared: Arc<Shared>,
    pub(super) _owner: Arc<Owner>,
}

impl Scheduler {
    /// Starts the model thread, which runs `load` to make the model and then serves streams
    /// with it until the last handle is dropped. Returns once the model is loaded, with the
    /// model's device; a load error is returned as it is.
    pub(crate) fn start<L>(
        load: L,
        config: SchedulerConfig,
    ) -> Result<(Self, candle_core::Device), SynthError>
    where
        L: FnOnce() -> Result<Box<dyn SegmentModel>, SynthError> + Send + 'static,
    {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                streams: Vec::new(),
                next_id: 0,
                shutdown: false,
                cost: CostModel::default(),
                windowing: Windowing::default(),
                tasks: std::collections::VecDeque::new(),
            }),
            wake: Condvar::new(),
            metrics: Arc::new(Metrics::default()),
            config,
        });
        let worker = Arc::clone(&shared);
        let (ready_tx, ready_rx) = std::sync::mpsc::sync_channel(1);
        std::thread::Builder::new()
            .name("banter-model".into())
            .spawn(move || {
                let pool = pool::model_pool();
                let serve = move || match load() {
                    Ok(model) => {
                        worker.lock().windowing = model.windowing();
                        let _ = ready_tx.send(Ok(model.device()));
                        run(&worker, model.as_ref());
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                    }
                };
                match pool {
                    Some(pool) => pool.install(serve),
                    None => serve(),
                }
            })
            .map_err(SynthError::Start)?;
        let device = ready_rx.recv().map_err(|_| {
            SynthError::Start(std::io::Error::other(
                "the model thread stopped while loading",
            ))
        })??;
        Ok((
            Self {
                _owner: Arc::new(Owner(Arc::clone(&shared))),
                shared,
            },
            device,
        ))
    }

    #[must_use]
    pub fn metrics(&self) -> Arc<Metrics> {
        Arc::clone(&self.shared.metrics)
    }

    /// Runs `f` with the model on the model thread, between two steps, and waits for its
    /// result. Every stream waits while it runs: for measurements of the model itself (the
    /// batch benchmark), never for serving.
    pub(crate) fn run_on_model<T, F>(&self, f: F) -> Result<T, SchedulerError>
    where
        T: Send + 'static,
        F: FnOnce(&dyn SegmentModel) -> T + Send + 'static,
    {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        {
            let mut st = self.shared.lock();
            if st.shutdown {
                return Err(SchedulerError::Shutdown);
            }
            st.tasks.push_back(Box::new(move |model| {
                let _ = tx.send(f(model));
            }));
        }
        self.shared.wake.notify_all();
        rx.recv().map_err(|_| SchedulerError::Shutdown)
    }

    #[must_use]
    pub fn config(&self) -> SchedulerConfig {
        self.shared.config
    }

    /// Queues already-made segments. Interactive streams are decoded in windows when the
    /// configuration says so ([`SchedulerConfig::windowed`]).
    pub fn submit(
        &self,
        segments: Vec<Segment>,
        request: SpeechRequest,
        mode: Mode,
    ) -> Result<StreamHandle, SchedulerError> {
        let windowed = self.shared.config.windowed && mode == Mode::Interactive;
        self.enqueue(segments, request, mode, windowed)
    }

    /// Queues segments to be decoded whole, exactly as one pass computes them, for consumers
    /// that wait for a sentence's end anyway (the studio's playback trims whole sentences) and
    /// gain nothing from windows.
    pub fn submit_whole(
        &self,
        segments: Vec<Segment>,
        request: SpeechRequest,
        mode: Mode,
    ) -> Result<StreamHandle, SchedulerError> {
        self.enqueue(segments, request, mode, false)
    }

    /// Opens a stream whose segments arrive over time (text still being written): push them
    /// with the returned [`StreamFeed`] as they are made, close it when the text is complete.
    /// The stream stays in the queue while it waits for text, runnable only when it has some;
    /// its audio is windowed like any interactive stream's, and when its listener ran out of
    /// audio before new text came, the next segment starts with a short window again and is
    /// scheduled as a newcomer (first audio of the resumed speech counts like a new stream's).
    pub fn open(
        &self,
        request: SpeechRequest,
        mode: Mode,
    ) -> Result<(StreamFeed, StreamHandle), SchedulerError> {
        let windowed = self.shared.config.windowed && mode == Mode::Interactive;
        let (id, handle) = self.insert(Vec::new(), request, mode, windowed, true)?;
        Ok((
            StreamFeed::new(Box::new(LocalFeed {
                id,
                shared: Arc::clone(&self.shared),
            })),
            handle,
        ))
    }

    fn enqueue(
        &self,
        segments: Vec<Segment>,
        request: SpeechRequest,
        mode: Mode,
        windowed: bool,
    ) -> Result<StreamHandle, SchedulerError> {
        self.insert(segments, request, mode, windowed, false)
            .map(|(_, handle)| handle)
    }

    fn insert(
        &self,
        segments: Vec<Segment>,
        request: SpeechRequest,
        mode: Mode,
        windowed: bool,
        open: bool,
    ) -> Result<(u64, StreamHandle), SchedulerError> {
        let link = Arc::new(Link::default());
        let (tx, rx) = mpsc::channel(1024);
        if segments.is_empty() && !open {
            // Nothing to say: the channel closes at once (its sender is dropped here).
            Metrics::add(&self.shared.metrics.submitted, 1);
            Metrics::add(&self.shared.metrics.completed, 1);
            let handle = StreamHandle::new(
                rx,
                Arc::new(LocalTie {
                    link,
                    shared: Arc::clone(&self.shared),
                }),
            );
            return Ok((u64::MAX, handle));
        }
        let mut st = self.shared.lock();
        if st.shutdown {
            return Err(SchedulerError::Shutdown);
        }
        // Streams waiting for their first audio; an open stream still waiting for its text is
        // not waiting for the model.
        let waiting = st
            .streams
            .iter()
            .filter(|e| {
                e.first_audio.is_none() && e.mode == Mode::Interactive && !e.segments.is_empty()
            })
            .count();
        if mode == Mode::Interactive && waiting >= self.shared.config.max_queue {
            Metrics::add(&self.shared.metrics.rejected, 1);
            return Err(SchedulerError::QueueFull { waiting });
        }
        let id = st.next_id;
        st.next_id += 1;
        let now = Instant::now();
        st.streams.push(Entry {
            id,
            mode,
            arrived: now,
            ready_since: now,
            segments,
            request,
            job: None,
            next: 0,
            first_audio: None,
            produced: 0.0,
            throttled: false,
            windowed,
            open,
            resumed_at: 0,
            link: Arc::clone(&link),
            tx,
        });
        drop(st);
        Metrics::add(&self.shared.metrics.submitted, 1);
        self.shared.wake.notify_all();
        Ok((
            id,
            StreamHandle::new(
                rx,
                Arc::new(LocalTie {
                    link,
                    shared: Arc::clone(&self.shared),
                }),
            ),
        ))
    }
}
