#!/usr/bin/env bash
# Checks Kokoro's CUDA kernels on a machine without a GPU: builds the `cuda` feature's unit tests
# (scripts/build-cuda.sh installs the toolchain) and runs those that need only NVRTC: kernels.cu
# compiles, and every kernel the Rust side launches is in its PTX. The GPU half (each kernel
# against its CPU reference) is `banter bench parity --device cuda` on a machine with one.
#
# The test binary links the driver's libcuda.so.1, which only an NVIDIA driver installs; here it
# runs against build-cuda.sh's stub (every driver call returns CUDA_ERROR_STUB_LIBRARY), which is
# enough because NVRTC needs no driver. NVRTC opens libnvrtc-builtins.so.13.0 by name at run
# time, which the binary's RUNPATH does not cover, so the wheel's lib directory goes on
# LD_LIBRARY_PATH too (as it must wherever the kernels compile: see build-cuda.sh's last line).
set -euo pipefail
cd "$(dirname "$0")/.."
PREFIX="${BANTER_CUDA_PREFIX:-$HOME/.local/share/banter-cuda}"
scripts/build-cuda.sh test --release -p kokoro --features cuda --lib --no-run
stub_dir=$(mktemp -d)
trap 'rm -rf "$stub_dir"' EXIT
ln -s "$PREFIX/link/lib/stubs/libcuda.so" "$stub_dir/libcuda.so.1"
CUDA_LIB="$("$PREFIX/venv/bin/python" -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13", "lib"))')"
LD_LIBRARY_PATH="$stub_dir:$CUDA_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  scripts/build-cuda.sh test --release -p kokoro --features cuda --lib cuda_kernels
