#!/usr/bin/env python3
"""The Python `diskcache` package's set and get rates for 4 KB, 100 KB and 1 MB values, as
`magpie bench-cache` measures Magpie's. Prints TSV: case, operations per second."""
import shutil
import sys
import tempfile
import time

import diskcache

operations = int(sys.argv[1]) if len(sys.argv) > 1 else 400
root = tempfile.mkdtemp()
for size in (4096, 100 * 1024, 1024 * 1024):
    count = max(50, operations // 4) if size >= 1024 * 1024 else operations
    value = bytes((i * 31) & 0xFF for i in range(size))
    keys = [f"https://example.com/images/{size}/{i}.jpg" for i in range(count)]
    cache = diskcache.Cache(f"{root}/{size}", size_limit=2**40)
    start = time.perf_counter()
    for key in keys:
        cache.set(key, value)
    set_rate = count / (time.perf_counter() - start)
    start = time.perf_counter()
    for key in keys:
        cache.get(key)
    get_rate = count / (time.perf_counter() - start)
    cache.close()
    print(f"set-{size}\t{set_rate:.0f}")
    print(f"get-{size}\t{get_rate:.0f}")
shutil.rmtree(root)
