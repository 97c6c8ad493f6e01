//! The model thread's rayon pool, and keeping its other workers running during a step.
//!
//! A step is thousands of short parallel sections (a convolution, a norm, an activation: a
//! fork and a join of about a millisecond each). Run from a thread outside the pool, each
//! section woke a sleeping worker and then put the model thread to sleep until the workers
//! were done: two wake-ups per section, ~11 000 voluntary context switches for the `long`
//! passage. On a quiet machine a wake-up takes microseconds; beside busy processes the woken
//! thread queues behind them for a time slice, so the sections ran mostly alone and the
//! process got well under its fair share of the cores.
//!
//! So the model thread is worker 0 of its own pool ([`model_pool`]): it runs its share of each
//! section itself. And while a step runs ([`Hot`]), the other workers poll for work
//! ([`rayon::yield_now`]) instead of sleeping, so they stay runnable and take each section's
//! tasks at once; after a moment without work they also yield the core to the OS between
//! polls, so the step's serial stretches leave it to other programs. Between steps they sleep
//! as usual. Polling without ever yielding kept our threads on the cores but spent their
//! share spinning (loaded xRT 2.81, below the pool alone).
//!
//! Measured with `banter say` on 2 cores beside two busy processes (issue 21's notes): the
//! median loaded xRT over four A/B rounds, as before 2.42–2.62, with the pool 2.87–3.25, with
//! polling workers 2.57–3.77, never below the old; quiet xRT unchanged (6.1–7.3, noise).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a worker busy-polls after its last task before it also yields its core to the OS
/// between polls.
const SPIN: Duration = Duration::from_micros(50);

/// A pool with the calling thread as worker 0 and as many threads as candle's own
/// (`RAYON_NUM_THREADS`, else one per core). Run the model inside it with
/// [`rayon::ThreadPool::install`]. `None` if the pool cannot be built (threads refused):
/// the model then runs on the global pool as a plain caller.
pub(super) fn model_pool() -> Option<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(candle_core::utils::get_num_threads().max(1))
        .thread_name(|i| format!("banter-model-{i}"))
        .use_current_thread()
        .build()
        .map_err(|e| tracing::warn!(error = %e, "model pool not built; using rayon's global pool"))
        .ok()
}

/// Keeps the other workers of the model's pool polling for work until dropped.
pub(super) struct Hot {
    stop: Arc<AtomicBool>,
}

impl Hot {
    /// `None` (nothing to do) unless called from worker 0 of a pool with more than one
    /// thread: the model thread in [`model_pool`]. Only for a model on the CPU: a GPU step
    /// has no parallel sections to poll for.
    pub(super) fn start() -> Option<Self> {
        if rayon::current_thread_index() != Some(0) || rayon::current_num_threads() < 2 {
            return None;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        rayon::spawn_broadcast(move |ctx| {
            // Worker 0 is the model thread: its copy runs whenever it next waits in a join,
            // and must return at once.
            if ctx.index() == 0 {
                return;
            }
            let mut last = Instant::now();
            while !flag.load(Ordering::Acquire) {
                match rayon::yield_now() {
                    Some(rayon::Yield::Executed) => last = Instant::now(),
                    _ if last.elapsed() < SPIN => std::hint::spin_loop(),
                    _ => std::thread::yield_now(),
                }
            }
        });
        Some(Self { stop })
    }
}

impl Drop for Hot {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        // Worker 0's own copy of the broadcast waits in its queue until it next joins; run it
        // (and any earlier step's) now, so a step without parallel sections cannot pile them up.
        while rayon::yield_local() == Some(rayon::Yield::Executed) {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    #[test]
    fn only_worker_zero_of_a_pool_keeps_the_others_polling() {
        assert!(Hot::start().is_none(), "outside any pool");
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .expect("pool");
        let on_workers = pool.broadcast(|_| Hot::start().is_some());
        assert_eq!(on_workers, [true, false]);
        let alone = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("pool");
        assert!(
            alone.install(|| Hot::start().is_none()),
            "no other worker to keep"
        );
    }

    #[test]
    fn a_step_with_polling_workers_computes_the_same_and_leaves_nothing_queued() {
        let model = std::thread::Builder::new().name("test-model".into());
        model
            .spawn(|| {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(2)
                    .use_current_thread()
                    .build()
                    .expect("pool");
                pool.install(|| {
                    let want: u64 = (0..100_000u64).map(|i| i * i % 7).sum();
                    for _ in 0..20 {
                        let hot = Hot::start().expect("worker 0 of two");
                        let got: u64 = (0..100_000u64).into_par_iter().map(|i| i * i % 7).sum();
                        assert_eq!(got, want);
                        drop(hot);
                        assert_eq!(rayon::yield_local(), Some(rayon::Yield::Idle));
                    }
                    // A step without parallel sections leaves no copy behind either.
                    for _ in 0..20 {
                        drop(Hot::start());
                    }
                    assert_eq!(rayon::yield_local(), Some(rayon::Yield::Idle));
                });
            })
            .expect("spawn")
            .join()
            .expect("test thread");
    }
}
