#!/usr/bin/env python3
"""Times Pillow decoding the benchmark inputs in-process, as `magpie bench-decode` does.

Prints TSV lines: file, median milliseconds, megapixels per second. Animations are decoded
frame by frame (seek + load); `--draft W` uses Pillow's JPEG draft mode (DCT scaling) to at
least W pixels wide. With `--whole-files`, decodes every file once per run and prints the
total (the counterpart of `magpie info --decode FILE...`).
"""
import argparse
import io
import sys
import time

from PIL import Image

Image.MAX_IMAGE_PIXELS = None


def decode(data, draft=None):
    im = Image.open(io.BytesIO(data))
    if draft:
        im.draft("RGB", (draft, draft * im.height // im.width))
    frames = getattr(im, "n_frames", 1)
    for i in range(frames):
        if i:
            im.seek(i)
        im.load()
    return im.width * im.height * frames


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("files", nargs="+")
    parser.add_argument("--iterations", type=int, default=15)
    parser.add_argument("--draft", type=int)
    parser.add_argument("--whole-files", action="store_true")
    args = parser.parse_args()
    if args.whole_files:
        for path in args.files:
            with open(path, "rb") as f:
                decode(f.read())
        return
    for path in args.files:
        with open(path, "rb") as f:
            data = f.read()
        pixels = decode(data, args.draft)
        times = []
        for _ in range(args.iterations):
            start = time.perf_counter()
            decode(data, args.draft)
            times.append((time.perf_counter() - start) * 1000)
        times.sort()
        median = times[len(times) // 2]
        print(f"{path}\t{median:.2f}\t{pixels / 1e6 / median * 1000:.1f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
