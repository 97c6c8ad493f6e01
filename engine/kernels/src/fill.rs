//! Output buffers filled in parallel, each part first touched by the thread that fills it.
//!
//! `vec![0.0; n]` for a large output zeroes all of it on the caller's thread, page faults
//! included, before any parallel work starts. In a profile of lone first segments (the
//! generator's activations and convolution inputs, megabytes each, one after another) those
//! serial passes were a fifth of the model thread's time while the pool waited. Here each
//! parallel task zeroes its own chunk, while it is in cache, and fills it at once.

// `unsafe` is allowed here for two steps, each with its SAFETY note: viewing a chunk of
// uninitialised capacity as values once every element of it has been written, and setting a
// vector's length once every chunk has.
#![allow(unsafe_code)]

use std::mem::MaybeUninit;

use rayon::prelude::*;

/// `len` values filled in parallel, `chunk` at a time, by `fill(index, values)`; each chunk
/// holds `T::default()` (zero, for numbers) when `fill` receives it.
///
/// # Panics
///
/// If `fill` panics (on any task), or if the capacity overflows.
#[must_use]
pub fn par_filled<T>(len: usize, chunk: usize, fill: impl Fn(usize, &mut [T]) + Sync) -> Vec<T>
where
    T: Copy + Default + Send + Sync,
{
    let mut out: Vec<T> = Vec::with_capacity(len);
    fill_uninit(&mut out.spare_capacity_mut()[..len], chunk, fill);
    // SAFETY: `fill_uninit` returned, so every element of 0..len is initialised (its contract);
    // the capacity is at least `len`.
    unsafe { out.set_len(len) };
    out
}

/// Fills every element of `values` in parallel, `chunk` at a time: each task writes
/// `T::default()` over its chunk, then hands it to `fill`. When this returns (rather than
/// unwinds), every element of `values` is initialised.
pub fn fill_uninit<T>(
    values: &mut [MaybeUninit<T>],
    chunk: usize,
    fill: impl Fn(usize, &mut [T]) + Sync,
) where
    T: Copy + Default + Send + Sync,
{
    values
        .par_chunks_mut(chunk.max(1))
        .enumerate()
        .for_each(|(i, part)| {
            part.fill(MaybeUninit::new(T::default()));
            // SAFETY: every element of `part` was initialised on the line above, and
            // `MaybeUninit<T>` has `T`'s size and alignment, so the slice of values is valid;
            // it reborrows `part`, which no one else holds.
            let part = unsafe { &mut *(std::ptr::from_mut(part) as *mut [T]) };
            fill(i, part);
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_chunk_starts_zeroed_and_lands_in_place() {
        for (len, chunk) in [
            (0usize, 3usize),
            (1, 3),
            (10, 3),
            (96, 96),
            (1000, 7),
            (5, 0),
        ] {
            let v = par_filled::<u32>(len, chunk, |i, part| {
                assert!(part.iter().all(|&x| x == 0), "chunk {i} starts zeroed");
                for (k, x) in part.iter_mut().enumerate() {
                    *x = u32::try_from(i * chunk.max(1) + k).expect("small");
                }
            });
            assert_eq!(v.len(), len);
            assert!(
                v.iter()
                    .enumerate()
                    .all(|(i, &x)| u32::try_from(i) == Ok(x)),
                "len {len}"
            );
        }
    }
}
