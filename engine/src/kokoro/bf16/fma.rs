//! The f32 FMA vector kernel behind [`super::kernels::conv`], for CPUs where `VDPBF16PS` is
//! the slower instruction.
//!
//! `VDPBF16PS` does twice the multiply-adds of an f32 FMA per instruction, but not every CPU
//! issues it as often. On a 2-core Xeon (Emerald Rapids, AMX hidden by the hypervisor) a
//! register-only loop ran it at 97–103 GFLOP/s per core against 201–213 for `VFMADD231PS`, so
//! the bfloat16 vector kernel ran the decoder's convolutions at half the rate f32 could; on
//! the project's EPYC (Zen 4) it is the other way round (453 against 238). Which is faster is
//! measured once per process ([`preferred`]): two short register-only loops, a few
//! milliseconds. The faster one runs every layer AMX tiles do not.
//!
//! The products here are exact f32 products with f32 sums, the same arithmetic as the f32
//! port (only the order of the additions differs), on the same panels as the bfloat16 kernel
//! with one f32 weight per input channel instead of a bfloat16 pair: 6 rows × 64 columns in
//! 24 accumulators, the input broadcast straight from the time-major f32 rows (no conversion
//! pass, no im2col copy).

// `unsafe` is allowed here as in `kernels`: AVX-512 intrinsics reading and writing through
// raw pointers. The one caller, `kernels::conv`, checks the CPU and every bound a kernel reads
// or writes before any kernel runs; each block below says which of those checks it uses.
#![allow(unsafe_code)]

use std::arch::x86_64::{__m512, _mm512_fmadd_ps, _mm512_loadu_ps, _mm512_set1_ps};
use std::sync::OnceLock;

use super::kernels::{self, Geometry, Panel};

/// Rows per register block: 6 rows × 64 columns (the whole panel) is 24 accumulators, four
/// weight vectors and a broadcast. 14 rows × 32 columns (two passes over the panel) read half
/// the weight bytes per FMA and rendered no faster here (three alternations each).
const MR: usize = 6;

/// Whether this CPU can run the f32 kernel.
#[must_use]
pub fn supported() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
}

/// Whether the vector products should run in f32 here: the CPU has AVX-512F, and either no
/// AVX-512 BF16 or f32 FMAs at least [`MARGIN`] times the rate of `VDPBF16PS` (measured once).
#[must_use]
pub fn preferred() -> bool {
    static F32: OnceLock<bool> = OnceLock::new();
    *F32.get_or_init(|| {
        if !supported() {
            return false;
        }
        if !kernels::supported() {
            return true;
        }
        let (f32_rate, bf16_rate) = rates();
        let pick = f32_rate >= MARGIN * bf16_rate;
        tracing::debug!(
            f32_gflops = f32_rate / 1e9,
            bf16_gflops = bf16_rate / 1e9,
            f32 = pick,
            "vector kernel"
        );
        pick
    })
}

/// How much faster f32 must measure before it replaces bfloat16: the two differ by a factor
/// of about two either way on the CPUs measured, so a noisy probe cannot flip the choice.
pub const MARGIN: f64 = 1.3;

/// Register-only rates (FLOP/s on this thread) of `VFMADD231PS` and `VDPBF16PS`: the best of
/// three alternations of each, 12 independent accumulators, about 1 ms a loop.
#[must_use]
pub fn rates() -> (f64, f64) {
    const ITERS: usize = 40_000;
    let (mut f, mut b) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..3 {
        let t = std::time::Instant::now();
        // SAFETY: `preferred` and the tests call this only where `supported()` and
        // `kernels::supported()` found AVX-512F and AVX-512 BF16; the loops touch registers.
        std::hint::black_box(unsafe { probe::fma(ITERS) });
        f = f.min(t.elapsed().as_secs_f64());
        let t = std::time::Instant::now();
        // SAFETY: as above.
        std::hint::black_box(unsafe { probe::dpbf16(ITERS) });
        b = b.min(t.elapsed().as_secs_f64());
    }
    // 12 instructions an iteration: 16 FMAs (32 FLOP) or 32 pairs (64 FLOP) each.
    let flops = |per: f64, secs: f64| (ITERS * 12) as f64 * per / secs.max(1e-9);
    (flops(32.0, f), flops(64.0, b))
}

mod probe {
    #![allow(clippy::wildcard_imports)]
    use std::arch::x86_64::*;
    use std::hint::black_box;

    /// # Safety
    ///
    /// The CPU has AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn fma(iters: usize) -> f32 {
        // Opaque inputs and count: with constants the compiler may fold the loop away.
        let (a, b) = (
            _mm512_set1_ps(black_box(1.000_1)),
            _mm512_set1_ps(black_box(0.999_9)),
        );
        let iters = black_box(iters);
        let mut acc = [_mm512_setzero_ps(); 12];
        for _ in 0..iters {
            for s in &mut acc {
                *s = _mm512_fmadd_ps(a, b, *s);
            }
        }
        acc.iter().map(|&s| _mm512_reduce_add_ps(s)).sum()
    }

    /// # Safety
    ///
    /// The CPU has AVX-512F and AVX-512 BF16.
    #[target_feature(enable = "avx512f,avx512bf16")]
    pub unsafe fn dpbf16(iters: usize) -> f32 {
        let (one, half) = (
            _mm512_set1_ps(black_box(1.0)),
            _mm512_set1_ps(black_box(0.5)),
        );
        let (a, b) = (
            _mm512_cvtne2ps_pbh(one, one),
            _mm512_cvtne2ps_pbh(half, half),
        );
        let iters = black_box(iters);
        let mut acc = [_mm512_setzero_ps(); 12];
        for _ in 0..iters {
            for s in &mut acc {
                *s = _mm512_dpbf16_ps(*s, a, b);
            }
        }
        acc.iter().map(|&s| _mm512_reduce_add_ps(s)).sum()
    }
}

/// Rows `r0 .. r0 + rows` of the convolution of the f32 input `x` (rows of `C_in`), the
/// columns of panel `p`, into `y` (the output's row `r0`, row stride `C_out`).
///
/// # Safety
///
/// - The CPU has AVX-512F.
/// - `w` is packed in f32 ([`kernels::Format::F32`]: per panel, per tap, per input channel,
///   the panel's `width` weights).
/// - Input row `(r0 + rows − 1)·stride + (taps − 1)·dilation` (row length `C_in`) and all
///   rows before it lie inside `x`.
/// - `p` is one of the panels of `w`, with `b_off` the sum of the packed sizes
///   (`taps·C_in · width`) of the panels before it.
/// - `y` is valid for writes of `rows` rows of `C_out` values (row stride `C_out`), no other
///   thread accesses columns `p.col .. p.col + p.width` of those rows meanwhile, and the caller
///   does not use references to them while this runs.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn conv_panel(
    x: &[f32],
    w: &kernels::PackedWeights,
    g: Geometry,
    r0: usize,
    rows: usize,
    p: &Panel,
    y: *mut f32,
) {
    let n = w.c_out();
    let c_in = w.c_in();
    let valid = (n - p.col).min(p.width);
    // SAFETY: `b_off` is where panel `p` starts in `w`'s values (contract), at most their
    // length; they are f32 bit patterns, so reading them as `f32` is sound.
    let b = unsafe { w.data().as_ptr().add(p.b_off).cast::<f32>() };
    for rb in (0..rows).step_by(MR) {
        let mr = (rows - rb).min(MR);
        let a = Block {
            // SAFETY: input row (r0 + rb)·stride comes no later than the last row read
            // (this function's contract), so the offset stays inside `x`.
            x: unsafe { x.as_ptr().add((r0 + rb) * g.stride * c_in) },
            lda: g.stride * c_in,
            taps: w.taps(),
            tap_stride: g.dilation * c_in,
            channels: c_in,
        };
        // SAFETY: row rb < rows and column p.col < C_out, so the offset is inside `y`'s rows.
        let c = unsafe { y.add(rb * n + p.col) };
        // SAFETY: `micro`'s contract, for `M = mr` rows and `NV = width/16` vectors (every
        // panel width is 16, 32, 48 or 64): the CPU has AVX-512F (ours); `a` reads rows
        // r0 + rb .. r0 + rb + mr, inside `x` (ours); the panel holds taps·C_in rows of
        // `p.width` = NV·16 values (the F32 format), one after another; `c`
        // takes rows rb .. rb + mr of `y`, columns p.col .. p.col + valid ≤ C_out, inside
        // this panel's columns: ours to write.
        unsafe {
            match (mr, p.width / 16) {
                (MR, 4) => micro::<MR, 4>(&a, b, c, n, valid),
                (m, nv) => tail(m, nv, &a, b, c, n, valid),
            }
        }
    }
}

/// Where a block of rows reads its f32 input.
struct Block {
    x: *const f32,
    lda: usize,
    taps: usize,
    tap_stride: usize,
    channels: usize,
}

/// [`micro`] for `m ≤ MR` rows and `nv` vectors (1 unless it is 2, 3 or 4).
///
/// # Safety
///
/// As for [`micro`] with `M = m` and `NV = nv` (1 unless it is 2, 3 or 4).
#[target_feature(enable = "avx512f")]
unsafe fn tail(
    m: usize,
    nv: usize,
    a: &Block,
    b: *const f32,
    c: *mut f32,
    ldc: usize,
    valid: usize,
) {
    macro_rules! rows {
        ($($m:literal)*) => {
            match (m, nv) {
                $(
                    // SAFETY: this function's contract is `micro`'s for these M and NV.
                    ($m, 4) => unsafe { micro::<$m, 4>(a, b, c, ldc, valid) },
                    // SAFETY: as above.
                    ($m, 3) => unsafe { micro::<$m, 3>(a, b, c, ldc, valid) },
                    // SAFETY: as above.
                    ($m, 2) => unsafe { micro::<$m, 2>(a, b, c, ldc, valid) },
                    // SAFETY: as above.
                    ($m, _) => unsafe { micro::<$m, 1>(a, b, c, ldc, valid) },
                )*
                _ => {}
            }
        };
    }
    rows!(1 2 3 4 5 6);
}

/// `M` rows × `NV`·16 columns: every tap, every input channel, one FMA per accumulator; then
/// `valid` columns stored to `c` (row stride `ldc`).
///
/// # Safety
///
/// - The CPU has AVX-512F.
/// - For every row `r < M`, tap `j < a.taps` and channel `i < a.channels`, the element
///   `a.x + r·a.lda + j·a.tap_stride + i` is inside one readable `f32` allocation.
/// - `b` points at `a.taps · a.channels · NV·16` readable `f32`s.
/// - For every row `r < M`, the first `min(valid, NV·16)` `f32`s at `c + r·ldc` are writable
///   and not accessed by anyone else while this runs (no others are touched).
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn micro<const M: usize, const NV: usize>(
    a: &Block,
    b: *const f32,
    c: *mut f32,
    ldc: usize,
    valid: usize,
) {
    let mut acc: [[__m512; NV]; M] = [[_mm512_set1_ps(0.0); NV]; M];
    let mut bp = b;
    for j in 0..a.taps {
        // SAFETY: tap j's first element of row 0, inside the input (contract).
        let xt = unsafe { a.x.add(j * a.tap_stride) };
        for i in 0..a.channels {
            let mut bv = [_mm512_set1_ps(0.0); NV];
            for (v, slot) in bv.iter_mut().enumerate() {
                // SAFETY: `bp` is `b` plus NV·16 per (tap, channel) done so far, fewer than
                // taps·channels of them, so its first NV·16 values are readable (contract).
                *slot = unsafe { _mm512_loadu_ps(bp.add(v * 16)) };
            }
            for (r, row) in acc.iter_mut().enumerate() {
                // SAFETY: element i < channels of row r at tap j is inside the input (contract).
                let av = _mm512_set1_ps(unsafe { *xt.add(r * a.lda + i) });
                for (s, &bvv) in row.iter_mut().zip(&bv) {
                    *s = _mm512_fmadd_ps(av, bvv, *s);
                }
            }
            // `wrapping_add`: after the last row this points past the panel, never read.
            bp = bp.wrapping_add(NV * 16);
        }
    }
    // SAFETY: `store`'s contract is the last point of ours.
    unsafe { kernels::store(&acc, c, ldc, valid) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_measures_both_instructions() {
        if !(supported() && kernels::supported()) {
            eprintln!("skipped: this CPU has no AVX-512 BF16");
            return;
        }
        let (f32_rate, bf16_rate) = rates();
        // Above a GFLOP/s and below anything a core can do: a loop the compiler folded away
        // or timed wrongly would fall outside.
        for rate in [f32_rate, bf16_rate] {
            assert!((1e9..1e13).contains(&rate), "{rate}");
        }
        eprintln!(
            "f32 FMA {:.0} GFLOP/s, VDPBF16PS {:.0} GFLOP/s: f32 kernel {}",
            f32_rate / 1e9,
            bf16_rate / 1e9,
            preferred()
        );
    }
}
