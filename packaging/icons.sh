#!/usr/bin/env bash
# Renders the application icon's PNGs from its SVG source, assets/icons/banter.svg, into
# assets/icons/hicolor/SIZExSIZE/apps/io.github.banter.Banter.png (the hicolor theme's layout; the
# SVG itself is installed as the scalable icon). The PNGs are committed: building the package
# does not need this script or its tool; run it again after editing the SVG.
# Tool: rsvg-convert (Debian package librsvg2-bin), installed here if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v rsvg-convert >/dev/null; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq librsvg2-bin >/dev/null
fi
src=assets/icons/banter.svg
id=io.github.banter.Banter
for size in 16 32 48 64 128 256 512; do
  dir="assets/icons/hicolor/${size}x${size}/apps"
  mkdir -p "$dir"
  rsvg-convert --width "$size" --height "$size" --format png "$src" --output "$dir/$id.png"
done
echo "icons: rendered $(find assets/icons/hicolor -name "$id.png" | wc -l) PNGs from $src"
