#!/usr/bin/env python3
"""Times the processing benchmarks through Pillow and pyvips, in-process, as
`magpie bench-process` does. Prints TSV: tool, case, median ms."""
import io
import sys
import time

from PIL import Image, ImageFilter

Image.MAX_IMAGE_PIXELS = None


def median(body, n):
    body()
    times = []
    for _ in range(n):
        start = time.perf_counter()
        body()
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return times[len(times) // 2]


def main():
    inputs, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 11
    rgba = Image.open(f"{inputs}/rgba-4000x3000.png")
    rgba.load()
    jpeg = open(f"{inputs}/jpeg-4000x3000-baseline.jpg", "rb").read()
    hd = Image.open(f"{inputs}/rgb-1920x1080.png")
    hd.load()

    def thumbnail():
        im = Image.open(io.BytesIO(jpeg))
        im.thumbnail((256, 256))
        im.save(io.BytesIO(), "JPEG", quality=80)

    def thumbnail_lanczos():
        im = Image.open(io.BytesIO(jpeg))
        im.thumbnail((256, 256), Image.Resampling.LANCZOS)
        im.save(io.BytesIO(), "JPEG", quality=80)

    rows = [
        ("pillow", "resize-4000x3000-rgba-to-800x600", lambda: rgba.resize((800, 600), Image.Resampling.LANCZOS)),
        ("pillow", "thumbnail-jpeg-4000x3000-to-256-q80", thumbnail),
        ("pillow-lanczos", "thumbnail-jpeg-4000x3000-to-256-q80", thumbnail_lanczos),
        ("pillow", "blur-8-1920x1080", lambda: hd.filter(ImageFilter.GaussianBlur(8))),
    ]
    try:
        import pyvips
        rows.append(("pyvips", "thumbnail-jpeg-4000x3000-to-256-q80",
                     lambda: pyvips.Image.thumbnail_buffer(jpeg, 256).write_to_buffer(".jpg[Q=80]")))
        vrgba = pyvips.Image.new_from_file(f"{inputs}/rgba-4000x3000.png").copy_memory()
        rows.append(("pyvips", "resize-4000x3000-rgba-to-800x600",
                     lambda: vrgba.resize(0.2, kernel="lanczos3").copy_memory()))
        vhd = pyvips.Image.new_from_file(f"{inputs}/rgb-1920x1080.png").copy_memory()
        rows.append(("pyvips", "blur-8-1920x1080", lambda: vhd.gaussblur(8).copy_memory()))
    except ImportError:
        pass
    for tool, case, body in rows:
        print(f"{tool}\t{case}\t{median(body, n):.2f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
