//! Catching a panic on purpose.
//!
//! A panic is a bug, and the app's panic hook (`app/src/exit.rs`) ends the process with one
//! readable line and exit status 1 — unless the panic happens inside [`catch`], the guard that
//! turns a panic in code we do not control (a decoder fed a malformed file) into an ordinary
//! error. The hook cannot see a `catch_unwind` further up the stack, so it asks [`is_catching`]:
//! inside a guard it stays quiet and lets the panic unwind to it. That is why a guard must be
//! [`catch`] and never `std::panic::catch_unwind` directly, which the hook would not know about.
//!
//! The mark is per thread: work the guarded closure hands to other threads (rayon, spawned
//! threads) is not covered, and a panic there is still fatal.

use std::cell::Cell;
use std::panic::UnwindSafe;

thread_local! {
    /// How many [`catch`] calls are running on this thread (they may nest).
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Runs `f`; a panic inside it comes back as `Err` with its payload instead of unwinding
/// further. While `f` runs, [`is_catching`] is true on this thread.
pub fn catch<T>(f: impl FnOnce() -> T + UnwindSafe) -> std::thread::Result<T> {
    DEPTH.with(|d| d.set(d.get() + 1));
    // `catch_unwind` returns whether or not `f` panicked, so the count always comes back down.
    let result = std::panic::catch_unwind(f);
    DEPTH.with(|d| d.set(d.get() - 1));
    result
}

/// Whether a panic on this thread now would be caught by a [`catch`] (for the panic hook).
#[must_use]
pub fn is_catching() -> bool {
    DEPTH.with(|d| d.get() > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_the_thread_while_it_runs_and_returns_the_panic() {
        assert!(!is_catching());
        assert_eq!(catch(is_catching).ok(), Some(true));
        let nested = catch(|| {
            let inner = catch(|| panic!("inner"));
            (inner.is_err(), is_catching())
        });
        assert_eq!(
            nested.ok(),
            Some((true, true)),
            "still marked after an inner panic"
        );
        let payload = catch(|| panic!("boom")).expect_err("the panic comes back");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom"));
        assert!(!is_catching(), "unmarked once every guard has returned");
        let other = std::thread::Builder::new()
            .spawn(is_catching)
            .expect("thread")
            .join()
            .expect("no panic");
        assert!(!other);
    }
}
