//! The AVX-512 BF16 kernels behind [`super::Bf16Weights`].
//!
//! The product is a convolution written directly, without an im2col copy: output row `r`
//! reads, for each tap `j`, the input row `r·stride + j·dilation` (channels contiguous), so
//! dilated and strided convolutions cost no phase copies either. Rows are split over rayon's
//! pool (or, for a few rows, the column panels); each task walks column panels of 64 outputs
//! (weights for one panel stay in L2) and blocks of 6 rows (24 accumulators in registers).
//! Each input is converted to bfloat16 once per call (round to nearest even); sums stay f32.

// Longer than the project's 600-line limit on purpose: the safe entry (`conv`), the bound
// checks it makes and every micro-kernel those checks protect belong in one file, so that a
// reader can verify each `unsafe` block against the check it relies on without leaving it.
//
// `unsafe` is allowed here (ARCHITECTURE.md lists the few modules that opt in, and why):
// the kernels are AVX-512 intrinsics reading and writing through raw pointers into the input,
// the packed panels and the output. The one safe entry to them is `conv`, which checks the CPU
// and every bound a kernel reads or writes before any kernel runs; `convert` checks the CPU
// and stays inside its slices. Each `unsafe` block below says which of those checks it uses.
#![allow(unsafe_code)]

use std::arch::x86_64::{
    __m512, __m512bh, __m512i, _mm512_cvtneps_pbh, _mm512_dpbf16_ps, _mm512_loadu_ps,
    _mm512_loadu_si512, _mm512_mask_storeu_ps, _mm512_set1_epi32, _mm512_setzero_ps,
    _mm512_storeu_ps,
};

use rayon::prelude::*;

use super::aligned::Aligned;
use super::{amx, fma, int8};
use super::{CpuKernel, Strides};

/// Output columns per panel (four 16-lane vectors).
const PANEL: usize = 64;

/// The panel geometry packed weights depend on, for caches of them ([`super::cache`]).
#[must_use]
pub fn geometry() -> String {
    format!(
        "panel={PANEL} block={} channels={}",
        amx::BLOCK,
        amx::CHANNELS
    )
}
/// Rows per register block.
pub(super) const MR: usize = 6;
/// Rows per parallel task (a multiple of [`MR`]).
const ROWS_PER_TASK: usize = 96;
/// Outputs up to this many values (1 MiB) are zeroed up front and split by rows and panels;
/// larger ones by rows alone, each task touching its own rows first.
const GRID_MAX_VALUES: usize = 256 * 1024;

/// Calls `micro::<M, NV>(args…)` for run-time `m` (1 to 6 rows; any other does nothing) and
/// `nv` (2, 3 or 4 vectors; any other is 1): the one dispatch every vector kernel's row tail
/// goes through. Expand it only inside an `unsafe fn` whose contract is `micro`'s for those
/// `M` and `NV`.
macro_rules! by_shape {
    ($micro:ident, $m:expr, $nv:expr, $args:tt) => {
        $crate::cpu_kernels::bf16::by_shape!(@rows $micro, $m, $nv, $args, 1 2 3 4 5 6)
    };
    (@rows $micro:ident, $m:expr, $nv:expr, $args:tt, $($rows:literal)*) => {
        match ($m, $nv) {
            $(
                // SAFETY: the expanding function's contract is `micro`'s for these M and NV.
                ($rows, 4) => unsafe { $crate::cpu_kernels::bf16::by_shape!(@call $micro, $rows, 4, $args) },
                // SAFETY: as above.
                ($rows, 3) => unsafe { $crate::cpu_kernels::bf16::by_shape!(@call $micro, $rows, 3, $args) },
                // SAFETY: as above.
                ($rows, 2) => unsafe { $crate::cpu_kernels::bf16::by_shape!(@call $micro, $rows, 2, $args) },
                // SAFETY: as above.
                ($rows, _) => unsafe { $crate::cpu_kernels::bf16::by_shape!(@call $micro, $rows, 1, $args) },
            )*
            _ => {}
        }
    };
    (@call $micro:ident, $rows:literal, $nv:literal, ($($arg:expr),*)) => {
        $micro::<$rows, $nv>($($arg),*)
    };
}
pub(super) use by_shape;

/// Whether this CPU can run the bfloat16 products.
#[must_use]
pub fn supported() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bf16")
}

/// f32 → bfloat16 bits, rounded to nearest even (NaN stays NaN).
#[must_use]
pub fn to_bf16(x: f32) -> u16 {
    let bits = x.to_bits();
    if x.is_nan() {
        return 0x7fc0;
    }
    let round = 0x7fff + ((bits >> 16) & 1);
    (bits.wrapping_add(round) >> 16) as u16
}

/// bfloat16 bits → f32.
#[must_use]
pub fn from_bf16(b: u16) -> f32 {
    f32::from_bits(u32::from(b) << 16)
}

/// A convolution's weights, packed for [`conv`]: for each panel of up to 64 output columns,
/// for each tap and each pair of input channels, the panel's columns as `(w[2q], w[2q+1])`
/// bfloat16 pairs in one `u32` (the even channel in the low half, as `VDPBF16PS` pairs them).
///
/// The same panels feed the AMX tiles (see [`amx`]): a B tile is 16 of a panel's pair rows ×
/// 16 of its columns. For tiles, each tap's channels are padded with zero weights to a
/// multiple of 32 ([`Self::row_len`]), and [`conv`] reads input rows of that length.
#[derive(Debug, Clone)]
pub struct PackedWeights {
    /// Starts a cache line, as every panel and B tile then does ([`Aligned`]).
    data: Aligned<u32>,
    taps: usize,
    c_in: usize,
    /// Channels per input row and tap: `C_in`, or for tiles `C_in` rounded up to 32.
    row_len: usize,
    c_out: usize,
    /// Which kernel runs this layer, and so how its panels hold the weights.
    format: Format,
}

/// How a layer's panels hold its weights, and which kernel runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// bfloat16 pairs, run by the `VDPBF16PS` vector kernel here.
    Bf16,
    /// bfloat16 pairs with each tap's channels padded to 32, run on AMX tiles: asked for, the
    /// CPU has them, and `C_out` is a multiple of 32.
    Tiles,
    /// One f32 per input channel, run by the FMA vector kernel ([`fma`]).
    F32,
    /// Signed bytes with a scale per output column, each tap's channels padded to 4, run by
    /// the VNNI kernel ([`int8`]).
    I8,
}

impl Format {
    /// The format `kernel` packs a layer with `c_out` outputs in on this CPU, or `None` where
    /// the CPU has no kernel for it.
    #[must_use]
    pub fn for_layer(kernel: CpuKernel, c_out: usize) -> Option<Self> {
        let vectors = |f32: bool| {
            if f32 {
                fma::supported().then_some(Self::F32)
            } else {
                supported().then_some(Self::Bf16)
            }
        };
        match kernel {
            CpuKernel::Tiles if tiles_fit(c_out) => Some(Self::Tiles),
            CpuKernel::Tiles => vectors(fma::preferred()),
            CpuKernel::Vectors => vectors(false),
            CpuKernel::F32 => vectors(true),
            CpuKernel::Int8 if int8::supported() => Some(Self::I8),
            CpuKernel::Int8 => Self::for_layer(CpuKernel::Tiles, c_out),
        }
    }

    /// Whether this CPU can run the kernel of this format.
    fn runs_here(self) -> bool {
        match self {
            Self::Bf16 => supported(),
            Self::Tiles => supported() && amx::available(),
            Self::F32 => fma::supported(),
            Self::I8 => int8::supported(),
        }
    }

    /// Packed `u32` values per output column of a panel, for `taps` taps of `row_len`
    /// channels: a bfloat16 pair holds two channels, an f32 one; int8 four, after the
    /// column's scale and a correction per tap ([`int8::pack_panel`]).
    fn values_per_column(self, taps: usize, row_len: usize) -> usize {
        match self {
            Self::Bf16 | Self::Tiles => taps * row_len / 2,
            Self::F32 => taps * row_len,
            Self::I8 => int8::values_per_column(taps, row_len),
        }
    }
}

impl PackedWeights {
    /// From weights `w[(j·C_in + c)·C_out + o]` (tap `j`, input channel `c`, output `o`:
    /// the time-major `[K·C_in, C_out]` matrix). `C_in` must be even. The kernel and layout
    /// are [`Format::for_layer`]'s; `None` where this CPU has no kernel for it.
    #[must_use]
    pub fn pack(
        w: &[f32],
        taps: usize,
        c_in: usize,
        c_out: usize,
        kernel: CpuKernel,
    ) -> Option<Self> {
        if w.len() != taps * c_in * c_out {
            return None;
        }
        let time_major = Strides {
            tap: c_in * c_out,
            input: c_out,
            output: 1,
        };
        Self::pack_strided(w, time_major, taps, c_in, c_out, kernel)
    }

    /// [`Self::pack`] from weights in any layout whose element (tap `j`, input channel `c`,
    /// output `o`) lies at `j·tap + c·input + o·output` (see [`Strides`]): packing reads the
    /// file's own layout, with no permuted f32 copy made first. `None` where [`Self::pack`]
    /// declines, or if an element would lie outside `w`.
    #[must_use]
    pub fn pack_strided(
        w: &[f32],
        s: Strides,
        taps: usize,
        c_in: usize,
        c_out: usize,
        kernel: CpuKernel,
    ) -> Option<Self> {
        if !c_in.is_multiple_of(2) || c_out == 0 || taps == 0 || c_in == 0 {
            return None;
        }
        let format = Format::for_layer(kernel, c_out)?;
        // The furthest element read, checked so no index below can leave `w`.
        let last = (taps - 1)
            .checked_mul(s.tap)?
            .checked_add((c_in - 1).checked_mul(s.input)?)?
            .checked_add((c_out - 1).checked_mul(s.output)?)?;
        if last >= w.len() {
            return None;
        }
        let (row_len, columns) = (row_len(c_in, format), columns(c_out));
        let per_column = format.values_per_column(taps, row_len);
        let values_per_tap = per_column / taps;
        // Each panel's values are one contiguous run (`per_column·width`, every panel PANEL
        // wide but the last), so the panels are packed in parallel: packing ran on the model
        // thread alone and was close to half of a start. Zero pairs (padding channels and
        // columns) are left as `par_filled` made them.
        let data =
            Aligned::<u32>::par_filled(per_column * columns, per_column * PANEL, |p, out| {
                let start = p * PANEL;
                let width = out.len() / per_column;
                let end = (start + width).min(c_out);
                if format == Format::I8 {
                    let at =
                        |j: usize, c: usize, o: usize| w[j * s.tap + c * s.input + o * s.output];
                    int8::pack_panel(out, (taps, c_in, row_len), (start, end), at);
                    return;
                }
                let mut at = 0;
                for j in 0..taps {
                    for q in 0..values_per_tap {
                        let row = &mut out[at..at + end - start];
                        at += width;
                        if format == Format::F32 {
                            let c = j * s.tap + q * s.input;
                            for (d, o) in row.iter_mut().zip(start..end) {
                                *d = w[c + o * s.output].to_bits();
                            }
                            continue;
                        }
                        let (even, odd) = (2 * q, 2 * q + 1);
                        if odd < c_in {
                            let even = j * s.tap + even * s.input;
                            let odd = j * s.tap + odd * s.input;
                            for (d, o) in row.iter_mut().zip(start..end) {
                                let (e, h) = (w[even + o * s.output], w[odd + o * s.output]);
                                *d = u32::from(to_bf16(e)) | (u32::from(to_bf16(h)) << 16);
                            }
                        }
                    }
                }
            });
        Self::from_parts(data, taps, c_in, c_out, format)
    }

    /// Packed weights read back from a cache ([`super::cache`]): `data` as [`Self::data`] gave
    /// it for a layer of this shape. `None` unless every invariant the kernels rely on holds:
    /// `C_in` even, a format this CPU runs (tiles only where `C_out` fits them), and exactly
    /// as many values as packing that layer makes (the kernels read the panels by that
    /// length).
    #[must_use]
    pub fn from_parts(
        data: Aligned<u32>,
        taps: usize,
        c_in: usize,
        c_out: usize,
        format: Format,
    ) -> Option<Self> {
        if !c_in.is_multiple_of(2) || c_out == 0 || taps == 0 || c_in == 0 {
            return None;
        }
        if !format.runs_here() || (format == Format::Tiles && !tiles_fit(c_out)) {
            return None;
        }
        let row_len = row_len(c_in, format);
        let expected = taps
            .checked_mul(row_len)
            .map(|_| format.values_per_column(taps, row_len))?
            .checked_mul(columns(c_out))?;
        (data.len() == expected).then_some(Self {
            data,
            taps,
            c_in,
            row_len,
            c_out,
            format,
        })
    }

    /// The packed panels, as [`Self::from_parts`] takes them back.
    #[must_use]
    pub fn data(&self) -> &[u32] {
        &self.data
    }

    #[must_use]
    pub fn taps(&self) -> usize {
        self.taps
    }

    /// Whether the products run on AMX tiles.
    #[must_use]
    pub fn tiles(&self) -> bool {
        self.format == Format::Tiles
    }

    /// Which kernel runs the products, and how the panels hold the weights.
    #[must_use]
    pub fn format(&self) -> Format {
        self.format
    }

    #[must_use]
    pub fn c_in(&self) -> usize {
        self.c_in
    }

    /// Length of the bfloat16 input rows [`conv`] reads (see [`convert_rows`]).
    #[must_use]
    pub fn row_len(&self) -> usize {
        self.row_len
    }

    #[must_use]
    pub fn c_out(&self) -> usize {
        self.c_out
    }
}

/// Whether a layer with `c_out` outputs can run on AMX tiles here.
fn tiles_fit(c_out: usize) -> bool {
    c_out.is_multiple_of(amx::BLOCK) && supported() && amx::available()
}

/// Channels per packed input row: `C_in`, rounded up to whole tiles for tiles and to quads
/// for int8.
fn row_len(c_in: usize, format: Format) -> usize {
    match format {
        Format::Tiles => c_in.next_multiple_of(amx::CHANNELS),
        Format::I8 => c_in.next_multiple_of(4),
        Format::Bf16 | Format::F32 => c_in,
    }
}

/// Packed columns: `C_out` padded panel by panel.
fn columns(c_out: usize) -> usize {
    panels(c_out).map(|(_, width)| width).sum()
}

/// Panels `(first column, width)`, widths a multiple of 16 (the last one padded).
fn panels(c_out: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..c_out)
        .step_by(PANEL)
        .map(move |s| (s, (c_out - s).min(PANEL).next_multiple_of(16)))
}

/// Converts f32 values to bfloat16 (round to nearest even), in parallel for long inputs.
#[must_use]
pub fn convert(x: &[f32]) -> Aligned<u16> {
    const CHUNK: usize = 1 << 16;
    let fast = supported();
    Aligned::par_filled(x.len(), CHUNK, |k, o| {
        let i = &x[k * CHUNK..][..o.len()];
        if fast {
            // SAFETY: `convert_avx512` needs AVX-512F and AVX-512 BF16, which `supported()`
            // found on this CPU above; it takes slices, so it has no bounds for us to uphold.
            unsafe { convert_avx512(i, o) }
        } else {
            for (h, &v) in o.iter_mut().zip(i) {
                *h = to_bf16(v);
            }
        }
    })
}

/// Converts `[rows, c_in]` f32 values to bfloat16 rows of `row_len ≥ c_in` values, the
/// channels past `c_in` zero (the padded rows AMX tiles read); [`convert`] when they are the
/// same length. `None` if `x` is not whole rows or `row_len < c_in`.
#[must_use]
pub fn convert_rows(x: &[f32], c_in: usize, row_len: usize) -> Option<Aligned<u16>> {
    const ROWS: usize = 256;
    if c_in == 0 || !x.len().is_multiple_of(c_in) || row_len < c_in {
        return None;
    }
    if row_len == c_in {
        return Some(convert(x));
    }
    let fast = supported();
    let rows = x.len() / c_in;
    let out = Aligned::par_filled(rows * row_len, ROWS * row_len, |k, o| {
        let i = &x[k * ROWS * c_in..][..o.len() / row_len * c_in];
        for (orow, irow) in o.chunks_exact_mut(row_len).zip(i.chunks_exact(c_in)) {
            if fast {
                // SAFETY: `convert_avx512` needs AVX-512F and AVX-512 BF16, which
                // `supported()` found above; it takes slices and stays inside them.
                unsafe { convert_avx512(irow, orow) }
            } else {
                for (h, &v) in orow.iter_mut().zip(irow) {
                    *h = to_bf16(v);
                }
            }
        }
    });
    Some(out)
}

/// [`convert`] sixteen values at a time with `VCVTNEPS2BF16`, the rest one by one; stops at
/// the shorter of the two slices.
///
/// # Safety
///
/// The CPU must have AVX-512F and AVX-512 BF16 (as [`supported`] checks).
#[target_feature(enable = "avx512f,avx512bf16")]
unsafe fn convert_avx512(x: &[f32], out: &mut [u16]) {
    let len = x.len().min(out.len());
    let n = len / 16 * 16;
    for i in (0..n).step_by(16) {
        // SAFETY: `i + 16 <= n <= len` of both slices, so the 16 f32 read from `x` and the 16
        // u16 (one `__m256bh`) written to `out` are inside them; both accesses are unaligned
        // (`loadu`, `write_unaligned`). The instructions are there (this function's contract).
        unsafe {
            let v = _mm512_loadu_ps(x.as_ptr().add(i));
            let h = _mm512_cvtneps_pbh(v);
            std::ptr::write_unaligned(out.as_mut_ptr().add(i).cast(), h);
        }
    }
    for i in n..len {
        out[i] = to_bf16(x[i]);
    }
}

/// How a convolution reads its input: output row `r`, tap `j` reads the `C_in` channels of
/// input row `r·stride + j·dilation`.
#[derive(Debug, Clone, Copy)]
pub struct Geometry {
    pub rows: usize,
    pub stride: usize,
    pub dilation: usize,
}

/// A convolution's input rows: bfloat16 for the bfloat16 formats ([`convert_rows`]), f32 for
/// [`Format::F32`], bytes with a scale per row for [`Format::I8`] ([`int8::quantize_rows`]).
#[derive(Debug, Clone, Copy)]
pub enum Rows<'a> {
    Bf16(&'a [u16]),
    F32(&'a [f32]),
    I8(&'a int8::Quantized),
}

impl Rows<'_> {
    /// Elements (of the packed row length) in all the rows.
    fn len(self) -> usize {
        match self {
            Self::Bf16(x) => x.len(),
            Self::F32(x) => x.len(),
            Self::I8(x) => x.bytes().len(),
        }
    }
}

/// The convolution of input `x` (`[rows_in, row_len]`, time-major, already padded in time;
/// see [`PackedWeights::row_len`]) with `w`: `[rows, C_out]` in f32, no bias. Returns `None`
/// if `x` is too short for the geometry (or the geometry's extent overflows), if there are
/// no rows or taps, if `x` is not the element type `w`'s format reads, or off the CPU
/// features that format's kernel needs.
#[must_use]
pub fn conv(x: Rows<'_>, w: &PackedWeights, g: Geometry) -> Option<Vec<f32>> {
    let c = w.row_len;
    let fits = match (x, w.format) {
        (Rows::F32(_), Format::F32) | (Rows::Bf16(_), Format::Bf16 | Format::Tiles) => true,
        // bfloat16 panels widened to f32 in registers (`fma::conv_panel_widened`).
        (Rows::F32(_), Format::Bf16) => fma::supported(),
        (Rows::I8(q), Format::I8) => q.row_len() == w.row_len,
        _ => false,
    };
    if !fits || !w.format.runs_here() {
        return None;
    }
    // The last input row any output row reads: (rows − 1)·stride + (taps − 1)·dilation. Checked
    // arithmetic, because the kernels' safety rests on this bound: a wrapped product would let
    // a huge geometry pass with a short input.
    let last = g
        .rows
        .checked_sub(1)?
        .checked_mul(g.stride)?
        .checked_add(w.taps.checked_sub(1)?.checked_mul(g.dilation)?)?;
    if last.checked_add(1)?.checked_mul(c)? > x.len() {
        return None;
    }
    let n = w.c_out;
    let panels: Vec<Panel> = panels(n)
        .scan(0, |b_off, (col, width)| {
            let p = Panel {
                col,
                width,
                b_off: *b_off,
            };
            *b_off += w.format.values_per_column(w.taps, w.row_len) * width;
            Some(p)
        })
        .collect();
    let len = g.rows.checked_mul(n)?;
    let row_blocks = g.rows.div_ceil(ROWS_PER_TASK);
    if row_blocks * ROWS_PER_TASK * n <= GRID_MAX_VALUES {
        // Few rows (an encoder layer, a row per phoneme or frame): the tasks split the
        // columns, and past one task's rows the rows too, so that a few hundred rows over a
        // few panels still make enough tasks for every thread (three row blocks alone left
        // one of two threads idle for a third of the product).
        let mut out = vec![0f32; len];
        let dst = Output(out.as_mut_ptr());
        let tasks: Vec<(usize, &Panel)> = (0..row_blocks)
            .flat_map(|b| panels.iter().map(move |p| (b * ROWS_PER_TASK, p)))
            .collect();
        tasks.par_iter().for_each(|&(r0, p)| {
            let rows = ROWS_PER_TASK.min(g.rows - r0);
            // SAFETY: `conv_panel`'s contract: the CPU has the instructions (`runs_here()`
            // above, for the format `rows_of_panel` dispatches on; `x` is its element type);
            // rows r0..r0 + rows (inside 0..g.rows) read inside `x` (the `last` check above);
            // `p` is one of `panels(n)` with its offset into `w` (built from `w` just above);
            // `dst` + r0·n is row r0 of `out` (g.rows × n values, alive until after this
            // `for_each`); and each task writes only the columns of its own panel in its own
            // rows, which no other task touches, while nothing else reads or writes `out`.
            unsafe { rows_of_panel(x, w, g, r0, rows, p, dst.get().wrapping_add(r0 * n)) }
        });
        return Some(out);
    }
    // Many rows: each task writes its own rows, into memory it touches first. Zeroing the
    // output up front (`vec![0.0; len]`) was one serial pass over it, with its page faults, on
    // the caller's thread while the pool waited: a fifth of the model thread's time in a lone
    // first segment's profile. The kernels store every element instead (below).
    let mut out: Vec<f32> = Vec::with_capacity(len);
    out.spare_capacity_mut()[..len]
        .par_chunks_mut(ROWS_PER_TASK * n)
        .enumerate()
        .for_each(|(task, y)| {
            let r0 = task * ROWS_PER_TASK;
            for p in &panels {
                // SAFETY: as above, for rows r0 .. r0 + y.len()/n, which lie inside 0..g.rows
                // (the chunks are the output's rows in order); `y` is this task's own chunk,
                // exactly those rows × n values (uninitialised: the kernels only write
                // through the pointer, never read), so the panel's writes stay in memory no
                // other task sees.
                unsafe { rows_of_panel(x, w, g, r0, y.len() / n, p, y.as_mut_ptr().cast()) }
            }
        });
    // SAFETY: the chunks cover elements 0..len, and every task stored every element of its
    // chunk before `for_each` returned: the panels tile the columns 0..n (`panels`: each
    // starts where the last one's width ended; a tile panel stores all of its 32-column
    // blocks, C_out being a multiple of 32 there, and `conv_panel` stores its `valid` columns
    // min(n − col, width)), and `rows_of_panel` stores every row of its range (whole AMX
    // blocks and then one of the rest; `conv_panel` blocks of `MR` and then the rest). The
    // products test compares every element with an f32 loop, odd widths and row counts
    // included.
    unsafe { out.set_len(len) };
    Some(out)
}

/// A panel of output columns and where its packed weights start.
pub(super) struct Panel {
    pub col: usize,
    pub width: usize,
    pub b_off: usize,
}

/// The output buffer, shared by tasks that write disjoint columns of it.
#[derive(Clone, Copy)]
struct Output(*mut f32);
// SAFETY: an `Output` is only a pointer; sending it to another thread is sound because the
// only place that dereferences it, `conv`, keeps the buffer alive until every task is done
// and has each task write a set of elements no other task reads or writes.
unsafe impl Send for Output {}
// SAFETY: sharing `&Output` only lets a thread copy the pointer out; the same reasoning as for
// `Send` covers what it is then used for.
unsafe impl Sync for Output {}

impl Output {
    fn get(self) -> *mut f32 {
        self.0
    }
}

/// Rows `r0 .. r0 + rows` of the convolution, the columns of panel `p`, into `y` (the
/// output's row `r0`, row stride `C_out`): on AMX tiles when the layer uses them (blocks of
/// 32 rows, then one of the rest), else with [`conv_panel`], [`fma::conv_panel`] or (f32
/// rows on bfloat16 panels) [`fma::conv_panel_widened`].
///
/// # Safety
///
/// As for [`conv_panel`] (or [`fma::conv_panel`] for [`Format::F32`], or
/// [`fma::conv_panel_widened`] for f32 rows on [`Format::Bf16`]), with `x` the element
/// type of `w`'s format.
unsafe fn rows_of_panel(
    x: Rows<'_>,
    w: &PackedWeights,
    g: Geometry,
    r0: usize,
    rows: usize,
    p: &Panel,
    y: *mut f32,
) {
    let x = match (x, w.format) {
        // SAFETY: this function's contract is `fma::conv_panel`'s for the F32 format.
        (Rows::F32(x), Format::F32) => return unsafe { fma::conv_panel(x, w, g, r0, rows, p, y) },
        (Rows::F32(x), Format::Bf16) => {
            // SAFETY: this function's contract is `fma::conv_panel_widened`'s for f32 rows
            // and the Bf16 format (`conv` checked that this CPU has AVX-512F for them).
            return unsafe { fma::conv_panel_widened(x, w, g, r0, rows, p, y) };
        }
        // SAFETY: this function's contract is `conv_panel`'s for the Bf16 format.
        (Rows::Bf16(x), Format::Bf16) => return unsafe { conv_panel(x, w, g, r0, rows, p, y) },
        // SAFETY: this function's contract is `int8::conv_panel`'s for the I8 format (`conv`
        // checked that the rows have the weights' row length).
        (Rows::I8(x), Format::I8) => return unsafe { int8::conv_panel(x, w, g, r0, rows, p, y) },
        (Rows::Bf16(x), Format::Tiles) => x,
        // `conv` pairs every format with its element type before any task starts.
        _ => return,
    };
    let n = w.c_out;
    let full = rows / amx::BLOCK * amx::BLOCK;
    // Whole blocks under one configuration, then the last rows under their own.
    for (first, end) in [(0, full), (full, rows)] {
        if first == end {
            continue;
        }
        // SAFETY: `w.tiles` is only true where `amx::available()` returned true (`pack`).
        let tiles = unsafe { amx::Tiles::configure((end - first).min(amx::BLOCK)) };
        for r in (first..end).step_by(tiles.rows()) {
            let input = amx::Input {
                // SAFETY: input row (r0 + r)·stride is no later than the last row read for
                // output rows r0 .. r0 + rows (this function's contract): inside `x`.
                x: unsafe { x.as_ptr().add((r0 + r) * g.stride * w.row_len) },
                lda: g.stride * w.row_len * 2,
                tap: g.dilation * w.row_len * 2,
                taps: w.taps,
                chunks: w.row_len / amx::CHANNELS,
            };
            for col in (0..p.width).step_by(amx::BLOCK) {
                // SAFETY: `Tiles::block`'s contract, for m = tiles.rows() rows. Input: rows
                // r .. r + m ≤ rows of this call (whole blocks up to `full`, then one block of
                // exactly the rest) read input rows up to the last one the contract lets us
                // read, channels 0 .. chunks·32 = row_len of every tap (tiles ⇒ row_len is a
                // multiple of 32). Weights: tiles ⇒ C_out, and so every panel width, is a
                // multiple of 32, and `pack` wrote taps·row_len/2 pair rows of `width` u32 for
                // this panel from `b_off`: the block reads taps·chunks·16 = taps·row_len/2 of
                // those rows (stride width·4 bytes), bytes col·4 .. col·4 + 128 of each,
                // inside the row. Output: rows r .. r + m ≤ rows, columns p.col + col .. + 32
                // ≤ p.col + width, all valid (C_out is a multiple of 32), ours to write.
                unsafe {
                    let b = w.data.as_ptr().add(p.b_off + col).cast::<u8>();
                    let c = y.add(r * n + p.col + col);
                    tiles.block(&input, b, p.width * 4, c, n * 4);
                }
            }
        }
    }
}

/// Rows `r0 .. r0 + rows` of the convolution, the columns of panel `p`, into `y` (the
/// output's row `r0`, row stride `C_out`), with the AVX-512 BF16 vector kernel.
///
/// # Safety
///
/// - The CPU has AVX-512F and AVX-512 BF16.
/// - Input row `(r0 + rows − 1)·stride + (taps − 1)·dilation` (row length `C_in`) and all
///   rows before it lie inside `x`: the bound `conv` checks, for output rows `r0 .. r0 + rows`.
/// - `p` is one of `panels(C_out)` of `w`, with `b_off` the sum of the packed sizes
///   (`taps·C_in/2 · width`) of the panels before it.
/// - `y` is valid for writes of `rows` rows of `C_out` values (row stride `C_out`), no other
///   thread accesses columns `p.col .. p.col + p.width` of those rows meanwhile, and the caller
///   does not use references to them while this runs.
#[target_feature(enable = "avx512f,avx512bf16")]
unsafe fn conv_panel(
    x: &[u16],
    w: &PackedWeights,
    g: Geometry,
    r0: usize,
    rows: usize,
    p: &Panel,
    y: *mut f32,
) {
    let n = w.c_out;
    let pairs_per_tap = w.row_len / 2;
    let valid = (n - p.col).min(p.width);
    for rb in (0..rows).step_by(MR) {
        let mr = (rows - rb).min(MR);
        let a = Block {
            // SAFETY: input row (r0 + rb)·stride comes no later than the last row read
            // (this function's contract), so the offset stays inside `x`.
            x: unsafe { x.as_ptr().add((r0 + rb) * g.stride * w.row_len) },
            lda: g.stride * w.row_len,
            taps: w.taps,
            tap_stride: g.dilation * w.row_len,
            pairs: pairs_per_tap,
        };
        // SAFETY: `b_off` is where panel `p` starts in `w.data` (contract), at most its length.
        let b = unsafe { w.data.as_ptr().add(p.b_off) };
        // SAFETY: row rb < rows and column p.col < C_out, so the offset is inside `y`'s rows.
        let c = unsafe { y.add(rb * n + p.col) };
        // `by_shape!` runs `micro` for `M = mr` rows and `NV = width/16` vectors (every panel
        // width is 16, 32, 48 or 64, so each arm passes its exact NV), and its contract holds
        // there, the unsafe blocks the macro writes relying on it: the CPU has the
        // instructions (ours); `a` reads rows r0 + rb .. r0 + rb + mr, inside `x` (ours);
        // `b` has the panel's taps·C_in/2 · width packed values (`PackedWeights::pack` wrote
        // exactly that many per panel, in this order); `c` takes rows rb .. rb + mr of `y`,
        // columns p.col .. p.col + valid with valid ≤ C_out − p.col, which are ours to write.
        by_shape!(micro, mr, p.width / 16, (&a, b, c, n, valid));
    }
}

/// Where a block of rows reads its input (in bfloat16 elements).
struct Block {
    x: *const u16,
    lda: usize,
    taps: usize,
    tap_stride: usize,
    pairs: usize,
}

/// `M` rows × `NV`·16 columns: every tap, every channel pair, one `VDPBF16PS` per
/// accumulator; then `valid` columns stored to `c` (row stride `ldc`).
///
/// # Safety
///
/// - The CPU has AVX-512F and AVX-512 BF16.
/// - For every row `r < M`, tap `j < a.taps` and channel `i < 2·a.pairs`, the element
///   `a.x + r·a.lda + j·a.tap_stride + i` is inside one readable `u16` allocation.
/// - `b` points at `a.taps · a.pairs · NV·16` readable `u32`s.
/// - For every row `r < M`, the first `min(valid, NV·16)` `f32`s at `c + r·ldc` are writable
///   and not accessed by anyone else while this runs (no others are touched).
#[target_feature(enable = "avx512f,avx512bf16")]
#[inline]
unsafe fn micro<const M: usize, const NV: usize>(
    a: &Block,
    b: *const u32,
    c: *mut f32,
    ldc: usize,
    valid: usize,
) {
    let mut acc: [[__m512; NV]; M] = [[_mm512_setzero_ps(); NV]; M];
    let mut bp = b;
    for j in 0..a.taps {
        // SAFETY: tap j's first element of row 0, inside the input (contract).
        let xt = unsafe { a.x.add(j * a.tap_stride) };
        for q in 0..a.pairs {
            // SAFETY: a `__m512bh` is 32 plain 16-bit lanes; all-zero bits are a valid value.
            let mut bv: [__m512bh; NV] = [unsafe { std::mem::zeroed() }; NV];
            for (v, slot) in bv.iter_mut().enumerate() {
                // SAFETY: `bp` has advanced NV·16 values per (tap, pair) done so far, so the
                // 16 `u32`s read at bp + v·16 (v < NV) are among the `b` values the contract
                // promises; `loadu` has no alignment requirement.
                let raw: __m512i = unsafe { _mm512_loadu_si512(bp.add(v * 16).cast()) };
                // SAFETY: both are 512-bit vectors of plain integer lanes; every bit pattern
                // of one is a valid value of the other.
                *slot = unsafe { std::mem::transmute::<__m512i, __m512bh>(raw) };
            }
            for (r, row) in acc.iter_mut().enumerate() {
                // SAFETY: elements 2q and 2q + 1 (< 2·pairs) of row r at tap j are inside the
                // input (contract); `read_unaligned` needs no alignment for the `i32`.
                let pair = unsafe { xt.add(r * a.lda + 2 * q).cast::<i32>().read_unaligned() };
                // SAFETY: as above, 512 bits of plain integer lanes either way.
                let av: __m512bh =
                    unsafe { std::mem::transmute::<__m512i, __m512bh>(_mm512_set1_epi32(pair)) };
                for (s, &bvv) in row.iter_mut().zip(&bv) {
                    *s = _mm512_dpbf16_ps(*s, av, bvv);
                }
            }
            // SAFETY: at most one past the last `b` value the contract promises.
            bp = unsafe { bp.add(NV * 16) };
        }
    }
    // SAFETY: `store`'s contract is the last point of ours.
    unsafe { store(&acc, c, ldc, valid) };
}

/// The lanes of 16-lane vector `v` of a row that hold one of its first `valid` columns, as a
/// load or store mask.
pub(super) fn lanes(v: usize, valid: usize) -> u16 {
    let col = v * 16;
    if col >= valid {
        0
    } else if valid - col >= 16 {
        u16::MAX
    } else {
        (1u16 << (valid - col)) - 1
    }
}

/// Stores the first `valid` columns of `M` rows of `NV` accumulators to `c` (row stride
/// `ldc`).
///
/// # Safety
///
/// - The CPU has AVX-512F.
/// - For every row `r < M`, the first `min(valid, NV·16)` `f32`s at `c + r·ldc` are writable
///   and not accessed by anyone else while this runs (no others are touched).
#[target_feature(enable = "avx512f")]
#[inline]
pub(super) unsafe fn store<const M: usize, const NV: usize>(
    acc: &[[__m512; NV]; M],
    c: *mut f32,
    ldc: usize,
    valid: usize,
) {
    for (r, row) in acc.iter().enumerate() {
        for (v, s) in row.iter().enumerate() {
            let col = v * 16;
            if col >= valid {
                break;
            }
            // SAFETY: column col < valid of row r < M, inside the writable region (contract).
            let dst = unsafe { c.add(r * ldc + col) };
            if valid - col >= 16 {
                // SAFETY: columns col .. col + 16 of row r (≤ valid, and ≤ NV·16 as v < NV)
                // are ours to write (contract); `storeu` has no alignment requirement.
                unsafe { _mm512_storeu_ps(dst, *s) };
            } else {
                let mask = (1u16 << (valid - col)) - 1;
                // SAFETY: the mask enables only lanes below valid − col, i.e. columns
                // col .. valid of row r, which are ours to write (contract); masked-off lanes
                // are not accessed (and cannot fault).
                unsafe { _mm512_mask_storeu_ps(dst, mask, *s) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The input and weights as `format` rounds them: to bfloat16, not at all for f32, and
    /// for int8 to each input row's and each output column's 8-bit steps (computed here
    /// independently of `int8`'s packing, from the same rule).
    fn rounded(
        x: &[f32],
        w: &[f32],
        (taps, c_in, c_out): (usize, usize, usize),
        format: Format,
    ) -> (Vec<f64>, Vec<f64>) {
        let step = |peak: f32| if peak > 0.0 { peak / 127.0 } else { 0.0 };
        let level = |v: f32, s: f32| {
            if s > 0.0 {
                f64::from((v / s).round()) * f64::from(s)
            } else {
                0.0
            }
        };
        match format {
            Format::F32 => (
                x.iter().map(|&v| f64::from(v)).collect(),
                w.iter().map(|&v| f64::from(v)).collect(),
            ),
            Format::Bf16 | Format::Tiles => {
                let round = |v: &f32| f64::from(from_bf16(to_bf16(*v)));
                (x.iter().map(round).collect(), w.iter().map(round).collect())
            }
            Format::I8 => {
                let xq = x
                    .chunks_exact(c_in)
                    .flat_map(|row| {
                        // Inputs are scaled by the step's reciprocal and rounded half to even,
                        // as `quantize_rows` does.
                        let s = step(row.iter().fold(0f32, |m, v| m.max(v.abs())));
                        let inv = if s > 0.0 { 1.0 / s } else { 0.0 };
                        row.iter()
                            .map(move |&v| f64::from((v * inv).round_ties_even()) * f64::from(s))
                    })
                    .collect();
                let scales: Vec<f32> = (0..c_out)
                    .map(|o| {
                        let col = (0..taps * c_in).map(|k| w[k * c_out + o].abs());
                        step(col.fold(0f32, f32::max))
                    })
                    .collect();
                let wq = w
                    .iter()
                    .enumerate()
                    .map(|(i, &v)| level(v, scales[i % c_out]))
                    .collect();
                (xq, wq)
            }
        }
    }

    /// Reference of the same convolution, in f64 on the inputs as `format` rounds them.
    fn reference(
        x: &[f32],
        w: &[f32],
        (taps, c_in, c_out): (usize, usize, usize),
        g: Geometry,
        format: Format,
    ) -> Vec<f32> {
        let (x, w) = rounded(x, w, (taps, c_in, c_out), format);
        reference_of(&x, &w, (taps, c_in, c_out), g)
    }

    /// The largest |a − b| over two outputs.
    fn largest_difference(a: &[f32], b: &[f32]) -> f32 {
        a.iter()
            .zip(b)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max)
    }

    /// [`reference`] on inputs and weights already rounded.
    fn reference_of(
        x: &[f64],
        w: &[f64],
        (taps, c_in, c_out): (usize, usize, usize),
        g: Geometry,
    ) -> Vec<f32> {
        let mut y = vec![0f64; g.rows * c_out];
        for r in 0..g.rows {
            for j in 0..taps {
                let row = r * g.stride + j * g.dilation;
                for c in 0..c_in {
                    let xv = x[row * c_in + c];
                    for o in 0..c_out {
                        y[r * c_out + o] += xv * w[(j * c_in + c) * c_out + o];
                    }
                }
            }
        }
        y.into_iter().map(|v| v as f32).collect()
    }

    const KERNELS: [CpuKernel; 4] = [
        CpuKernel::Vectors,
        CpuKernel::Tiles,
        CpuKernel::F32,
        CpuKernel::Int8,
    ];

    fn ramp(n: usize, seed: u32) -> Vec<f32> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (f64::from(s >> 8) / f64::from(1u32 << 24) - 0.5) as f32
            })
            .collect()
    }

    #[test]
    fn rounding_is_to_nearest_even() {
        assert_eq!(to_bf16(1.0), 0x3f80);
        // 1 + 2⁻⁸ is halfway between 1 and 1 + 2⁻⁷: ties go to the even mantissa (1.0).
        assert_eq!(to_bf16(1.0 + 1.0 / 256.0), 0x3f80);
        assert_eq!(to_bf16(1.0 + 3.0 / 256.0), 0x3f82);
        assert!(from_bf16(to_bf16(f32::NAN)).is_nan());
        assert_eq!(from_bf16(to_bf16(-2.5)).to_bits(), (-2.5f32).to_bits());
        if supported() {
            let x: Vec<f32> = ramp(1000, 7).iter().map(|v| v * 1e3).collect();
            let fast = convert(&x);
            assert!(fast.iter().zip(&x).all(|(&h, &v)| h == to_bf16(v)));
        }
    }

    #[test]
    fn the_products_match_an_f32_loop_over_the_same_inputs() {
        if !supported() {
            eprintln!("skipped: this CPU has no AVX-512 BF16");
            return;
        }
        // Shapes with ragged rows (not a multiple of 6, 32 or a task), ragged columns (22: the
        // generator's conv_post), dilation and stride. On tiles, every layer whose C_out is a
        // multiple of 32 runs there: with its rows' tail as a block of its own (1–16 rows and
        // 17–31), channels padded to 32 (22: the noise convolutions; 66), few rows (column
        // tasks) and many (row tasks).
        for kernel in KERNELS {
            if kernel == CpuKernel::Int8 && !int8::supported() {
                eprintln!("skipped int8: this CPU has no AVX-512 VNNI");
                continue;
            }
            for &(taps, c_in, c_out, rows, stride, dilation) in &[
                (3, 16, 64, 7, 1, 1),
                (7, 8, 22, 13, 1, 1),
                (3, 32, 130, 200, 1, 5),
                (11, 4, 16, 1, 1, 3),
                (4, 6, 48, 9, 2, 1),
                (1, 24, 80, 101, 1, 1),
                (2, 64, 200, 50, 1, 1),
                (3, 64, 96, 70, 1, 3),
                (7, 32, 32, 230, 1, 5),
                (2, 128, 256, 33, 2, 1),
                (1, 96, 160, 31, 1, 1),
                (12, 22, 64, 45, 6, 1),
                (3, 66, 32, 40, 1, 2),
                (1, 2, 32, 16, 1, 1),
                // Row blocks by panels, the last block short.
                (3, 32, 64, 1001, 1, 2),
                // Past the grid's size: row tasks alone, the last one short.
                (1, 16, 272, 1000, 1, 1),
            ] {
                let g = Geometry {
                    rows,
                    stride,
                    dilation,
                };
                let rows_in_len = (rows - 1) * stride + (taps - 1) * dilation + 1;
                let xf = ramp(rows_in_len * c_in, 3);
                let w = ramp(taps * c_in * c_out, 11);
                let packed =
                    PackedWeights::pack(&w, taps, c_in, c_out, kernel).expect("even channels");
                assert_eq!(
                    packed.tiles(),
                    kernel == CpuKernel::Tiles && c_out % 32 == 0 && amx::available()
                );
                match kernel {
                    CpuKernel::Vectors => assert_eq!(packed.format(), Format::Bf16),
                    CpuKernel::F32 => assert_eq!(packed.format(), Format::F32),
                    CpuKernel::Int8 => assert_eq!(packed.format(), Format::I8),
                    CpuKernel::Tiles => {}
                }
                let x = convert_rows(&xf, c_in, packed.row_len()).expect("whole rows");
                let q = |n: usize| {
                    int8::quantize_rows(&xf[..n * c_in], c_in, packed.row_len()).expect("rows")
                };
                let (q_all, q_short) = (q(rows_in_len), q(rows_in_len - 1));
                let rows_in = |n: usize| match packed.format() {
                    Format::F32 => Rows::F32(&xf[..n * c_in]),
                    Format::I8 if n == rows_in_len => Rows::I8(&q_all),
                    Format::I8 => Rows::I8(&q_short),
                    _ => Rows::Bf16(&x[..n * packed.row_len()]),
                };
                let got = conv(rows_in(rows_in_len), &packed, g).expect("in bounds");
                let shape = (taps, c_in, c_out);
                let want = reference(&xf, &w, shape, g, packed.format());
                let worst = largest_difference(&got, &want);
                assert!(
                    worst < 1e-4,
                    "{kernel:?} {taps}x{c_in}->{c_out} rows {rows}: off by {worst}"
                );
                // Too short an input is refused, not read past; so is the other element type.
                assert!(conv(rows_in(rows_in_len - 1), &packed, g).is_none());
                let other = match packed.format() {
                    Format::F32 | Format::I8 => Some(Rows::Bf16(&x)),
                    Format::Tiles => Some(Rows::F32(&xf)),
                    // f32 rows are the widened kernel's (below).
                    Format::Bf16 => None,
                };
                if let Some(other) = other {
                    assert!(conv(other, &packed, g).is_none());
                }
                if packed.format() == Format::Bf16 {
                    // Widened to f32 in registers: the weights rounded to bfloat16, the input
                    // exact.
                    let widened = conv(Rows::F32(&xf), &packed, g).expect("in bounds");
                    let (_, wr) = rounded(&xf, &w, shape, Format::Bf16);
                    let xr: Vec<f64> = xf.iter().map(|&v| f64::from(v)).collect();
                    let want = reference_of(&xr, &wr, shape, g);
                    let worst = largest_difference(&widened, &want);
                    assert!(
                        worst < 1e-4,
                        "widened {taps}x{c_in}->{c_out} rows {rows}: off by {worst}"
                    );
                    assert!(conv(Rows::F32(&xf[..xf.len() - c_in]), &packed, g).is_none());
                }
                if packed.format() != Format::I8 {
                    assert!(conv(Rows::I8(&q_all), &packed, g).is_none());
                }
            }
        }
        assert!(
            PackedWeights::pack(&[0.0; 9], 1, 3, 3, CpuKernel::Tiles).is_none(),
            "odd C_in"
        );
    }

    #[test]
    fn packing_a_checkpoint_layout_in_place_equals_packing_the_product_matrix() {
        for kernel in KERNELS {
            for &(taps, c_in, c_out) in &[(3, 16, 64), (7, 8, 22), (1, 24, 80), (11, 66, 32)] {
                // The time-major matrix w[(j·C_in + c)·C_out + o], and the same weights as a
                // checkpoint's convolution [C_out, C_in, K].
                let w = ramp(taps * c_in * c_out, 5);
                let mut oik = vec![0f32; w.len()];
                for j in 0..taps {
                    for c in 0..c_in {
                        for o in 0..c_out {
                            oik[(o * c_in + c) * taps + j] = w[(j * c_in + c) * c_out + o];
                        }
                    }
                }
                let conv = Strides {
                    tap: 1,
                    input: taps,
                    output: c_in * taps,
                };
                let want = PackedWeights::pack(&w, taps, c_in, c_out, kernel).expect("packs");
                let got = PackedWeights::pack_strided(&oik, conv, taps, c_in, c_out, kernel)
                    .expect("packs");
                assert_eq!((got.row_len, got.format), (want.row_len, want.format));
                assert!(
                    got.data[..] == want.data[..],
                    "{kernel:?} {taps}x{c_in}->{c_out}"
                );
                // One element short: refused, not read past.
                let short = &oik[..oik.len() - 1];
                assert!(
                    PackedWeights::pack_strided(short, conv, taps, c_in, c_out, kernel).is_none()
                );
            }
        }
    }

    /// Every kernel on the generator's largest layers: GFLOP/s on one thread (best of 20),
    /// printed. Run it with `--release`: the test profile keeps overflow checks and debug
    /// assertions, which cost the FMA kernel two thirds of its rate (its accumulators were
    /// spilled at every multiply-add) and the others less, so the profiles disagree on which
    /// kernel is faster.
    #[test]
    #[ignore = "timing report, run explicitly"]
    fn kernel_rates() {
        if !supported() {
            return;
        }
        for &(taps, c, rows, dilation) in
            &[(7usize, 256usize, 2400usize, 3usize), (11, 128, 14_400, 5)]
        {
            let g = Geometry {
                rows,
                stride: 1,
                dilation,
            };
            let rows_in = rows + (taps - 1) * dilation;
            let xf = ramp(rows_in * c, 5);
            let w = ramp(taps * c * c, 9);
            for kernel in KERNELS {
                let packed = PackedWeights::pack(&w, taps, c, c, kernel).expect("pack");
                let x = convert_rows(&xf, c, packed.row_len()).expect("rows");
                let q = int8::quantize_rows(&xf, c, packed.row_len()).expect("rows");
                let x = match packed.format() {
                    Format::F32 => Rows::F32(&xf),
                    Format::I8 => Rows::I8(&q),
                    _ => Rows::Bf16(&x),
                };
                let mut runs = vec![(format!("{kernel:?} ({:?})", packed.format()), x)];
                if packed.format() == Format::Bf16 {
                    runs.push(("Vectors (Bf16 widened to f32)".to_owned(), Rows::F32(&xf)));
                }
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(1)
                    .build()
                    .expect("pool");
                for (name, x) in runs {
                    // The best of many: on a shared machine most runs lose time to neighbours.
                    let secs = (0..20)
                        .map(|_| {
                            let t0 = std::time::Instant::now();
                            pool.install(|| conv(x, &packed, g).expect("conv"));
                            t0.elapsed().as_secs_f64()
                        })
                        .fold(f64::INFINITY, f64::min);
                    let flops = 2.0 * (rows * c * c * taps) as f64;
                    eprintln!(
                        "{taps}-tap {c}->{c}, {rows} rows, {name}: {:.1} ms, {:.0} GFLOP/s",
                        secs * 1e3,
                        flops / secs / 1e9
                    );
                }
            }
        }
    }
}
