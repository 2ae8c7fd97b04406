#!/usr/bin/env bash
# Installs the system libraries Magpie builds against: the Debian -dev packages for
# libjpeg-turbo, libpng, giflib, libwebp (with demux and mux), libdeflate, SQLite and zlib,
# and pkg-config. Idempotent: it installs only what is missing and runs apt-get update at most once.
# Uses apt-get directly as root, through sudo otherwise.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

PKGS=(pkg-config libjpeg62-turbo-dev libpng-dev libgif-dev libwebp-dev libdeflate-dev libsqlite3-dev zlib1g-dev)

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  cat >&2 <<MSG
install-system-deps: this script knows Debian and Ubuntu (apt-get) only.
Install these yourself, then run make again:
  libjpeg-turbo, libpng 1.6, giflib 5, libwebp (with libwebpdemux and libwebpmux), libdeflate, SQLite 3, zlib,
  pkg-config (Homebrew: brew install jpeg-turbo libpng giflib webp libdeflate sqlite pkg-config)
MSG
  exit 1
fi

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1; then
  SUDO=(sudo)
else
  echo "install-system-deps: missing ${missing[*]}; run as root or install sudo" >&2
  exit 1
fi

echo "install-system-deps: installing ${missing[*]}"
"${SUDO[@]}" apt-get update -q
"${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
