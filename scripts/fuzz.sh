#!/usr/bin/env bash
# Runs one libFuzzer target for SECONDS, seeded from the test fixtures.
#
#   scripts/fuzz.sh TARGET SECONDS [JOBS]
#   TARGET: FuzzJPEG FuzzPNG FuzzGIF FuzzWebP FuzzBMPICO FuzzIncremental
#
# Builds Fuzz/ with -sanitize=fuzzer,address (Swift and our C shims). The corpus grows in
# Fuzz/corpus/TARGET (not committed); crashes, leaks and timeouts are written to
# Fuzz/artifacts/TARGET/. Commit each one under Tests/Fixtures/images/fuzz/ as a regression
# fixture (the test suite decodes every file there).
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=${1:?target}
SECONDS_TO_RUN=${2:?seconds}
JOBS=${3:-1}
case "$TARGET" in
  FuzzJPEG) seeds="jpeg bad" ;; FuzzPNG) seeds="png bad" ;; FuzzGIF) seeds="gif bad" ;;
  FuzzWebP) seeds="webp bad" ;; FuzzBMPICO) seeds="bmp ico bad" ;; FuzzIncremental) seeds="jpeg png gif webp" ;;
  *) echo "unknown target $TARGET" >&2; exit 2 ;;
esac
(cd Fuzz && swift build -c debug --product "$TARGET" \
  -Xswiftc -sanitize=fuzzer,address -Xcc -fsanitize=fuzzer-no-link,address >/dev/null)
corpus=Fuzz/corpus/$TARGET
artifacts=Fuzz/artifacts/$TARGET/
mkdir -p "$corpus" "$artifacts"
for d in $seeds; do cp -n Tests/Fixtures/images/$d/* "$corpus/" 2>/dev/null || true; done
[ -d Tests/Fixtures/images/fuzz ] && cp -n Tests/Fixtures/images/fuzz/* "$corpus/" 2>/dev/null || true
parallel=()
[ "$JOBS" -gt 1 ] && parallel=(-jobs="$JOBS" -workers="$JOBS")
exec Fuzz/.build/debug/"$TARGET" "$corpus" -max_total_time="$SECONDS_TO_RUN" -timeout=20 -rss_limit_mb=2560 \
  -artifact_prefix="$artifacts" -print_final_stats=1 "${parallel[@]}"
