#!/usr/bin/env bash
# Makes the Python environment that tools/api-test/openai_client.py runs in: a venv with the
# official OpenAI client, pinned, so the API is checked against what real clients send and
# expect. Idempotent: a second run only checks the pin. Override the place with
# BANTER_API_TEST_VENV (default ~/.cache/banter-api-test/venv); the e2e test looks there too.
set -euo pipefail
OPENAI_VERSION="3.51.0"
venv="${BANTER_API_TEST_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/banter-api-test/venv}"
if [ ! -x "$venv/bin/python" ]; then
  mkdir -p "$(dirname "$venv")"
  python3 -m venv "$venv"
fi
have=$("$venv/bin/python" -c 'import openai; print(openai.__version__)' 2>/dev/null || true)
if [ "$have" != "$OPENAI_VERSION" ]; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "openai==$OPENAI_VERSION"
fi
echo "api-test: $venv (openai $("$venv/bin/python" -c 'import openai; print(openai.__version__)'))"
