//! The model thread's rayon pool, and keeping its other workers polling during a step.
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
//! section itself and sleeps only when it has to wait for a task another worker took.
//! Measured with `banter say` on 2 cores beside two busy processes (issue 21's notes): the
//! median loaded xRT over A/B rounds, as before 2.42–2.62, with the pool 2.87–3.25; quiet xRT
//! unchanged.
//!
//! While a step runs ([`Hot`]), the other workers poll for work ([`rayon::yield_now`]) instead
//! of sleeping, so each section's tasks are taken without a wake-up; after a moment without
//! work they also yield the core to the OS between polls, and after [`GIVE_UP`] without work
//! they stop polling until the next step.
//!
//! That last rule is what keeps polling from deadlocking. A worker waiting on a join runs the
//! jobs in its own queue, so a polling job can run *nested* inside a task of its own step (a
//! worker still in the last step's loop steals a task of the next one, which waits on a nested
//! join, and runs the new step's polling job there). A loop that waited for the step's end
//! then spun forever, because the step needed the task beneath it: the first version did, and
//! hung the API tests under load. Nested there, the loop finds nothing to run (everything left
//! waits on the task beneath it), so it returns after [`GIVE_UP`] and the task goes on.
//!
//! What polling buys is first audio on a quiet machine: `lone.py`, alternating builds, medians
//! of 10, exact first segment 444 / 393 ms against 469 / 432 without polling, first window
//! 203 / 241 ms against 232 / 244.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a worker busy-polls after its last task before it also yields its core to the OS
/// between polls.
const SPIN: Duration = Duration::from_micros(50);

/// How long a worker polls without finding a task before it stops polling for this step (and
/// sleeps as rayon's workers do). Bounds the stall of a loop nested inside a task.
const GIVE_UP: Duration = Duration::from_millis(2);

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

/// Keeps the other workers of the model's pool polling for work until dropped, or until
/// each has gone [`GIVE_UP`] without finding any.
pub(super) struct Hot {
    stop: Arc<AtomicBool>,
}

impl Hot {
    /// `None` (nothing to do) unless called from worker 0 of a pool with more than one
    /// thread: the model thread in [`model_pool`].
    pub(super) fn start() -> Option<Self> {
        if rayon::current_thread_index() != Some(0) || rayon::current_num_threads() < 2 {
            return None;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        rayon::spawn_broadcast(move |ctx| {
            // Worker 0 is the model thread: its copy runs whenever it next waits in a join,
            // and must return at once.
            if ctx.index() != 0 {
                poll(&flag, GIVE_UP);
            }
        });
        Some(Self { stop })
    }
}

/// Runs the pool's tasks as they come until `stop` is set or `give_up` passes without one.
fn poll(stop: &AtomicBool, give_up: Duration) {
    let mut last = Instant::now();
    while !stop.load(Ordering::Acquire) {
        if rayon::yield_now() == Some(rayon::Yield::Executed) {
            last = Instant::now();
            continue;
        }
        let idle = last.elapsed();
        if idle >= give_up {
            return;
        }
        if idle < SPIN {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
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
    fn a_poll_nested_in_a_task_its_step_waits_for_returns() {
        // The step never ends while the task runs, so only giving up lets it return.
        let never = AtomicBool::new(false);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .expect("pool");
        let started = Instant::now();
        pool.install(|| rayon::join(|| (), || poll(&never, Duration::from_millis(5))));
        assert!(started.elapsed() < Duration::from_secs(10));
    }

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

    #[test]
    fn the_model_thread_is_worker_zero_and_nested_sections_finish() {
        std::thread::Builder::new()
            .name("test-model".into())
            .spawn(|| {
                let pool = model_pool().expect("pool");
                pool.install(|| {
                    assert_eq!(rayon::current_thread_index(), Some(0));
                    let want: u64 = (0..2_000u64).map(|i| (0..i).sum::<u64>() % 7).sum();
                    for _ in 0..50 {
                        // Sections inside sections, as a convolution inside the LSTM's join.
                        let got: u64 = (0..2_000u64)
                            .into_par_iter()
                            .map(|i| (0..i).into_par_iter().sum::<u64>() % 7)
                            .sum();
                        assert_eq!(got, want);
                    }
                });
            })
            .expect("spawn")
            .join()
            .expect("test thread");
    }
}
