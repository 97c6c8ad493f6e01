//! Long-kernel convolutions through a real DFT (overlap-save), with candle matrix products.
//!
//! The generator's 7- and 11-tap convolutions over 128–256 channels cost `2·K·C_in·C_out`
//! flops per output step directly. Cut into blocks of `N` = 64 steps, each block's convolution
//! is a product per frequency: `Y[f] = Σ_c S_c[f]·conj(W_{o,c}[f])` over the `N/2+1` bins, and
//! Gauss's three-multiplication form of the complex product brings that to about
//! `6·(N/2+1)/(N−K+1)·C_in·C_out` flops per step, plus the transforms: 3.7× fewer than direct for
//! K = 11 and 2.5× for K = 7. Everything is an ordinary matrix product:
//!
//! 1. `[S_r+S_i; S_r; S_i]` of every block = `D [3F, N]` · block `[N, C_in]`, where the blocks
//!    are an overlapping view of the time-major input (hop `V = N−K+1`, no copy);
//! 2. per bin, `[k₁; k₂; k₃] = [S_r+S_i; S_r; S_i] · [W_r; sin−cos; cos+sin]` (one batched
//!    product over `3F`), where the weight spectra are computed per call from the kernel
//!    (`B [3F, K]` · `w [K, C_in·C_out]`) so nothing large is stored;
//! 3. the block's `V` valid outputs = `Dinv [V, 3F]` · `[k₁; k₂; k₃]`, with
//!    `Dinv = [D_r+D_i | D_i | −D_r]` folding Gauss's recombination into the inverse DFT.
//!
//! The transforms are evaluated in f64 and rounded once to f32; the results differ from the
//! direct convolution by about 1e-6 relative.

use candle_core::{DType, Device, Result, Tensor};

/// Runs a closure over row ranges `(first, len)` of `count` rows and concatenates the results
/// (how the products are spread over threads).
pub type Split<'a> = dyn Fn(usize, &RangeFn<'_>) -> Result<Tensor> + 'a;
/// The per-range work handed to a [`Split`].
pub type RangeFn<'a> = dyn Fn(usize, usize) -> Result<Tensor> + Sync + 'a;

/// Block length of the transform.
pub const BLOCK: usize = 64;

/// Everything fixed for one kernel length: the transform matrices and the kernel-spectrum basis.
#[derive(Debug, Clone)]
pub struct SpectralPlan {
    kernel: usize,
    /// Valid outputs per block: `BLOCK − kernel + 1`.
    valid: usize,
    /// Frequency bins: `BLOCK/2 + 1`.
    bins: usize,
    /// `[3F, N]`: rows `S_r+S_i`, `S_r`, `S_i` of a block.
    forward: Tensor,
    /// `[3F, K]`: kernel tap k → `W_r`, `Σ w·(sin−cos)`, `Σ w·(cos+sin)` per bin.
    kernel_basis: Tensor,
    /// `[V, 3F]`: `[k₁; k₂; k₃]` → the block's valid outputs.
    inverse: Tensor,
}

impl SpectralPlan {
    /// Plan for `kernel`-tap convolutions (`kernel < BLOCK`).
    pub fn new(kernel: usize, device: &Device) -> Result<Self> {
        if kernel == 0 || kernel >= BLOCK {
            candle_core::bail!("spectral conv: kernel {kernel} must be in 1..{BLOCK}");
        }
        let n = BLOCK;
        let bins = n / 2 + 1;
        let valid = n - kernel + 1;
        let angle = |f: usize, t: usize| {
            // Reduce f·t mod N exactly before converting, so large products stay accurate.
            let m = (f * t) % n;
            2.0 * std::f64::consts::PI * m as f64 / n as f64
        };
        let mut forward = vec![0.0f64; 3 * bins * n];
        for f in 0..bins {
            for t in 0..n {
                let (c, s) = (angle(f, t).cos(), angle(f, t).sin());
                // S = Σ x·e^{−iθ}: S_r = Σ x·cos, S_i = −Σ x·sin.
                forward[f * n + t] = c - s;
                forward[(bins + f) * n + t] = c;
                forward[(2 * bins + f) * n + t] = -s;
            }
        }
        let mut kernel_basis = vec![0.0f64; 3 * bins * kernel];
        for f in 0..bins {
            for k in 0..kernel {
                let (c, s) = (angle(f, k).cos(), angle(f, k).sin());
                // conj(W) = c + i·d with c = Σ w·cos, d = Σ w·sin.
                kernel_basis[f * kernel + k] = c;
                kernel_basis[(bins + f) * kernel + k] = s - c;
                kernel_basis[(2 * bins + f) * kernel + k] = c + s;
            }
        }
        let mut inverse = vec![0.0f64; valid * 3 * bins];
        for v in 0..valid {
            for f in 0..bins {
                // y[v] = Σ_f a_f·(Y_r·cos − Y_i·sin), a_f = 1/N at DC and Nyquist, else 2/N.
                let a = if f == 0 || 2 * f == n { 1.0 } else { 2.0 } / n as f64;
                let dr = a * angle(f, v).cos();
                let di = if f == 0 || 2 * f == n {
                    0.0
                } else {
                    -a * angle(f, v).sin()
                };
                let row = v * 3 * bins;
                inverse[row + f] = dr + di;
                inverse[row + bins + f] = di;
                inverse[row + 2 * bins + f] = -dr;
            }
        }
        let to_tensor = |v: Vec<f64>, shape: (usize, usize)| {
            Tensor::from_vec(v, shape, device)?.to_dtype(DType::F32)
        };
        Ok(Self {
            kernel,
            valid,
            bins,
            forward: to_tensor(forward, (3 * bins, n))?,
            kernel_basis: to_tensor(kernel_basis, (3 * bins, kernel))?,
            inverse: to_tensor(inverse, (valid, 3 * bins))?,
        })
    }

    /// Valid outputs per block.
    #[must_use]
    pub fn valid(&self) -> usize {
        self.valid
    }

    /// Input rows needed for `t_out` outputs: whole blocks, overlapping by `K − 1`.
    #[must_use]
    pub fn rows_needed(&self, t_out: usize) -> usize {
        t_out.div_ceil(self.valid) * self.valid + self.kernel - 1
    }

    /// Kernel spectra `[3F, C_in, C_out]` from taps `w` `[K, C_in, C_out]` (once per call: at
    /// 4.5 MB–18 MB per convolution they are not worth keeping).
    pub fn kernel_spectra(&self, w: &Tensor) -> Result<Tensor> {
        let (k, c_in, c_out) = w.dims3()?;
        self.kernel_basis
            .matmul(&w.reshape((k, c_in * c_out))?)?
            .reshape((3 * self.bins, c_in, c_out))
    }

    /// Convolution of `count` blocks of the time-major input `xp` (`[rows, C_in]`, contiguous,
    /// rows ≥ `(count−1)·V + N`; block b reads rows `b·V .. b·V+N`), with kernel spectra from
    /// [`Self::kernel_spectra`]: `[count·V, C_out]`.
    ///
    /// Each of the three products is split over threads by `split`, which runs the closure on
    /// row ranges of its first dimension and concatenates the results.
    pub fn blocks(
        &self,
        xp: &Tensor,
        count: usize,
        spectra: &Tensor,
        split: &Split<'_>,
    ) -> Result<Tensor> {
        let (n, v) = (BLOCK, self.valid);
        let c_out = spectra.dim(2)?;
        let cpu = xp.device().is_cpu();
        let seg = xp.narrow(0, 0, (count - 1) * v + n)?;
        // [count, C_in, N] → [count, N, C_in]: block b is rows b·V .. b·V+N, not copied.
        let blocks = seg.unfold(0, n, v)?.transpose(1, 2)?;
        let spec = split(count, &|first, len| {
            let b = blocks.narrow(0, first, len)?;
            let b = if cpu { b } else { b.contiguous()? };
            self.forward.broadcast_left(len)?.matmul(&b)
        })?; // [count, 3F, C_in]
        let by_bin = spec.transpose(0, 1)?; // [3F, count, C_in], a view
        let prod = split(3 * self.bins, &|first, len| {
            let s = by_bin.narrow(0, first, len)?;
            let s = if cpu { s } else { s.contiguous()? };
            s.matmul(&spectra.narrow(0, first, len)?)
        })?; // [3F, count, C_out]
        let by_block = prod.transpose(0, 1)?; // [count, 3F, C_out], a view
        split(count, &|first, len| {
            let p = by_block.narrow(0, first, len)?;
            let p = if cpu { p } else { p.contiguous()? };
            self.inverse.broadcast_left(len)?.matmul(&p)
        })? // [count, V, C_out]
        .reshape((count * v, c_out))
    }
}
