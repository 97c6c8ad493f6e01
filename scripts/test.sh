#!/usr/bin/env bash
# The whole test suite, exactly what CI runs (.ci/run calls this):
# formatting, one-way layering, clippy with warnings as errors, the model fetch, and every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
cargo fmt --all -- --check
scripts/check-layers.sh
cargo clippy --workspace --all-targets --profile test -- -D warnings
# Tests against the real model need the assets; fetch them once (a second run does nothing).
cargo run -q --profile test -p app -- models fetch
# The API tests drive `banter serve` with the official OpenAI Python client; make its venv.
tools/api-test/setup.sh
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
cargo test --workspace --profile test "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
# One closing line for the whole run (cargo prints one per test binary, the last often a doc-test
# binary with nothing in it).
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed;/) p += $i; if ($(i+1) ~ /^failed;/) f += $i } }
     END { printf "summary: %d passed, %d failed\n", p, f }' "$log"
exit "$status"
