//! The f32 FMA vector kernel behind [`super::bf16::conv`], for CPUs where `VDPBF16PS` is
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

// `unsafe` is allowed here as in `bf16`: AVX-512 intrinsics reading and writing through
// raw pointers. The one caller, `bf16::conv`, checks the CPU and every bound a kernel reads
// or writes before any kernel runs; each block below says which of those checks it uses.
#![allow(unsafe_code)]

use std::arch::x86_64::{
    __m512, _mm512_and_si512, _mm512_castsi512_ps, _mm512_fmadd_ps, _mm512_loadu_ps,
    _mm512_loadu_si512, _mm512_maskz_loadu_ps, _mm512_set1_epi32, _mm512_set1_ps,
    _mm512_slli_epi32,
};
use std::sync::OnceLock;

use super::bf16::{self, Geometry, Panel};

/// Rows per register block: 6 rows × 64 columns (the whole panel) is 24 accumulators, four
/// weight vectors and a broadcast. 14 rows × 32 columns (two passes over the panel) read half
/// the weight bytes per FMA and rendered no faster here (three alternations each).
const MR: usize = 6;

/// Input channels (of one tap, or whole taps of a narrow layer) a chunk of the products
/// covers before the next: 128 × 64 f32 weights are 32 KiB, which stay in the level-1 cache
/// while every row block of a task runs over them. Running each row block over a whole
/// panel instead (up to 11 taps × 256 channels, 720 KiB) read every weight from level 2 for
/// each six rows: the kernel waited on those loads at a third of the FMA rate.
const KC: usize = 128;

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
        let (f32_rate, Some(bf16_rate)) = measured() else {
            return true;
        };
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
///
/// # Panics
///
/// Off a CPU with AVX-512F and AVX-512 BF16 ([`supported`], [`bf16::supported`]).
#[must_use]
pub fn rates() -> (f64, f64) {
    assert!(supported() && bf16::supported(), "no AVX-512 BF16");
    let (mut f, mut b) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..3 {
        // SAFETY: AVX-512F is there (asserted above); the loop touches registers.
        f = f.min(timed(|| unsafe { probe::fma(PROBE_ITERS) }));
        // SAFETY: AVX-512F and AVX-512 BF16 are there (asserted above); registers only.
        b = b.min(timed(|| unsafe { probe::dpbf16(PROBE_ITERS) }));
    }
    // 16 FMAs (32 FLOP) or 32 pairs (64 FLOP) an instruction.
    (probe_rate(32.0, f), probe_rate(64.0, b))
}

/// [`rates`] where the CPU has AVX-512 BF16, else [`f32_rate`] and `None`: measured once per
/// process and shared by the choices that compare against them ([`preferred`],
/// `int8::preferred`), so a start probes each instruction once.
#[must_use]
pub fn measured() -> (f64, Option<f64>) {
    static RATES: OnceLock<(f64, Option<f64>)> = OnceLock::new();
    *RATES.get_or_init(|| {
        if supported() && bf16::supported() {
            let (f, b) = rates();
            (f, Some(b))
        } else {
            (f32_rate(), None)
        }
    })
}

/// The register-only rate of `VFMADD231PS` alone (FLOP/s on this thread), as in [`rates`];
/// 0 off a CPU with AVX-512F.
#[must_use]
pub fn f32_rate() -> f64 {
    if !supported() {
        return 0.0;
    }
    // SAFETY: AVX-512F is there (checked above); the loop touches registers.
    let secs = (0..3)
        .map(|_| timed(|| unsafe { probe::fma(PROBE_ITERS) }))
        .fold(f64::INFINITY, f64::min);
    probe_rate(32.0, secs)
}

/// Iterations of a probe loop (12 instructions each): about a millisecond.
pub(super) const PROBE_ITERS: usize = 40_000;

/// Seconds `probe` took; its result is kept opaque so the loop cannot be dropped.
pub(super) fn timed(probe: impl FnOnce() -> f32) -> f64 {
    let t = std::time::Instant::now();
    std::hint::black_box(probe());
    t.elapsed().as_secs_f64()
}

/// Operations per second of a probe loop that took `secs`, doing `per` an instruction.
pub(super) fn probe_rate(per: f64, secs: f64) -> f64 {
    (PROBE_ITERS * 12) as f64 * per / secs.max(1e-9)
}

mod probe {
    #![allow(clippy::wildcard_imports)]
    use std::arch::x86_64::*;
    use std::hint::black_box;

    /// # Safety
    ///
    /// The CPU has AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn fma(iters: usize) -> f32 {
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
    pub(super) unsafe fn dpbf16(iters: usize) -> f32 {
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
/// - `w` is packed in f32 ([`bf16::Format::F32`]: per panel, per tap, per input channel,
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
    w: &bf16::PackedWeights,
    g: Geometry,
    r0: usize,
    rows: usize,
    p: &Panel,
    y: *mut f32,
) {
    // SAFETY: this function's contract is `chunked`'s for f32 panels.
    unsafe { chunked::<F32Panels>(x, w, g, r0, rows, p, y) }
}

/// [`conv_panel`] for weights packed in bfloat16 pairs ([`bf16::Format::Bf16`]), on
/// CPUs where f32 FMAs outpace `VDPBF16PS` ([`preferred`]): each pair is widened to two f32
/// weights in registers (a bfloat16 is the top half of an f32) and multiplied with the f32
/// input. The panels keep half the bytes of f32 ones (the decoder's body, ~66 MB less
/// resident, see [`super::CpuKernel::for_body`]) and run at nearly the f32 kernel's rate,
/// where the bfloat16 instruction ran the body at half of it: in a lone first segment the
/// body's products took a tenth of the time. The input is not rounded, so the products are
/// closer to f32 than the bfloat16 kernel's.
///
/// # Safety
///
/// As for [`conv_panel`], with `w` packed in bfloat16 pairs ([`bf16::Format::Bf16`]: per
/// panel, per tap, per pair of input channels, the panel's `width` pairs; `C_in` even).
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn conv_panel_widened(
    x: &[f32],
    w: &bf16::PackedWeights,
    g: Geometry,
    r0: usize,
    rows: usize,
    p: &Panel,
    y: *mut f32,
) {
    // SAFETY: this function's contract is `chunked`'s for bfloat16 pair panels.
    unsafe { chunked::<PairPanels>(x, w, g, r0, rows, p, y) }
}

/// How the values of a panel hold its weights: what [`chunked`] needs to find a chunk's
/// weights and run a block of rows over them.
trait Panels {
    /// Input channels per packed `u32` of a column.
    const CHANNELS: usize;

    /// [`micro`] (or its widened twin) for `m ≤ MR` rows and `nv` vectors (1 unless it is 2,
    /// 3 or 4), `b` pointing at the chunk's packed values.
    ///
    /// # Safety
    ///
    /// As for [`micro`] with `M = m` and `NV = nv`, with `b` holding the block's
    /// `a.taps · a.channels / CHANNELS · NV·16` values in this layout.
    unsafe fn block(m: usize, nv: usize, a: &Block, b: *const u32, d: &Dest);
}

/// One f32 weight per value ([`bf16::Format::F32`]).
struct F32Panels;

/// Two bfloat16 weights per value, the even channel in the low half
/// ([`bf16::Format::Bf16`]).
struct PairPanels;

impl Panels for F32Panels {
    const CHANNELS: usize = 1;

    #[inline]
    unsafe fn block(m: usize, nv: usize, a: &Block, b: *const u32, d: &Dest) {
        // SAFETY: the values are f32 bit patterns, so reading them as `f32` is sound; the
        // rest is this function's contract, `tail`'s.
        unsafe { tail(m, nv, a, b.cast::<f32>(), d) }
    }
}

impl Panels for PairPanels {
    const CHANNELS: usize = 2;

    #[inline]
    unsafe fn block(m: usize, nv: usize, a: &Block, b: *const u32, d: &Dest) {
        // SAFETY: this function's contract is `tail_widened`'s.
        unsafe { tail_widened(m, nv, a, b, d) }
    }
}

/// [`conv_panel`]'s work for panels laid out as `P` says.
///
/// # Safety
///
/// As for [`conv_panel`], with `w` packed as `P` reads it (`C_in` a multiple of
/// `P::CHANNELS`).
#[target_feature(enable = "avx512f")]
unsafe fn chunked<P: Panels>(
    x: &[f32],
    w: &bf16::PackedWeights,
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
    // length.
    let b = unsafe { w.data().as_ptr().add(p.b_off) };
    let taps = w.taps();
    // The products run a chunk of the weights at a time over all the rows (see [`KC`]):
    // whole taps while a tap has at most `KC` channels, else `KC` channels of one tap.
    let (taps_per, channels_per) = if c_in <= KC {
        ((KC / c_in).max(1), c_in)
    } else {
        (1, KC)
    };
    let mut first = true;
    for j0 in (0..taps).step_by(taps_per) {
        for i0 in (0..c_in).step_by(channels_per) {
            let chunk_taps = (taps - j0).min(taps_per);
            let channels = (c_in - i0).min(channels_per);
            // Weights of (tap j0, channel i0) onwards: per tap, per `P::CHANNELS` channels,
            // `width` values (KC and, where whole taps are chunked, C_in are multiples of
            // `P::CHANNELS`, so i0 and j0·C_in are).
            // SAFETY: j0 < taps and i0 < C_in, so the offset is inside the panel.
            let bc = unsafe { b.add((j0 * c_in + i0) / P::CHANNELS * p.width) };
            for rb in (0..rows).step_by(MR) {
                let mr = (rows - rb).min(MR);
                let a = Block {
                    // SAFETY: input row (r0 + rb)·stride + j0·dilation, channel i0, comes no
                    // later than the last element read (this function's contract).
                    x: unsafe {
                        x.as_ptr()
                            .add((r0 + rb) * g.stride * c_in + j0 * g.dilation * c_in + i0)
                    },
                    lda: g.stride * c_in,
                    taps: chunk_taps,
                    tap_stride: g.dilation * c_in,
                    channels,
                };
                let d = Dest {
                    // SAFETY: row rb < rows and column p.col < C_out: inside `y`'s rows.
                    c: unsafe { y.add(rb * n + p.col) },
                    ldc: n,
                    valid,
                    add: !first,
                };
                // SAFETY: `micro`'s contract, for `M = mr` rows and `NV = width/16` vectors
                // (every panel width is 16, 32, 48 or 64): the CPU has AVX-512F (ours); `a`
                // reads rows r0 + rb .. r0 + rb + mr, taps j0 .. j0 + chunk_taps ≤ taps and
                // channels i0 .. i0 + channels ≤ C_in, inside `x` (ours); `bc` is followed by
                // the chunk's chunk_taps·channels rows of `p.width` = NV·16 values (whole taps
                // when chunk_taps > 1, else a run of channels of one tap: contiguous in the
                // F32 format); `d.c` takes rows rb .. rb + mr of `y`, columns p.col .. p.col +
                // valid ≤ C_out, inside this panel's columns: ours to write; and unless this
                // is the first chunk, the first chunk stored every one of them (it runs every
                // row block), so `micro` reads only values it stored.
                unsafe { P::block(mr, p.width / 16, &a, bc, &d) }
            }
            first = false;
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

/// Where a block of rows writes: `valid` columns of each row from `c` (row stride `ldc`),
/// added to what is there when `add` is set.
struct Dest {
    c: *mut f32,
    ldc: usize,
    valid: usize,
    add: bool,
}

/// [`micro`] for `m ≤ MR` rows and `nv` vectors (1 unless it is 2, 3 or 4).
///
/// # Safety
///
/// As for [`micro`] with `M = m` and `NV = nv` (1 unless it is 2, 3 or 4).
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn tail(m: usize, nv: usize, a: &Block, b: *const f32, d: &Dest) {
    bf16::by_shape!(micro, m, nv, (a, b, d));
}

/// A block's accumulators to start from: zero, or with `d.add` the first `d.valid` columns
/// of its rows at `d.c` (lanes past `valid` zero). Written out in each kernel, branch-free
/// (a load under an empty mask reads nothing and gives zeros): passed to a helper that was
/// not inlined, the accumulators stayed in memory and each was stored after every FMA, at
/// half the kernel's rate.
///
/// The caller's contract must include: with `d.add`, for every row `r < M`, the first
/// `min(d.valid, NV·16)` `f32`s at `d.c + r·d.ldc` are initialised, readable and not written
/// by anyone else meanwhile.
macro_rules! start {
    ($d:expr) => {{
        let d: &Dest = $d;
        let mut acc = [[_mm512_set1_ps(0.0); NV]; M];
        for (r, row) in acc.iter_mut().enumerate() {
            for (v, s) in row.iter_mut().enumerate() {
                let mask = if d.add { bf16::lanes(v, d.valid) } else { 0 };
                // Wrapping: lanes past `valid` may lie past the output; nothing is read there.
                let at = d.c.wrapping_add(r * d.ldc + v * 16);
                // SAFETY: the mask enables only columns v·16 .. min(valid, v·16 + 16) of row
                // r, and only with `d.add`: readable (the caller's contract); masked-off
                // lanes are not accessed.
                *s = unsafe { _mm512_maskz_loadu_ps(mask, at) };
            }
        }
        acc
    }};
}

/// `M` rows × `NV`·16 columns: every tap and input channel of the block, one FMA per
/// accumulator; then stored to `d` (added to what it holds when `d.add` is set).
///
/// # Safety
///
/// - The CPU has AVX-512F.
/// - For every row `r < M`, tap `j < a.taps` and channel `i < a.channels`, the element
///   `a.x + r·a.lda + j·a.tap_stride + i` is inside one readable `f32` allocation.
/// - `b` points at `a.taps · a.channels · NV·16` readable `f32`s.
/// - For every row `r < M`, the first `min(d.valid, NV·16)` `f32`s at `d.c + r·d.ldc` are
///   writable and not accessed by anyone else while this runs (no others are touched); with
///   `d.add`, they are initialised.
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn micro<const M: usize, const NV: usize>(a: &Block, b: *const f32, d: &Dest) {
    let mut acc: [[__m512; NV]; M] = start!(d);
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
    // SAFETY: `store`'s contract is part of the last point of ours.
    unsafe { bf16::store(&acc, d.c, d.ldc, d.valid) };
}

/// [`micro_widened`] for `m ≤ MR` rows and `nv` vectors (1 unless it is 2, 3 or 4).
///
/// # Safety
///
/// As for [`micro_widened`] with `M = m` and `NV = nv` (1 unless it is 2, 3 or 4).
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn tail_widened(m: usize, nv: usize, a: &Block, b: *const u32, d: &Dest) {
    bf16::by_shape!(micro_widened, m, nv, (a, b, d));
}

/// [`micro`] over bfloat16 pairs: for each pair of input channels, the `NV` weight vectors
/// widened to f32 twice (the even channel shifted up from the low half, the odd one masked
/// from the high half), each multiplied with its channel's f32 input. Two vector operations
/// per loaded vector, one per 2·`M` FMAs: at `M` = 6 most of the FMA rate is left.
///
/// # Safety
///
/// As for [`micro`], with `a.channels` even and `b` pointing at
/// `a.taps · a.channels/2 · NV·16` readable `u32`s (a pair a value).
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn micro_widened<const M: usize, const NV: usize>(a: &Block, b: *const u32, d: &Dest) {
    let mut acc: [[__m512; NV]; M] = start!(d);
    let high = _mm512_set1_epi32(0xFFFF_0000_u32.cast_signed());
    let mut bp = b;
    for j in 0..a.taps {
        // SAFETY: tap j's first element of row 0, inside the input (contract).
        let xt = unsafe { a.x.add(j * a.tap_stride) };
        for q in 0..a.channels / 2 {
            for half in 0..2 {
                let mut bv = [_mm512_set1_ps(0.0); NV];
                for (v, slot) in bv.iter_mut().enumerate() {
                    // SAFETY: `bp` is `b` plus NV·16 per (tap, pair) done so far, fewer than
                    // taps·channels/2 of them, so its first NV·16 values are readable
                    // (contract); `loadu` needs no alignment.
                    let pairs = unsafe { _mm512_loadu_si512(bp.add(v * 16).cast()) };
                    let bits = if half == 0 {
                        _mm512_slli_epi32::<16>(pairs)
                    } else {
                        _mm512_and_si512(pairs, high)
                    };
                    *slot = _mm512_castsi512_ps(bits);
                }
                for (r, row) in acc.iter_mut().enumerate() {
                    // SAFETY: channel 2q + half < channels of row r at tap j is inside the
                    // input (contract).
                    let av = _mm512_set1_ps(unsafe { *xt.add(r * a.lda + 2 * q + half) });
                    for (s, &bvv) in row.iter_mut().zip(&bv) {
                        *s = _mm512_fmadd_ps(av, bvv, *s);
                    }
                }
            }
            // `wrapping_add`: after the last pair this points past the panel, never read.
            bp = bp.wrapping_add(NV * 16);
        }
    }
    // SAFETY: `store`'s contract is part of the last point of ours.
    unsafe { bf16::store(&acc, d.c, d.ldc, d.valid) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_measures_both_instructions() {
        if !(supported() && bf16::supported()) {
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
