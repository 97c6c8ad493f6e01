#!/usr/bin/env bash
# One-way layers (ARCHITECTURE.md): the engine knows nothing of windows, HTTP or sound cards; the
# ui knows nothing of candle, axum or SQLite. Fails if a forbidden crate appears in a dependency tree.
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0
check() {
  local crate=$1; shift
  local tree; tree=$(cargo tree -p "$crate" -e normal --prefix none --format '{p}' 2>/dev/null | awk '{print $1}' | sort -u)
  for bad in "$@"; do
    if grep -qx "$bad" <<<"$tree"; then echo "layering: $crate must not depend on $bad" >&2; fail=1; fi
  done
}
check engine egui eframe winit axum hyper cpal rodio
check ui candle-core candle-nn axum rusqlite
[ $fail -eq 0 ] && echo "layers ok"
exit $fail
