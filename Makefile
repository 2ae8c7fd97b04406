# Magpie: the two commands a fresh machine needs are `make demo` and `make test`.
# Both install the missing system libraries first (scripts/install-system-deps.sh).

SWIFT ?= swift
BIN := .build/debug/magpie

.PHONY: deps build test demo bench fixtures test-asan test-tsan compare-peers fuzz clean

deps:
	@./scripts/install-system-deps.sh

build: deps
	$(SWIFT) build

test: deps
	$(SWIFT) build
	$(SWIFT) test

demo: build
	@./scripts/demo.sh $(BIN)

# Decode benchmarks (ordo-one/benchmark, release builds; takes a few minutes the first time).
bench: deps
	cd Benchmarks && $(SWIFT) package benchmark --no-progress

# Regenerates the committed test fixtures with Pillow (needs python3; installs Pillow if missing).
fixtures:
	@python3 -c 'import PIL' 2>/dev/null || python3 -m pip install -q Pillow
	python3 scripts/make-fixtures.py

# The test suite under Address Sanitizer and Thread Sanitizer (own build folders: full rebuilds).
test-asan: deps
	LSAN_OPTIONS=suppressions=$(CURDIR)/scripts/lsan-suppressions.txt:print_suppressions=0 \
		$(SWIFT) test --sanitize=address --scratch-path .build-asan

test-tsan: deps
	$(SWIFT) test --sanitize=thread --scratch-path .build-tsan

# Decode speed against Pillow, tjbench and dwebp (see docs/performance.md).
compare-peers: deps
	./scripts/compare-peers.sh 3

# make fuzz TARGET=FuzzJPEG SECONDS=600
fuzz: deps
	./scripts/fuzz.sh $(TARGET) $(SECONDS)

clean:
	rm -rf .build .build-asan .build-tsan Benchmarks/.build Fuzz/.build demo-output
