#!/usr/bin/env bash
# The demo behind `make demo`: generate sample images, inspect them, convert between formats,
# and show how a broken file is reported. Everything runs on embedded defaults, offline.
set -euo pipefail
BIN=${1:-.build/debug/magpie}
OUT=${DEMO_OUT:-demo-output}
rm -rf "$OUT"
mkdir -p "$OUT"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

step "1. Generate sample images (Magpie's own encoders)"
run "$BIN" samples --out "$OUT"

step "2. Inspect them (header only, then a full decode of every frame)"
run "$BIN" info "$OUT"/*.jpg "$OUT"/*.png "$OUT"/*.gif "$OUT"/*.webp
run "$BIN" info --decode --json "$OUT/spinner.gif"

step "3. Convert between formats"
run "$BIN" convert "$OUT/landscape.jpg" "$OUT/landscape-from-jpeg.webp" --quality 80
run "$BIN" convert "$OUT/landscape.webp" "$OUT/landscape-from-webp.png"
run "$BIN" convert "$OUT/badge.png" "$OUT/badge.webp" --lossless
run "$BIN" convert "$OUT/badge.png" "$OUT/badge-on-white.jpg" --quality 90
run "$BIN" convert "$OUT/spinner.gif" "$OUT/spinner.webp"
run "$BIN" convert "$OUT/portrait-exif6.jpg" "$OUT/portrait-upright.png"
run "$BIN" info "$OUT"/landscape-from-* "$OUT"/badge.webp "$OUT"/badge-on-white.jpg "$OUT"/spinner.webp "$OUT"/portrait-upright.png

step "4. Bad input gets a clear error and exit status 1, never a crash"
head -c 3000 "$OUT/landscape.jpg" > "$OUT/cut-short.jpg"
printf 'this is not an image' > "$OUT/not-an-image.png"
set +e
"$BIN" info --decode "$OUT/cut-short.jpg" "$OUT/not-an-image.png" "$OUT/badge.png"
status=$?
set -e
echo "(exit status $status)"

step "Done"
echo "Everything above is in $OUT/. Try: $BIN --help"
