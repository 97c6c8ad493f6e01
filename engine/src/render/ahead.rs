//! Sentences of an export rendered ahead of the one being placed.
//!
//! Why: the draft places sentences strictly in order, and asking for one at a time leaves a
//! GPU one segment to work on (it gains from decoding many in one batched pass) and a set of
//! remote servers one to share. Here up to `ahead` sentences are in flight at once, each on a
//! thread of its own that waits on the engine like any other client; the scheduler batches
//! them or the dispatcher spreads them. The draft still takes them in order, so the episode is
//! the same to the byte. On a local CPU `ahead` is 1 and nothing runs ahead.
//!
//! Memory stays bounded: a worker starts sentence `k` only while `k < taken + ahead`, where
//! `taken` is the sentence the draft waits for, so at most `ahead` sentences' audio wait.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use super::{RenderError, SentenceAudio};

/// What the workers and the draft share.
struct State {
    /// The next sentence a worker starts.
    next: usize,
    /// The sentence the draft takes next: workers run at most `ahead` past it.
    taken: usize,
    /// Sentences rendered and not yet taken.
    done: HashMap<usize, Result<SentenceAudio, RenderError>>,
    /// Set when the draft stops (finished, failed or cancelled): no new sentence starts.
    stop: bool,
}

/// Sentences `0..count` rendered by `render(k)`, up to `ahead` at once, taken in order.
pub(super) struct Ahead {
    state: Mutex<State>,
    changed: Condvar,
    count: usize,
    /// Sentences at most in flight or waiting.
    window: usize,
}

impl Ahead {
    #[must_use]
    pub(super) fn new(count: usize, ahead: usize) -> Self {
        Self {
            state: Mutex::new(State {
                next: 0,
                taken: 0,
                done: HashMap::new(),
                stop: false,
            }),
            changed: Condvar::new(),
            count,
            window: ahead.max(1),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts the workers in `scope`. Each renders the next sentence not yet started, while it
    /// is within `ahead` of the one the draft waits for, until there are none or the draft
    /// stops; a cancelled render starts nothing new.
    pub(super) fn start<'scope, 'env, F>(
        &'env self,
        scope: &'scope std::thread::Scope<'scope, 'env>,
        cancel: &'env AtomicBool,
        render: &'env F,
    ) -> std::io::Result<()>
    where
        F: Fn(usize) -> Result<SentenceAudio, RenderError> + Sync,
    {
        for i in 0..self.window.min(self.count) {
            std::thread::Builder::new()
                .name(format!("banter-render-ahead-{i}"))
                .spawn_scoped(scope, move || self.work(cancel, render))?;
        }
        Ok(())
    }

    fn work<F>(&self, cancel: &AtomicBool, render: &F)
    where
        F: Fn(usize) -> Result<SentenceAudio, RenderError> + Sync,
    {
        loop {
            let k = {
                let mut st = self.lock();
                loop {
                    if st.stop || st.next >= self.count {
                        return;
                    }
                    if st.next < st.taken + self.window {
                        break;
                    }
                    st = self
                        .changed
                        .wait(st)
                        .unwrap_or_else(PoisonError::into_inner);
                }
                st.next += 1;
                st.next - 1
            };
            // A panic is a bug and stays one (the app's hook ends the process; the scope
            // re-raises it), but without a hook the draft must not wait for this sentence
            // forever: the guard answers for it while the panic unwinds.
            let guard = Unanswered { ahead: self, k };
            let result = if cancel.load(Ordering::Relaxed) {
                Err(RenderError::Cancelled)
            } else {
                render(k)
            };
            std::mem::forget(guard);
            self.answer(k, result);
        }
    }

    fn answer(&self, k: usize, result: Result<SentenceAudio, RenderError>) {
        self.lock().done.insert(k, result);
        self.changed.notify_all();
    }

    /// Sentence `k`'s audio, waiting for it; the draft takes `0, 1, 2, …` in order.
    pub(super) fn take(&self, k: usize) -> Result<SentenceAudio, RenderError> {
        let mut st = self.lock();
        st.taken = k;
        self.changed.notify_all();
        loop {
            if let Some(result) = st.done.remove(&k) {
                st.taken = k + 1;
                self.changed.notify_all();
                return result;
            }
            if st.stop || k >= self.count {
                return Err(RenderError::Cancelled);
            }
            st = self
                .changed
                .wait(st)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// No sentence starts after this; those under way finish (the scope then joins them).
    pub(super) fn stop(&self) {
        self.lock().stop = true;
        self.changed.notify_all();
    }

    /// [`Self::stop`] when the guard drops, on every way out of the draft.
    #[must_use]
    pub(super) fn stop_on_drop(&self) -> StopOnDrop<'_> {
        StopOnDrop(self)
    }
}

/// A sentence a worker took and has not answered for; dropped only while its render panics.
struct Unanswered<'a> {
    ahead: &'a Ahead,
    k: usize,
}

impl Drop for Unanswered<'_> {
    fn drop(&mut self) {
        self.ahead.answer(
            self.k,
            Err(RenderError::Internal(format!(
                "rendering sentence {} panicked",
                self.k
            ))),
        );
        self.ahead.stop();
    }
}

/// See [`Ahead::stop_on_drop`].
pub(super) struct StopOnDrop<'a>(&'a Ahead);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;

    fn audio(k: usize) -> SentenceAudio {
        SentenceAudio {
            samples: vec![k as f32; 3],
            durations: Vec::new(),
        }
    }

    /// Every sentence once, taken in order, never more than `ahead` in flight or waiting.
    #[test]
    fn sentences_come_in_order_and_at_most_ahead_at_once() {
        let (count, ahead) = (40, 4);
        let running = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let calls = AtomicUsize::new(0);
        let cancel = AtomicBool::new(false);
        let queue = Ahead::new(count, ahead);
        let render = |k: usize| {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
            calls.fetch_add(1, Ordering::SeqCst);
            // Later sentences finish first now and then: order must not depend on it.
            std::thread::sleep(Duration::from_micros(((count - k) % 5) as u64 * 300));
            running.fetch_sub(1, Ordering::SeqCst);
            Ok(audio(k))
        };
        std::thread::scope(|scope| {
            queue.start(scope, &cancel, &render).expect("workers");
            for k in 0..count {
                let got = queue.take(k).expect("audio");
                assert_eq!(
                    got.samples[0].to_bits(),
                    (k as f32).to_bits(),
                    "sentence {k} in its place"
                );
                let st = queue.lock();
                assert!(
                    st.next <= k + 1 + ahead,
                    "started {} with {k} taken",
                    st.next
                );
                assert!(st.done.len() <= ahead, "{} waiting", st.done.len());
            }
            queue.stop();
        });
        assert_eq!(calls.load(Ordering::SeqCst), count);
        assert!(peak.load(Ordering::SeqCst) > 1, "some ran at once");
        assert!(peak.load(Ordering::SeqCst) <= ahead);
    }

    /// A failure reaches the draft at its own sentence; stopping leaves the rest unstarted.
    #[test]
    fn an_error_arrives_in_its_place_and_stop_starts_nothing_more() {
        let cancel = AtomicBool::new(false);
        let calls = AtomicUsize::new(0);
        let queue = Ahead::new(100, 3);
        let render = |k: usize| {
            calls.fetch_add(1, Ordering::SeqCst);
            if k == 2 {
                Err(RenderError::NothingToSay)
            } else {
                Ok(audio(k))
            }
        };
        std::thread::scope(|scope| {
            queue.start(scope, &cancel, &render).expect("workers");
            assert!(queue.take(0).is_ok());
            assert!(queue.take(1).is_ok());
            assert!(matches!(queue.take(2), Err(RenderError::NothingToSay)));
            queue.stop();
        });
        // Sentences 0–2, and at most `ahead` past the failed one.
        assert!(
            calls.load(Ordering::SeqCst) <= 6,
            "{}",
            calls.load(Ordering::SeqCst)
        );
    }

    /// A panicking render is still a panic (the scope re-raises it), but the draft gets an
    /// error for that sentence instead of waiting forever.
    #[test]
    fn a_panic_answers_for_its_sentence_and_stays_a_panic() {
        let cancel = AtomicBool::new(false);
        let queue = Ahead::new(10, 2);
        let render = |k: usize| {
            assert!(k != 1, "sentence 1 breaks");
            Ok(audio(k))
        };
        let joined = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            std::thread::scope(|scope| {
                let _stop = queue.stop_on_drop();
                queue.start(scope, &cancel, &render).expect("workers");
                assert!(queue.take(0).is_ok());
                assert!(matches!(queue.take(1), Err(RenderError::Internal(_))));
            });
        }));
        assert!(joined.is_err(), "the scope re-raises the worker's panic");
    }

    /// A cancelled render starts no sentence; the draft sees the cancellation.
    #[test]
    fn cancelling_starts_nothing_new() {
        let cancel = AtomicBool::new(true);
        let calls = AtomicUsize::new(0);
        let queue = Ahead::new(10, 4);
        let render = |k: usize| {
            calls.fetch_add(1, Ordering::SeqCst);
            Ok(audio(k))
        };
        std::thread::scope(|scope| {
            queue.start(scope, &cancel, &render).expect("workers");
            assert!(matches!(queue.take(0), Err(RenderError::Cancelled)));
            queue.stop();
        });
        assert_eq!(calls.load(Ordering::SeqCst), 0);
    }
}
