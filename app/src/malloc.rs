//! glibc's allocator told to keep freed memory for the next segment instead of handing it back.
//!
//! Every segment allocates the same big activations (the generator's are megabytes per layer)
//! and frees them a moment later. By default glibc returns them to the kernel: buffers over its
//! moving mmap threshold are unmapped on free, a thread's arena heap that empties is unmapped,
//! and free space at the top of a heap over the trim threshold is given back. The next layer's
//! buffer then page-faults in again, zeroed by the kernel one 4 KiB page at a time. In a profile
//! of lone first segments that was about 8 % of all samples (page faults on the pool threads,
//! `munmap` and `brk` on the model thread).
//!
//! [`keep_freed_memory`] puts every allocation in the one main heap (no per-thread arenas),
//! fixes the mmap threshold at glibc's maximum, 32 MiB (only larger buffers, the longest
//! segments' last stages, are mapped per use), and lets the heap keep up to [`KEEP`] of free
//! space at its top. `banter say long.txt` (51 s of audio, 2-core machine, five runs each,
//! alternating): 618 000-838 000 minor page faults with glibc's defaults, 162 000-225 000 with
//! these (the model's own 341 MB are 85 000 of them); 6.4-8.0 s against 5.6-7.1 s; peak RSS
//! 596-676 MB against 632-683 MB. Without any mappings (`M_MMAP_MAX` 0) the faults were as
//! few but the peak 683 MB every time; a lower threshold (8 MiB) mapped the big buffers every
//! time (2.1 million faults). An idle studio may hold up to `KEEP` more than before. The
//! allocator's lock is shared by all threads, which allocate per tensor, not per value.
//! `GLIBC_TUNABLES` naming a malloc setting leaves glibc's settings as the user chose.

// `unsafe` for the one FFI call, `mallopt`, with its SAFETY note.
#![allow(unsafe_code)]

/// Free memory the heap may keep at its top before glibc trims it (bytes).
pub const KEEP: i32 = 256 << 20;

/// Buffers up to this size come from the heap; larger ones are mapped per use (glibc's maximum).
const MMAP_THRESHOLD: i32 = 32 << 20;

/// Sets glibc's arena count, mmap threshold and trim threshold (see the module docs). Call first in
/// `main`, before any thread exists.
pub fn keep_freed_memory() {
    if std::env::var("GLIBC_TUNABLES").is_ok_and(|t| t.contains("glibc.malloc.")) {
        return;
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` takes two integers and changes the allocator's parameters under its
    // own lock; no memory is passed. A value glibc refuses returns 0 and leaves its default.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
        libc::mallopt(libc::M_TRIM_THRESHOLD, KEEP);
    }
}
