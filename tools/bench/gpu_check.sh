#!/usr/bin/env bash
# CUDA parity and speed of a `--features cuda` banter (scripts/build-cuda.sh), in one run on a
# GPU machine that has no Rust: the binary is built elsewhere and carried there.
#
#   tools/bench/gpu_check.sh BANTER MODELS OUTDIR
#
# MODELS is a complete model folder (`banter models fetch --models MODELS` run there first).
# Prints, and writes to OUTDIR/gpu_check.txt:
#   1. the whole-process start (`say "Hi."`) on cuda and on the CPU, with peak RSS;
#   2. parity: the bench passages rendered on cuda against the f32 CPU port, as SNR in dB
#      (the same measure the bf16 paths are held to: >= 30 dB), and the CPU's default
#      precision against the same f32 reference for scale;
#   3. speed: `banter bench synth --no-peer` on cuda and on the CPU (xRT per passage);
#   4. `banter bench batch` on cuda: whether batching encoders pays there (the scheduler
#      batches 8 on CUDA on that assumption);
#   5. lone first audio through `banter serve --device cuda`, windowed and whole-segment;
#   6. `banter bench parity --device cuda`: the model stage by stage against the f32 CPU port
#      (whole-pass and windowed SNR ~107 dB when the two agree);
#   7. the peer: the reference Kokoro in PyTorch (kokoro_torch_peer.py) on the same GPU, one
#      stream and eight (needs PEER_SITE, PEER_MAP, PEER_TOKENS: gpu_remote.sh sets them);
#   8. capacity: tools/bench/load.py against `serve --device cuda` (RATES, default 1..16/s).
#   9. `banter bench parity --device cuda --batch N --copies 4` (N = 1, 8, 32, 64): the
#      streaming windows of the passages' segments four times over, decoded in one generator
#      pass N at a time against each alone (>= 100 dB per window), and both timings: the
#      offline audio-seconds per second at each batch size, and whether window batches pay
#      (BANTER_WINDOW_BATCH stays 1 until they do), and whether the repeated run took memory from
#      the driver (the pools' reserved bytes). BANTER_PRECISION=tf32 then repeats N = 32
#      with TF32 products (its SNR says how far they drift).
#      Then N = 32 and 64 with BANTER_CUDA_GRAPHS=1: each batched shape captured as a CUDA graph
#      on its second pass and replayed after (the "again:" line is the replayed run, with the
#      number of graphs ready; a graph whose replay differs from its eager pass is dropped
#      with a warning).
#  10. capacity again with window batches (BANTER_WINDOW_BATCH=${WINDOW_BATCH:-32}) at higher
#      rates (RATES10, default 32..160/s) and more requests, with issue 41's bound (TTFA p99 <=
#      TTFA_LIMIT, default 0.3 s): how many real-time listeners (load.py's "live" column: the
#      most streams between their request and their last byte at once).
#  11. step 10 with CUDA graphs (BANTER_CUDA_GRAPHS=1).
# Before each step's header: the peak GPU memory in use during the step before it.
# STEPS="1 2" (say) runs a subset; DEVICES="cuda" limits step 3 to the GPU.
# Each step is bounded by `timeout` so one stuck step cannot eat the machine's time.
set -u
BANTER=$(realpath "$1") MODELS=$(realpath "$2") OUTDIR=$3
mkdir -p "$OUTDIR"
exec > >(tee "$OUTDIR/gpu_check.txt") 2>&1
cd "$(dirname "$0")/../.."
export BANTER_MODEL_DIR=$MODELS BANTER_NO_FETCH=1
BANTER_CONFIG_DIR=$(mktemp -d) BANTER_LIBRARY=$(mktemp -d)/library.sqlite
export BANTER_CONFIG_DIR BANTER_LIBRARY
WORK=$(mktemp -d)
# Peak GPU memory per step: nvidia-smi samples every 250 ms in the background; each step's
# header is preceded by the peak the step before it reached (every process on the GPU).
MEMLOG="$OUTDIR/gpu_mem.log"
: > "$MEMLOG"
nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 250 >> "$MEMLOG" 2>/dev/null &
MEMPID=$!
trap 'kill "$MEMPID" 2>/dev/null' EXIT
MEMSEEN=0
peak() {
  local n; n=$(wc -l < "$MEMLOG")
  if (( n > MEMSEEN )); then
    echo "   (peak GPU memory in use during the step: $(tail -n +$((MEMSEEN + 1)) "$MEMLOG" | sort -n | tail -1) MiB)"
  fi
  MEMSEEN=$n
}
step() { peak; echo; echo "== $* ($(date +%T), $((SECONDS)) s in)"; }
# A command's timeout: at most $1 seconds, and never past the run's end (GPU_CHECK_SECS).
tt() {
  local s=$1
  if [ -n "${GPU_CHECK_SECS:-}" ]; then
    local left=$((GPU_CHECK_SECS - SECONDS - 3))
    (( left < s )) && s=$left
  fi
  (( s < 1 )) && s=1
  echo "$s"
}
# Sockets for hundreds of concurrent streams (the load generator and the server each hold one).
ulimit -n "$(ulimit -Hn)" 2>/dev/null

step machine
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
echo "cpu: $(nproc) × $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"

s6() {
step "6. bench parity: stage by stage against the f32 CPU port"
timeout $(tt 300) "$BANTER" bench parity --device cuda 2>&1
}

s9() {
step "9. bench parity --batch: windows of several segments in one pass against each alone"
for n in ${BATCHES:-1 8 32 64}; do
  echo "-- batch $n"
  timeout $(tt 300) "$BANTER" bench parity --device cuda --batch "$n" --copies "${COPIES:-4}" 2>&1 | tail -6
done
echo "-- batch 32, BANTER_PRECISION=tf32"
BANTER_PRECISION=tf32 timeout $(tt 300) "$BANTER" bench parity --device cuda --batch 32 --copies "${COPIES:-4}" 2>&1 | tail -6
for n in 32 64; do
  echo "-- batch $n, BANTER_CUDA_GRAPHS=1"
  BANTER_CUDA_GRAPHS=1 timeout $(tt 300) "$BANTER" bench parity --device cuda --batch "$n" --copies "${COPIES:-4}" 2>&1 \
    | grep -E "CUDA graph|^(alone|batched|again|device memory|lowest)" | tail -12
done
}

s1() {
step "1. start: say Hi. (whole process)"
for dev in cuda cpu; do
  for run in 1 2; do
    /usr/bin/time -f "$dev run $run: %e s wall, peak RSS %M KB" \
      timeout $(tt 120) "$BANTER" say --device "$dev" -o "$WORK/hi-$dev.wav" "Hi." 2>&1 | grep -v '^\s*$' | tail -3
  done
done
}

s2() {
step "2. parity against the f32 CPU port"
# Whole renders drift apart sample by sample even between two correct ports: the source's
# phase reaches 1e4–1e5 rad, so any F0 rounding shifts every later waveform sample (the CPU's
# own bf16 path scores ~0 dB SNR against f32 here, while its stage goldens score 38–42 dB).
# So parity is the log-mel distance of the renders (band energies, phase-blind, frames matched within ±0.4 s),
# with the CPU's default precision against f32 for scale; the renders come back in
# OUTDIR/renders.tar for the judge (Whisper WER, GE2E similarity) on another machine.
PASSAGES="welcome three-sentences paragraph long"
for p in $PASSAGES; do
  BANTER_PRECISION=f32 timeout $(tt 300) "$BANTER" say --device cpu -o "$WORK/$p-f32.wav" - < "assets/passages/$p.txt" >/dev/null 2>&1
  timeout $(tt 300) "$BANTER" say --device cpu -o "$WORK/$p-cpu.wav" - < "assets/passages/$p.txt" >/dev/null 2>&1
  timeout $(tt 300) "$BANTER" say --device cuda -o "$WORK/$p-cuda.wav" - < "assets/passages/$p.txt" >/dev/null 2>&1
done
(cd "$WORK" && tar -cf "$OUTDIR/renders.tar" ./*-f32.wav ./*-cpu.wav ./*-cuda.wav)
python3 - "$WORK" $PASSAGES <<'EOF'
import sys, wave, numpy as np
work, passages = sys.argv[1], sys.argv[2:]
def read(path):
    with wave.open(path) as w:
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float64) / 32768
def log_spectrum(x, n=1024, hop=256, bands=40, sr=24000):
    """Log-mel energies in dB: bands wide enough that a slightly different F0 (its
    harmonics a bin over) does not count as a different sound."""
    frames = np.lib.stride_tricks.sliding_window_view(x, n)[::hop] * np.hanning(n)
    power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
    mel = lambda f: 2595 * np.log10(1 + f / 700)
    edges = 700 * (10 ** (np.linspace(mel(50), mel(sr / 2), bands + 2) / 2595) - 1)
    freqs = np.fft.rfftfreq(n, 1 / sr)
    fb = np.array([np.clip(np.minimum((freqs - lo) / (mid - lo), (hi - freqs) / (hi - mid)), 0, None)
                   for lo, mid, hi in zip(edges, edges[1:], edges[2:])])
    return 10 * np.log10(power @ fb.T + 1e-10)
for p in passages:
    ref = read(f"{work}/{p}-f32.wav")
    for other in ["cuda", "cpu"]:
        try:
            x = read(f"{work}/{p}-{other}.wav")
        except Exception as e:
            print(f"{p:16} {other:5} missing ({e})")
            continue
        n = min(len(x), len(ref))
        a, b = log_spectrum(ref), log_spectrum(x)
        # A duration rounded the other way shifts every later frame: each frame of the
        # reference is compared with the nearest-sounding frame within ±0.4 s of it.
        k = 40
        m = min(len(a), len(b))
        bp = np.pad(b, ((k, k + max(0, m - len(b))), (0, 0)), constant_values=-100)
        dist = np.stack([np.sqrt(((a[:m] - bp[s:s + m]) ** 2).mean(axis=1)) for s in range(2 * k + 1)])
        loud = a[:m].max(axis=1) > a.max() - 60  # frames within 60 dB of the loudest
        lsd = dist.min(axis=0)[loud].mean()
        snr = 10 * np.log10(np.sum(ref[:n] ** 2) / max(np.sum((ref[:n] - x[:n]) ** 2), 1e-20))
        print(f"{p:16} {other:5} vs f32 CPU: {len(x) / 24000:6.2f} s (f32 {len(ref) / 24000:.2f} s), "
              f"log-mel distance {lsd:4.2f} dB, waveform SNR {snr:5.1f} dB")
EOF
}

s3() {
step "3. speed: bench synth, no peer"
for dev in ${DEVICES:-cuda cpu}; do
  echo "-- $dev"
  timeout $(tt 240) "$BANTER" bench synth --no-peer --runs "${RUNS:-3}" --device "$dev" assets/passages/{welcome,three-sentences,paragraph,long}.txt 2>&1 | tail -12
done
}

s4() {
step "4. bench batch on cuda"
timeout $(tt 120) "$BANTER" bench batch --device cuda 2>&1 | tail -8
}

s5() {
step "5. lone first audio through serve --device cuda"
timeout $(tt 120) python3 tools/bench/lone.py "$BANTER" --device cuda 2>&1 | grep -v _count
timeout $(tt 120) python3 tools/bench/lone.py "$BANTER" --device cuda --whole-segments 2>&1 | grep -v _count
}

s7() {
step "7. peer: the reference Kokoro (PyTorch eager f32) on the same GPU, same token windows"
# Needs PEER_SITE (the `kokoro` 0.9.4 and loguru wheels installed with --target), PEER_MAP
# (shared tools/kokoro-ref/kokoro_map.py) and PEER_TOKENS (peer_tokens.py output); gpu_remote.sh
# sets all three. One stream, then 8 streams at once (one CUDA stream per Python thread).
for n in 1 8; do
  PYTHONPATH="${PEER_SITE:-}" timeout $(tt 300) python3 tools/bench/kokoro_torch_peer.py --kokoro-src "${PEER_SITE:-}" \
    --kokoro-map "${PEER_MAP:-}" --model-dir "$MODELS" --tokens "${PEER_TOKENS:-}" \
    --npz "$WORK/../kokoro_ref_f32.npz" --device cuda --runs 2 --streams $n 2>&1 | grep -v Warning
done
}

s8() {
step "8. capacity: open-loop load through serve --device cuda"
timeout "$(tt "${LOAD_TIMEOUT:-300}")" python3 tools/bench/load.py --banter "$BANTER" --targets banter --serve-args "--device cuda" \
  --rates "${RATES:-1,2,4,8,12,16}" --secs "${LOAD_SECS:-10}" --max-requests 60 --past 1 --pause 1 \
  --out "$OUTDIR/load.json" 2>&1 | tail -20
}

s10() {
step "10. capacity with window batches (BANTER_WINDOW_BATCH=${WINDOW_BATCH:-32})"
BANTER_WINDOW_BATCH=${WINDOW_BATCH:-32} timeout "$(tt "${LOAD_TIMEOUT:-300}")" python3 tools/bench/load.py --banter "$BANTER" \
  --targets banter --serve-args "--device cuda" --rates "${RATES10:-32,64,96,128,160}" --secs "${LOAD_SECS:-10}" \
  --max-requests "${MAX_REQUESTS10:-1600}" --max-queue 4096 --ttfa-limit "${TTFA_LIMIT:-0.3}" --past 1 --pause 1 --out "$OUTDIR/load-batched.json" 2>&1 | tail -20
}

s11() {
step "11. capacity with window batches and CUDA graphs (BANTER_CUDA_GRAPHS=1)"
BANTER_CUDA_GRAPHS=1 BANTER_WINDOW_BATCH=${WINDOW_BATCH:-32} timeout "$(tt "${LOAD_TIMEOUT:-300}")" python3 tools/bench/load.py \
  --banter "$BANTER" --targets banter --serve-args "--device cuda" --rates "${RATES10:-32,64,96,128,160}" \
  --secs "${LOAD_SECS:-10}" --max-requests "${MAX_REQUESTS10:-1600}" --max-queue 4096 --ttfa-limit "${TTFA_LIMIT:-0.3}" --past 1 --pause 1 \
  --out "$OUTDIR/load-graphs.json" 2>&1 | tail -20
}

for s in ${STEPS:-6 9 1 2 3 4 5 7}; do
  if [ -n "${GPU_CHECK_SECS:-}" ] && (( GPU_CHECK_SECS - SECONDS < 20 )); then
    echo; echo "== $s skipped: $((GPU_CHECK_SECS - SECONDS)) s left of GPU_CHECK_SECS=$GPU_CHECK_SECS"
    continue
  fi
  "s$s"
done
step done

