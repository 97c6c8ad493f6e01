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
cargo test --workspace --profile test "$@"
