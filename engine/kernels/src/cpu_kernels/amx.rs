//! AMX tile products (Intel Xeon since Sapphire Rapids) behind [`super::bf16::conv`].
//!
//! One `TDPBF16PS` multiplies a 16 × 32 bfloat16 tile by a 32 × 16 one into 16 × 16 f32 sums:
//! 8192 multiply-adds, 256 times one `VDPBF16PS`, at one every 16 cycles. On this project's
//! 2-core Xeon (AMX, AVX-512 BF16) the generator's 7-tap 256-channel convolution runs at
//! several times the vector kernel's rate. The products are the same bfloat16 products with
//! f32 sums, so the audio is what the vector kernel gives (the order of the f32 additions
//! differs, nothing else).
//!
//! The weights need no packing of their own: the vector kernel's panels already hold, for each
//! pair of input channels, a row of `(even, odd)` bfloat16 pairs per output column, which is
//! the "VNNI" layout a B tile is loaded in (16 pair rows × 16 columns at the panel's row
//! stride). The A tile is loaded straight from the time-major input: 16 output rows, 32
//! channels of one tap, row stride `stride·C_in` — so a dilated or strided convolution needs
//! no copy here either. A block is 32 rows × 32 columns: four accumulator tiles, two A and two
//! B tiles, the whole register file; the last rows of a product (fewer than 32) are a block of
//! their own, with the tiles configured for that many rows. Input channels come in chunks of
//! 32: a layer whose `C_in` is not a multiple of 32 reads its input from rows padded with
//! zeros to the next one (the weights are packed with zeros there too), so every product runs
//! on tiles but for layers with a `C_out` that is not a multiple of 32 (`conv_post`, 22).
//!
//! Written with `asm!`: Rust 1.95's AMX intrinsics, feature detection and target features are
//! unstable, `asm!` is stable and the assembler knows the instructions. Linux gives a process
//! the 8 KB of tile state only after it asks (`arch_prctl(ARCH_REQ_XCOMP_PERM)`); without that
//! the first tile instruction is a `SIGILL`, so [`available`] asks once and says no when the
//! kernel (or a hypervisor) refuses.

// `unsafe` is allowed here as in `bf16`: inline assembly reading and writing through raw
// pointers, and one system call. The safe entry points are `available` (CPUID and the
// permission request) and `Tiles::configure`'s callers in `bf16::conv`, which check every
// bound first; each `unsafe` block says which check it relies on.
#![allow(unsafe_code)]

use std::arch::asm;
use std::sync::OnceLock;

/// Rows (and columns) of one block: two tiles of 16.
pub const BLOCK: usize = 32;
/// Input channels one tile covers (32 bfloat16 = 64 bytes per tile row).
pub const CHANNELS: usize = 32;

/// Whether this CPU and kernel let this process run AMX bfloat16 products (asked once).
#[must_use]
pub fn available() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| cpu_has_amx_bf16() && request_tile_state())
}

/// CPUID leaf 7: AMX-BF16 (EDX bit 22) and AMX-TILE (bit 24).
fn cpu_has_amx_bf16() -> bool {
    if std::arch::x86_64::__cpuid(0).eax < 7 {
        return false;
    }
    let edx = std::arch::x86_64::__cpuid_count(7, 0).edx;
    edx & (1 << 22) != 0 && edx & (1 << 24) != 0
}

/// Asks Linux for the tile data state (`XFEATURE_XTILEDATA`, 18); true if granted.
fn request_tile_state() -> bool {
    const ARCH_REQ_XCOMP_PERM: libc::c_long = 0x1023;
    const XFEATURE_XTILEDATA: libc::c_long = 18;
    // SAFETY: `arch_prctl(ARCH_REQ_XCOMP_PERM, n)` takes two integers and touches no memory of
    // ours; a kernel that does not know the request returns an error, which we read as "no".
    let rc = unsafe {
        libc::syscall(
            libc::SYS_arch_prctl,
            ARCH_REQ_XCOMP_PERM,
            XFEATURE_XTILEDATA,
        )
    };
    rc == 0
}

/// A tile configuration for blocks of `rows` rows (1 to 32) × 32 columns, palette 1: tiles 0
/// and 1 (sums) and 4 (input) take the first 16 rows, tiles 2, 3 and 5 the rest (left
/// unconfigured when there is no rest), tiles 6 and 7 (weights) 16 pair rows; 64 bytes a row.
#[repr(C, align(64))]
struct Config([u8; 64]);

impl Config {
    fn blocks(rows: usize) -> Self {
        let top = rows.min(16) as u8;
        let bottom = rows.saturating_sub(16).min(16) as u8;
        let mut c = [0u8; 64];
        c[0] = 1; // palette
        for (t, r) in [
            (0, top),
            (1, top),
            (4, top),
            (2, bottom),
            (3, bottom),
            (5, bottom),
            (6, 16),
            (7, 16),
        ] {
            if r > 0 {
                c[16 + 2 * t] = 64; // bytes per row (little-endian u16; the high byte stays 0)
                c[48 + t] = r;
            }
        }
        Self(c)
    }
}

/// This thread's tiles, configured for blocks of a number of rows; released when dropped.
pub struct Tiles {
    rows: usize,
}

impl Tiles {
    /// Loads the configuration for blocks of `rows` rows (clamped to 1..=32) into this
    /// thread's tile registers.
    ///
    /// # Safety
    ///
    /// [`available`] must have returned true in this process.
    #[must_use]
    pub unsafe fn configure(rows: usize) -> Self {
        let rows = rows.clamp(1, BLOCK);
        let cfg = Config::blocks(rows);
        // SAFETY: the CPU has AMX and the process may use it (the caller's contract); `cfg`
        // is 64 readable bytes holding a valid palette-1 configuration.
        unsafe { asm!("ldtilecfg [{0}]", in(reg) cfg.0.as_ptr(), options(nostack, readonly)) };
        Self { rows }
    }

    /// Rows in each block.
    #[must_use]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// [`Self::rows`] output rows × 32 output columns: every tap and channel chunk, then the
    /// sums stored to `c` (row stride `ldc` bytes).
    ///
    /// # Safety
    ///
    /// With `m` = [`Self::rows`]:
    /// - For every row `r < m`, tap `j < a.taps` and byte `i < a.chunks·64`, the byte at
    ///   `a.x + r·a.lda + j·a.tap + i` is readable.
    /// - `b` points at `a.taps · a.chunks · 16` rows of 128 readable bytes, `ldb` bytes apart
    ///   (the two B tiles of a step are the row's first and second 64 bytes).
    /// - For every row `r < m`, the 32 `f32` at `c + r·ldc` bytes are writable and not
    ///   accessed by anyone else while this runs.
    pub unsafe fn block(&self, a: &Input, b: *const u8, ldb: usize, c: *mut f32, ldc: usize) {
        if self.rows > 16 {
            // SAFETY: this function's contract, and the tiles are configured for two row
            // tiles of 16 and rows − 16 rows (`configure`).
            unsafe { block_two(a, b, ldb, c, ldc) }
        } else {
            // SAFETY: this function's contract, and tiles 0, 1, 4, 6 and 7 are configured
            // (`configure`); the others are not used.
            unsafe { block_one(a, b, ldb, c, ldc) }
        }
    }
}

impl Drop for Tiles {
    fn drop(&mut self) {
        // SAFETY: a `Tiles` exists only after `configure` ran on a CPU with AMX, and this
        // thread's tiles were configured by it; releasing them touches no memory.
        unsafe { asm!("tilerelease", options(nostack, nomem)) };
    }
}

/// Where a block reads its input: row 0 of tap 0, channel 0, and the strides (in bytes).
pub struct Input {
    pub x: *const u16,
    /// Bytes from one output row's input to the next's (`stride·row length·2`).
    pub lda: usize,
    /// Bytes from one tap to the next (`dilation·row length·2`).
    pub tap: usize,
    pub taps: usize,
    /// Channel chunks of 32 per tap.
    pub chunks: usize,
}

/// [`Tiles::block`] for blocks of 17 to 32 rows: tiles 0–3 hold the sums of the two row
/// tiles × two column tiles.
///
/// # Safety
///
/// As [`Tiles::block`], with the tiles configured for 17 to 32 rows.
unsafe fn block_two(a: &Input, b: *const u8, ldb: usize, c: *mut f32, ldc: usize) {
    // SAFETY: the tiles are configured (contract); zeroing touches no memory.
    unsafe {
        asm!(
            "tilezero tmm0",
            "tilezero tmm1",
            "tilezero tmm2",
            "tilezero tmm3",
            options(nostack, nomem)
        );
    }
    let a_lower = 16 * a.lda;
    let mut bp = b;
    for j in 0..a.taps {
        for k in 0..a.chunks {
            let off = j * a.tap + k * 64;
            // SAFETY: the configured rows of tap j, bytes k·64 .. k·64 + 64, are readable
            // (contract): tile 4 reads rows 0..16, tile 5 the rows from 16 on that the
            // configuration gives it, at stride lda; the two B tiles are step (j, k)'s 16
            // rows of `b` at stride ldb, bytes 0..64 and 64..128 of each row, inside what the
            // contract promises. The products only touch tiles.
            unsafe {
                let a0 = a.x.cast::<u8>().add(off);
                asm!(
                    "tileloadd tmm4, [{a0} + {lda}*1]",
                    "tileloadd tmm5, [{a1} + {lda}*1]",
                    "tileloadd tmm6, [{b0} + {ldb}*1]",
                    "tileloadd tmm7, [{b1} + {ldb}*1]",
                    "tdpbf16ps tmm0, tmm4, tmm6",
                    "tdpbf16ps tmm1, tmm4, tmm7",
                    "tdpbf16ps tmm2, tmm5, tmm6",
                    "tdpbf16ps tmm3, tmm5, tmm7",
                    a0 = in(reg) a0,
                    a1 = in(reg) a0.add(a_lower),
                    lda = in(reg) a.lda,
                    b0 = in(reg) bp,
                    b1 = in(reg) bp.add(64),
                    ldb = in(reg) ldb,
                    options(nostack, readonly)
                );
                bp = bp.add(16 * ldb);
            }
        }
    }
    // SAFETY: the configured rows × columns 0..32 of `c` are ours to write (contract): tile 0
    // is rows 0..16 × columns 0..16, tile 1 the next 16 columns, tiles 2 and 3 the same for
    // the rows from 16 on; each tile row is 64 bytes = 16 f32.
    unsafe {
        let c = c.cast::<u8>();
        asm!(
            "tilestored [{c0} + {ldc}*1], tmm0",
            "tilestored [{c1} + {ldc}*1], tmm1",
            "tilestored [{c2} + {ldc}*1], tmm2",
            "tilestored [{c3} + {ldc}*1], tmm3",
            c0 = in(reg) c,
            c1 = in(reg) c.add(64),
            c2 = in(reg) c.add(16 * ldc),
            c3 = in(reg) c.add(16 * ldc + 64),
            ldc = in(reg) ldc,
            options(nostack)
        );
    }
}

/// [`Tiles::block`] for blocks of 1 to 16 rows: tiles 0 and 1 hold the sums.
///
/// # Safety
///
/// As [`Tiles::block`], with the tiles configured for 1 to 16 rows.
unsafe fn block_one(a: &Input, b: *const u8, ldb: usize, c: *mut f32, ldc: usize) {
    // SAFETY: the tiles are configured (contract); zeroing touches no memory.
    unsafe { asm!("tilezero tmm0", "tilezero tmm1", options(nostack, nomem)) };
    let mut bp = b;
    for j in 0..a.taps {
        for k in 0..a.chunks {
            // SAFETY: as in `block_two`, for tile 4's configured rows only.
            unsafe {
                let a0 = a.x.cast::<u8>().add(j * a.tap + k * 64);
                asm!(
                    "tileloadd tmm4, [{a0} + {lda}*1]",
                    "tileloadd tmm6, [{b0} + {ldb}*1]",
                    "tileloadd tmm7, [{b1} + {ldb}*1]",
                    "tdpbf16ps tmm0, tmm4, tmm6",
                    "tdpbf16ps tmm1, tmm4, tmm7",
                    a0 = in(reg) a0,
                    lda = in(reg) a.lda,
                    b0 = in(reg) bp,
                    b1 = in(reg) bp.add(64),
                    ldb = in(reg) ldb,
                    options(nostack, readonly)
                );
                bp = bp.add(16 * ldb);
            }
        }
    }
    // SAFETY: the configured rows × columns 0..32 of `c` are ours to write (contract).
    unsafe {
        let c = c.cast::<u8>();
        asm!(
            "tilestored [{c0} + {ldc}*1], tmm0",
            "tilestored [{c1} + {ldc}*1], tmm1",
            c0 = in(reg) c,
            c1 = in(reg) c.add(64),
            ldc = in(reg) ldc,
            options(nostack)
        );
    }
}
