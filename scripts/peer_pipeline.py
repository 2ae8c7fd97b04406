#!/usr/bin/env python3
"""A thumbor-like Pillow loop: fetch each URL over HTTP, decode with draft mode (JPEG DCT
scaling, as thumbor's PIL engine does), fit into 256x256 with a Lanczos resize, encode JPEG
quality 80. Two worker processes, one per core, like a thumbor deployment on two cores.

    peer_pipeline.py URL... (prints the seconds it took)
"""
import io
import sys
import time
import urllib.request
from multiprocessing import Pool

from PIL import Image


def thumbnail(url):
    with urllib.request.urlopen(url) as response:
        data = response.read()
    with Image.open(io.BytesIO(data)) as im:
        im.draft("RGB", (512, 512))
        im = im.convert("RGB")
        im.thumbnail((256, 256), Image.LANCZOS)
        out = io.BytesIO()
        im.save(out, "JPEG", quality=80)
        return len(out.getvalue())


if __name__ == "__main__":
    urls = sys.argv[1:]
    start = time.perf_counter()
    pool = Pool(2)
    sizes = pool.map(thumbnail, urls, chunksize=4)
    pool.close()  # let the workers finish on their own rather than by SIGTERM
    pool.join()
    elapsed = time.perf_counter() - start
    assert all(s > 0 for s in sizes)
    print(f"{elapsed:.4f}")
