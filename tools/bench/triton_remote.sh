#!/usr/bin/env bash
# Remote against local in one run: the bundled episode rendered by `banter` on this machine and
# through one tritonserver serving the Banter backend (same machine, loopback gRPC), remotely
# both with the sentences rendered ahead (the default: the servers' slots) and one at a time
# (BANTER_RENDER_AHEAD=1, as before they were), then lone first audio (TTFA) of `banter serve`
# local and `banter serve --engine triton://…`.
# Release builds; tritonserver from tools/triton/setup.sh. Prints seconds, xRT, whether the two
# renders are byte-identical, and each TTFA series (tools/bench/lone.py).
#
#   tools/bench/triton_remote.sh [INSTANCES]     (model instances in the server, default 1)
set -euo pipefail
cd "$(dirname "$0")/../.."
instances=${1:-1}
cargo build -q --release -p app -p triton-backend
tools/triton/setup.sh >/dev/null
banter=target/release/banter
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
$banter triton repo "$work/repo" --instances "$instances" >/dev/null
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
grpc=$(port); http=$(port); metrics=$(port)
tools/triton/tritonserver.sh --model-repository "$work/repo/models" \
  --backend-directory "$work/repo/backends" --grpc-port "$grpc" --http-port "$http" \
  --metrics-port "$metrics" --allow-gpu-metrics=false >"$work/triton.log" 2>&1 &
for _ in $(seq 1 120); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "127.0.0.1:$http/v2/health/ready")" = 200 ] && break
  sleep 0.5
done
engine="triton://127.0.0.1:$grpc"
episode=assets/examples/episode.md
for where in local remote remote-one-at-a-time; do
  flags=(); [ "$where" != local ] && flags=(--engine "$engine")
  ahead=(); [ "$where" = remote-one-at-a-time ] && ahead=(BANTER_RENDER_AHEAD=1)
  # one warm-up so both sides run with warm caches and a loaded model
  env "${ahead[@]}" $banter render "$episode" -o "$work/warm.wav" --no-cache --captions none "${flags[@]}" >/dev/null 2>&1
  start=$(date +%s.%N)
  env "${ahead[@]}" $banter render "$episode" -o "$work/$where.wav" --no-cache --captions words "${flags[@]}" 2>"$work/$where.err" >/dev/null
  end=$(date +%s.%N)
  echo "$where render: $(python3 -c "print(f'{$end - $start:.2f}')") s; $(tail -1 "$work/$where.err")"
done
if cmp -s "$work/local.wav" "$work/remote.wav" && cmp -s "$work/local.vtt" "$work/remote.vtt"; then
  echo "remote render: byte-identical to local (audio and word captions)"
else
  echo "remote render: DIFFERS from local"
fi
# (whole outputs kept: lone.py also prints the server's metrics, which `| head` would cut off
# with a broken pipe)
python3 tools/bench/lone.py "$banter" >"$work/lone-local.txt"
python3 tools/bench/lone.py "$banter" --engine "$engine" >"$work/lone-remote.txt"
echo "lone TTFA, local:  $(head -1 "$work/lone-local.txt")"
echo "lone TTFA, remote: $(head -1 "$work/lone-remote.txt")"
