//! The model's arithmetic: which kernels multiply its big products, chosen once per process
//! (`BANTER_PRECISION`). A setting of the model's, so the model owns it; the engine's callers
//! name it as `engine::Precision`.

use super::cpu_kernels::CpuKernel;

/// The arithmetic of the model's big products (the decoder's convolutions, the encoders'
/// dense layers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precision {
    /// f32 throughout, as the reference computes (and as the stage goldens check).
    F32,
    /// bfloat16 products with f32 sums on AVX-512 BF16 vectors: about 1.8× faster decoding
    /// than f32, 37–42 dB from the f32 audio and as close to the reference (see
    /// `kokoro::cpu_kernels`). Elsewhere this is the same as `F32`.
    Bf16,
    /// The default: the same bfloat16 products on AMX tiles where the CPU has them (Intel
    /// Xeon since Sapphire Rapids); elsewhere, where AVX-512 VNNI measures well ahead of the
    /// vector kernels, [`Self::Int8`]; else the faster vector kernel on this CPU, bfloat16 or
    /// f32 FMAs (each measured once per process: `kokoro::cpu_kernels::fma`, `kokoro::cpu_kernels::int8`).
    Amx,
    /// f32 products on the packed panels with AVX-512 FMAs: the f32 arithmetic (only the
    /// order of the sums differs from [`Self::F32`]), faster than the bfloat16 vectors on
    /// CPUs that issue `VDPBF16PS` at half the FMA rate. Elsewhere the same as `F32`.
    Fma,
    /// 8-bit products (AVX-512 VNNI) in the generator's residual blocks, with
    /// a scale per output channel and per input frame (`kokoro::cpu_kernels::int8`), the other
    /// layers as [`Self::Amx`] runs them: what `Amx` picks on CPUs with VNNI and no AMX where
    /// VNNI measures faster. On CPUs without VNNI the same as `Amx`.
    Int8,
    /// On a CUDA device, the f32 products on TF32 tensor cores (inputs rounded to a 10-bit
    /// mantissa, f32 sums: cuBLAS's `CUBLAS_COMPUTE_32F_FAST_TF32`); on the CPU the same as
    /// the default, [`Self::Amx`]. Not the default on a GPU until the judge says it sounds
    /// the same there (issue 41); `banter bench parity --device cuda` measures its drift.
    Tf32,
}

impl Precision {
    /// The variable that chooses: `f32`, `bf16` (vectors only), `fma` (f32 vectors only),
    /// `int8` (the generator in 8 bits), `tf32` (TF32 products on a GPU) or `amx` (the
    /// default).
    pub const ENV: &'static str = "BANTER_PRECISION";

    /// Every value [`Self::ENV`] takes (`auto` is `amx`).
    pub const NAMES: [&'static str; 7] = ["f32", "bf16", "fma", "int8", "tf32", "amx", "auto"];

    /// [`Self::Amx`] unless [`Self::ENV`] says `f32`, `bf16`, `fma` or `int8`; an unknown value is
    /// warned about and ignored.
    #[must_use]
    pub fn from_env() -> Self {
        let Ok(v) = std::env::var(Self::ENV) else {
            return Self::Amx;
        };
        Self::parse(&v).unwrap_or_else(|| {
            tracing::warn!(
                "{}={v:?} is not f32, bf16, fma, int8, tf32 or amx; using amx where the CPU has it",
                Self::ENV
            );
            Self::Amx
        })
    }

    /// One of [`Self::NAMES`] (any case, spaces around; empty is the default), or `None`.
    #[must_use]
    pub fn parse(v: &str) -> Option<Self> {
        Some(match v.trim().to_ascii_lowercase().as_str() {
            "f32" => Self::F32,
            "bf16" | "avx512" => Self::Bf16,
            "fma" => Self::Fma,
            "int8" => Self::Int8,
            "tf32" => Self::Tf32,
            "amx" | "auto" | "" => Self::Amx,
            _ => return None,
        })
    }

    /// Whether a CUDA device's f32 products may use TF32 tensor cores.
    #[must_use]
    pub fn cuda_tf32(self) -> bool {
        self == Self::Tf32
    }

    /// The kernel the bfloat16 products run on, or `None` for f32.
    #[must_use]
    pub fn bf16_kernel(self) -> Option<CpuKernel> {
        match self {
            Self::F32 => None,
            Self::Bf16 => Some(CpuKernel::Vectors),
            Self::Amx | Self::Tf32 => Some(CpuKernel::auto()),
            Self::Fma => Some(CpuKernel::F32),
            Self::Int8 => Some(CpuKernel::Int8),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Precision;

    #[test]
    fn every_name_parses_and_nothing_else_does() {
        for name in Precision::NAMES {
            assert!(Precision::parse(name).is_some(), "{name}");
            assert!(Precision::parse(&format!(" {} ", name.to_uppercase())).is_some());
        }
        assert_eq!(Precision::parse("tf32"), Some(Precision::Tf32));
        assert!(Precision::parse("tf32").is_some_and(Precision::cuda_tf32));
        assert!(!Precision::Amx.cuda_tf32());
        // On the CPU, TF32 runs the default's products.
        assert_eq!(
            Precision::Tf32.bf16_kernel().is_some(),
            Precision::Amx.bf16_kernel().is_some()
        );
        for bad in ["fp32", "tf16", "cuda"] {
            assert_eq!(Precision::parse(bad), None, "{bad}");
        }
    }
}
