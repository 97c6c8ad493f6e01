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
# The script parsers sit below the engine: no model, database, audio or phoneme crate, and no
# Banter crate at all (the compiler keeps `script` from naming the engine: it has no edge to it).
check script "" engine candle-core candle-nn rusqlite espeak-rs-sys symphonia tokio egui axum
check ui 1 candle-core candle-nn rusqlite
check ui "" axum hyper
if grep -rqE '\b(candle_core|candle_nn|rusqlite|axum)::' ui/src; then
  echo "layering: ui/src names candle, rusqlite or axum directly" >&2; fail=1
fi
# The model runs on the engine's model thread alone: the type system keeps `Synthesizer`
# crate-private (and not `Send`), and the model's stages (`engine::kokoro`) are public only with
# the engine's `testing` feature, which nothing that ships may turn on or name.
if grep -rqE 'engine::kokoro|features *= *\[[^]]*"testing"' app/src app/Cargo.toml ui/src ui/Cargo.toml; then
  echo "layering: app or ui reaches into the model (engine::kokoro / the testing feature); use engine::Engine" >&2; fail=1
fi
if cargo tree -p app -e features --prefix none 2>/dev/null | grep -q 'engine feature "testing"'; then
  echo "layering: the shipped binary is built with engine's testing feature" >&2; fail=1
fi
[ $fail -eq 0 ] && echo "layers ok"
exit $fail
