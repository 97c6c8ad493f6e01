#!/usr/bin/env bash
# Builds Banter's Debian package: the release binary (`cargo build --release -p app`, the same
# build scripts/run.sh makes, so an existing one is reused), then the .deb with cargo-deb from
# the `[package.metadata.deb]` table in app/Cargo.toml, into target/debian/ of this checkout.
# Prints the package's path as its last line.
#   packaging/build-deb.sh            # then: sudo apt install ./target/debian/banter_*.deb
# Installs what it needs the first time: cargo-deb (pinned below, from crates.io through
# `cargo install`) and dpkg-dev (dpkg-shlibdeps, which computes the shared-library dependencies).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
CARGO_DEB_VERSION=3.8.0

if ! command -v dpkg-shlibdeps >/dev/null; then
  echo "build-deb: installing Debian package dpkg-dev (dpkg-shlibdeps)" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq dpkg-dev >/dev/null
fi
if [ "$(cargo deb --version 2>/dev/null)" != "cargo-deb $CARGO_DEB_VERSION" ]; then
  echo "build-deb: installing cargo-deb $CARGO_DEB_VERSION (once, a few minutes)" >&2
  # Its own build directory: a CARGO_TARGET_DIR shared with the project would hold cargo's lock.
  env -u CARGO_TARGET_DIR cargo install cargo-deb --version "$CARGO_DEB_VERSION" --locked --quiet
fi

# Build first with plain cargo so the binary is exactly the release build everyone else makes
# (same profile, same flags, reused when it is up to date); cargo-deb then only packages it.
cargo build --release --locked -p app
mkdir -p target/debian
# --strip: the release profile keeps line tables (debug = 1) for backtraces during development;
# the package ships the binary without them (about 130 MB -> 15 MB).
cargo deb -p app --no-build --strip --output "$root/target/debian/" >&2
version=$(cargo metadata --format-version 1 --no-deps --locked |
  python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "app"))')
deb=$(ls -t "$root"/target/debian/banter_"$version"-*_*.deb | head -n 1)
echo "build-deb: $(du -h "$deb" | cut -f1) $(dpkg-deb -f "$deb" Package Version Architecture | tr '\n' ' ')" >&2
echo "$deb"
