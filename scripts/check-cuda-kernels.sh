#!/usr/bin/env bash
# Checks Kokoro's CUDA kernels on a machine without a GPU: builds the `cuda` feature's unit tests
# (scripts/build-cuda.sh installs the toolchain) and runs those that need only NVRTC: kernels.cu
# compiles, and every kernel the Rust side launches is in its PTX. The GPU half (each kernel
# against its CPU reference) is `banter bench parity --device cuda` on a machine with one.
#
# The test binary links the driver's libcuda.so.1, which only an NVIDIA driver installs; here it
# runs against build-cuda.sh's stub (every driver call returns CUDA_ERROR_STUB_LIBRARY), which is
# enough because NVRTC needs no driver. Nothing else goes on LD_LIBRARY_PATH: NVRTC's builtins
# library must be found the way a user's run finds it (`cuda_kernels::builtins`).
set -euo pipefail
cd "$(dirname "$0")/.."
PREFIX="${BANTER_CUDA_PREFIX:-$HOME/.local/share/banter-cuda}"
scripts/build-cuda.sh test --release -p kokoro --features cuda --lib --no-run
stub_dir=$(mktemp -d)
trap 'rm -rf "$stub_dir"' EXIT
ln -s "$PREFIX/link/lib/stubs/libcuda.so" "$stub_dir/libcuda.so.1"
LD_LIBRARY_PATH="$stub_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  scripts/build-cuda.sh test --release -p kokoro --features cuda --lib cuda_kernels
