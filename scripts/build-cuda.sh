#!/usr/bin/env bash
# Builds the CUDA-enabled banter binary: `cargo build --release -p app --features cuda`.
# Needs no GPU and no NVIDIA driver on the build machine; idempotent (re-running only rebuilds).
#
# Why anything must be installed: the `cuda` feature turns on candle's cudarc backend.
#   - candle-kernels' build script (through the `cudaforge` crate) runs `nvcc` to compile its .cu
#     kernels to PTX (embedded in the binary, JIT-compiled by the driver at run time) and a few
#     MoE/GGUF kernels into a static library; those include cuda_runtime.h, cuda_fp16/bf16/fp8.h,
#     thrust and cub, and it links libcudart.
#   - candle-core enables cudarc's `dynamic-linking` + `cuda-version-from-build-system`: cudarc's
#     build script runs `nvcc --version` (from PATH) to pick its bindings (13.0 here) and links
#     libcuda, libcublas, libcublasLt, libcurand and libnvrtc by name (`-lcuda` ...).
#
# What it installs, all from PyPI by package name and pinned version, into a private venv
# ($BANTER_CUDA_PREFIX, default ~/.local/share/banter-cuda; about 1.2 GB), nothing system-wide:
#   nvidia-cuda-nvcc 13.0.88      nvcc, ptxas, fatbinary, nvlink
#   nvidia-nvvm 13.0.88           cicc and libdevice (nvcc's device front end)
#   nvidia-cuda-crt 13.0.88       crt/ headers nvcc needs (host_config.h ...)
#   nvidia-cuda-runtime 13.0.96   cuda.h, cuda_runtime.h, cuda_fp16/bf16/fp8.h, libcudart.so.13
#   nvidia-cuda-cccl 13.0.85      thrust, cub, libcu++ headers (candle's sort and MoE kernels)
#   nvidia-cublas 13.1.0.3        libcublas.so.13, libcublasLt.so.13
#   nvidia-curand 10.4.0.35       libcurand.so.10
#   nvidia-cuda-nvrtc 13.0.88     libnvrtc.so.13
# These are the CUDA 13.0 Update 2 components. 13.0 because its nvcc emits PTX ISA 9.0, which
# the 580 driver series (CUDA 13.0) can JIT; PTX from a newer nvcc is refused by an older driver.
# Newer 13.x runtime libraries work with the same binary (same sonames).
#
# Two things the wheels lack, made here under $PREFIX/link (CUDA_ROOT for cudarc's link search):
#   - unversioned symlinks (libcublas.so -> libcublas.so.13 ...) so that `-lcublas` resolves;
#   - a link-time stub libcuda.so (soname libcuda.so.1) generated from cuda.h: every driver API
#     entry point returns CUDA_ERROR_STUB_LIBRARY (34), like the toolkit's own stubs/libcuda.so.
#     libcuda belongs to the NVIDIA driver, which is not installable here; at run time the real
#     driver's libcuda.so.1 is loaded. The stub directory is never put on the binary's RUNPATH.
#
# Arguments, if any, replace the cargo command, with the same environment: for example
#   scripts/build-cuda.sh clippy --release -p engine --features cuda --all-targets -- -D warnings
#   scripts/build-cuda.sh test --release -p engine --features cuda --lib device
#
# Environment knobs: CUDA_COMPUTE_CAP (default 90: Hopper H100/H200; cudaforge turns 90 into
# sm_90a, whose PTX runs only on compute capability 9.0; use 80 for PTX any sm_80+ GPU can JIT),
# BANTER_CUDA_PREFIX, CARGO_TARGET_DIR (default ./target-cuda, apart from the CPU build's target/
# so the two feature sets never evict each other's artifacts).
#
# Running the result: the binary has DT_NEEDED entries for libcuda.so.1 (the driver) and the CUDA
# 13 libraries above. Its RUNPATH points at this venv, so on the build machine those resolve; on
# another machine put them on LD_LIBRARY_PATH. Without a driver (libcuda.so.1 absent) the dynamic
# loader refuses to start it at all: ship the default CPU build to machines without NVIDIA drivers.
set -euo pipefail
cd "$(dirname "$0")/.."

PREFIX="${BANTER_CUDA_PREFIX:-$HOME/.local/share/banter-cuda}"
VENV="$PREFIX/venv"
PACKAGES=(
  nvidia-cuda-nvcc==13.0.88
  nvidia-nvvm==13.0.88
  nvidia-cuda-crt==13.0.88
  nvidia-cuda-runtime==13.0.96
  nvidia-cuda-cccl==13.0.85
  nvidia-cublas==13.1.0.3
  nvidia-curand==10.4.0.35
  nvidia-cuda-nvrtc==13.0.88
)

scripts/bootstrap.sh # cmake, clang... for the rest of the workspace (espeak-ng)

# 1. The CUDA toolkit pieces, from PyPI wheels, in a private venv.
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
missing=0
for spec in "${PACKAGES[@]}"; do
  name="${spec%%==*}" want="${spec##*==}"
  # `pip show` fails for a package not yet installed: that is an empty version, not an error.
  have="$("$VENV/bin/python" -m pip show "$name" 2>/dev/null | sed -n 's/^Version: //p' || true)"
  [ "$have" = "$want" ] || missing=1
done
if [ "$missing" = 1 ]; then
  echo "build-cuda: installing CUDA 13.0 wheels into $VENV (about 1.2 GB)" >&2
  "$VENV/bin/python" -m pip install --disable-pip-version-check -q "${PACKAGES[@]}"
fi
CUDA_DIR="$("$VENV/bin/python" -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13"))')"
[ -x "$CUDA_DIR/bin/nvcc" ] || { echo "build-cuda: nvcc missing under $CUDA_DIR" >&2; exit 1; }

# 2. Link directory: unversioned names for the linker, and the driver stub.
LINK="$PREFIX/link"
mkdir -p "$LINK/lib/stubs"
for lib in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libcurand.so.10 libnvrtc.so.13; do
  [ -e "$CUDA_DIR/lib/$lib" ] || { echo "build-cuda: $CUDA_DIR/lib/$lib missing" >&2; exit 1; }
  ln -sfn "$CUDA_DIR/lib/$lib" "$LINK/lib/${lib%.so.*}.so"
done
stub="$LINK/lib/stubs/libcuda.so"
if [ ! -e "$stub" ] || [ "$CUDA_DIR/include/cuda.h" -nt "$stub" ]; then
  # Every `cu*(` the preprocessed header declares (versioned names such as cuMemAlloc_v2 included,
  # as cudarc's bindgen saw them), plus the names written after CUDAAPI in the raw header.
  {
    gcc -E -P -x c "$CUDA_DIR/include/cuda.h" | grep -oE '\bcu[A-Z][A-Za-z0-9_]*[[:space:]]*\(' | tr -d '( \t'
    grep -oE 'CUDAAPI[[:space:]]+cu[A-Z][A-Za-z0-9_]*' "$CUDA_DIR/include/cuda.h" | awk '{print $2}'
  } | sort -u | awk '{printf "int %s(void) { return 34; /* CUDA_ERROR_STUB_LIBRARY */ }\n", $1}' > "$LINK/libcuda_stub.c"
  gcc -shared -fPIC -O0 -Wl,-soname,libcuda.so.1 -o "$stub" "$LINK/libcuda_stub.c"
  echo "build-cuda: generated $(grep -c '^int' "$LINK/libcuda_stub.c") driver stub symbols in $stub" >&2
fi

# 3. What candle-kernels (cudaforge) and cudarc read.
export PATH="$CUDA_DIR/bin:$PATH"           # cudarc runs `nvcc --version` from PATH
export NVCC="$CUDA_DIR/bin/nvcc"            # cudaforge's first choice
export CUDA_HOME="$CUDA_DIR"
export CUDA_ROOT="$LINK"                    # cudarc link search: $CUDA_ROOT/lib, lib/stubs (+ CUDA_HOME's)
unset CUDA_PATH CUDA_TOOLKIT_ROOT_DIR CUDNN_LIB CUDARC_CUDA_VERSION
export CUDA_COMPUTE_CAP="${CUDA_COMPUTE_CAP:-90}" # no nvidia-smi here to ask
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target-cuda}"
# Find the CUDA libraries at run time on this machine (RUNPATH: LD_LIBRARY_PATH still wins).
export RUSTFLAGS="${RUSTFLAGS:-} -C link-arg=-Wl,-rpath,$CUDA_DIR/lib"

echo "build-cuda: nvcc $("$NVCC" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), compute capability $CUDA_COMPUTE_CAP, target $CARGO_TARGET_DIR" >&2
if [ $# -gt 0 ]; then
  exec cargo "$@"
fi
start=$SECONDS
cargo build --release -p app --features cuda
bin="$CARGO_TARGET_DIR/release/banter"
echo "build-cuda: built in $((SECONDS - start)) s: $bin"
echo "build-cuda: elsewhere run it with LD_LIBRARY_PATH holding libcudart.so.13, libcublas(Lt).so.13, libcurand.so.10, libnvrtc.so.13 with libnvrtc-builtins.so.13.0 beside it (Banter loads the builtins from libnvrtc's directory) and the NVIDIA driver (>= 580) providing libcuda.so.1"
