#!/usr/bin/env bash
# Decode speed against the peers, in one run on this machine.
#
# Builds `magpie` (release), writes the benchmark inputs (the same bytes the Benchmarks
# package decodes), then for ROUNDS rounds times each decode through Magpie (in-process,
# `magpie bench-decode`), Pillow (in-process, scripts/peer_decode.py), tjbench and dwebp
# where installed. Prints each round, then the medians over rounds and the ratios.
#
#   scripts/compare-peers.sh [ROUNDS]        (default 3)
#
# Environment: MAGPIE_RETAIN=1 runs magpie with ImageMemory.retainFreedMemory() (the
# `magpie` tool's own setting); MAGPIE_RETAIN=0 measures the library's defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
ITER=${ITER:-11}
RETAIN=${MAGPIE_RETAIN:-0}
WORK=${WORK:-$(mktemp -d /tmp/magpie-peers.XXXXXX)}
swift build -c release --product magpie >/dev/null
BIN=.build/release/magpie
$BIN bench-decode --write-inputs --out "$WORK" >/dev/null
retain_flag=()
[ "$RETAIN" = 1 ] && retain_flag=(--retain-memory)

J=$WORK/jpeg-4000x3000-baseline.jpg
P=$WORK/jpeg-4000x3000-progressive.jpg
FILES=("$J" "$P" "$WORK/png-1920x1080-rgb.png" "$WORK/png-1920x1080-rgba.png" "$WORK/gif-480x360-20-frames.gif"
       "$WORK/webp-4000x3000-lossy.webp" "$WORK/webp-480x360-20-frames.webp")
RESULTS=$WORK/results.tsv
: > "$RESULTS"

tj_ms() {  # median-free: tjbench averages over its bench time; frame rate -> ms
  tjbench "$1" -rgb -benchtime 2 -warmup 1 -nowrite ${2:+-scale $2} 2>/dev/null \
    | awk '/Decompress/ && /Frame rate/ {printf "%.2f\n", 1000 / $(NF-1)}' | head -1
}
dwebp_ms() {
  for _ in 1 2 3 4 5 6 7; do dwebp -v -ppm "$1" -o /dev/null 2>&1 | awk '/Time to decode/ {sub("s", "", $5); print $5 * 1000}'; done \
    | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

for round in $(seq 1 "$ROUNDS"); do
  echo "== round $round"
  $BIN bench-decode "${retain_flag[@]}" --iterations "$ITER" "${FILES[@]}" | while IFS=$'\t' read -r f ms _; do
    printf 'magpie\t%s\t%s\n' "$(basename "$f")" "$ms"; done | tee -a "$RESULTS"
  $BIN bench-decode "${retain_flag[@]}" --iterations "$ITER" --target-width 500 "$J" | while IFS=$'\t' read -r f ms _; do
    printf 'magpie\t%s\t%s\n' "jpeg-4000x3000-to-500.jpg" "$ms"; done | tee -a "$RESULTS"
  python3 scripts/peer_decode.py --iterations "$ITER" "${FILES[@]}" | while IFS=$'\t' read -r f ms _; do
    printf 'pillow\t%s\t%s\n' "$(basename "$f")" "$ms"; done | tee -a "$RESULTS"
  python3 scripts/peer_decode.py --iterations "$ITER" --draft 500 "$J" | while IFS=$'\t' read -r f ms _; do
    printf 'pillow\t%s\t%s\n' "jpeg-4000x3000-to-500.jpg" "$ms"; done | tee -a "$RESULTS"
  if command -v tjbench >/dev/null; then
    printf 'tjbench\t%s\t%s\n' "$(basename "$J")" "$(tj_ms "$J")" | tee -a "$RESULTS"
    printf 'tjbench\t%s\t%s\n' "$(basename "$P")" "$(tj_ms "$P")" | tee -a "$RESULTS"
    printf 'tjbench\t%s\t%s\n' "jpeg-4000x3000-to-500.jpg" "$(tj_ms "$J" 1/8)" | tee -a "$RESULTS"
  fi
  if command -v dwebp >/dev/null; then
    printf 'dwebp\t%s\t%s\n' "webp-4000x3000-lossy.webp" "$(dwebp_ms "$WORK/webp-4000x3000-lossy.webp")" | tee -a "$RESULTS"
  fi
  # Processing: resize, thumbnail, blur (Magpie in-process; Pillow and pyvips in-process).
  $BIN bench-process "${retain_flag[@]}" --iterations "$ITER" --inputs "$WORK" | while IFS=$'\t' read -r c ms; do
    printf 'magpie\t%s\t%s\n' "$c" "$ms"; done | tee -a "$RESULTS"
  python3 scripts/peer_process.py "$WORK" "$ITER" | tee -a "$RESULTS"
  # Disk cache: operations per second (higher is better), Magpie and its raw-file floor, then diskcache.
  $BIN bench-cache --directory "$WORK/cache-bench" | while IFS=$'\t' read -r c rate; do
    printf 'magpie-rate\t%s\t%s\n' "$c" "$rate"; done | tee -a "$RESULTS"
  if python3 -c 'import diskcache' 2>/dev/null; then
    python3 scripts/peer_cache.py | while IFS=$'\t' read -r c rate; do
      printf 'diskcache-rate\t%s\t%s\n' "$c" "$rate"; done | tee -a "$RESULTS"
  fi
done

# Whole processes: `magpie info --decode` and `magpie thumbnail` of 20 copies of the 4000x3000
# JPEG against Pillow scripts doing the same, and vipsthumbnail.
mkdir -p "$WORK/copies" "$WORK/thumbs-magpie" "$WORK/thumbs-vips"
for i in $(seq -w 1 20); do cp "$J" "$WORK/copies/copy-$i.jpg"; done
if command -v hyperfine >/dev/null; then
  commands=("$BIN info --decode $WORK/copies/*.jpg" "python3 scripts/peer_decode.py --whole-files $WORK/copies/*.jpg"
            "$BIN thumbnail $WORK/copies/*.jpg --out $WORK/thumbs-magpie --size 256 --quality 80"
            "python3 scripts/peer_thumbnails.py $WORK/copies/*.jpg")
  command -v vipsthumbnail >/dev/null && commands+=("vipsthumbnail $WORK/copies/*.jpg -s 256 -o $WORK/thumbs-vips/%s.jpg[Q=80]")
  hyperfine --warmup 1 --runs 7 --export-json "$WORK/processes.json" "${commands[@]}" >/dev/null
  python3 - "$WORK/processes.json" >> "$RESULTS" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["results"]
names = [("magpie", "info-decode-20-files"), ("pillow", "info-decode-20-files"),
         ("magpie", "thumbnail-20-files"), ("pillow", "thumbnail-20-files"), ("vipsthumbnail", "thumbnail-20-files")]
for (tool, case), run in zip(names, runs):
    print(f"{tool}\t{case}\t{run['median'] * 1000:.1f}")
PY
fi

echo
echo "== medians over $ROUNDS rounds (ms; lower is better); retainFreedMemory=$RETAIN"
python3 - "$RESULTS" <<'PY'
import statistics, sys
from collections import defaultdict
times = defaultdict(list)
for line in open(sys.argv[1]):
    tool, case, ms = line.rstrip("\n").split("\t")
    if ms:
        times[(tool, case)].append(float(ms))
med = {k: statistics.median(v) for k, v in times.items()}
def get(tool, case):
    return med.get((tool, case))
rows = [
    ("JPEG 4000x3000 baseline", "jpeg-4000x3000-baseline.jpg", "tjbench", 1.15),
    ("JPEG 4000x3000 baseline", "jpeg-4000x3000-baseline.jpg", "pillow", 0.70),
    ("JPEG 4000x3000 progressive", "jpeg-4000x3000-progressive.jpg", "tjbench", 1.15),
    ("JPEG 4000x3000 progressive", "jpeg-4000x3000-progressive.jpg", "pillow", None),
    ("PNG 1920x1080 RGB", "png-1920x1080-rgb.png", "pillow", 0.90),
    ("PNG 1920x1080 RGBA", "png-1920x1080-rgba.png", "pillow", 0.90),
    ("GIF 480x360, 20 frames", "gif-480x360-20-frames.gif", "pillow", 1.00),
    ("WebP 4000x3000 lossy", "webp-4000x3000-lossy.webp", "dwebp", 1.10),
    ("WebP 4000x3000 lossy", "webp-4000x3000-lossy.webp", "pillow", None),
    ("WebP 480x360, 20 frames", "webp-480x360-20-frames.webp", "pillow", None),
    ("JPEG 4000x3000 to 500 px", "jpeg-4000x3000-to-500.jpg", "tjbench", None),
    ("JPEG 4000x3000 to 500 px", "jpeg-4000x3000-to-500.jpg", "pillow", None),
    ("JPEG to 500 px / full decode", "jpeg-4000x3000-to-500.jpg", "magpie-full", 0.40),
    ("info --decode, 20 JPEG files", "info-decode-20-files", "pillow", 1.20),
    ("Resize 4000x3000 RGBA to 800x600", "resize-4000x3000-rgba-to-800x600", "pillow", 1.00),
    ("Resize 4000x3000 RGBA to 800x600", "resize-4000x3000-rgba-to-800x600", "pyvips", None),
    ("Thumbnail 4000x3000 JPEG to 256 px", "thumbnail-jpeg-4000x3000-to-256-q80", "pillow", 0.80),
    ("Thumbnail 4000x3000 JPEG to 256 px", "thumbnail-jpeg-4000x3000-to-256-q80", "pillow-lanczos", None),
    ("Thumbnail 4000x3000 JPEG to 256 px", "thumbnail-jpeg-4000x3000-to-256-q80", "pyvips", None),
    ("Blur radius 8, 1920x1080", "blur-8-1920x1080", "pillow", 1.00),
    ("Blur radius 8, 1920x1080", "blur-8-1920x1080", "pyvips", None),
    ("thumbnail, 20 JPEG files (processes)", "thumbnail-20-files", "pillow", 1.00),
    ("thumbnail, 20 JPEG files (processes)", "thumbnail-20-files", "vipsthumbnail", None),
]
print("| case | Magpie ms | peer | peer ms | ratio | target |")
print(f"| --- | ---: | --- | ---: | ---: | --- |")
for name, case, peer, target in rows:
    ours = get("magpie", case)
    theirs = get("magpie", "jpeg-4000x3000-baseline.jpg") if peer == "magpie-full" else get(peer, case)
    if ours is None or theirs is None:
        continue
    ratio = ours / theirs
    verdict = "" if target is None else (f"≤ {target:.2f}× " + ("met" if ratio <= target else "missed"))
    label = "Magpie full decode" if peer == "magpie-full" else peer
    print(f"| {name} | {ours:.1f} | {label} | {theirs:.1f} | {ratio:.2f}× | {verdict} |")

# Disk cache rates: higher is better, so the ratio is Magpie's rate over the peer's.
print()
print("| disk cache | Magpie ops/s | peer | peer ops/s | ratio | target |")
print("| --- | ---: | --- | ---: | ---: | --- |")
for size, label in ((4096, "4 KB"), (102400, "100 KB"), (1048576, "1 MB")):
    for op, floor_target, peer_target in (("set", 0.6, 5.0), ("get", 0.8, None)):
        ours = get("magpie-rate", f"{op}-{size}")
        for peer, key, target in (("raw files, offloaded (floor)", f"raw-async-{op}-{size}", floor_target),
                                  ("raw files, on the caller's thread", f"raw-{op}-{size}", None),
                                  ("diskcache", f"{op}-{size}", peer_target)):
            tool = "magpie-rate" if peer.startswith("raw") else "diskcache-rate"
            theirs = get(tool, key)
            if ours is None or theirs is None:
                continue
            ratio = ours / theirs
            verdict = "" if target is None else (f"≥ {target:.1f}× " + ("met" if ratio >= target else "missed"))
            print(f"| {op} {label} | {ours:.0f} | {peer} | {theirs:.0f} | {ratio:.2f}× | {verdict} |")
PY
echo
python3 -c "import PIL; print('Pillow', PIL.__version__)"
dpkg-query -W -f='libjpeg-turbo ${Version}\n' libjpeg62-turbo 2>/dev/null || true
dpkg-query -W -f='libwebp ${Version}\n' libwebp7 2>/dev/null || true
dpkg-query -W -f='libpng ${Version}\n' libpng16-16 2>/dev/null || true
dpkg-query -W -f='giflib ${Version}\n' libgif7 2>/dev/null || true
echo "inputs and raw results: $WORK"
