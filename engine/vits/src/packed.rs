//! The generator on the CPU product kernels of the `kernels` crate (shared with Kokoro), with
//! time-major activations: `[T, C]`, one row per time step, kept as host buffers.
//!
//! Why: HiFi-GAN is about 80 % of a sentence's compute, and candle 0.11's CPU `conv1d` unfolds
//! channel-major data with a scalar loop while its `conv_transpose1d` takes a direct loop
//! whenever there is padding (always, here). With time-major rows a convolution is a product
//! that reads its taps straight from the input rows (`row·stride + tap·dilation`), so dilated
//! convolutions need neither an im2col copy nor phase splits; the kernels run it on weights
//! packed once at load (bfloat16 pairs, f32 or int8 panels: [`CpuKernel`]). A transposed
//! convolution is one product giving every input step's `Q·stride` output taps, then an
//! overlap-add of the `Q` shifted groups that writes each output row once, bias included.
//!
//! The element-wise steps between products are fused into the passes that must copy anyway:
//! the leaky `ReLU` into the zero-framed copy a convolution reads (one copy of a stage's input
//! for all its blocks), bias and residual into the product's fresh output, and in the same
//! pass the next conv's framed input or the stage's running sum of blocks (scaled for their
//! mean on the last). At the last stage (~75 k rows of 32 channels for 3.4 s) those passes,
//! not the products, were most of the time: fusing them took the generator from ~70 to
//! ~53 ms. A one-channel conv (the last) is dot products, not a one-column panel.
//! Every pass runs on rayon's pool (the one the products use), each task filling its own
//! chunk. Activations stay host `Vec`s between layers: a tensor per layer would only wrap and
//! unwrap them.
//!
//! The arithmetic is the reference's, in another order (and in bfloat16 products where the
//! kernel is one): [`CpuKernel::F32`] keeps every product f32.

use std::sync::Arc;

use candle_core::Tensor;
use kernels::cpu_kernels::{Bf16Weights, CpuKernel, ProductWeights, Stored};
use kernels::fill::par_filled;
use rayon::prelude::*;

use crate::generator::ResBlock;
use crate::layers::Conv;
use crate::VitsError;

/// Rows per pool task in the element-wise passes.
const ROWS_PER_TASK: usize = 512;

/// Host values of a tensor, flattened.
fn host(t: &Tensor) -> Result<Vec<f32>, VitsError> {
    Ok(t.flatten_all()?.to_vec1::<f32>()?)
}

fn refused(what: &str) -> VitsError {
    VitsError::Input(format!("packed generator: {what}"))
}

/// A convolution (groups 1) on packed weights.
#[derive(Debug, Clone)]
pub(crate) struct PackedConv {
    w: Arc<Bf16Weights>,
    /// For a single output channel (the generator's last conv): the weights as one
    /// `[K·C_in]` row (`j·C_in + c` holds `weight[0, c, j]`), run as dot products. A one-column
    /// panel would use one lane of each 16-lane vector.
    single: Option<Vec<f32>>,
    bias: Option<Vec<f32>>,
    c_in: usize,
    c_out: usize,
    taps: usize,
    dilation: usize,
    stride: usize,
    pad_left: usize,
    pad_right: usize,
}

impl PackedConv {
    /// `None` where the kernels decline (no AVX-512, odd `C_in`) or the conv is grouped.
    pub(crate) fn pack(conv: &Conv, kernel: CpuKernel) -> Result<Option<Self>, VitsError> {
        let a = conv.attrs();
        if a.transposed || a.groups != 1 {
            return Ok(None);
        }
        let (c_out, c_in, k) = conv.weight().dims3()?;
        // Packed from the graph's [C_out, C_in, K] in place, as Kokoro's checkpoint layers are.
        let mut weights = ProductWeights::stored(conv.weight().clone(), Stored::Conv);
        if !weights.use_bf16(k, c_in, kernel)? {
            return Ok(None);
        }
        let ProductWeights::Bf16(packed) = weights else {
            return Ok(None);
        };
        let single = if c_out == 1 {
            let w = host(conv.weight())?;
            Some(
                (0..k * c_in)
                    .map(|i| w[(i % c_in) * k + i / c_in])
                    .collect(),
            )
        } else {
            None
        };
        Ok(Some(Self {
            w: packed,
            single,
            bias: conv.bias().map(host).transpose()?,
            c_in,
            c_out,
            taps: k,
            dilation: a.dilation,
            stride: a.stride,
            pad_left: a.pad_left,
            pad_right: a.pad_right,
        }))
    }

    fn out_len(&self, t: usize) -> Result<usize, VitsError> {
        let span = self.dilation * (self.taps - 1) + 1;
        (t + self.pad_left + self.pad_right)
            .checked_sub(span)
            .map(|n| n / self.stride + 1)
            .ok_or_else(|| refused("sequence shorter than the kernel"))
    }

    /// `[t, C_in]` → `[t_out, C_out]`: the leaky `ReLU` of `slope` (if any) on the input,
    /// the product, the bias, and `residual` `[t_out, C_out]` added.
    fn forward(
        &self,
        x: &[f32],
        t: usize,
        slope: Option<f32>,
        residual: Option<&[f32]>,
    ) -> Result<(Vec<f32>, usize), VitsError> {
        let t_out = self.out_len(t)?;
        let xp = framed(x, self.c_in, self.pad_left, self.pad_right, slope);
        let mut y = match &self.single {
            Some(row) => self.dots(&xp, row, t_out),
            None => self
                .w
                .product_host(&xp, t_out, self.stride, self.dilation)
                .ok_or_else(|| refused("the product declined its input"))?,
        };
        drop(xp);
        add_rows(&mut y, self.c_out, self.bias.as_deref(), residual, None);
        Ok((y, t_out))
    }
}

impl PackedConv {
    /// A single output channel: output row `r` is the dot product of `row` with the taps
    /// read from framed input rows `r·stride + j·dilation`, in 16 partial sums.
    fn dots(&self, xp: &[f32], row: &[f32], t_out: usize) -> Vec<f32> {
        const LANES: usize = 16;
        let c = self.c_in;
        par_filled(t_out, ROWS_PER_TASK * 8, |task, out| {
            for (k, y) in out.iter_mut().enumerate() {
                let r = task * ROWS_PER_TASK * 8 + k;
                let mut acc = [0f32; LANES];
                let mut rest = 0f32;
                for j in 0..self.taps {
                    let x = &xp[(r * self.stride + j * self.dilation) * c..][..c];
                    let w = &row[j * c..][..c];
                    let (xv, xt) = x.split_at(c / LANES * LANES);
                    let (wv, wt) = w.split_at(c / LANES * LANES);
                    for (xs, ws) in xv.chunks_exact(LANES).zip(wv.chunks_exact(LANES)) {
                        for l in 0..LANES {
                            acc[l] += xs[l] * ws[l];
                        }
                    }
                    rest += xt.iter().zip(wt).map(|(a, b)| a * b).sum::<f32>();
                }
                *y = acc.iter().sum::<f32>() + rest;
            }
        })
    }

    /// Channel-major convenience for the modules at the frame and phoneme rates:
    /// `[1, C_in, T]` → `[1, C_out, T_out]`, the transposes done on the host (small next to
    /// the product at these sizes).
    pub(crate) fn forward_cm(&self, x: &Tensor) -> Result<Tensor, VitsError> {
        let (b, c, t) = x.dims3()?;
        if b != 1 || c != self.c_in {
            return Err(refused("channel-major input of another shape"));
        }
        let cm = host(x)?;
        let (top, bottom) = (self.pad_left, self.pad_right);
        let mut xp = vec![0f32; (top + t + bottom) * c];
        transpose_into(&cm, c, t, &mut xp[top * c..(top + t) * c]);
        let t_out = self.out_len(t)?;
        let y = self
            .w
            .product_host(&xp, t_out, self.stride, self.dilation)
            .ok_or_else(|| refused("the product declined its input"))?;
        let n = self.c_out;
        let mut out = vec![0f32; n * t_out];
        transpose_into(&y, t_out, n, &mut out);
        if let Some(bias) = &self.bias {
            for (row, &b) in out.chunks_exact_mut(t_out).zip(bias) {
                for v in row.iter_mut() {
                    *v += b;
                }
            }
        }
        Ok(Tensor::from_vec(out, (1, n, t_out), x.device())?)
    }
}

/// `src` `[rows, cols]` row-major into `dst` as `[cols, rows]`, in tiles that keep both
/// sides' cache lines in L1.
fn transpose_into(src: &[f32], rows: usize, cols: usize, dst: &mut [f32]) {
    const TILE: usize = 32;
    for r0 in (0..rows).step_by(TILE) {
        for c0 in (0..cols).step_by(TILE) {
            for r in r0..(r0 + TILE).min(rows) {
                for c in c0..(c0 + TILE).min(cols) {
                    dst[c * rows + r] = src[r * cols + c];
                }
            }
        }
    }
}

/// `x` (`[t, c]`) through a leaky `ReLU` of `slope` (none: as it is), framed by `top` and
/// `bottom` zero rows.
fn framed(x: &[f32], c: usize, top: usize, bottom: usize, slope: Option<f32>) -> Vec<f32> {
    let t = x.len() / c;
    let rows = top + t + bottom;
    par_filled(rows * c, ROWS_PER_TASK * c, |task, out| {
        let first = task * ROWS_PER_TASK;
        for (k, row) in out.chunks_exact_mut(c).enumerate() {
            let r = first + k;
            if r < top || r >= top + t {
                continue; // zero already
            }
            let src = &x[(r - top) * c..][..c];
            match slope {
                Some(s) => {
                    for (o, &v) in row.iter_mut().zip(src) {
                        *o = if v >= 0.0 { v } else { v * s };
                    }
                }
                None => row.copy_from_slice(src),
            }
        }
    })
}

/// In place on `y` (`[rows, c]`): `+ bias + residual`, then `· scale`.
fn add_rows(
    y: &mut [f32],
    c: usize,
    bias: Option<&[f32]>,
    residual: Option<&[f32]>,
    scale: Option<f32>,
) {
    if bias.is_none() && residual.is_none() && scale.is_none() {
        return;
    }
    y.par_chunks_mut(ROWS_PER_TASK * c)
        .enumerate()
        .for_each(|(task, chunk)| {
            let at = task * ROWS_PER_TASK * c;
            if let Some(r) = residual {
                for (v, &rv) in chunk.iter_mut().zip(&r[at..]) {
                    *v += rv;
                }
            }
            if let Some(b) = bias {
                for row in chunk.chunks_exact_mut(c) {
                    for (v, &bv) in row.iter_mut().zip(b) {
                        *v += bv;
                    }
                }
            }
            if let Some(s) = scale {
                for v in chunk.iter_mut() {
                    *v *= s;
                }
            }
        });
}

/// A transposed convolution (groups 1, dilation 1, symmetric padding) on packed weights.
#[derive(Debug, Clone)]
struct PackedUp {
    /// `[C_in, Q·stride·C_out]`: column `k·C_out + o` holds `weight[:, o, k]` (zero for the
    /// taps past the kernel).
    w: Arc<Bf16Weights>,
    bias: Option<Vec<f32>>,
    c_in: usize,
    c_out: usize,
    q: usize,
    stride: usize,
    kernel: usize,
    padding: usize,
}

impl PackedUp {
    fn pack(conv: &Conv, kernel: CpuKernel) -> Result<Option<Self>, VitsError> {
        let a = conv.attrs();
        if !a.transposed || a.groups != 1 || a.dilation != 1 || a.pad_left != a.pad_right {
            return Ok(None);
        }
        let (c_in, c_out, k) = conv.weight().dims3()?;
        let s = a.stride;
        let q = k.div_ceil(s);
        let width = q * s * c_out;
        let w = host(conv.weight())?;
        let mut tm = vec![0f32; c_in * width];
        for c in 0..c_in {
            for o in 0..c_out {
                for j in 0..k {
                    tm[c * width + j * c_out + o] = w[(c * c_out + o) * k + j];
                }
            }
        }
        let tm = Tensor::from_vec(tm, (c_in, width), &candle_core::Device::Cpu)?;
        let Some(packed) = Bf16Weights::pack(&tm, 1, c_in, kernel)? else {
            return Ok(None);
        };
        Ok(Some(Self {
            w: Arc::new(packed),
            bias: conv.bias().map(host).transpose()?,
            c_in,
            c_out,
            q,
            stride: s,
            kernel: k,
            padding: a.pad_left,
        }))
    }

    /// `[t, C_in]` through a leaky `ReLU` of `slope`, to `[(t−1)·stride + K − 2·padding, C_out]`.
    ///
    /// The product gives, for every input step `u`, its `Q·stride` output taps; tap
    /// `k = j·stride + r` lands on output step `(u+j)·stride + r − padding`. So output step
    /// `i` (before the crop) with `i = v·stride + r` sums tap group `j` of input step `v − j`.
    fn forward(&self, x: &[f32], t: usize, slope: f32) -> Result<(Vec<f32>, usize), VitsError> {
        let (s, c, q) = (self.stride, self.c_out, self.q);
        let len = ((t.max(1) - 1) * s + self.kernel)
            .checked_sub(2 * self.padding)
            .filter(|_| t > 0)
            .ok_or_else(|| refused("transposed convolution: padding exceeds the output"))?;
        let xa = framed(x, self.c_in, 0, 0, Some(slope));
        let taps = self
            .w
            .product_host(&xa, t, 1, 1)
            .ok_or_else(|| refused("the product declined its input"))?;
        drop(xa);
        let width = q * s * c;
        let bias = self.bias.as_deref();
        let y = par_filled(len * c, ROWS_PER_TASK * c, |task, out| {
            for (k, row) in out.chunks_exact_mut(c).enumerate() {
                let i = task * ROWS_PER_TASK + k + self.padding;
                let (v, r) = (i / s, i % s);
                for j in 0..q {
                    let Some(u) = v.checked_sub(j).filter(|&u| u < t) else {
                        continue;
                    };
                    let src = &taps[u * width + (j * s + r) * c..][..c];
                    for (a, &b) in row.iter_mut().zip(src) {
                        *a += b;
                    }
                }
                if let Some(b) = bias {
                    for (a, &bv) in row.iter_mut().zip(b) {
                        *a += bv;
                    }
                }
            }
        });
        Ok((y, len))
    }
}

/// Where [`fused`] puts `v = (y + residual) + bias`.
enum Target<'a> {
    /// Into `y` itself, scaled.
    Own(Option<f32>),
    /// Added into a running sum (`sum = v + sum`), the sum then scaled.
    Sum(&'a mut [f32], Option<f32>),
    /// Into `y`, and through a leaky `ReLU` of the slope into the next conv's framed input
    /// (its body rows, `[t, C]`).
    Frame(&'a mut [f32], f32),
}

/// [`Target`] without its buffer, for the pass's tasks.
#[derive(Clone, Copy)]
enum Mode {
    Own(Option<f32>),
    Sum(Option<f32>),
    Frame(f32),
}

/// One pass over `y` (`[t, c]`): `v = (y + residual) + bias`, written where `target` says.
/// The same arithmetic, in the same order, as [`add_rows`] and [`framed`] one after another.
fn fused(
    y: &mut [f32],
    c: usize,
    bias: Option<&[f32]>,
    residual: &[f32],
    target: Target<'_>,
) -> Result<(), VitsError> {
    let chunk = ROWS_PER_TASK * c;
    let zeros = vec![0f32; c];
    let bias = bias.unwrap_or(&zeros);
    // Row by row, the mode chosen once per chunk, so that each inner loop vectorises.
    let step = |y: &mut [f32], r: &[f32], out: Option<&mut [f32]>, mode: Mode| {
        let rows = y.chunks_exact_mut(c).zip(r.chunks_exact(c));
        match (mode, out) {
            (Mode::Sum(scale), Some(o)) => {
                let f = scale.unwrap_or(1.0);
                for ((y, r), o) in rows.zip(o.chunks_exact_mut(c)) {
                    for (((o, &v), &rv), &b) in o.iter_mut().zip(y.iter()).zip(r).zip(bias) {
                        *o = ((v + rv) + b + *o) * f;
                    }
                }
            }
            (Mode::Frame(slope), Some(o)) => {
                for ((y, r), o) in rows.zip(o.chunks_exact_mut(c)) {
                    for (((o, v), &rv), &b) in o.iter_mut().zip(y.iter_mut()).zip(r).zip(bias) {
                        let a = (*v + rv) + b;
                        *v = a;
                        *o = if a >= 0.0 { a } else { a * slope };
                    }
                }
            }
            (Mode::Own(scale) | Mode::Sum(scale), _) => {
                let f = scale.unwrap_or(1.0);
                for (y, r) in rows {
                    for ((v, &rv), &b) in y.iter_mut().zip(r).zip(bias) {
                        *v = ((*v + rv) + b) * f;
                    }
                }
            }
            (Mode::Frame(_), None) => {
                for (y, r) in rows {
                    for ((v, &rv), &b) in y.iter_mut().zip(r).zip(bias) {
                        *v = (*v + rv) + b;
                    }
                }
            }
        }
    };
    if residual.len() < y.len() {
        return Err(refused("a residual shorter than the output"));
    }
    let residual = &residual[..y.len()];
    let (out, mode) = match target {
        Target::Own(scale) => {
            y.par_chunks_mut(chunk)
                .zip(residual.par_chunks(chunk))
                .for_each(|(y, r)| step(y, r, None, Mode::Own(scale)));
            return Ok(());
        }
        Target::Sum(out, scale) => (out, Mode::Sum(scale)),
        Target::Frame(out, slope) => (out, Mode::Frame(slope)),
    };
    if out.len() != y.len() {
        return Err(refused("a fused output of another size"));
    }
    y.par_chunks_mut(chunk)
        .zip(residual.par_chunks(chunk))
        .zip(out.par_chunks_mut(chunk))
        .for_each(|((y, r), o)| step(y, r, Some(o), mode));
    Ok(())
}

#[derive(Debug, Clone)]
enum PackedBlock {
    Pairs(Vec<(PackedConv, PackedConv)>),
    Single(Vec<PackedConv>),
}

impl PackedBlock {
    fn pack(block: &ResBlock, kernel: CpuKernel) -> Result<Option<Self>, VitsError> {
        Ok(match block {
            ResBlock::Pairs(convs) => {
                let mut out = Vec::with_capacity(convs.len());
                for (a, b) in convs {
                    match (PackedConv::pack(a, kernel)?, PackedConv::pack(b, kernel)?) {
                        (Some(a), Some(b)) => out.push((a, b)),
                        _ => return Ok(None),
                    }
                }
                Some(Self::Pairs(out))
            }
            ResBlock::Single(convs) => {
                let mut out = Vec::with_capacity(convs.len());
                for a in convs {
                    let Some(a) = PackedConv::pack(a, kernel)? else {
                        return Ok(None);
                    };
                    out.push(a);
                }
                Some(Self::Single(out))
            }
        })
    }

    /// Zero rows the block's first conv wants on each side of its input.
    fn frame(&self) -> usize {
        match self {
            Self::Pairs(convs) => convs.first().map(|(c, _)| c.pad_left.max(c.pad_right)),
            Self::Single(convs) => convs.first().map(|c| c.pad_left.max(c.pad_right)),
        }
        .unwrap_or(0)
    }

    /// Adds the block's output on `x` (`[t, C]`) into the stage's `sum` (the output itself
    /// when `sum` is `None`), then scales the sum by `scale`. `shared` is `x` through the
    /// leaky `ReLU`, framed by `top` zero rows on each side.
    ///
    /// For `ResBlock2` every pass is fused: the product's output gets bias and residual and,
    /// in the same pass, is framed (leaky `ReLU`) as the next conv's input or added into the
    /// sum; the first conv reads the shared framing. The arithmetic is the unfused path's,
    /// in the same order.
    fn add_into(
        &self,
        x: &[f32],
        (shared, top): (&[f32], usize),
        t: usize,
        slope: f32,
        sum: &mut Option<Vec<f32>>,
        scale: Option<f32>,
    ) -> Result<(), VitsError> {
        let Self::Single(convs) = self else {
            let mut y = self.forward(x, t, slope)?;
            let c = y.len() / t.max(1);
            match sum.as_deref() {
                Some(s) => add_rows(&mut y, c, None, Some(s), scale),
                None => add_rows(&mut y, c, None, None, scale),
            }
            *sum = Some(y);
            return Ok(());
        };
        let mut input: Option<Vec<f32>> = None; // the framed input of conv i > 0
        let mut residual: Option<Vec<f32>> = None; // x_i for i > 0
        for (i, conv) in convs.iter().enumerate() {
            if conv.stride != 1 || conv.out_len(t)? != t || conv.single.is_some() {
                return Err(refused("a residual conv changed the length"));
            }
            let xp = if let Some(v) = &input {
                &v[..]
            } else {
                let skip = top
                    .checked_sub(conv.pad_left)
                    .ok_or_else(|| refused("framing"))?;
                &shared[skip * conv.c_in..]
            };
            let mut y = conv
                .w
                .product_host(xp, t, 1, conv.dilation)
                .ok_or_else(|| refused("the product declined its input"))?;
            let c = conv.c_out;
            let res = residual.as_deref().unwrap_or(x);
            let bias = conv.bias.as_deref();
            if let Some(next) = convs.get(i + 1) {
                let mut nxp = vec![0f32; (next.pad_left + t + next.pad_right) * c];
                let body = &mut nxp[next.pad_left * c..(next.pad_left + t) * c];
                fused(&mut y, c, bias, res, Target::Frame(body, slope))?;
                input = Some(nxp);
                residual = Some(y);
            } else if let Some(s) = sum.as_mut() {
                fused(&mut y, c, bias, res, Target::Sum(s, scale))?;
            } else {
                fused(&mut y, c, bias, res, Target::Own(scale))?;
                *sum = Some(y);
            }
        }
        Ok(())
    }

    /// The block on `x` (`[t, C]`); every conv keeps the length.
    fn forward(&self, x: &[f32], t: usize, slope: f32) -> Result<Vec<f32>, VitsError> {
        let mut cur: Option<Vec<f32>> = None;
        match self {
            Self::Pairs(convs) => {
                for (c1, c2) in convs {
                    let input = cur.as_deref().unwrap_or(x);
                    let (xt, t1) = c1.forward(input, t, Some(slope), None)?;
                    let (y, t2) = c2.forward(&xt, t1, Some(slope), Some(input))?;
                    if t2 != t {
                        return Err(refused("a residual conv changed the length"));
                    }
                    cur = Some(y);
                }
            }
            Self::Single(convs) => {
                for c in convs {
                    let input = cur.as_deref().unwrap_or(x);
                    let (y, t1) = c.forward(input, t, Some(slope), Some(input))?;
                    if t1 != t {
                        return Err(refused("a residual conv changed the length"));
                    }
                    cur = Some(y);
                }
            }
        }
        Ok(cur.unwrap_or_else(|| x.to_vec()))
    }
}

/// The whole generator on packed weights (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct PackedGenerator {
    conv_pre: PackedConv,
    ups: Vec<PackedUp>,
    blocks: Vec<PackedBlock>,
    kernels: usize,
    conv_post: PackedConv,
    kernel: CpuKernel,
}

impl PackedGenerator {
    /// Packs the generator's convolutions for `kernel`; `None` where any of them cannot run
    /// on the kernels (then the generator keeps candle's ops).
    pub(crate) fn pack(
        conv_pre: &Conv,
        ups: &[Conv],
        blocks: &[ResBlock],
        conv_post: &Conv,
        kernel: CpuKernel,
    ) -> Result<Option<Self>, VitsError> {
        let Some(pre) = PackedConv::pack(conv_pre, kernel)? else {
            return Ok(None);
        };
        let Some(post) = PackedConv::pack(conv_post, kernel)? else {
            return Ok(None);
        };
        let mut packed_ups = Vec::with_capacity(ups.len());
        for up in ups {
            let Some(p) = PackedUp::pack(up, kernel)? else {
                return Ok(None);
            };
            packed_ups.push(p);
        }
        let mut packed_blocks = Vec::with_capacity(blocks.len());
        for b in blocks {
            let Some(p) = PackedBlock::pack(b, kernel)? else {
                return Ok(None);
            };
            packed_blocks.push(p);
        }
        if packed_ups.is_empty() || !packed_blocks.len().is_multiple_of(packed_ups.len()) {
            return Ok(None);
        }
        Ok(Some(Self {
            kernels: packed_blocks.len() / packed_ups.len(),
            conv_pre: pre,
            ups: packed_ups,
            blocks: packed_blocks,
            conv_post: post,
            kernel,
        }))
    }

    /// The kernel the products were packed for.
    pub(crate) fn kernel(&self) -> CpuKernel {
        self.kernel
    }

    /// `z` (`[1, C, frames]`) and the speaker's conditioning (`[C]` per frame, where the
    /// voice has one) to samples; `slope` is the generator's leaky `ReLU` slope.
    pub(crate) fn forward(
        &self,
        z: &Tensor,
        cond: Option<&[f32]>,
        slope: f32,
    ) -> Result<Vec<f32>, VitsError> {
        let (_, c, t) = z.dims3()?;
        if c != self.conv_pre.c_in {
            return Err(refused("latent channels differ from the first conv's"));
        }
        let zt = host(&z.squeeze(0)?.t()?.contiguous()?)?;
        let (mut x, mut t) = self.conv_pre.forward(&zt, t, None, None)?;
        if let Some(g) = cond {
            add_rows(&mut x, self.conv_pre.c_out, Some(g), None, None);
        }
        let inv = 1.0 / self.kernels as f32;
        for (i, up) in self.ups.iter().enumerate() {
            let (y, len) = up.forward(&x, t, slope)?;
            (x, t) = (y, len);
            let c = up.c_out;
            let blocks = &self.blocks[i * self.kernels..(i + 1) * self.kernels];
            // The stage's input, through the leaky ReLU and framed once for every block's
            // first conv (each reads it from its own padding's offset).
            let top = blocks.iter().map(PackedBlock::frame).max().unwrap_or(0);
            let shared = framed(&x, c, top, top, Some(slope));
            let mut sum: Option<Vec<f32>> = None;
            for (j, block) in blocks.iter().enumerate() {
                let last = j + 1 == blocks.len();
                block.add_into(&x, (&shared, top), t, slope, &mut sum, last.then_some(inv))?;
            }
            x = sum.ok_or_else(|| refused("no residual blocks"))?;
        }
        // torch's default slope here, not the generator's
        let (mut y, _) = self.conv_post.forward(&x, t, Some(0.01), None)?;
        y.par_chunks_mut(ROWS_PER_TASK * 16)
            .for_each(|chunk| chunk.iter_mut().for_each(|v| *v = v.tanh()));
        Ok(y)
    }
}

#[cfg(test)]
mod tests {
    use candle_core::{Device, Tensor};

    use crate::checkpoint::{Checkpoint, ConvAttrs, Param};
    use crate::generator::Generator;
    use crate::CpuKernel;

    /// Deterministic values in about [-scale, scale].
    fn values(n: usize, seed: usize, scale: f32) -> Vec<f32> {
        (0..n)
            .map(|i| ((i * 7919 + seed * 104_729) as f32 * 0.618_034).sin() * scale)
            .collect()
    }

    fn conv(
        ck: &mut Checkpoint,
        name: &str,
        dims: [usize; 3],
        pad: (usize, usize),
        dilation: usize,
        stride: usize,
        transposed: bool,
        bias: Option<usize>,
    ) {
        let seed = ck.params.len() + 1;
        let n = dims.iter().product();
        let fan_in = (dims[1] * dims[2]) as f32;
        ck.params.insert(
            format!("{name}.weight"),
            Param {
                dims: dims.to_vec(),
                data: values(n, seed, 1.5 / fan_in.sqrt()),
            },
        );
        if let Some(b) = bias {
            ck.params.insert(
                format!("{name}.bias"),
                Param {
                    dims: vec![b],
                    data: values(b, seed + 1000, 0.1),
                },
            );
        }
        ck.convs.insert(
            name.to_owned(),
            ConvAttrs {
                pad_left: pad.0,
                pad_right: pad.1,
                dilation,
                stride,
                groups: 1,
                transposed,
            },
        );
    }

    /// A small generator of the medium voices' shape: `conv_pre`, two upsamplers (one with a
    /// kernel that is not a multiple of its stride), two residual blocks per stage with dilated
    /// convs (`ResBlock2`, or with `pairs` `ResBlock1`), and a one-channel `conv_post` without
    /// bias.
    fn checkpoint(pairs: bool) -> Checkpoint {
        let mut ck = Checkpoint::default();
        conv(
            &mut ck,
            "dec.conv_pre",
            [32, 8, 7],
            (3, 3),
            1,
            1,
            false,
            Some(32),
        );
        conv(
            &mut ck,
            "dec.ups.0",
            [32, 16, 8],
            (2, 2),
            1,
            4,
            true,
            Some(16),
        );
        conv(
            &mut ck,
            "dec.ups.1",
            [16, 8, 5],
            (1, 1),
            1,
            2,
            true,
            Some(8),
        );
        for (stage, c) in [(0usize, 16usize), (1, 8)] {
            for (b, k) in [(0usize, 3usize), (1, 5)] {
                for (i, d) in [(0usize, 1usize), (1, 3)] {
                    let p = d * (k - 1) / 2;
                    let block = format!("dec.resblocks.{}", stage * 2 + b);
                    if pairs {
                        let (c1, c2) =
                            (format!("{block}.convs1.{i}"), format!("{block}.convs2.{i}"));
                        conv(&mut ck, &c1, [c, c, k], (p, p), d, 1, false, Some(c));
                        let q = (k - 1) / 2;
                        conv(&mut ck, &c2, [c, c, k], (q, q), 1, 1, false, Some(c));
                    } else {
                        let name = format!("{block}.convs.{i}");
                        conv(&mut ck, &name, [c, c, k], (p, p), d, 1, false, Some(c));
                    }
                }
            }
        }
        conv(
            &mut ck,
            "dec.conv_post",
            [1, 8, 7],
            (3, 3),
            1,
            1,
            false,
            None,
        );
        ck
    }

    /// The packed generator in f32 products against candle's ops: the same samples up to the
    /// order of the sums. Skipped on CPUs without the kernels.
    #[test]
    fn packed_generator_matches_candles_ops() {
        for pairs in [false, true] {
            same_samples(&checkpoint(pairs));
        }
    }

    fn same_samples(ck: &Checkpoint) {
        let dev = Device::Cpu;
        let mut generator = Generator::load(ck, &dev).expect("generator");
        let frames = 37;
        let z = Tensor::from_vec(values(8 * frames, 9, 1.0), (1, 8, frames), &dev).expect("z");
        let want: Vec<f32> = generator
            .forward(&z, None)
            .and_then(|y| Ok(y.flatten_all()?.to_vec1()?))
            .expect("candle");
        // (37 − 1)·4 + 8 − 2·2 = 148 rows, then (148 − 1)·2 + 5 − 2·1 = 297 samples
        assert_eq!(want.len(), 297);
        for kernel in [CpuKernel::F32, CpuKernel::Vectors] {
            if !generator.use_cpu_kernel(Some(kernel)).expect("pack") {
                return;
            }
            let got: Vec<f32> = generator
                .forward(&z, None)
                .and_then(|y| Ok(y.flatten_all()?.to_vec1()?))
                .expect("packed");
            assert_eq!(got.len(), want.len());
            let err = got
                .iter()
                .zip(&want)
                .map(|(a, b)| (a - b).abs())
                .fold(0f32, f32::max);
            let peak = want.iter().map(|v| v.abs()).fold(0f32, f32::max);
            let tol = if kernel == CpuKernel::F32 { 1e-5 } else { 2e-2 };
            assert!(peak > 0.05, "a signal to compare ({peak})");
            assert!(
                err <= tol * peak,
                "{kernel:?}: max error {err}, peak {peak}"
            );
        }
    }
}
