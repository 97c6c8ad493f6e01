#!/usr/bin/env bash
# The device side of a GPU check packed by gpu_pack.sh (which says how to call it):
#
#   bash tools/bench/gpu_remote.sh stash                 call 1: keeps .gpu/a in /tmp/gpu
#   STEPS="6 3 7" bash tools/bench/gpu_remote.sh run     call 2: assembles and runs gpu_check.sh
#
# GPU_REMOTE_SECS=N ends the check (skipping the steps left) N seconds after `run` starts, so
# a call's hard limit never cuts the report off.
# CANDLE_STEPS="3" also runs those steps with BANTER_CUDA_KERNELS=candle (an A/B of Banter's
# own CUDA kernels against candle's ops, same binary).
#
# `run` rebuilds the model store in /tmp/gpu/models (the ONNX from its two parts, checked
# against its sha256; af_heart and zero-filled placeholders for the other voices; `banter models
# fetch` then converts offline), unpacks the binaries, and runs tools/bench/gpu_check.sh on
# BANTER (and, where packed, on the baseline binary with BASELINE_STEPS, default "3"), writing
# everything under $OUT. Step 7, the PyTorch peer, runs from the carried wheels.
set -u
STASH=/tmp/gpu
OUT=${OUT:-/tmp/gpu/out}
case "${1:-}" in
stash)
  mkdir -p "$STASH" && cp -a .gpu/a/. "$STASH/" && ls -la "$STASH"
  nvidia-smi -L
  exit 0
  ;;
run) ;;
*) echo "usage: gpu_remote.sh stash|run" >&2; exit 2 ;;
esac
t0=$SECONDS
if [ ! -s "$STASH/onnx.xz.part-a" ]; then
  echo "gpu_remote: $STASH/onnx.xz.part-a is missing: the machine went back between the two calls; run both again" >&2
  exit 3
fi
unxz() { if command -v xz >/dev/null; then xz -dc; else python3 -c 'import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.stdin.buffer), sys.stdout.buffer)'; fi; }
M=$STASH/models
mkdir -p "$M/voices" "$M/ge2e" "$OUT"
cat "$STASH/onnx.xz.part-a" .gpu/b/onnx.xz.part-b | unxz > "$M/kokoro-v1.0.int8.onnx"
(cd "$M" && sha256sum -c "$OLDPWD/.gpu/b/onnx.sha256") || { echo "gpu_remote: the ONNX did not reassemble" >&2; exit 4; }
cp .gpu/b/vocab.json "$M/" && cp -a .gpu/b/ge2e/. "$M/ge2e/"
while read -r v; do
  if [ -e ".gpu/b/voices/$v.bin" ]; then cp ".gpu/b/voices/$v.bin" "$M/voices/"; else head -c 522240 /dev/zero > "$M/voices/$v.bin"; fi
done < .gpu/b/voice-names.txt
for b in banter baseline; do
  [ -e ".gpu/b/$b.xz" ] && unxz < ".gpu/b/$b.xz" > "$STASH/$b" && chmod +x "$STASH/$b"
done
CUDA_LIB=$(ls -d /usr/local/cuda-13*/targets/x86_64-linux/lib 2>/dev/null | head -1)
export LD_LIBRARY_PATH="${CUDA_LIB:+$CUDA_LIB:}$PWD/.gpu/b/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ldd "$STASH/banter" | grep 'not found'; then echo "gpu_remote: libraries missing (above)" >&2; exit 5; fi
"$STASH/banter" models fetch --models "$M" 2>&1 | tail -3
echo "gpu_remote: ready in $((SECONDS - t0)) s"

export PEER_SITE=/tmp/site
python3 -m pip install -q --no-index --no-deps --no-compile --target "$PEER_SITE" .gpu/b/peer/*.whl 2>&1 | tail -2
export PEER_TOKENS=$PWD/.gpu/b/peer/tokens.json PEER_MAP=$PWD/.gpu/b/peer/kokoro_map.py

# GPU_REMOTE_SECS: the whole call's budget; what the set-up above took comes off gpu_check.sh's.
[ -n "${GPU_REMOTE_SECS:-}" ] && export GPU_CHECK_SECS=$((GPU_REMOTE_SECS - (SECONDS - t0)))
STEPS=${STEPS:-6 1 2 3 4 5 7} bash tools/bench/gpu_check.sh "$STASH/banter" "$M" "$OUT/new"
if [ -n "${CANDLE_STEPS:-}" ]; then
  echo; echo "######## the same binary with BANTER_CUDA_KERNELS=candle (candle's ops instead of Banter's kernels)"
  BANTER_CUDA_KERNELS=candle STEPS=$CANDLE_STEPS bash tools/bench/gpu_check.sh "$STASH/banter" "$M" "$OUT/candle"
fi
if [ -x "$STASH/baseline" ] && [ -n "${BASELINE_STEPS-3}" ]; then
  echo; echo "######## baseline binary"
  STEPS=${BASELINE_STEPS:-3} bash tools/bench/gpu_check.sh "$STASH/baseline" "$M" "$OUT/baseline"
fi
echo "gpu_remote: done in $((SECONDS - t0)) s"
