#!/usr/bin/env bash
# Installs a real Triton Inference Server for the tests and the "Scaling out" commands: the
# `nvidia-pytriton` wheel ships `tritonserver` 2.51 with its libraries, which runs on a
# CPU-only machine. Idempotent: a second run only checks the pin. Override the place with
# BANTER_TRITON_VENV (default ~/.cache/banter-triton/venv); tools/triton/tritonserver.sh and the
# e2e tests look there too.
set -euo pipefail
PYTRITON_VERSION="0.7.0"
venv="${BANTER_TRITON_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/banter-triton/venv}"
if [ ! -x "$venv/bin/python" ]; then
  mkdir -p "$(dirname "$venv")"
  python3 -m venv "$venv"
fi
version() {
  "$venv/bin/python" -c 'from importlib.metadata import version; print(version("nvidia-pytriton"))' 2>/dev/null || true
}
if [ "$(version)" != "$PYTRITON_VERSION" ]; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "nvidia-pytriton==$PYTRITON_VERSION"
fi
if [ "$(version)" != "$PYTRITON_VERSION" ]; then
  echo "triton: $venv has nvidia-pytriton $(version), wanted $PYTRITON_VERSION" >&2
  exit 1
fi
# `--help` exits 1; what matters is that the binary and its libraries load.
usage=$("$(dirname "$0")/tritonserver.sh" --help 2>&1 || true)
if [[ "$usage" != *"Usage: tritonserver"* ]]; then
  echo "triton: tritonserver in $venv does not start" >&2
  exit 1
fi
echo "triton: $venv (nvidia-pytriton $PYTRITON_VERSION, tritonserver 2.51)"
