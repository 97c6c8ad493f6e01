//! Where the model runs: `auto`, `cpu`, `cuda` or `cuda:N`, chosen at run time.
//!
//! The same model code runs on every device; CUDA is compiled in only with the `cuda` feature
//! (candle's cudarc backend), so asking for it in a CPU-only build is a clear error, not a crash.
//! A `cuda` build (scripts/build-cuda.sh) links the driver's libcuda.so.1 and the CUDA 13
//! libraries dynamically (candle fixes cudarc to dynamic linking), so it starts only where they
//! are installed; where they are but no GPU answers, `auto` falls back to the CPU.

use std::fmt;
use std::str::FromStr;

use candle_core::Device;

/// The user's choice of device, before it is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeviceChoice {
    /// CUDA device 0 when this build has CUDA and a GPU answers, else the CPU.
    #[default]
    Auto,
    Cpu,
    Cuda(usize),
}

/// Why a device could not be used.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    #[error("unknown device `{0}`: use auto, cpu, cuda or cuda:N")]
    Unknown(String),
    #[error("this banter was built without CUDA; rebuild with `cargo build --release --features cuda` or use --device cpu")]
    NoCudaSupport,
    #[error("CUDA device {index} could not be opened ({source}); check the NVIDIA driver and GPU, or use --device cpu")]
    Cuda {
        index: usize,
        source: candle_core::Error,
    },
}

impl FromStr for DeviceChoice {
    type Err = DeviceError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" | "" => Ok(Self::Auto),
            "cpu" => Ok(Self::Cpu),
            "cuda" | "gpu" => Ok(Self::Cuda(0)),
            other => other
                .strip_prefix("cuda:")
                .and_then(|n| n.parse().ok())
                .map(Self::Cuda)
                .ok_or_else(|| DeviceError::Unknown(s.to_owned())),
        }
    }
}

impl fmt::Display for DeviceChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Auto => f.write_str("auto"),
            Self::Cpu => f.write_str("cpu"),
            Self::Cuda(n) => write!(f, "cuda:{n}"),
        }
    }
}

impl DeviceChoice {
    /// Opens the device.
    pub fn open(self) -> Result<Device, DeviceError> {
        match self {
            Self::Cpu => Ok(Device::Cpu),
            Self::Auto => Ok(if cfg!(feature = "cuda") {
                cuda_or_cpu()
            } else {
                Device::Cpu
            }),
            Self::Cuda(index) => {
                if !cfg!(feature = "cuda") {
                    return Err(DeviceError::NoCudaSupport);
                }
                open_cuda(index).map_err(|err| DeviceError::Cuda {
                    index,
                    source: without_backtrace(err),
                })
            }
        }
    }
}

/// CUDA device `index` with one stream of its own that every thread's work goes to.
///
/// Not `Device::new_cuda`: that one issues work to CUDA's *per-thread* default stream, so what
/// two host threads launch runs on two streams with nothing ordering them. The model thread's
/// convolutions handed row pieces to rayon's workers, whose products then raced the
/// copies around them: long segments came out as noise, differently on every run (measured on
/// an H200 with `banter bench parity --device cuda`: whole-segment SNR 26 dB at 270 frames,
/// ~0 dB from 429, while 0.8–1.6 s windows matched the CPU to 106 dB). With one stream the
/// order in which any thread enqueues work is the order it runs in.
fn open_cuda(index: usize) -> candle_core::Result<Device> {
    let device = Device::new_cuda_with_stream(index)?;
    #[cfg(feature = "cuda")]
    cuda_setup::tune(&device);
    Ok(device)
}

#[cfg(feature = "cuda")]
mod cuda_setup;

/// CUDA device 0, or the CPU when it cannot be opened (no GPU, driver refuses, stub driver...).
/// `Device::new_cuda` reports every driver failure as an error (cudarc checks each `CUresult`),
/// so this never panics; the reason is logged because a silent CPU fallback is hard to diagnose.
fn cuda_or_cpu() -> Device {
    open_cuda(0).unwrap_or_else(|err| {
        tracing::info!(error = %without_backtrace(err), "CUDA device 0 unavailable; running on the CPU");
        Device::Cpu
    })
}

/// The error without the backtrace candle attaches when `RUST_BACKTRACE` is set: this one goes
/// to the user as a one-line message, and the backtrace only shows candle's own frames.
fn without_backtrace(err: candle_core::Error) -> candle_core::Error {
    match err {
        candle_core::Error::WithBacktrace { inner, .. } => *inner,
        other => other,
    }
}

/// A short human description of a device, e.g. `cpu (2 threads)` or `cuda:0`.
#[must_use]
pub fn describe(device: &Device) -> String {
    match device {
        Device::Cpu => format!(
            "cpu ({} threads)",
            std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
        ),
        Device::Cuda(_) => "cuda".to_owned(),
        Device::Metal(_) => "metal".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_device_names() {
        assert_eq!("auto".parse::<DeviceChoice>().unwrap(), DeviceChoice::Auto);
        assert_eq!("CPU".parse::<DeviceChoice>().unwrap(), DeviceChoice::Cpu);
        assert_eq!(
            "cuda".parse::<DeviceChoice>().unwrap(),
            DeviceChoice::Cuda(0)
        );
        assert_eq!(
            "cuda:3".parse::<DeviceChoice>().unwrap(),
            DeviceChoice::Cuda(3)
        );
        assert!("cuda:x".parse::<DeviceChoice>().is_err());
        assert!("tpu".parse::<DeviceChoice>().is_err());
    }

    /// `auto` and `cuda` must agree: a GPU that `auto` picks opens explicitly too, and when
    /// `auto` falls back to the CPU, asking for CUDA is an error (never a panic), in any build.
    #[test]
    fn auto_and_cuda_agree() {
        match DeviceChoice::Auto.open() {
            Ok(Device::Cpu) => assert!(DeviceChoice::Cuda(0).open().is_err()),
            Ok(Device::Cuda(_)) => {
                assert!(matches!(DeviceChoice::Cuda(0).open(), Ok(Device::Cuda(_))));
            }
            other => panic!("auto must open the CPU or CUDA, got {other:?}"),
        }
        assert!(
            DeviceChoice::Cuda(4096).open().is_err(),
            "no machine has 4097 GPUs"
        );
    }

    #[test]
    fn cpu_always_opens() {
        assert!(matches!(DeviceChoice::Cpu.open().unwrap(), Device::Cpu));
        if !cfg!(feature = "cuda") {
            assert!(matches!(
                DeviceChoice::Cuda(0).open(),
                Err(DeviceError::NoCudaSupport)
            ));
        }
    }
}
