#!/usr/bin/env bash
# Makes the Python environment that tools/api-test/openai_client.py, elevenlabs_client.py and
# ws_clients.py run in: a venv with the official OpenAI client, the ElevenLabs SDK (its HTTP
# calls), pipecat (its ElevenLabs WebSocket TTS service) and websockets, pinned, so the API is
# checked against what real clients send and expect.
# Idempotent: a second run only checks the pins. Override the place with BANTER_API_TEST_VENV
# (default ~/.cache/banter-api-test/venv); the e2e tests look there too.
set -euo pipefail
OPENAI_VERSION="3.51.0"
PIPECAT_VERSION="1.14.0"     # pipecat-ai, no extras: the ElevenLabs service needs none
WEBSOCKETS_VERSION="17.4"
ELEVENLABS_VERSION="2.78.0"   # the ElevenLabs SDK's HTTP calls (elevenlabs_client.py)
# the metrics page is checked with the Prometheus client's own parsers (metrics_check.py)
PROMETHEUS_CLIENT_VERSION="0.26.0"
venv="${BANTER_API_TEST_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/banter-api-test/venv}"
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "api-test: pipecat-ai $PIPECAT_VERSION and websockets $WEBSOCKETS_VERSION need Python >= 3.11" >&2
  exit 1
fi
if [ ! -x "$venv/bin/python" ]; then
  mkdir -p "$(dirname "$venv")"
  python3 -m venv "$venv"
fi
versions() {
  "$venv/bin/python" - <<'EOF' 2>/dev/null || true
from importlib.metadata import version
print(" ".join(version(p) for p in ("openai", "pipecat-ai", "websockets", "prometheus-client", "elevenlabs")))
EOF
}
want="$OPENAI_VERSION $PIPECAT_VERSION $WEBSOCKETS_VERSION $PROMETHEUS_CLIENT_VERSION $ELEVENLABS_VERSION"
if [ "$(versions)" != "$want" ]; then
  # One resolver run for all pins, so pipecat's own requirements cannot move openai off its pin.
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "openai==$OPENAI_VERSION" "pipecat-ai==$PIPECAT_VERSION" "websockets==$WEBSOCKETS_VERSION" \
    "prometheus-client==$PROMETHEUS_CLIENT_VERSION" "elevenlabs==$ELEVENLABS_VERSION"
fi
have=$(versions)
if [ "$have" != "$want" ]; then
  echo "api-test: $venv has openai/pipecat-ai/websockets/prometheus-client/elevenlabs $have, wanted $want" >&2
  exit 1
fi
echo "api-test: $venv (openai $OPENAI_VERSION, pipecat-ai $PIPECAT_VERSION, websockets $WEBSOCKETS_VERSION, prometheus-client $PROMETHEUS_CLIENT_VERSION, elevenlabs $ELEVENLABS_VERSION)"
