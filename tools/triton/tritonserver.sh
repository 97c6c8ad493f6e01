#!/usr/bin/env bash
# Runs the `tritonserver` that tools/triton/setup.sh installed, with its libraries on the
# loader's path; every argument goes to tritonserver (see README, "Scaling out").
set -euo pipefail
venv="${BANTER_TRITON_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/banter-triton/venv}"
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
t="$site/pytriton/tritonserver"
if [ ! -x "$t/bin/tritonserver" ]; then
  echo "tritonserver is not installed in $venv: run tools/triton/setup.sh" >&2
  exit 1
fi
export LD_LIBRARY_PATH="$t/external_libs:$t/lib:$site/nvidia_pytriton.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
exec "$t/bin/tritonserver" "$@"
