//! The CPU kernels of the model's big products, one module per instruction set: AVX-512 BF16
//! ([`bf16`]), AVX-512F f32 FMA ([`fma`]), AVX-512 VNNI int8 ([`int8`]) and AMX tiles ([`amx`]),
//! chosen per layer by [`CpuKernel`]. Products in bfloat16 are accumulated in f32.
//!
//! The decoder's convolutions are ~80 % of a line's compute, and candle's f32 GEMM already ran
//! them at about half of the f32 peak. `VDPBF16PS` multiplies pairs of bfloat16 values into f32
//! sums at twice the f32 rate (measured on this project's 2-core EPYC: 453 against 238
//! GFLOP/s per core in a register-only loop), so those products are done here, by
//! [`bf16`], with the weights packed to bfloat16 once at load. bfloat16 keeps f32's range
//! with an 8-bit mantissa, so each product is off by at most 2⁻⁸ relative while every sum is
//! f32: on the stage goldens the decoder's audio lands 37–42 dB from the f32 port's and as
//! close to the reference (`stages_decoder::decoder_in_bf16_sounds_like_oracle`).
//!
//! On CPUs with AMX (Intel Xeon since Sapphire Rapids) the same products run on tiles
//! ([`amx`]), several times faster again, for every layer whose channel counts are multiples
//! of 32; [`CpuKernel::Vectors`] keeps them on the vector kernel (`BANTER_PRECISION=bf16`).
//!
//! Where `VDPBF16PS` is the slower instruction (Intel's server cores issue it at half the rate
//! of an f32 FMA; AMD's Zen 4 at twice), the layers AMX does not take run on an f32 FMA kernel
//! instead ([`fma`], measured once per process), on the same panels with f32 weights: exact
//! f32 products, faster there than bfloat16. Layers kept in bfloat16 for their size (the
//! decoder's body, [`CpuKernel::for_body`]) run there on the f32 kernel too, their pairs
//! widened to f32 in registers. The panels are named for bfloat16, which most CPUs with
//! AVX-512 run; [`CpuKernel::F32`] (`BANTER_PRECISION=fma`) forces the f32 kernel.
//!
//! [`Bf16Weights`] is the portable face: it declines (`None`) off x86-64, on CPUs without the
//! instructions, and for tensors not on the CPU, and the caller keeps its f32 product.

use std::sync::{Arc, Mutex, PoisonError};

use candle_core::{Result, Tensor};

#[cfg(target_arch = "x86_64")]
pub mod aligned;
#[cfg(target_arch = "x86_64")]
pub mod amx;
#[cfg(target_arch = "x86_64")]
pub mod bf16;
#[cfg(target_arch = "x86_64")]
pub mod cache;
#[cfg(target_arch = "x86_64")]
pub mod fma;
#[cfg(target_arch = "x86_64")]
pub mod int8;

/// Which CPU kernel runs the model's big products (by instruction set; [`Self::F32`] is the f32 FMA vector kernel).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuKernel {
    /// AMX tiles where the CPU has them and a layer's shape fits; elsewhere the faster vector
    /// kernel on this CPU, bfloat16 or f32 ([`fma::preferred`]).
    Tiles,
    /// bfloat16 panels on the vector kernels only: `VDPBF16PS`, or where f32 FMAs are the
    /// faster instruction, the f32 kernel with the pairs widened in registers.
    Vectors,
    /// AVX-512 f32 FMA vectors only ([`fma`]).
    F32,
    /// 8-bit products on AVX-512 VNNI ([`int8`]) for the layers the model offers them to (the
    /// generator's residual blocks), [`Self::Tiles`]' choice for the rest and
    /// on CPUs without VNNI.
    Int8,
}

impl CpuKernel {
    /// The default (`BANTER_PRECISION` unset or `amx`): [`Self::Tiles`] where the CPU has AMX;
    /// else [`Self::Int8`] where `VPDPBUSD` measures well above the vector kernels
    /// ([`int8::preferred`]: judged equal to f32 on every bench passage, see `int8`); else
    /// [`Self::Tiles`], which then picks the faster vector kernel.
    #[must_use]
    pub fn auto() -> Self {
        #[cfg(target_arch = "x86_64")]
        if !tiles_available() && int8::preferred() {
            return Self::Int8;
        }
        Self::Tiles
    }

    /// The kernel for layers that must not run in int8 (see [`int8`]): [`Self::Tiles`] in
    /// place of [`Self::Int8`].
    #[must_use]
    pub fn without_int8(self) -> Self {
        if self == Self::Int8 {
            Self::Tiles
        } else {
            self
        }
    }

    /// The kernel for the decoder's body (the 1024-channel blocks at the frame rate) beside
    /// an int8 generator: int8 there lands 26 dB from the f32 port on the stage goldens, so it
    /// runs in bfloat16 where the CPU has AVX-512 BF16 (40 dB when everything runs in it), on
    /// panels half the size of the f32 ones [`Self::without_int8`] would pack: ~66 MB less
    /// resident, for layers that are a few percent of the decoder's products. Where f32 FMAs
    /// outpace `VDPBF16PS` those panels run on the f32 kernel, widened in registers
    /// (`fma::conv_panel_widened`): the weights rounded as before, the input exact, at 1.6×
    /// the bfloat16 instruction's rate. Other kernels are kept.
    #[must_use]
    pub fn for_body(self) -> Self {
        #[cfg(target_arch = "x86_64")]
        if self == Self::Int8 && bf16::supported() {
            return Self::Vectors;
        }
        self.without_int8()
    }
}

/// Whether this CPU (and OS) can run the products on AMX tiles.
#[must_use]
pub fn tiles_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        bf16::supported() && amx::available()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether this CPU can run the products on the f32 FMA kernel ([`CpuKernel::F32`]).
#[must_use]
pub fn f32_vectors_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        fma::supported()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether this CPU can run the int8 products ([`CpuKernel::Int8`]).
#[must_use]
pub fn int8_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        int8::supported()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Where a weight lies in an unpacked layout: element (tap `j`, input channel `c`, output `o`)
/// at `j·tap + c·input + o·output`. The time-major product matrix `[K·C_in, C_out]` has
/// `(C_in·C_out, C_out, 1)`; a checkpoint's convolution `[C_out, C_in, K]` `(1, K, C_in·K)`;
/// its dense `[out, in]` `(0, 1, in)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Strides {
    pub tap: usize,
    pub input: usize,
    pub output: usize,
}

/// A layer's weights packed for the bfloat16 products.
#[derive(Debug)]
pub struct Bf16Weights {
    #[cfg(target_arch = "x86_64")]
    packed: bf16::PackedWeights,
}

impl Bf16Weights {
    /// Packs the time-major `[K·C_in, C_out]` weights of a `K`-tap convolution (`K` = 1 for a
    /// dense layer), or `None` where the products cannot run (not a CPU tensor, no AVX-512
    /// BF16, odd `C_in`, rows other than `K·C_in`); `kernel` says whether AMX tiles may run
    /// them.
    pub fn pack(
        weight_tm: &Tensor,
        taps: usize,
        c_in: usize,
        kernel: CpuKernel,
    ) -> Result<Option<Self>> {
        let (rows, c_out) = weight_tm.dims2()?;
        if rows != taps * c_in {
            return Ok(None);
        }
        let time_major = Strides {
            tap: c_in * c_out,
            input: c_out,
            output: 1,
        };
        Self::pack_strided(weight_tm, time_major, (taps, c_in, c_out), kernel)
    }

    /// Packs a checkpoint's tensor in its own layout (see [`Stored`]), reading it in place;
    /// `None` as for [`Self::pack`].
    fn pack_stored(stored: &Tensor, layout: Stored, kernel: CpuKernel) -> Result<Option<Self>> {
        let (shape, strides) = match layout {
            Stored::Conv => {
                let (c_out, c_in, k) = stored.dims3()?;
                let strides = Strides {
                    tap: 1,
                    input: k,
                    output: c_in * k,
                };
                ((k, c_in, c_out), strides)
            }
            Stored::Dense => {
                let (out, input) = stored.dims2()?;
                let strides = Strides {
                    tap: 0,
                    input: 1,
                    output: input,
                };
                ((1, input, out), strides)
            }
        };
        Self::pack_strided(stored, strides, shape, kernel)
    }

    /// Packs `(taps, C_in, C_out)` weights lying in `t` as `s` says, read in place.
    #[allow(clippy::unnecessary_wraps)] // Ok(None) only, off x86-64
    fn pack_strided(
        t: &Tensor,
        s: Strides,
        (taps, c_in, c_out): (usize, usize, usize),
        kernel: CpuKernel,
    ) -> Result<Option<Self>> {
        #[cfg(target_arch = "x86_64")]
        {
            if !t.device().is_cpu() || bf16::Format::for_layer(kernel, c_out).is_none() {
                return Ok(None);
            }
            let packed = crate::host::with_host(&t.contiguous()?, |w| {
                bf16::PackedWeights::pack_strided(w, s, taps, c_in, c_out, kernel)
            });
            Ok(packed.flatten().map(|packed| Self { packed }))
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (t, s, taps, c_in, c_out, kernel);
            Ok(None)
        }
    }

    /// Weights packed earlier (read back from [`cache`]).
    #[cfg(target_arch = "x86_64")]
    #[must_use]
    pub fn from_packed(packed: bf16::PackedWeights) -> Self {
        Self { packed }
    }

    /// The packed panels and their shape.
    #[cfg(target_arch = "x86_64")]
    #[must_use]
    pub fn packed(&self) -> &bf16::PackedWeights {
        &self.packed
    }

    /// Whether these weights run on AMX tiles.
    #[must_use]
    pub fn tiles(&self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            self.packed.tiles()
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    }

    /// The convolution of the contiguous f32 `[rows, C_in]` input `x`: `rows_out` rows, row
    /// `r` reading its taps `dilation` apart from input row `r·stride`; `[rows_out, C_out]`
    /// without bias. An input that is not an f32 CPU tensor long enough for that is an error:
    /// a packed layer has no f32 copy to fall back on.
    pub fn product(
        &self,
        x: &Tensor,
        rows_out: usize,
        stride: usize,
        dilation: usize,
    ) -> Result<Tensor> {
        let y = crate::host::with_host(x, |values| {
            self.product_host(values, rows_out, stride, dilation)
        })
        .flatten();
        match y {
            Some(y) => Tensor::from_vec(y, (rows_out, self.c_out()), x.device()),
            None => candle_core::bail!(
                "bfloat16 product: input {:?} does not fit {rows_out} rows at stride {stride}, \
                 dilation {dilation}",
                x.dims()
            ),
        }
    }

    /// [`Self::product`] on host values: `x` holds `[rows, C_in]` row-major; `None` where the input is too short for the geometry, or off
    /// x86-64. For callers that keep their activations as host buffers (VITS's generator)
    /// and so skip a tensor's wrapping on every layer.
    #[must_use]
    pub fn product_host(
        &self,
        x: &[f32],
        rows_out: usize,
        stride: usize,
        dilation: usize,
    ) -> Option<Vec<f32>> {
        #[cfg(target_arch = "x86_64")]
        {
            let g = bf16::Geometry {
                rows: rows_out,
                stride,
                dilation,
            };
            let (c_in, row_len) = (self.packed.c_in(), self.packed.row_len());
            match self.packed.format() {
                bf16::Format::F32 => bf16::conv(bf16::Rows::F32(x), &self.packed, g),
                bf16::Format::I8 => {
                    let q = int8::quantize_rows(x, c_in, row_len)?;
                    bf16::conv(bf16::Rows::I8(&q), &self.packed, g)
                }
                // Where f32 FMAs outpace `VDPBF16PS`, bfloat16 panels are widened to
                // f32 and the input stays f32 (`fma::conv_panel_widened`).
                bf16::Format::Bf16 if fma::preferred() => {
                    bf16::conv(bf16::Rows::F32(x), &self.packed, g)
                }
                bf16::Format::Bf16 | bf16::Format::Tiles => {
                    let input = bf16::convert_rows(x, c_in, row_len)?;
                    bf16::conv(bf16::Rows::Bf16(&input), &self.packed, g)
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (x, rows_out, stride, dilation);
            None
        }
    }

    /// Output channels of the product.
    #[must_use]
    pub fn c_out(&self) -> usize {
        #[cfg(target_arch = "x86_64")]
        {
            self.packed.c_out()
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            0
        }
    }
}

/// How a checkpoint's tensor maps onto a layer's product matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    /// A convolution's `[C_out, C_in, K]`, the matrix `[K·C_in, C_out]` (row `k·C_in + c`
    /// holds `weight[:, c, k]`).
    Conv,
    /// A dense layer's `[out, in]`, the matrix `[in, out]`.
    Dense,
}

impl Stored {
    /// The product matrix of `t` (a copy, permuted on the host for CPU tensors).
    fn product_matrix(self, t: &Tensor) -> Result<Tensor> {
        match self {
            Self::Conv => {
                let (c_out, c_in, k) = t.dims3()?;
                crate::permute::permuted(t, &[2, 1, 0])?.reshape((k * c_in, c_out))
            }
            Self::Dense => crate::permute::permuted(t, &[1, 0]),
        }
    }
}

/// A checkpoint's tensor kept as the file lays it out until a product needs the f32 matrix.
/// Packing reads it in place ([`ProductWeights::use_bf16`]), so a packed layer never makes the
/// permuted f32 copy: that permutation was a quarter of a start (`banter say "Hi."`), spent on
/// matrices that packing then dropped. A layer that `use_bf16` cannot pack makes its matrix
/// there and then; only a model never offered bfloat16 (`BANTER_PRECISION=f32`, tests) makes
/// each on its first product.
#[derive(Debug)]
pub struct StoredWeights {
    layout: Stored,
    state: Mutex<Matrix>,
    /// The checkpoint's name for the tensor, where the layer knows it: what [`cache`] keys
    /// its packed panels by.
    name: Option<String>,
}

#[derive(Debug)]
enum Matrix {
    AsStored(Tensor),
    Product(Tensor),
}

impl StoredWeights {
    /// The f32 product matrix, made (and the stored tensor dropped) on the first call.
    fn product(&self) -> Result<Tensor> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let made = match &*state {
            Matrix::Product(m) => return Ok(m.clone()),
            Matrix::AsStored(t) => self.layout.product_matrix(t)?,
        };
        *state = Matrix::Product(made.clone());
        Ok(made)
    }
}

/// A layer's matrix for its products: the checkpoint's tensor or an f32 matrix (on any
/// device) until [`Self::use_bf16`] packs it, then the bfloat16 panels alone. The f32 copy is
/// never read again once packed, and dropping it is most of what keeps the loaded model
/// within its memory budget.
#[derive(Debug, Clone)]
pub enum ProductWeights {
    /// See [`StoredWeights`].
    Stored(Arc<StoredWeights>),
    F32(Tensor),
    Bf16(Arc<Bf16Weights>),
}

/// What a product multiplies by: the f32 matrix, or the packed bfloat16 one.
#[derive(Debug)]
pub enum Product<'a> {
    F32(Tensor),
    Bf16(&'a Bf16Weights),
}

impl ProductWeights {
    /// A checkpoint's `tensor`, laid out as `layout` says.
    #[must_use]
    pub fn stored(tensor: Tensor, layout: Stored) -> Self {
        Self::Stored(Arc::new(StoredWeights {
            layout,
            state: Mutex::new(Matrix::AsStored(tensor)),
            name: None,
        }))
    }

    /// Gives a checkpoint's tensor ([`Self::stored`]) its name there (`….weight`): its packed
    /// panels can then come from, and go to, the packed-weights cache (`cache`). Weights
    /// made any other way stay as they are.
    #[must_use]
    pub fn named(self, name: String) -> Self {
        match self {
            Self::Stored(s) => match Arc::try_unwrap(s) {
                Ok(s) => Self::Stored(Arc::new(StoredWeights {
                    name: Some(name),
                    ..s
                })),
                Err(shared) => Self::Stored(shared),
            },
            other => other,
        }
    }

    /// The matrix to multiply by (the stored tensor's f32 matrix is made on first use).
    pub fn product(&self) -> Result<Product<'_>> {
        Ok(match self {
            Self::Stored(s) => Product::F32(s.product()?),
            Self::F32(w) => Product::F32(w.clone()),
            Self::Bf16(w) => Product::Bf16(w),
        })
    }

    /// Packs the f32 `[K·C_in, C_out]` matrix of a `K`-tap product (or the stored tensor it
    /// comes from) for `kernel` where the products can run in bfloat16 (see
    /// [`Bf16Weights::pack`]); returns whether they do.
    pub fn use_bf16(&mut self, taps: usize, c_in: usize, kernel: CpuKernel) -> Result<bool> {
        let mut name = None;
        let packed = match self {
            Self::Stored(s) => {
                let state = s.state.lock().unwrap_or_else(PoisonError::into_inner);
                #[cfg(target_arch = "x86_64")]
                if let (Some(n), Matrix::AsStored(t)) = (&s.name, &*state) {
                    if let Some(cached) = cache::lookup(n, s.layout, t.dims(), kernel)? {
                        drop(state);
                        *self = Self::Bf16(cached);
                        return Ok(true);
                    }
                }
                name.clone_from(&s.name);
                match &*state {
                    Matrix::AsStored(t) => Bf16Weights::pack_stored(t, s.layout, kernel)?,
                    Matrix::Product(m) => Bf16Weights::pack(m, taps, c_in, kernel)?,
                }
            }
            Self::F32(w) => Bf16Weights::pack(w, taps, c_in, kernel)?,
            Self::Bf16(_) => candle_core::bail!("these weights are already packed in bfloat16"),
        };
        if let Some(packed) = packed {
            let packed = Arc::new(packed);
            #[cfg(target_arch = "x86_64")]
            if let Some(name) = name {
                cache::record(name, &packed);
            }
            #[cfg(not(target_arch = "x86_64"))]
            let _ = name;
            *self = Self::Bf16(packed);
            return Ok(true);
        }
        // The layer stays f32 (no AVX-512 BF16, odd C_in, a GPU): its matrix is made now, at
        // load, not in the first request's products.
        if let Self::Stored(s) = self {
            s.product()?;
        }
        Ok(false)
    }
}
