//! The int8 kernel behind [`super::bf16::conv`]: `VPDPBUSD` (AVX-512 VNNI) products of
//! 8-bit activations and 8-bit weights, summed exactly in 32-bit integers, scaled into f32.
//!
//! Why: on Intel server cores without AMX the bfloat16 dot product issues at half the f32 FMA
//! rate, and `VPDPBUSD` at four times it (a 2-core Emerald Rapids VM, register-only loops:
//! 834–855 GOP/s a core against 191–217 GFLOP/s). The generator's residual convolutions are
//! most of a line's work; the peer runs them in int8 too.
//!
//! How the numbers are kept honest:
//! - **Weights**: one scale per output channel (the largest magnitude over its taps and input
//!   channels ↦ 127), rounded to nearest, packed once with the model.
//! - **Activations**: one scale per input row (a time frame's channels), computed afresh for
//!   every product ([`quantize_rows`]). A per-tensor scale, as dynamic quantisation usually
//!   takes, would give a quiet pause the step size of the loudest frame: hiss in the silences
//!   an author cares about. Frames are offset by 128 to the unsigned bytes `VPDPBUSD` takes;
//!   each tap's sums start from `−128 · Σ weights` of that tap and column, which removes the
//!   offset exactly.
//! - Each tap's integer sums are scaled by that tap's row scale and added in f32, so rows of
//!   different loudness never share an integer accumulator.
//!
//! Only the generator's residual blocks take this path ([`super::CpuKernel::Int8`]): 68
//! convolutions, most of the generator's work. Everything that decides durations and pitch,
//! the upsampling and the output spectrum stay in the f32/bfloat16 kernels, and the decoder's
//! body runs in bfloat16 ([`super::CpuKernel::for_body`]). With the upsampling in int8 too
//! the stage goldens' decoder landed 29.2–31.7 dB from the f32 port; without it 31.0–33.9
//! (the first segment 10 % slower); with the body in int8 as well, 25.7.

// `unsafe` is allowed here as in `bf16`: AVX-512 intrinsics reading and writing through
// raw pointers. The one caller, `bf16::conv`, checks the CPU and every bound a kernel reads
// or writes before any kernel runs; each block below says which of those checks it uses.
#![allow(unsafe_code)]

use std::arch::x86_64::{
    __m512, __m512i, _mm512_cvtepi32_ps, _mm512_dpbusd_epi32, _mm512_fmadd_ps, _mm512_loadu_ps,
    _mm512_loadu_si512, _mm512_mask_storeu_ps, _mm512_maskz_loadu_ps, _mm512_mul_ps,
    _mm512_set1_epi32, _mm512_set1_ps,
};

use std::sync::OnceLock;

use super::aligned::Aligned;
use super::bf16::{self, Geometry, Panel};
use super::fma;

/// Rows per register block: 6 rows × 64 columns are 24 integer accumulators, four weight
/// vectors and a broadcast, 29 of the 32 vector registers.
const MR: usize = 6;

/// The zero of the unsigned activations: a quantised value `v` is stored as `v + 128`.
const OFFSET: i32 = 128;

/// Whether this CPU can run the int8 kernel.
#[must_use]
pub fn supported() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512vnni")
}

/// Whether the generator should run in int8 by default here: the CPU has VNNI and
/// `VPDPBUSD` measures at least [`fma::MARGIN`] times the multiply-adds per second of the
/// faster vector instruction the other kernels use (f32 FMA or, where present,
/// `VDPBF16PS`). Measured once per process, a few milliseconds. AMX tiles, where present,
/// are chosen before this is asked ([`super::CpuKernel::auto`]).
#[must_use]
pub fn preferred() -> bool {
    static INT8: OnceLock<bool> = OnceLock::new();
    *INT8.get_or_init(|| {
        if !supported() {
            return false;
        }
        let (f, b) = fma::measured();
        let vectors = b.map_or(f, |b| f.max(b));
        let int8 = rate();
        let pick = int8 >= fma::MARGIN * vectors;
        tracing::debug!(
            int8_gops = int8 / 1e9,
            vector_gflops = vectors / 1e9,
            int8 = pick,
            "generator kernel"
        );
        pick
    })
}

/// The register-only rate of `VPDPBUSD` (operations per second on this thread, a
/// multiply-add counted as two, as the FLOP rates of [`fma::rates`] are): the best of three
/// loops of 12 independent accumulators.
///
/// # Panics
///
/// Off a CPU with AVX-512F and VNNI ([`supported`]).
#[must_use]
pub fn rate() -> f64 {
    assert!(supported(), "no AVX-512 VNNI");
    // SAFETY: AVX-512F and VNNI are there (asserted above); the loop touches registers.
    let secs = (0..3)
        .map(|_| fma::timed(|| unsafe { probe(fma::PROBE_ITERS) }))
        .fold(f64::INFINITY, f64::min);
    // 64 byte products an instruction.
    fma::probe_rate(128.0, secs)
}

/// `iters` rounds of 12 independent `VPDPBUSD`s on opaque inputs.
///
/// # Safety
///
/// The CPU has AVX-512F and AVX-512 VNNI.
#[target_feature(enable = "avx512f,avx512vnni")]
unsafe fn probe(iters: usize) -> f32 {
    use std::arch::x86_64::_mm512_reduce_add_epi32;
    use std::hint::black_box;
    let (a, b) = (
        _mm512_set1_epi32(black_box(0x0101_0101)),
        _mm512_set1_epi32(black_box(0x0102_0102)),
    );
    let iters = black_box(iters);
    // SAFETY: a `__m512i` is plain integer lanes; all-zero bits are a valid value.
    let mut acc: [__m512i; 12] = [unsafe { std::mem::zeroed() }; 12];
    for _ in 0..iters {
        for s in &mut acc {
            *s = _mm512_dpbusd_epi32(*s, a, b);
        }
    }
    acc.iter().map(|&s| _mm512_reduce_add_epi32(s) as f32).sum()
}

/// A product's input rows in 8 bits: row `r` holds `row_len` bytes `round(x / scales[r]) +
/// 128` (channels past `C_in` are 128, the zero), and `x ≈ (byte − 128) · scales[r]`.
#[derive(Debug)]
pub struct Quantized {
    q: Aligned<u8>,
    scales: Vec<f32>,
    row_len: usize,
}

impl Quantized {
    /// Bytes per row.
    #[must_use]
    pub fn row_len(&self) -> usize {
        self.row_len
    }

    /// All the bytes, row after row.
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        &self.q
    }

    /// One scale per row.
    #[must_use]
    pub fn scales(&self) -> &[f32] {
        &self.scales
    }
}

/// Quantises `[rows, c_in]` f32 values to rows of `row_len ≥ c_in` bytes with a scale per
/// row (see [`Quantized`]), rounding half to even. `None` if `x` is not whole rows or
/// `row_len < c_in`. A row whose largest magnitude is zero or not finite gets scale 0: its
/// products are zero (a non-finite input has no meaningful int8 product; the f32 kernels
/// would carry it on as NaN).
///
/// One pass over the input, each row's peak and bytes while the row is in cache, in parallel:
/// in a lone first segment's profile a scalar version took as long as the int8 products.
#[must_use]
pub fn quantize_rows(x: &[f32], c_in: usize, row_len: usize) -> Option<Quantized> {
    use std::sync::atomic::{AtomicU32, Ordering};
    const ROWS: usize = 64;
    if c_in == 0 || !x.len().is_multiple_of(c_in) || row_len < c_in {
        return None;
    }
    let rows = x.len() / c_in;
    let fast = std::arch::is_x86_feature_detected!("avx512f");
    // Each task stores its own rows' scales; the atomics only make that sharing safe.
    let scales: Vec<AtomicU32> = (0..rows).map(|_| AtomicU32::new(0)).collect();
    let q = Aligned::<u8>::par_filled(rows * row_len, ROWS * row_len, |k, out| {
        for (i, orow) in out.chunks_exact_mut(row_len).enumerate() {
            let r = k * ROWS + i;
            let row = &x[r * c_in..(r + 1) * c_in];
            let (head, pad) = orow.split_at_mut(c_in);
            let scale = if fast {
                // SAFETY: AVX-512F is there (checked above); slices only.
                unsafe { quantize_row_avx512(row, head) }
            } else {
                quantize_row(row, head)
            };
            pad.fill(OFFSET as u8);
            scales[r].store(scale.to_bits(), Ordering::Relaxed);
        }
    });
    let scales = scales
        .into_iter()
        .map(|s| f32::from_bits(s.into_inner()))
        .collect();
    Some(Quantized { q, scales, row_len })
}

/// The step for a row whose largest magnitude is `peak` (0 for a silent or non-finite row),
/// and its reciprocal.
fn step(peak: f32) -> (f32, f32) {
    if peak.is_finite() && peak > 0.0 {
        let s = peak / 127.0;
        (s, 1.0 / s)
    } else {
        (0.0, 0.0)
    }
}

/// One row's bytes into `out` (as long as `x`); returns its scale.
fn quantize_row(x: &[f32], out: &mut [u8]) -> f32 {
    let (s, inv) = step(x.iter().fold(0f32, |m, v| m.max(v.abs())));
    for (o, &v) in out.iter_mut().zip(x) {
        // |v·inv| ≤ 127 by the step's choice, up to rounding; the clamp keeps the byte in
        // range whatever the rounding did (a NaN becomes 0, the zero).
        let level = (v * inv).round_ties_even().clamp(-127.0, 127.0);
        *o = (level as i32 + OFFSET) as u8;
    }
    s
}

/// [`quantize_row`] sixteen values at a time (the same bytes: round half to even, clamped).
///
/// # Safety
///
/// The CPU has AVX-512F.
#[target_feature(enable = "avx512f")]
unsafe fn quantize_row_avx512(x: &[f32], out: &mut [u8]) -> f32 {
    use std::arch::x86_64::{
        _mm512_abs_ps, _mm512_add_epi32, _mm512_cvtps_epi32, _mm512_mask_cvtepi32_storeu_epi8,
        _mm512_max_ps, _mm512_min_ps, _mm512_reduce_max_ps, _mm512_setzero_ps,
    };
    let len = x.len().min(out.len());
    let mask = |i: usize| -> u16 {
        let left = len - i;
        if left >= 16 {
            u16::MAX
        } else {
            (1u16 << left) - 1
        }
    };
    let mut peak = _mm512_setzero_ps();
    for i in (0..len).step_by(16) {
        // SAFETY: the lanes under the mask are x[i .. min(i + 16, len)], inside `x`; the
        // others are not accessed.
        let v = unsafe { _mm512_maskz_loadu_ps(mask(i), x.as_ptr().add(i)) };
        peak = _mm512_max_ps(peak, _mm512_abs_ps(v));
    }
    let (s, inv) = step(_mm512_reduce_max_ps(peak));
    let (inv, lo, hi) = (
        _mm512_set1_ps(inv),
        _mm512_set1_ps(-127.0),
        _mm512_set1_ps(127.0),
    );
    let offset = _mm512_set1_epi32(OFFSET);
    for i in (0..len).step_by(16) {
        let m = mask(i);
        // SAFETY: as above.
        let v = unsafe { _mm512_maskz_loadu_ps(m, x.as_ptr().add(i)) };
        // Rounds half to even (the default rounding mode), after the clamp.
        let level = _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(v, inv), lo), hi));
        // SAFETY: the bytes under the mask are out[i .. min(i + 16, len)], inside `out`.
        unsafe {
            _mm512_mask_cvtepi32_storeu_epi8(
                out.as_mut_ptr().add(i).cast(),
                m,
                _mm512_add_epi32(level, offset),
            );
        }
    }
    s
}

/// Packs one panel of weights in the int8 layout into `out` (`width` columns, from output
/// column `start`, `end − start` of them real): `width` f32 column scales, then per tap `width`
/// i32 offset corrections and `row_len/4` rows of `width` quads of signed bytes (channel
/// `4q + k` in byte `k`). `at(j, c, o)` reads weight (tap `j`, input channel `c`, output `o`).
pub(super) fn pack_panel(
    out: &mut [u32],
    (taps, c_in, row_len): (usize, usize, usize),
    (start, end): (usize, usize),
    at: impl Fn(usize, usize, usize) -> f32,
) {
    let width = out.len() / values_per_column(taps, row_len);
    let quads = row_len / 4;
    let (scales, rest) = out.split_at_mut(width);
    for (o, slot) in (start..end).zip(scales.iter_mut()) {
        let mut peak = 0f32;
        for j in 0..taps {
            for c in 0..c_in {
                peak = peak.max(at(j, c, o).abs());
            }
        }
        let scale = if peak.is_finite() && peak > 0.0 {
            peak / 127.0
        } else {
            0.0
        };
        *slot = scale.to_bits();
    }
    let level = |v: f32, scale: f32| -> i8 {
        if scale > 0.0 {
            (v / scale).round().clamp(-127.0, 127.0) as i8
        } else {
            0
        }
    };
    for (j, tap) in rest.chunks_exact_mut(width * (1 + quads)).enumerate() {
        let (corr, body) = tap.split_at_mut(width);
        for (i, o) in (start..end).enumerate() {
            let scale = f32::from_bits(scales[i]);
            let mut sum = 0i32;
            for q in 0..quads {
                let mut quad = 0u32;
                for k in 0..4 {
                    let c = 4 * q + k;
                    if c < c_in {
                        let b = level(at(j, c, o), scale);
                        sum += i32::from(b);
                        quad |= u32::from(b as u8) << (8 * k);
                    }
                }
                body[q * width + i] = quad;
            }
            corr[i] = (-OFFSET * sum) as u32;
        }
    }
}

/// Packed `u32` values per output column of a panel: its scale, then per tap a correction
/// and a quad per four input channels.
#[must_use]
pub(super) fn values_per_column(taps: usize, row_len: usize) -> usize {
    1 + taps * (1 + row_len / 4)
}

/// Rows `r0 .. r0 + rows` of the convolution of the quantised input `x`, the columns of
/// panel `p`, into `y` (the output's row `r0`, row stride `C_out`).
///
/// # Safety
///
/// - The CPU has AVX-512F and AVX-512 VNNI.
/// - `w` is packed in int8 ([`bf16::Format::I8`], [`pack_panel`]) and `x.row_len()` is its
///   row length.
/// - Input row `(r0 + rows − 1)·stride + (taps − 1)·dilation` and all rows before it lie
///   inside `x` (its bytes and, one per row, its scales).
/// - `p` is one of the panels of `w`, with `b_off` the sum of the packed sizes
///   (`values_per_column · width`) of the panels before it.
/// - `y` is valid for writes of `rows` rows of `C_out` values (row stride `C_out`), no other
///   thread accesses columns `p.col .. p.col + p.width` of those rows meanwhile, and the caller
///   does not use references to them while this runs.
#[target_feature(enable = "avx512f,avx512vnni")]
pub(super) unsafe fn conv_panel(
    x: &Quantized,
    w: &bf16::PackedWeights,
    g: Geometry,
    r0: usize,
    rows: usize,
    p: &Panel,
    y: *mut f32,
) {
    let n = w.c_out();
    let row_len = x.row_len;
    let valid = (n - p.col).min(p.width);
    // SAFETY: `b_off` is where panel `p` starts in `w`'s values (contract).
    let b = unsafe { w.data().as_ptr().add(p.b_off) };
    for rb in (0..rows).step_by(MR) {
        let mr = (rows - rb).min(MR);
        let first_row = (r0 + rb) * g.stride;
        let a = Block {
            // SAFETY: input row (r0 + rb)·stride comes no later than the last row read
            // (contract), so the offset stays inside `x`'s bytes.
            x: unsafe { x.q.as_ptr().add(first_row * row_len) },
            // SAFETY: the same row's scale: `x` has one per row of bytes.
            s: unsafe { x.scales.as_ptr().add(first_row) },
            stride: g.stride,
            dilation: g.dilation,
            row_len,
            taps: w.taps(),
        };
        let d = Dest {
            // SAFETY: row rb < rows and column p.col < C_out: inside `y`'s rows.
            c: unsafe { y.add(rb * n + p.col) },
            ldc: n,
            valid,
        };
        // SAFETY: `micro`'s contract, for `M = mr` and `NV = width/16` (every panel width is
        // 16, 32, 48 or 64): the CPU (ours); `a` reads rows r0 + rb .. r0 + rb + mr of the
        // input at every tap, inside `x` (ours); `b` is the panel, packed as `pack_panel`
        // writes it for `w`'s taps and row length; `d.c` takes rows rb .. rb + mr, columns
        // p.col .. p.col + valid ≤ C_out, this panel's: ours to write.
        unsafe {
            match (mr, p.width / 16) {
                (MR, 4) => micro::<MR, 4>(&a, b, &d),
                (m, nv) => tail(m, nv, &a, b, &d),
            }
        }
    }
}

/// Where a block of rows reads its input: bytes from `x` and a scale per row from `s`, row
/// `r` at tap `j` being input row `r·stride + j·dilation` of those.
struct Block {
    x: *const u8,
    s: *const f32,
    stride: usize,
    dilation: usize,
    row_len: usize,
    taps: usize,
}

/// Where a block of rows writes: `valid` columns of each row from `c` (row stride `ldc`).
struct Dest {
    c: *mut f32,
    ldc: usize,
    valid: usize,
}

/// [`micro`] for `m ≤ MR` rows and `nv` vectors (1 unless it is 2, 3 or 4).
///
/// # Safety
///
/// As for [`micro`] with `M = m` and `NV = nv` (1 unless it is 2, 3 or 4).
#[target_feature(enable = "avx512f,avx512vnni")]
unsafe fn tail(m: usize, nv: usize, a: &Block, b: *const u32, d: &Dest) {
    bf16::by_shape!(micro, m, nv, (a, b, d));
}

/// `M` rows × `NV`·16 columns. Per tap: integer sums over the tap's channel quads (one
/// `VPDPBUSD` per accumulator), started from the tap's offset corrections; then scaled by
/// each row's input scale and added in f32 into `d` (stored at the first tap, added after),
/// times the column scales at the last.
///
/// # Safety
///
/// - The CPU has AVX-512F and AVX-512 VNNI.
/// - For every row `r < M` and tap `j < a.taps`, input row `r·a.stride + j·a.dilation`
///   from `a.x` (`a.row_len` bytes) and its scale from `a.s` are inside `x`.
/// - `b` points at one panel `NV`·16 columns wide packed as [`pack_panel`] writes it for
///   `a.taps` taps of `a.row_len` channels.
/// - For every row `r < M`, the first `min(d.valid, NV·16)` `f32`s at `d.c + r·d.ldc` are
///   writable and not accessed by anyone else while this runs (no others are touched).
#[target_feature(enable = "avx512f,avx512vnni")]
#[inline]
unsafe fn micro<const M: usize, const NV: usize>(a: &Block, b: *const u32, d: &Dest) {
    let width = NV * 16;
    let quads = a.row_len / 4;
    let masks: [u16; NV] = std::array::from_fn(|v| bf16::lanes(v, d.valid));
    // SAFETY: a `__m512i` is plain integer lanes; all-zero bits are a valid value.
    let zero: __m512i = unsafe { std::mem::zeroed() };
    for j in 0..a.taps {
        // The tap's corrections, then its quad rows (`pack_panel`'s layout).
        // SAFETY: inside the panel: its scales, then j whole taps of (1 + quads)·width values.
        let corr = unsafe { b.add(width + j * width * (1 + quads)) };
        let mut acc = [[zero; NV]; M];
        for row in &mut acc {
            for (v, s) in row.iter_mut().enumerate() {
                // SAFETY: the tap's `width` corrections, v < NV (contract: the panel).
                *s = unsafe { _mm512_loadu_si512(corr.add(v * 16).cast()) };
            }
        }
        let mut bq = corr.wrapping_add(width);
        // SAFETY: row r's tap j starts inside the input (contract).
        let xt = unsafe { a.x.add(j * a.dilation * a.row_len) };
        for q in 0..quads {
            let mut bv = [zero; NV];
            for (v, slot) in bv.iter_mut().enumerate() {
                // SAFETY: quad row q < quads of tap j, vector v < NV: inside the panel.
                *slot = unsafe { _mm512_loadu_si512(bq.add(v * 16).cast()) };
            }
            for (r, row) in acc.iter_mut().enumerate() {
                // SAFETY: bytes 4q .. 4q + 4 ≤ row_len of input row r·stride + j·dilation,
                // inside the input (contract); `read_unaligned` needs no alignment.
                let quad = unsafe {
                    xt.add(r * a.stride * a.row_len + 4 * q)
                        .cast::<i32>()
                        .read_unaligned()
                };
                let av = _mm512_set1_epi32(quad);
                for (s, &bvv) in row.iter_mut().zip(&bv) {
                    *s = _mm512_dpbusd_epi32(*s, av, bvv);
                }
            }
            // `wrapping_add`: after the last quad this points at the next tap, or past the
            // panel, and is not read.
            bq = bq.wrapping_add(width);
        }
        // Branch-free and of fixed trip counts, so the compiler unrolls it: with branches in
        // this loop it kept a copy of every accumulator on the stack, stored after each
        // `VPDPBUSD` above. Tap 0 adds to nothing (a load under an empty mask reads nothing
        // and gives zeros); only the last tap's column factors are the scales.
        let columns: [__m512; NV] = std::array::from_fn(|v| {
            if j + 1 == a.taps {
                // SAFETY: the panel's first `width` values are its column scales (contract).
                unsafe { _mm512_loadu_ps(b.add(v * 16).cast()) }
            } else {
                _mm512_set1_ps(1.0)
            }
        });
        for (r, row) in acc.iter().enumerate() {
            // SAFETY: the scale of input row r·stride + j·dilation, inside `x` (contract).
            let sv = _mm512_set1_ps(unsafe { *a.s.add(r * a.stride + j * a.dilation) });
            for (v, &s) in row.iter().enumerate() {
                let mask = masks[v];
                let earlier = if j == 0 { 0 } else { mask };
                // Wrapping: columns past `valid` may lie past the output; nothing is accessed
                // there (both masks exclude them).
                let dst = d.c.wrapping_add(r * d.ldc + v * 16);
                // SAFETY: the lanes under `earlier` are columns of row r that are ours and
                // were stored at tap 0 of this call; masked-off lanes are not accessed.
                let before = unsafe { _mm512_maskz_loadu_ps(earlier, dst) };
                let f = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), sv, before);
                // SAFETY: only the lanes under `mask`, columns of row r that are ours
                // (contract), are written.
                unsafe { _mm512_mask_storeu_ps(dst, mask, _mm512_mul_ps(f, columns[v])) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_measures_vpdpbusd() {
        if !supported() {
            eprintln!("skipped: this CPU has no AVX-512 VNNI");
            return;
        }
        let r = rate();
        // Above a GOP/s and below anything a core can do: a folded or mistimed loop is not.
        assert!((1e9..1e14).contains(&r), "{r}");
        eprintln!(
            "VPDPBUSD {:.0} GOP/s: int8 by default {}",
            r / 1e9,
            preferred()
        );
    }

    #[test]
    fn quantised_rows_come_back_within_half_a_step() {
        let c_in = 5;
        let x: Vec<f32> = (0..40)
            .map(|i| ((i * 37 % 23) as f32 - 11.0) * if i < 20 { 1e-3 } else { 10.0 })
            .chain([0.0; 5])
            .collect();
        let q = quantize_rows(&x, c_in, 8).expect("whole rows");
        assert_eq!(q.scales().len(), 9);
        assert_eq!(q.bytes().len(), 9 * 8);
        for (r, row) in x.chunks_exact(c_in).enumerate() {
            let s = q.scales()[r];
            let bytes = &q.bytes()[r * 8..(r + 1) * 8];
            // Each row's own scale: a quiet row keeps its detail beside a loud one.
            for (&b, &v) in bytes.iter().zip(row) {
                let back = (f32::from(b) - 128.0) * s;
                assert!(
                    (back - v).abs() <= s / 2.0 + 1e-6,
                    "row {r}: {v} came back {back}"
                );
            }
            assert!(
                bytes[c_in..].iter().all(|&b| b == 128),
                "padding is the zero"
            );
        }
        assert_eq!(q.scales()[8].to_bits(), 0, "a silent row");
        // The vector path gives the scalar one's bytes, ragged tails included.
        for len in [1, 15, 16, 17, 25] {
            let row = &x[20..20 + len];
            let (mut a, mut b) = (vec![0u8; len], vec![0u8; len]);
            let s = quantize_row(row, &mut a);
            if std::arch::is_x86_feature_detected!("avx512f") {
                // SAFETY: AVX-512F is there.
                let fast = unsafe { quantize_row_avx512(row, &mut b) };
                assert_eq!(fast.to_bits(), s.to_bits());
                assert_eq!(a, b, "{len} values");
            }
        }
        assert!(quantize_rows(&x[..7], c_in, 8).is_none());
        assert!(quantize_rows(&x, c_in, 4).is_none());
    }
}
