#!/usr/bin/env bash
# Licences and duplicate dependencies of what ships, offline: `cargo metadata` reads the lock
# file (no registry, no advisory database) and scripts/check-deps.py says why each rule exists.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo metadata --format-version 1 --locked --filter-platform x86_64-unknown-linux-gnu | scripts/check-deps.py
