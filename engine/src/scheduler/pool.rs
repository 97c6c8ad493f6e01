//! The model thread's rayon pool.
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
//! Tried and removed: keeping the other workers polling for work (a broadcast job that looped
//! on `rayon::yield_now` until the step ended). It deadlocked under load: a worker still in
//! the last step's loop stole a task of the next step, waited inside it on a nested join,
//! picked up the next step's polling job there and spun until that step ended, which needed
//! the task beneath it. The API tests hung on it (CI ran past its time); the gain had been
//! within noise of the pool alone.

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

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

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
