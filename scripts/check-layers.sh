#!/usr/bin/env bash
# One-way layers (ARCHITECTURE.md), as dependency edges the compiler then enforces: kokoro and
# script at the bottom, the engine above them, the ui and app on top. The engine knows nothing
# of windows, HTTP or sound cards; the front ends talk to the model, candle and SQLite only
# through the engine's API. Fails if a forbidden crate appears where it must not.
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
# The model sits below the engine and knows no Banter crate: no scripts, database, phonemes,
# audio files, async runtime or front end.
check kokoro "" engine script rusqlite espeak-rs-sys symphonia tokio egui axum
# So does the second family, VITS (Piper voices), and what both share: the ONNX reader and
# the CPU kernels know no model, and neither family knows the other.
check vits "" engine kokoro script rusqlite espeak-rs-sys symphonia tokio egui axum
check kokoro "" vits
check onnx-proto "" engine kokoro vits candle-core
check kernels "" engine kokoro vits script rusqlite espeak-rs-sys
# The script parsers sit below the engine too: no model, database, audio or phoneme crate.
check script "" engine kokoro candle-core candle-nn rusqlite espeak-rs-sys symphonia tokio egui axum
# The normaliser is pure string work: it depends on no crate at all.
check text "" engine script kokoro candle-core rusqlite espeak-rs-sys tokio serde
# The front ends reach the model only through engine::Engine, which runs it on its one model
# thread: neither names kokoro, candle or SQLite (a crate cannot name what it does not depend
# on, so these edges are the whole rule), and the ui knows nothing of HTTP.
check ui 1 kokoro vits candle-core candle-nn rusqlite
check ui "" axum hyper
check app 1 kokoro vits candle-core candle-nn
# Triton: the protocol both ends share knows no Banter crate; the engine knows no gRPC (the
# transport implements the engine's SegmentServer from above); the backend reaches the model only
# through engine::Engine.
check triton-wire "" engine kokoro vits candle-core tokio tonic
check engine "" tonic prost triton-client
check triton-backend 1 kokoro vits candle-core candle-nn rusqlite
check ui "" tonic triton-client
[ $fail -eq 0 ] && echo "layers ok"
exit $fail
