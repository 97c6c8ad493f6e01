#!/usr/bin/env bash
# One-way layers (ARCHITECTURE.md): the engine knows nothing of windows, HTTP or sound cards; the
# ui talks to candle and SQLite only through the engine's API (its own direct dependencies never
# name them) and knows nothing of HTTP. Fails if a forbidden crate appears where it must not.
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0
deps() { # crate, depth (empty = whole tree)
  local depth=()
  [ -n "$2" ] && depth=(--depth "$2")
  cargo tree -p "$1" -e normal "${depth[@]}" --prefix none --format '{p}' 2>/dev/null | awk '{print $1}' | sort -u
}
check() {
  local crate=$1 depth=$2; shift 2
  local tree; tree=$(deps "$crate" "$depth")
  for bad in "$@"; do
    if grep -qx "$bad" <<<"$tree"; then echo "layering: $crate must not depend on $bad" >&2; fail=1; fi
  done
}
check engine "" egui eframe winit axum hyper cpal rodio
check ui 1 candle-core candle-nn rusqlite
check ui "" axum hyper
if grep -rqE '\b(candle_core|candle_nn|rusqlite|axum)::' ui/src; then
  echo "layering: ui/src names candle, rusqlite or axum directly" >&2; fail=1
fi
[ $fail -eq 0 ] && echo "layers ok"
exit $fail
