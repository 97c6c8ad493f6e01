#!/usr/bin/env bash
# Packs what a GPU check needs on a device machine that has no Rust, no network and no model,
# into two carry folders, each small enough for one device call (a call carries at most 64 MiB,
# the working tree included):
#
#   tools/bench/gpu_pack.sh BANTER [BASELINE_BANTER]      (writes .gpu/a and .gpu/b)
#
# then, on the device, two calls back to back (the machine stays warm ~30 s between them):
#   call 1, carry [".gpu/a"]:  bash tools/bench/gpu_remote.sh stash
#   call 2, carry [".gpu/b"]:  STEPS="6 3 7" bash tools/bench/gpu_remote.sh run
#
# .gpu/a: the first part of the int8 ONNX (xz). .gpu/b: its second part, the stripped binaries
# (xz), libasound (the one system library the binary links that a CUDA image may lack), the one
# checksummed voice (af_heart; the other 53 become zero-filled placeholders there, so the store
# counts as complete), vocab.json, the GE2E weights, and the torch peer's inputs: the reference
# `kokoro` wheel and loguru (PyPI), the shared kokoro_map.py, and the token windows kokoro-onnx
# sends for each bench passage (tools/bench/peer_tokens.py, from the kokoro-onnx peer venv).
# Needs: xz, objcopy, python3 with pip (for the two wheels), a peer venv with kokoro-onnx
# ($PEER_PY, default /work/peer-venv/bin/python) and the shared tools ($SHARED, default ../shared).
set -euo pipefail
cd "$(dirname "$0")/../.."
BANTER=$1 BASELINE=${2:-}
MODELS=${BANTER_MODEL_DIR:-$HOME/.local/share/banter/models}
PEER_PY=${PEER_PY:-/work/peer-venv/bin/python}
SHARED=${SHARED:-$(realpath ../shared)}
LIMIT=$((64 * 1024 * 1024))
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
rm -rf .gpu/a .gpu/b && mkdir -p .gpu/a .gpu/b/voices .gpu/b/ge2e .gpu/b/lib .gpu/b/peer

pack_bin() { # BINARY NAME
  objcopy --strip-all "$1" ".gpu/$2.tmp"
  xz -T2 -9e -c ".gpu/$2.tmp" > ".gpu/b/$2.xz"
  rm ".gpu/$2.tmp"
}
pack_bin "$BANTER" banter
[ -n "$BASELINE" ] && pack_bin "$BASELINE" baseline
cp "$(ldconfig -p | awk '/libasound.so.2 .*x86-64/ {print $NF; exit}')" .gpu/b/lib/
cp "$MODELS/vocab.json" .gpu/b/
cp "$MODELS/voices/af_heart.bin" .gpu/b/voices/
(cd "$MODELS/voices" && ls ./*.bin | sed 's|^\./||; s|\.bin$||') > .gpu/b/voice-names.txt
cp -a "$MODELS/ge2e/." .gpu/b/ge2e/
(cd "$MODELS" && sha256sum kokoro-v1.0.int8.onnx) > .gpu/b/onnx.sha256

# Peer inputs.
python3 -m pip download -q --no-deps -d .gpu/b/peer kokoro==0.9.4 loguru==0.7.3
cp "$SHARED/tools/kokoro-ref/kokoro_map.py" .gpu/b/peer/
"$PEER_PY" tools/bench/peer_tokens.py --voice af_heart assets/passages/{welcome,three-sentences,paragraph,long}.txt \
  > .gpu/b/peer/tokens.json

# The model, compressed once and cached beside the store's file.
XZ=/tmp/banter-gpu-onnx.xz
if [ ! -s "$XZ" ] || [ "$MODELS/kokoro-v1.0.int8.onnx" -nt "$XZ" ]; then
  xz -T2 -9e -c "$MODELS/kokoro-v1.0.int8.onnx" > "$XZ.tmp" && mv "$XZ.tmp" "$XZ"
fi
tree=$(git ls-files -z | xargs -0 stat -c %s 2>/dev/null | awk '{s+=$1} END {print s}')
tree=$((tree + $(git ls-files -z --others --exclude-standard | xargs -0 -r stat -c %s | awk '{s+=$1} END {print s+0}')))
rest_b=$(du -sb .gpu/b | cut -f1)
room_a=$((LIMIT - tree - 2 * 1024 * 1024))
size=$(stat -c %s "$XZ")
first=$(( size < room_a ? size : room_a ))
head -c "$first" "$XZ" > .gpu/a/onnx.xz.part-a
tail -c +"$((first + 1))" "$XZ" > .gpu/b/onnx.xz.part-b
for d in a b; do
  total=$((tree + $(du -sb ".gpu/$d" | cut -f1)))
  echo "call $d carries $(du -sh ".gpu/$d" | cut -f1) (+ working tree $((tree / 1048576)) MiB) = $((total / 1048576)) MiB of 64"
  [ "$total" -lt "$LIMIT" ] || { echo "gpu_pack: call $d is over the 64 MiB limit" >&2; exit 1; }
done
: "$rest_b"
