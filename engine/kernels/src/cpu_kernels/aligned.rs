//! Buffers whose first element starts a cache line, for what the AMX tiles load.
//!
//! A tile row is 64 bytes, loaded at a stride that is a multiple of 64. A large `Vec` from the
//! allocator starts 16 bytes into a line, so every row of every tile load then straddles two
//! lines and costs two. Measured on the generator's 7-tap 256-channel convolution (one thread,
//! `kernel_rates`): 3.5 ms with the allocator's alignment, 2.2 ms with the weights aligned,
//! 1.7 ms with the input aligned too; the 11-tap 128-channel one 6.1 ms → 4.3 ms.

// `unsafe` is allowed here as in `bf16`: viewing the lines as a slice of the element type.
// Each block says what it relies on; the element types are plain numbers (see `Plain`).
#![allow(unsafe_code)]

use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

/// One cache line.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);

mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
    impl Sealed for u32 {}
    impl Sealed for f32 {}
}

/// Element types an [`Aligned`] holds: numbers for which every bit pattern, all zeros
/// included, is a value, with an alignment that divides 64.
pub trait Plain: Copy + sealed::Sealed {}
impl Plain for u8 {}
impl Plain for u16 {}
impl Plain for u32 {}
impl Plain for f32 {}

/// `len` values of `T`, the first at the start of a cache line.
#[derive(Clone)]
pub struct Aligned<T: Plain> {
    lines: Vec<Line>,
    len: usize,
    _values: PhantomData<T>,
}

impl<T: Plain + Default + Send + Sync> Aligned<T> {
    /// `len` zeros.
    ///
    /// # Panics
    ///
    /// If `len` values of `T` do not fit in the address space.
    #[must_use]
    pub fn zeroed(len: usize) -> Self {
        Self::par_filled(len, len, |_, _| {})
    }

    /// `len` values filled in parallel, `chunk` at a time, by `fill(index, values)`, each
    /// chunk zeroed first by the task that fills it ([`crate::fill`]): the pages are
    /// first touched, and the zeros written while the chunk is in cache, by the threads that
    /// fill them, not by the caller's thread before any parallel work starts.
    ///
    /// # Panics
    ///
    /// If `len` values of `T` do not fit in the address space, or if `fill` panics.
    #[must_use]
    pub fn par_filled(len: usize, chunk: usize, fill: impl Fn(usize, &mut [T]) + Sync) -> Self {
        use std::mem::MaybeUninit;
        let bytes = len
            .checked_mul(size_of::<T>())
            .expect("an aligned buffer larger than the address space");
        let n_lines = bytes.div_ceil(64);
        let mut lines: Vec<Line> = Vec::with_capacity(n_lines);
        let spare = lines.spare_capacity_mut();
        if let Some(last) = spare[..n_lines].last_mut() {
            // The bytes past the last value are no task's: zero their line here (the tasks
            // then overwrite its values).
            last.write(Line([0; 64]));
        }
        let base = spare.as_mut_ptr().cast::<MaybeUninit<T>>();
        // SAFETY: the spare capacity is `n_lines` ≥ bytes/64 lines of 64 bytes, 64-byte
        // aligned, so it holds `len` values of `T` (alignment dividing 64, `Plain`) from its
        // start; viewing them as `MaybeUninit<T>` asks nothing of their contents, and the
        // slice borrows `lines` mutably for as long as it lives.
        let values = unsafe { std::slice::from_raw_parts_mut(base, len) };
        crate::fill::fill_uninit(values, chunk, fill);
        // SAFETY: every byte of the first `n_lines` lines is initialised: the values by their
        // tasks (the chunks cover 0..len; `for_each` has returned, so all of them ran), the
        // bytes after the last value by the zeroed last line. `Line` is plain bytes.
        unsafe { lines.set_len(n_lines) };
        Self {
            lines,
            len,
            _values: PhantomData,
        }
    }
}

impl<T: Plain> Deref for Aligned<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        // SAFETY: `lines` holds at least `len · size_of::<T>()` initialised bytes
        // (`par_filled` sizes it so and nothing shrinks it), every bit pattern is a `T`
        // (`Plain`), and the start is 64-byte aligned, which `T`'s alignment divides; an empty
        // `Vec`'s dangling pointer is aligned too. The slice borrows `self`, so the lines
        // outlive it.
        unsafe { std::slice::from_raw_parts(self.lines.as_ptr().cast::<T>(), self.len) }
    }
}

impl<T: Plain> DerefMut for Aligned<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as for `deref`, and the slice borrows `self` mutably, so it is the only
        // access to the lines while it lives.
        unsafe { std::slice::from_raw_parts_mut(self.lines.as_mut_ptr().cast::<T>(), self.len) }
    }
}

impl<T: Plain> fmt::Debug for Aligned<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Aligned({} values)", self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_a_line_holds_its_values_and_is_zeroed() {
        for len in [0usize, 1, 31, 32, 33, 1000] {
            let mut a = Aligned::<u16>::zeroed(len);
            assert_eq!(a.len(), len);
            assert_eq!(a.as_ptr() as usize % 64, 0, "len {len}");
            assert!(a.iter().all(|&v| v == 0));
            for (i, v) in a.iter_mut().enumerate() {
                *v = i as u16;
            }
            let b = a.clone();
            assert!(b.iter().enumerate().all(|(i, &v)| v == i as u16));
            assert_eq!(b.as_ptr() as usize % 64, 0);
        }
        for (len, chunk) in [(0usize, 4usize), (1, 4), (33, 8), (1000, 96), (1000, 1000)] {
            let a = Aligned::<u16>::par_filled(len, chunk, |i, part| {
                assert!(part.iter().all(|&v| v == 0), "chunk {i} starts zeroed");
                for (k, v) in part.iter_mut().enumerate() {
                    *v = (i * chunk + k) as u16;
                }
            });
            assert_eq!((a.len(), a.as_ptr() as usize % 64), (len, 0));
            assert!(
                a.iter().enumerate().all(|(i, &v)| v == i as u16),
                "len {len}"
            );
        }
        let f = Aligned::<f32>::zeroed(17);
        assert_eq!((f.len(), f.as_ptr() as usize % 64), (17, 0));
    }
}
