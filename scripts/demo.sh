#!/usr/bin/env bash
# The demo behind `make demo`: the image pipeline end to end, offline. `magpie demo` starts a
# local origin on 127.0.0.1 serving generated images (a progressive JPEG, an interlaced PNG,
# an animated GIF and WebP, a 4000x3000 photo), loads them through the pipeline with
# duplicates, shows the previews as they are made, writes 256 px thumbnails, loads them again
# (memory) and in a fresh pipeline (disk), and prints what came from where.
set -euo pipefail
BIN=${1:-.build/debug/magpie}
OUT=${DEMO_OUT:-magpie-demo}

"$BIN" demo --out "$OUT"

printf '\n\033[1m== 6. The thumbnails, as magpie info sees them\033[0m\n'
"$BIN" info "$OUT"/*-256.*

printf '\nTry: %s fetch URL... --out DIR --size 256, or %s --help\n' "$BIN" "$BIN"
