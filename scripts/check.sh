#!/usr/bin/env bash
# The fast local check, for every commit: formatting, layering, licences and duplicates,
# clippy with warnings as errors, every crate's unit tests, and the docs with warnings denied.
# Minutes on a warm build; no model, no network. scripts/test.sh stays exactly what CI runs
# (this, plus the model fetch, the integration and end-to-end tests and the packaged .deb).
set -euo pipefail
cd "$(dirname "$0")/.."
step() { echo "==== $*"; }
step fmt;      cargo fmt --all -- --check
step layers;   scripts/check-layers.sh
step deps;     scripts/check-deps.sh
step clippy;   cargo clippy --workspace --all-targets --profile test -- -D warnings
step unit;     cargo test --workspace --lib --bins --profile test -q
# Docs are for the people who change the code, so private items are documented too (and links
# to them resolve there; the lint about public docs naming private items is therefore off).
step doc
RUSTDOCFLAGS="-D warnings -A rustdoc::private_intra_doc_links" \
  cargo doc --workspace --no-deps --document-private-items --profile test -q
echo "check ok"
