#!/usr/bin/env python3
"""Makes Magpie's committed test fixtures.

Every image here is written by an encoder independent of Magpie: Pillow for most; for PNG
variants Pillow cannot write (every bit depth, tRNS forms, Adam7, each filter type) a small
PNG writer in this file; for a YCCK JPEG, libturbojpeg through ctypes; for a GIF with
every disposal method, a small GIF writer in this file. The reference pixels are Pillow's
decoding of each file (converted to RGBA), checked against the known source pixels where
the script has them.

Output, under Tests/Fixtures:
  images/...            the fixtures (good and bad inputs)
  reference/*.rgba.z    reference pixels: RGBA, 8 bits a channel, all frames concatenated,
                        zlib-compressed
  manifest.json         per fixture: what decoding must give (format, size, frames, alpha,
                        orientation, loop count, durations, reference and how to compare),
                        or which ImageError kinds are acceptable

Run with `make fixtures` (needs Pillow). The output is deterministic for a given Pillow.
"""

import ctypes
import ctypes.util
import io
import json
import os
import random
import shutil
import struct
import zlib

from PIL import Image, ImageDraw, ImageFilter, ImageOps

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Fixtures")
IMAGES = os.path.join(ROOT, "images")
REFERENCE = os.path.join(ROOT, "reference")
manifest = []
rng = random.Random(20261122)


# MARK: - helpers

def path(name):
    full = os.path.join(IMAGES, name)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    return full


def rgba_frames(im):
    """Pillow's decoding of every frame, as RGBA bytes."""
    frames = []
    n = getattr(im, "n_frames", 1)
    for i in range(n):
        im.seek(i)
        frames.append(im.convert("RGBA").tobytes())
    return frames


def reference_name(name, suffix=""):
    return name.replace("/", "-").replace(".", "-") + suffix + ".rgba.z"


def write_reference(name, frames, suffix=""):
    """Reference pixels: RGBA frames concatenated, zlib-compressed to keep the fixtures small."""
    ref = reference_name(name, suffix)
    with open(os.path.join(REFERENCE, ref), "wb") as f:
        f.write(zlib.compress(b"".join(frames), 9))
    return ref


def good(name, fmt, compare, expected_frames=None, loop=None, durations=None, has_alpha=None,
         orientation=1, upright=None, note=None):
    """Records a fixture that must decode, with Pillow's pixels as the reference."""
    with Image.open(path(name)) as im:
        width, height = im.size
        frames = rgba_frames(im)
        if durations is None and getattr(im, "n_frames", 1) > 1:
            durations = []
            for i in range(im.n_frames):
                im.seek(i)
                durations.append(im.info.get("duration", 0))
    if expected_frames is not None:
        assert len(frames) >= expected_frames
        frames = frames[:expected_frames]
        durations = durations[:expected_frames] if durations else None
        if expected_frames == 1:
            durations = None
    good_pixels(name, fmt, compare, width, height, frames, has_alpha=has_alpha, loop=loop, durations=durations,
                note=note, orientation=orientation, upright=upright)


def good_pixels(name, fmt, compare, width, height, frames, has_alpha=None, loop=None, durations=None, note=None,
                orientation=1, upright=None):
    """Records a fixture with its reference frames (Pillow's, or the script's own checked against Pillow)."""
    entry = {
        "file": name, "format": fmt, "width": width, "height": height, "frames": len(frames),
        "orientation": orientation, "compare": compare, "reference": write_reference(name, frames),
    }
    if has_alpha is not None:
        entry["hasAlpha"] = has_alpha
    if loop is not None:
        entry["loopCount"] = loop
    if durations is not None:
        entry["durations"] = durations
    if upright is not None:
        pixels, (entry["uprightWidth"], entry["uprightHeight"]) = upright
        entry["uprightReference"] = write_reference(name, [pixels], ".upright")
    if note:
        entry["note"] = note
    manifest.append(entry)


def bad(name, data, errors, note, fmt=None, size=None):
    """Records an input that must fail with one of `errors` (ImageError kinds)."""
    with open(path(name), "wb") as f:
        f.write(data)
    entry = {"file": name, "errors": errors, "note": note}
    if fmt:
        entry["format"] = fmt
    if size:
        entry["declaredWidth"], entry["declaredHeight"] = size
    manifest.append(entry)


def scene(width, height, mode="RGB", seed=0):
    """A smooth picture with edges: gradients, a disc, bars, text-like strokes."""
    im = Image.new("RGB", (width, height))
    px = im.load()
    for y in range(height):
        for x in range(width):
            px[x, y] = ((x * 255) // max(1, width - 1), (y * 255) // max(1, height - 1),
                        (128 + 60 * ((x + y + seed) % 7 == 0)) % 256)
    d = ImageDraw.Draw(im)
    d.ellipse([width * 0.2, height * 0.2, width * 0.6, height * 0.8], fill=(240, 200, 40))
    d.rectangle([width * 0.65, height * 0.1, width * 0.9, height * 0.4], fill=(30, 60, 200))
    d.line([0, height - 1, width - 1, height // 3], fill=(255, 255, 255), width=2)
    if mode == "RGBA":
        im = im.convert("RGBA")
        alpha = Image.new("L", (width, height))
        ap = alpha.load()
        for y in range(height):
            for x in range(width):
                ap[x, y] = 0 if x < width // 6 else min(255, (x * 300) // width)
        im.putalpha(alpha)
    elif mode != "RGB":
        im = im.convert(mode)
    return im


def photo(width, height):
    """A photo-like picture: smooth shading, texture and edges, so previews differ visibly."""
    im = Image.new("RGB", (width, height))
    px = im.load()
    prng = random.Random(width * 1000 + height)
    for y in range(height):
        for x in range(width):
            u, v = x / width, y / height
            r = int(90 + 120 * v + 20 * ((x // 8 + y // 8) % 2))
            g = int(150 + 70 * v - 40 * u)
            b = int(235 - 60 * v * u)
            if v > 0.6 + 0.1 * ((x * 7919) % 13) / 13:
                r, g, b = 60 + int(40 * u), 120 + int(30 * v), 60
            n = prng.randrange(-12, 13)
            px[x, y] = (max(0, min(255, r + n)), max(0, min(255, g + n)), max(0, min(255, b + n)))
    d = ImageDraw.Draw(im)
    d.ellipse([width * 0.6, height * 0.1, width * 0.8, height * 0.37], fill=(255, 230, 160))
    d.rectangle([width * 0.1, height * 0.45, width * 0.3, height * 0.9], fill=(150, 60, 40))
    return im


# MARK: - JPEG

def jpeg_fixtures():
    base = scene(64, 48)
    base.save(path("jpeg/baseline.jpg"), quality=92)
    good("jpeg/baseline.jpg", "jpeg", "psnr")
    base.save(path("jpeg/baseline-444.jpg"), quality=92, subsampling=0)
    good("jpeg/baseline-444.jpg", "jpeg", "psnr")
    base.save(path("jpeg/progressive.jpg"), quality=92, progressive=True)
    good("jpeg/progressive.jpg", "jpeg", "psnr")
    # Larger ones for incremental decoding, fed in 1 KB chunks.
    big = photo(256, 192)
    big.save(path("jpeg/photo-progressive.jpg"), quality=90, progressive=True)
    good("jpeg/photo-progressive.jpg", "jpeg", "psnr", note="for incremental decoding")
    big.save(path("jpeg/photo-baseline.jpg"), quality=90)
    good("jpeg/photo-baseline.jpg", "jpeg", "psnr", note="for incremental decoding")
    scene(37, 23).save(path("jpeg/odd-size.jpg"), quality=92)
    good("jpeg/odd-size.jpg", "jpeg", "psnr", note="partial MCUs on the right and bottom")
    base.convert("L").save(path("jpeg/gray.jpg"), quality=92)
    good("jpeg/gray.jpg", "jpeg", "psnr")
    base.convert("L").save(path("jpeg/gray-progressive.jpg"), quality=92, progressive=True)
    good("jpeg/gray-progressive.jpg", "jpeg", "psnr")
    base.save(path("jpeg/restart-markers.jpg"), quality=92, restart_marker_rows=1)
    good("jpeg/restart-markers.jpg", "jpeg", "psnr", note="a restart marker after every MCU row")
    base.convert("CMYK").save(path("jpeg/cmyk-adobe.jpg"), quality=95)
    good("jpeg/cmyk-adobe.jpg", "jpeg", "psnr", note="Pillow writes CMYK inverted, with an Adobe APP14 marker")
    if make_ycck(base, path("jpeg/ycck-adobe.jpg")):
        good("jpeg/ycck-adobe.jpg", "jpeg", "psnr", note="YCCK written by libturbojpeg (TJPF_CMYK)")

    # EXIF orientation: the same stored pixels tagged 1...8; the upright reference is
    # Pillow's exif_transpose of its own decoding.
    portrait = scene(40, 24, seed=3)
    for value in range(1, 9):
        exif = Image.Exif()
        exif[0x0112] = value
        name = f"jpeg/orientation-{value}.jpg"
        portrait.save(path(name), quality=95, exif=exif.tobytes())
        with Image.open(path(name)) as im:
            im.load()
            upright_im = ImageOps.exif_transpose(im).convert("RGBA")
            upright = (upright_im.tobytes(), upright_im.size)
        good(name, "jpeg", "psnr", orientation=value, upright=upright)


def make_ycck(im, out):
    """A YCCK JPEG from libturbojpeg, which encodes TJPF_CMYK input as YCCK."""
    lib = ctypes.util.find_library("turbojpeg") or "libturbojpeg.so.0"
    try:
        tj = ctypes.CDLL(lib)
    except OSError:
        print("libturbojpeg not found: skipping the YCCK fixture")
        return False
    tj.tjInitCompress.restype = ctypes.c_void_p
    tj.tjCompress2.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                               ctypes.c_int, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_ulong),
                               ctypes.c_int, ctypes.c_int, ctypes.c_int]
    tj.tjFree.argtypes = [ctypes.c_void_p]
    tj.tjDestroy.argtypes = [ctypes.c_void_p]
    cmyk = im.convert("CMYK").tobytes()
    handle = tj.tjInitCompress()
    buf = ctypes.c_void_p()
    size = ctypes.c_ulong(0)
    TJPF_CMYK, TJSAMP_420 = 11, 2
    rc = tj.tjCompress2(handle, cmyk, im.width, 0, im.height, TJPF_CMYK, ctypes.byref(buf), ctypes.byref(size),
                        TJSAMP_420, 95, 0)
    if rc != 0:
        tj.tjDestroy(handle)
        print("tjCompress2 failed: skipping the YCCK fixture")
        return False
    data = ctypes.string_at(buf, size.value)
    tj.tjFree(buf)
    tj.tjDestroy(handle)
    with open(out, "wb") as f:
        f.write(data)
    return True


# MARK: - PNG (own writer for every variant)

def png_chunk(tag, data):
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)


def pack_row(samples, bit_depth):
    if bit_depth == 8:
        return bytes(samples)
    if bit_depth == 16:
        return b"".join(struct.pack(">H", s) for s in samples)
    out, acc, nbits = bytearray(), 0, 0
    for s in samples:
        acc = (acc << bit_depth) | s
        nbits += bit_depth
        if nbits == 8:
            out.append(acc)
            acc, nbits = 0, 0
    if nbits:
        out.append(acc << (8 - nbits))
    return bytes(out)


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def filter_rows(rows, bpp, first_filter):
    """Filters rows, cycling through the five filter types."""
    out, prev = bytearray(), bytes(len(rows[0])) if rows else b""
    for i, row in enumerate(rows):
        ftype = (first_filter + i) % 5
        f = bytearray()
        for x, v in enumerate(row):
            a = row[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            pred = [0, a, b, (a + b) // 2, paeth(a, b, c)][ftype]
            f.append((v - pred) & 0xFF)
        out.append(ftype)
        out += f
        prev = row
    return bytes(out)


ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def write_png(name, width, height, color_type, bit_depth, pixels, palette=None, trns=None, interlace=False,
              extra_chunks=()):
    """pixels[y][x] is a tuple of samples in the colour type's channels."""
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[color_type]
    bpp = max(1, channels * bit_depth // 8)
    raw = b""
    if interlace:
        for pi, (x0, y0, dx, dy) in enumerate(ADAM7):
            xs = list(range(x0, width, dx))
            ys = list(range(y0, height, dy))
            if not xs or not ys:
                continue
            rows = [pack_row([s for x in xs for s in pixels[y][x]], bit_depth) for y in ys]
            raw += filter_rows(rows, bpp, pi)
    else:
        rows = [pack_row([s for x in range(width) for s in pixels[y][x]], bit_depth) for y in range(height)]
        raw = filter_rows(rows, bpp, 0)
    out = b"\x89PNG\r\n\x1a\n"
    out += png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, bit_depth, color_type, 0, 0, 1 if interlace else 0))
    for tag, data in extra_chunks:
        out += png_chunk(tag, data)
    if palette is not None:
        out += png_chunk(b"PLTE", bytes(c for rgb in palette for c in rgb))
    if trns is not None:
        out += png_chunk(b"tRNS", trns)
    compressed = zlib.compress(raw, 9)
    # Two IDAT chunks, to exercise chunk boundaries inside the zlib stream.
    half = len(compressed) // 2
    out += png_chunk(b"IDAT", compressed[:half]) + png_chunk(b"IDAT", compressed[half:])
    out += png_chunk(b"IEND", b"")
    with open(path(name), "wb") as f:
        f.write(out)
    return out


def png_fixtures():
    w, h = 37, 23
    r = random.Random(7)

    def expect(name, ref_pixels, has_alpha, note=None):
        """Checks Pillow agrees with the script's own expectation, then records it."""
        with Image.open(path(name)) as im:
            if im.mode in ("I;16", "I;16B", "I"):
                values = list(im.get_flattened_data() if hasattr(im, "get_flattened_data") else im.getdata())
                pillow = b"".join(bytes([v >> 8] * 3 + [255]) for v in values)
            else:
                pillow = im.convert("RGBA").tobytes()
        if pillow != ref_pixels:
            raise SystemExit(f"Pillow and the script disagree on {name}")
        good_pixels(name, "png", "exact", w_h[0], w_h[1], [ref_pixels], has_alpha=has_alpha, note=note)

    def grid(fn):
        return [[fn(x, y) for x in range(w_h[0])] for y in range(w_h[1])]

    for interlace in (False, True):
        suffix = "-adam7" if interlace else ""
        w_h = (w, h)
        # Gray at every depth.
        for depth in (1, 2, 4, 8, 16):
            top = (1 << depth) - 1
            px = grid(lambda x, y: ((x * 7 + y * 3) % (top + 1),))
            name = f"png/gray{depth}{suffix}.png"
            write_png(name, w, h, 0, depth, px, interlace=interlace)
            def to8(v, depth=depth):
                return v >> 8 if depth == 16 else v * 255 // ((1 << depth) - 1)
            ref = b"".join(bytes([to8(p[0])] * 3 + [255]) for row in px for p in row)
            expect(name, ref, False)
        # RGB 8 and 16.
        for depth in (8, 16):
            top = (1 << depth) - 1
            px = grid(lambda x, y: ((x * 13 * top // 255) % (top + 1), (y * 11 * top // 255) % (top + 1),
                                    r.randrange(top + 1)))
            name = f"png/rgb{depth}{suffix}.png"
            write_png(name, w, h, 2, depth, px, interlace=interlace)
            ref = b"".join(bytes([c >> 8 if depth == 16 else c for c in p] + [255]) for row in px for p in row)
            expect(name, ref, False)
        # Gray + alpha, RGBA, 8 and 16.
        for depth in (8, 16):
            top = (1 << depth) - 1
            px = grid(lambda x, y: (r.randrange(top + 1), (x * top) // (w - 1)))
            name = f"png/gray-alpha{depth}{suffix}.png"
            write_png(name, w, h, 4, depth, px, interlace=interlace)
            s = (lambda v: v >> 8) if depth == 16 else (lambda v: v)
            ref = b"".join(bytes([s(p[0])] * 3 + [s(p[1])]) for row in px for p in row)
            expect(name, ref, True)
            px = grid(lambda x, y: (r.randrange(top + 1), r.randrange(top + 1), r.randrange(top + 1),
                                    (y * top) // (h - 1)))
            name = f"png/rgba{depth}{suffix}.png"
            write_png(name, w, h, 6, depth, px, interlace=interlace)
            ref = b"".join(bytes([s(c) for c in p]) for row in px for p in row)
            expect(name, ref, True)
        # Palettes at every depth, without and with tRNS (shorter than the palette).
        for depth in (1, 2, 4, 8):
            n = 1 << depth
            palette = [(r.randrange(256), r.randrange(256), r.randrange(256)) for _ in range(n)]
            px = grid(lambda x, y: ((x + 2 * y) % n,))
            name = f"png/palette{depth}{suffix}.png"
            write_png(name, w, h, 3, depth, px, palette=palette, interlace=interlace)
            ref = b"".join(bytes(palette[p[0]]) + b"\xff" for row in px for p in row)
            expect(name, ref, False)
            alphas = [0, 128] if n == 2 else [0, 64, 200][: max(1, n // 2)]
            name = f"png/palette{depth}-trns{suffix}.png"
            write_png(name, w, h, 3, depth, px, palette=palette, trns=bytes(alphas), interlace=interlace)
            ref = b"".join(bytes(palette[p[0]]) + bytes([alphas[p[0]] if p[0] < len(alphas) else 255])
                           for row in px for p in row)
            expect(name, ref, True)
        # A transparent colour for gray and RGB (tRNS without alpha channel).
        px = grid(lambda x, y: ((x * 9) % 256,))
        name = f"png/gray8-trns{suffix}.png"
        write_png(name, w, h, 0, 8, px, trns=struct.pack(">H", 45), interlace=interlace)
        ref = b"".join(bytes([p[0]] * 3 + [0 if p[0] == 45 else 255]) for row in px for p in row)
        expect(name, ref, True)
        px = grid(lambda x, y: ((x * 40) % 256, (y * 40) % 256, 100))
        name = f"png/rgb8-trns{suffix}.png"
        write_png(name, w, h, 2, 8, px, trns=struct.pack(">HHH", 80, 80, 100), interlace=interlace)
        ref = b"".join(bytes(list(p) + [0 if p == (80, 80, 100) else 255]) for row in px for p in row)
        expect(name, ref, True)

    # A larger interlaced photo, for incremental decoding.
    big = photo(128, 96)
    w_h = (128, 96)
    px = grid(lambda x, y: big.getpixel((x, y)))
    name = "png/photo-adam7.png"
    write_png(name, 128, 96, 2, 8, px, interlace=True)
    expect(name, b"".join(bytes(list(p) + [255]) for row in px for p in row), False, note="for incremental decoding")
    w_h = (w, h)

    # Tiny interlaced images leave some Adam7 passes empty.
    for (tw, th) in ((1, 1), (3, 5)):
        w_h = (tw, th)
        px = grid(lambda x, y: (x * 50, y * 40, 200, 255 - x * 30))
        name = f"png/tiny-{tw}x{th}-adam7.png"
        write_png(name, tw, th, 6, 8, px, interlace=True)
        expect(name, b"".join(bytes(p) for row in px for p in row), True)
    w_h = (w, h)

    # Pillow's own PNGs, with an EXIF orientation and ancillary chunks.
    im = scene(48, 32, "RGBA")
    im.save(path("png/pillow-rgba.png"))
    good("png/pillow-rgba.png", "png", "exact", has_alpha=True)
    exif = Image.Exif()
    exif[0x0112] = 6
    scene(48, 32).save(path("png/exif-orientation-6.png"), exif=exif.tobytes())
    good("png/exif-orientation-6.png", "png", "exact", orientation=6, has_alpha=False)

    # Animated PNG: opaque frames, then frames with every dispose and blend operation.
    frames = [scene(32, 24, seed=i) for i in range(3)]
    frames[0].save(path("png/apng.png"), save_all=True, append_images=frames[1:], duration=[100, 50, 150], loop=0)
    good("png/apng.png", "png", "exact", has_alpha=True, loop=0, durations=[100, 50, 150])
    frames = []
    for i in range(5):
        im = Image.new("RGBA", (40, 30), (0, 0, 0, 0))
        d = ImageDraw.Draw(im)
        d.rectangle([2 + i * 6, 4, 14 + i * 6, 20], fill=(255, 40 * i, 90, 140 + 20 * i))
        d.ellipse([20, 10 + i, 36, 26], fill=(30, 200, 60, 200))
        frames.append(im)
    frames[0].save(path("png/apng-dispose-blend.png"), save_all=True, append_images=frames[1:],
                   duration=[40, 80, 120, 60, 200], loop=3,
                   disposal=[0, 1, 2, 0, 1], blend=[0, 1, 0, 1, 1])
    expected = apng_composite(path("png/apng-dispose-blend.png"))
    with Image.open(path("png/apng-dispose-blend.png")) as im:
        pillow = rgba_frames(im)
    differing = [i + 1 for i in range(len(expected)) if pillow[i] != expected[i]]
    good_pixels("png/apng-dispose-blend.png", "png", "exact", 40, 30, expected, has_alpha=True, loop=3,
                durations=[40, 80, 120, 60, 200],
                note="APNG with dispose none/background/previous and blend source/over, composited by this script "
                     "as the APNG spec says (Porter-Duff over); Pillow differs on frames "
                     f"{differing} (it pastes with the alpha as a mask, which is not 'over' for translucent pixels)")


def unfilter(raw, width, height, bpp):
    rows, prev, p = [], bytearray(width * bpp), 0
    for _ in range(height):
        ftype, row = raw[p], bytearray(raw[p + 1:p + 1 + width * bpp])
        p += 1 + width * bpp
        for i in range(len(row)):
            a = row[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            row[i] = (row[i] + [0, a, b, (a + b) // 2, paeth(a, b, c)][ftype]) & 0xFF
        rows.append(row)
        prev = row
    return rows


def apng_composite(file):
    """The frames of an 8-bit RGBA APNG, composited as the APNG specification says."""
    data = open(file, "rb").read()
    offset, frames, current, width, height = 8, [], None, 0, 0
    while offset < len(data):
        n, = struct.unpack(">I", data[offset:offset + 4])
        kind, body = data[offset + 4:offset + 8], data[offset + 8:offset + 8 + n]
        offset += 12 + n
        if kind == b"IHDR":
            width, height, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert (depth, ctype) == (8, 6), "only 8-bit RGBA"
        elif kind == b"fcTL":
            current = {"fc": struct.unpack(">IIIIIHHBB", body), "data": b""}
            frames.append(current)
        elif kind == b"IDAT" and current is not None:
            current["data"] += body
        elif kind == b"fdAT":
            current["data"] += body[4:]
    canvas = bytearray(width * height * 4)
    out = []
    for index, frame in enumerate(frames):
        _, w, h, x0, y0, _, _, dispose, blend = frame["fc"]
        rows = unfilter(zlib.decompress(frame["data"]), w, h, 4)
        if index == 0 and dispose == 2:
            dispose = 1
        saved = bytes(canvas)
        for y in range(h):
            for x in range(w):
                s = rows[y][x * 4:x * 4 + 4]
                t = ((y0 + y) * width + x0 + x) * 4
                sa = s[3]
                if blend == 0 or sa == 255:
                    canvas[t:t + 4] = s
                elif sa > 0:
                    da = canvas[t + 3]
                    out_a = sa * 255 + da * (255 - sa)
                    if out_a == 0:
                        canvas[t:t + 4] = b"\x00\x00\x00\x00"
                        continue
                    for k in range(3):
                        canvas[t + k] = min(255, (s[k] * sa * 255 + canvas[t + k] * da * (255 - sa) + out_a // 2) // out_a)
                    canvas[t + 3] = min(255, (out_a + 127) // 255)
        out.append(bytes(canvas))
        if dispose == 1:
            for y in range(y0, y0 + h):
                canvas[(y * width + x0) * 4:(y * width + x0 + w) * 4] = bytes(w * 4)
        elif dispose == 2:
            canvas = bytearray(saved)
    return out


# MARK: - GIF

def lzw_encode(indices, min_code_size):
    clear, eoi = 1 << min_code_size, (1 << min_code_size) + 1
    out, acc, nbits = bytearray(), 0, 0
    code_size = min_code_size + 1

    def emit(code):
        nonlocal acc, nbits
        acc |= code << nbits
        nbits += code_size
        while nbits >= 8:
            out.append(acc & 0xFF)
            acc >>= 8
            nbits -= 8

    table = {bytes([i]): i for i in range(clear)}
    next_code = eoi + 1
    emit(clear)
    w = b""
    for idx in indices:
        wc = w + bytes([idx])
        if wc in table:
            w = wc
            continue
        emit(table[w])
        if next_code < 4096:
            table[wc] = next_code
            next_code += 1
            if next_code > (1 << code_size) and code_size < 12:
                code_size += 1
        else:
            emit(clear)
            table = {bytes([i]): i for i in range(clear)}
            next_code, code_size = eoi + 1, min_code_size + 1
        w = bytes([idx])
    if w:
        emit(table[w])
    emit(eoi)
    if nbits:
        out.append(acc & 0xFF)
    blocks = bytearray()
    for i in range(0, len(out), 255):
        chunk = out[i:i + 255]
        blocks.append(len(chunk))
        blocks += chunk
    return bytes([min_code_size]) + bytes(blocks) + b"\x00"


def gif_fixtures():
    # Pillow: a still image (interlaced, Pillow's default), and one not interlaced.
    still = scene(48, 32).quantize(64)
    still.save(path("gif/still-interlaced.gif"))
    good("gif/still-interlaced.gif", "gif", "exact", has_alpha=False, loop=1)
    still.save(path("gif/still.gif"), interlace=False)
    good("gif/still.gif", "gif", "exact", has_alpha=False, loop=1)

    # Pillow: an animation with transparency, varied delays, background disposal, loop forever.
    frames = []
    for i in range(6):
        im = Image.new("RGBA", (48, 32), (0, 0, 0, 0))
        d = ImageDraw.Draw(im)
        d.ellipse([4 + i * 6, 6, 18 + i * 6, 26], fill=(255, 80 + i * 30, 40, 255))
        d.rectangle([0, 28, 47, 31], fill=(20, 20, 200, 255))
        frames.append(im)
    frames[0].save(path("gif/animated.gif"), save_all=True, append_images=frames[1:],
                   duration=[100, 50, 200, 70, 100, 30], loop=0, disposal=2)
    good("gif/animated.gif", "gif", "exact", has_alpha=True, loop=0)

    # Pillow: opaque frames with very different colours, so each gets a local colour table; plays 3 times.
    frames = [scene(40, 30, seed=i).convert("P", palette=Image.Palette.ADAPTIVE, colors=32) for i in range(3)]
    frames = [f.point(lambda v, i=i: v) for i, f in enumerate(frames)]
    tinted = []
    for i, f in enumerate(frames):
        rgb = f.convert("RGB")
        rgb = Image.merge("RGB", [c.point(lambda v, k=k: (v + 80 * i * (k + 1)) % 256) for k, c in enumerate(rgb.split())])
        tinted.append(rgb.quantize(32))
    tinted[0].save(path("gif/local-palettes.gif"), save_all=True, append_images=tinted[1:], duration=120, loop=2)
    good("gif/local-palettes.gif", "gif", "exact", has_alpha=True, loop=3,
         note="opaque pictures, but Pillow marks unchanged pixels of later frames transparent")

    # Our own writer: every disposal method, frames offset inside the canvas, a transparent
    # index, a local table, an interlaced frame, NETSCAPE loop 4 (plays 5 times).
    W, H = 24, 16
    gpal = [(0, 0, 0), (255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0), (255, 255, 255), (128, 128, 128), (0, 255, 255)]
    lpal = [(10, 20, 30), (200, 100, 50), (50, 200, 100), (90, 90, 250)]
    out = bytearray(b"GIF89a")
    out += struct.pack("<HHBBB", W, H, 0xF2, 0, 0)  # global table of 8
    out += bytes(c for rgb in gpal for c in rgb)
    out += b"\x21\xff\x0bNETSCAPE2.0\x03\x01" + struct.pack("<H", 4) + b"\x00"

    def gce(disposal, delay, transparent=None):
        flags = (disposal << 2) | (1 if transparent is not None else 0)
        return b"\x21\xf9\x04" + bytes([flags]) + struct.pack("<H", delay) + bytes([transparent or 0]) + b"\x00"

    def frame(x, y, w, h, idx, local=None, interlace=False):
        flags = (0x40 if interlace else 0)
        table = b""
        if local:
            flags |= 0x80 | 1  # 4 entries
            table = bytes(c for rgb in local for c in rgb)
        rows = [idx[r * w:(r + 1) * w] for r in range(h)]
        if interlace:
            order = [r for start, step in ((0, 8), (4, 8), (2, 4), (1, 2)) for r in range(start, h, step)]
            rows = [rows[r] for r in order]
        data = [v for row in rows for v in row]
        return b"\x2c" + struct.pack("<HHHHB", x, y, w, h, flags) + table + lzw_encode(data, 3 if not local else 2)

    # 1: full background of grey, kept (disposal 1).
    f1 = [6] * (W * H)
    out += gce(1, 10) + frame(0, 0, W, H, f1)
    # 2: a red block with a transparent hole; restored to previous afterwards (disposal 3).
    f2 = [1 if (x + y) % 3 else 0 for y in range(6) for x in range(8)]
    out += gce(3, 20, transparent=0) + frame(4, 4, 8, 6, f2)
    # 3: a blue strip; restored to background (transparent) afterwards (disposal 2).
    f3 = [3] * (10 * 4)
    out += gce(2, 30) + frame(12, 2, 10, 4, f3)
    # 4: an interlaced frame with a local colour table, partly transparent (index 0).
    f4 = [(x // 3 + y) % 4 for y in range(9) for x in range(12)]
    out += gce(1, 40, transparent=0) + frame(6, 5, 12, 9, f4, local=lpal, interlace=True)
    # 5: one that extends past the canvas edge (clipped).
    f5 = [4] * (8 * 8)
    out += gce(0, 0) + frame(20, 12, 8, 8, f5)
    out += b"\x3b"
    with open(path("gif/disposal-methods.gif"), "wb") as f:
        f.write(out)

    # Browser semantics, composited here: disposal 2 clears to transparent, 3 restores.
    canvas = [(0, 0, 0, 0)] * (W * H)
    expected, prev_state = [], None
    specs = [
        (0, 0, W, H, f1, gpal, None, 1), (4, 4, 8, 6, f2, gpal, 0, 3), (12, 2, 10, 4, f3, gpal, None, 2),
        (6, 5, 12, 9, f4, lpal, 0, 1), (20, 12, 8, 8, f5, gpal, None, 0),
    ]
    pending = None
    for (x0, y0, w, h, idx, pal, tr, disp) in specs:
        if pending:
            kind, rect, saved = pending
            if kind == 2:
                px0, py0, pw, ph = rect
                for yy in range(py0, min(H, py0 + ph)):
                    for xx in range(px0, min(W, px0 + pw)):
                        canvas[yy * W + xx] = (0, 0, 0, 0)
            elif kind == 3:
                canvas = list(saved)
        saved = list(canvas)
        for yy in range(h):
            for xx in range(w):
                cx, cy = x0 + xx, y0 + yy
                v = idx[yy * w + xx]
                if cx < W and cy < H and v != tr:
                    canvas[cy * W + cx] = tuple(pal[v]) + (255,)
        expected.append(b"".join(bytes(p) for p in canvas))
        pending = (disp, (x0, y0, w, h), saved)
    with Image.open(path("gif/disposal-methods.gif")) as im:
        pillow = rgba_frames(im)
    note = "browser semantics computed by this script"
    if pillow != expected:
        differing = [i + 1 for i in range(len(expected)) if pillow[i] != expected[i]]
        note += f"; Pillow differs on frames {differing} (it restores disposal 2 to the background colour)"
    good_pixels("gif/disposal-methods.gif", "gif", "exact", W, H, expected, has_alpha=True, loop=5,
                durations=[100, 200, 300, 400, 0], note=note)

    # A GIF missing its trailer: the frames so far.
    data = open(path("gif/animated.gif"), "rb").read()
    assert data[-1:] == b";"
    with open(path("gif/no-trailer.gif"), "wb") as f:
        f.write(data[:-1])
    with Image.open(path("gif/animated.gif")) as im:
        frames_ref = rgba_frames(im)
    good_pixels("gif/no-trailer.gif", "gif", "exact", 48, 32, frames_ref, has_alpha=True, loop=0,
                durations=[100, 50, 200, 70, 100, 30], note="the animated fixture without its final ';'")


# MARK: - WebP

def webp_fixtures():
    base = scene(64, 48)
    base.save(path("webp/lossy.webp"), quality=90)
    good("webp/lossy.webp", "webp", "psnr", has_alpha=False)
    base.save(path("webp/lossless.webp"), lossless=True)
    good("webp/lossless.webp", "webp", "exact", has_alpha=False)
    alpha = scene(64, 48, "RGBA")
    alpha.save(path("webp/lossless-alpha.webp"), lossless=True, exact=True)
    good("webp/lossless-alpha.webp", "webp", "exact", has_alpha=True)
    alpha.save(path("webp/lossy-alpha.webp"), quality=90)
    good("webp/lossy-alpha.webp", "webp", "psnr", has_alpha=True)
    frames = []
    for i in range(4):
        im = Image.new("RGBA", (40, 30), (0, 0, 0, 0))
        d = ImageDraw.Draw(im)
        d.rectangle([i * 8, 4, i * 8 + 12, 20], fill=(40 * i, 200, 255 - 40 * i, 255))
        frames.append(im)
    frames[0].save(path("webp/animated.webp"), save_all=True, append_images=frames[1:], duration=[80, 120, 80, 200],
                   loop=2, lossless=True)
    good("webp/animated.webp", "webp", "exact", has_alpha=False, loop=2, durations=[80, 120, 80, 200],
         note="libwebp crops the opaque frames, so the file declares no alpha and decodes opaque (black canvas)")
    frames = []
    for i in range(3):
        im = Image.new("RGBA", (40, 30), (0, 0, 0, 0))
        d = ImageDraw.Draw(im)
        d.ellipse([i * 9, 3, i * 9 + 16, 26], fill=(250, 90 + 50 * i, 20, 160))
        d.rectangle([0, 26, 39, 29], fill=(10, 10, 10, 255))
        frames.append(im)
    frames[0].save(path("webp/animated-alpha.webp"), save_all=True, append_images=frames[1:], duration=[60, 90, 150],
                   loop=0, lossless=True)
    good("webp/animated-alpha.webp", "webp", "exact", has_alpha=True, loop=0, durations=[60, 90, 150])
    exif = Image.Exif()
    exif[0x0112] = 8
    base.save(path("webp/exif-orientation-8.webp"), lossless=True, exif=exif.tobytes())
    good("webp/exif-orientation-8.webp", "webp", "exact", orientation=8, has_alpha=False)


# MARK: - BMP and ICO

def bmp_file(width, height, bpp, pixel_data, palette=None, compression=0, masks=None, header=40, top_down=False):
    """A BMP file around `pixel_data` (rows already padded, in stored order, or RLE bytes)."""
    colors = len(palette) if palette else 0
    if header == 12:
        dib = struct.pack("<IHHHH", 12, width, height, 1, bpp)
        table = b"".join(bytes([b, g, r]) for (r, g, b) in palette or [])
    else:
        h = -height if top_down else height
        dib = struct.pack("<IiiHHIIiiII", header, width, h, 1, bpp, compression, len(pixel_data), 2835, 2835, colors, 0)
        if header > 40:
            m = list(masks or (0, 0, 0, 0)) + [0] * 4
            dib += struct.pack("<IIII", *m[:4])
            dib += b"\x00" * (header - 56)
        table = b"".join(bytes([b, g, r, 0]) for (r, g, b) in palette or [])
        if header == 40 and compression == 3:
            table = struct.pack("<III", *masks[:3]) + table
    offset = 14 + len(dib) + len(table)
    return b"BM" + struct.pack("<IHHI", offset + len(pixel_data), 0, 0, offset) + dib + table + pixel_data


def padded(row):
    return row + b"\x00" * ((4 - len(row) % 4) % 4)


def rle8(rows):
    """RLE8 of index rows (stored order): runs, one literal run per row, a delta on row 1."""
    out = bytearray()
    for y, row in enumerate(rows):
        x = 0
        if y == 1:
            out += bytes([0, 2, 3, 0])  # skip 3 pixels (they take palette entry 0)
            x = 3
        literal = row[x:x + 5]
        out += bytes([0, len(literal)]) + bytes(literal) + (b"\x00" if len(literal) % 2 else b"")
        x += len(literal)
        while x < len(row):
            n = 1
            while x + n < len(row) and row[x + n] == row[x] and n < 255:
                n += 1
            out += bytes([n, row[x]])
            x += n
        out += bytes([0, 0])
    out += bytes([0, 1])
    return bytes(out)


def rle4(rows):
    """RLE4 of 4-bit index rows: two-colour runs and literal runs."""
    out = bytearray()
    for row in rows:
        x = 0
        literal = row[:6]
        out += bytes([0, len(literal)])
        packed = bytes((literal[i] << 4) | (literal[i + 1] if i + 1 < len(literal) else 0) for i in range(0, len(literal), 2))
        out += packed + (b"\x00" if len(packed) % 2 else b"")
        x = len(literal)
        while x < len(row):
            n = min(2 * (1 + (len(row) - x) // 4), len(row) - x, 254)
            out += bytes([n, (row[x] << 4) | row[min(x + 1, len(row) - 1)]])
            for i in range(n):
                row[x + i] = row[x] if i % 2 == 0 else row[min(x + 1, len(row) - 1)]
            x += n
        out += bytes([0, 0])
    out += bytes([0, 1])
    return bytes(out)


def bmp_fixtures():
    im = scene(37, 23)
    for mode in ("1", "L", "P", "RGB", "RGBA"):
        src = im.convert("RGBA") if mode == "RGBA" else (im.quantize(200) if mode == "P" else im.convert(mode))
        name = f"bmp/pillow-{mode.lower()}.bmp"
        src.save(path(name))
        good(name, "bmp", "exact")

    w, h = 37, 23
    r = random.Random(11)
    palette16 = [(r.randrange(256), r.randrange(256), r.randrange(256)) for _ in range(16)]
    index_rows = [[(x // 3 + y) % 16 for x in range(w)] for y in range(h)]  # stored order = bottom-up
    packed4 = b"".join(padded(bytes((row[i] << 4) | (row[i + 1] if i + 1 < w else 0) for i in range(0, w, 2)))
                       for row in index_rows)
    for name, data in (
        ("bmp/palette4.bmp", bmp_file(w, h, 4, packed4, palette=palette16)),
        ("bmp/os2-palette8.bmp", bmp_file(w, h, 8, b"".join(padded(bytes(row)) for row in index_rows),
                                          palette=palette16, header=12)),
        ("bmp/rgb24-top-down.bmp", bmp_file(w, h, 24, b"".join(
            padded(bytes(c for x in range(w) for c in (x * 6 % 256, y * 10 % 256, 128))) for y in range(h)), top_down=True)),
        ("bmp/rgb555.bmp", bmp_file(w, h, 16, b"".join(
            padded(b"".join(struct.pack("<H", ((x % 32) << 10) | ((y % 32) << 5) | ((x + y) % 32)) for x in range(w)))
            for y in range(h)))),
        ("bmp/rgb565-bitfields.bmp", bmp_file(w, h, 16, b"".join(
            padded(b"".join(struct.pack("<H", ((x % 32) << 11) | ((y * 2 % 64) << 5) | ((x + y) % 32)) for x in range(w)))
            for y in range(h)), compression=3, masks=(0xF800, 0x07E0, 0x001F))),
        ("bmp/bgra32-v5.bmp", bmp_file(w, h, 32, b"".join(
            bytes(c for x in range(w) for c in (x * 6 % 256, y * 10 % 256, 90, (x * 7) % 256)) for y in range(h)),
            compression=3, masks=(0x00FF0000, 0x0000FF00, 0x000000FF, 0xFF000000), header=124)),
        ("bmp/rle8.bmp", bmp_file(w, h, 8, rle8([list(row) for row in index_rows]), palette=palette16, compression=1)),
        ("bmp/rle4.bmp", bmp_file(w, h, 4, rle4([list(row) for row in index_rows]), palette=palette16, compression=2)),
    ):
        with open(path(name), "wb") as f:
            f.write(data)
        good(name, "bmp", "exact")

    # ICO: Pillow's PNG entries, Pillow's 32-bit bitmap entries, and a hand-made 8-bit entry
    # with a transparency mask (as a .cur too).
    icon = scene(48, 48, "RGBA")
    icon.save(path("ico/png-entries.ico"), sizes=[(16, 16), (32, 32), (48, 48)])
    good("ico/png-entries.ico", "ico", "exact", has_alpha=True)
    icon.save(path("ico/bmp-entries.ico"), sizes=[(16, 16), (32, 32)], bitmap_format="bmp")
    good("ico/bmp-entries.ico", "ico", "exact", has_alpha=True)
    iw = ih = 16
    rows = [[(x + y) % 16 for x in range(iw)] for y in range(ih)]
    colour = b"".join(padded(bytes(row)) for row in rows)
    mask = b"".join(padded(bytes([0xF0 if y < 4 else 0x00, 0x0F if y < 4 else 0x00])) for y in range(ih))
    dib = struct.pack("<IiiHHIIiiII", 40, iw, ih * 2, 1, 8, 0, len(colour) + len(mask), 0, 0, 16, 0)
    table = b"".join(bytes([b, g, r, 0]) for (r, g, b) in palette16)
    entry_data = dib + table + colour + mask
    for ext, kind in (("ico", 1), ("cur", 2)):
        data = struct.pack("<HHH", 0, kind, 1) + struct.pack("<BBBBHHII", iw, ih, 16, 0, 1, 8, len(entry_data), 22) + entry_data
        with open(path(f"ico/palette8-mask.{ext}"), "wb") as f:
            f.write(data)
    good("ico/palette8-mask.ico", "ico", "exact", has_alpha=True)
    with Image.open(path("ico/palette8-mask.ico")) as im:
        frames = rgba_frames(im)
    good_pixels("ico/palette8-mask.cur", "ico", "exact", iw, ih, frames, has_alpha=True,
                note="the same entry as palette8-mask.ico; Pillow's CUR reader ignores the mask, so its ICO reading is the reference")


# MARK: - processing references

processing = []


def processing_reference(name, source, operation, im, compare, min_psnr=None, note=None):
    """Records what a processor must produce from `source`: Pillow's result `im` (RGBA)."""
    ref = write_reference(f"processing/{name}", [im.convert("RGBA").tobytes()])
    entry = {"name": name, "source": source, "operation": operation, "width": im.width, "height": im.height,
             "reference": ref, "compare": compare}
    if min_psnr:
        entry["minPSNR"] = min_psnr
    if note:
        entry["note"] = note
    processing.append(entry)


def processing_fixtures():
    photo_im = photo(200, 150)
    photo_im.save(path("processing/photo.png"))
    # Translucent photo whose hidden colour under transparency is magenta: a resize that does
    # not premultiply would bleed it.
    alpha = Image.new("L", photo_im.size)
    ap = alpha.load()
    for y in range(150):
        for x in range(200):
            ap[x, y] = 0 if (x - 100) ** 2 + (y - 75) ** 2 > 60 ** 2 else min(255, 80 + x)
    rgba = photo_im.convert("RGBA")
    rgba.putalpha(alpha)
    px = rgba.load()
    for y in range(150):
        for x in range(200):
            if px[x, y][3] == 0:
                px[x, y] = (255, 0, 255, 0)
    rgba.save(path("processing/photo-alpha.png"))
    # A white disc on transparent black: resized edges must stay white, not grey.
    disc = Image.new("RGBA", (120, 120), (0, 0, 0, 0))
    ImageDraw.Draw(disc).ellipse([20, 20, 100, 100], fill=(255, 255, 255, 255))
    disc.save(path("processing/white-disc.png"))

    L = Image.Resampling.LANCZOS
    processing_reference("resize-80x60", "processing/photo.png", "resize 80x60 fit", photo_im.resize((80, 60), L), "psnr", 35)
    processing_reference("resize-57x43-exact", "processing/photo.png", "resize 57x43 exact", photo_im.resize((57, 43), L), "psnr", 35)
    processing_reference("resize-20x15", "processing/photo.png", "resize 20x15 fit", photo_im.resize((20, 15), L), "psnr", 35,
                         note="a 10x reduction: Magpie box-averages first, Pillow filters the whole span")
    processing_reference("upscale-300x225", "processing/photo.png", "resize 300x225 fit upscale", photo_im.resize((300, 225), L), "psnr", 35)
    processing_reference("fill-64x64", "processing/photo.png", "resize 64x64 fill", ImageOps.fit(photo_im, (64, 64), L), "psnr", 35)
    processing_reference("fill-64x64-left", "processing/photo.png", "resize 64x64 fill left",
                         ImageOps.fit(photo_im, (64, 64), L, centering=(0.0, 0.5)), "psnr", 35)
    processing_reference("resize-alpha-80x60", "processing/photo-alpha.png", "resize 80x60 fit", rgba.resize((80, 60), L), "psnr", 35,
                         note="Pillow resizes RGBA premultiplied")
    processing_reference("blur-3", "processing/photo.png", "blur 3", photo_im.filter(ImageFilter.GaussianBlur(3)), "psnr", 35,
                         note="Pillow's GaussianBlur(3): standard deviation 3, by extended box blurs")
    processing_reference("blur-8", "processing/photo.png", "blur 8", photo_im.filter(ImageFilter.GaussianBlur(8)), "psnr", 35)
    # Rounded corners: a 4x supersampled mask, reduced by averaging.
    big = Image.new("L", (800, 600), 0)
    ImageDraw.Draw(big).rounded_rectangle([0, 0, 799, 599], radius=80, fill=255)
    mask = big.resize((200, 150), Image.Resampling.BOX)
    rounded = photo_im.convert("RGBA")
    rounded.putalpha(mask)
    processing_reference("rounded-20", "processing/photo.png", "corners 20", rounded, "psnr", 30,
                         note="golden: alpha from a 4x supersampled rounded rectangle; colour unchanged")
    big = Image.new("L", (600, 600), 0)
    ImageDraw.Draw(big).ellipse([0, 0, 599, 599], fill=255)
    circle = ImageOps.fit(photo_im, (150, 150), L).copy()
    circle = photo_im.crop((25, 0, 175, 150)).convert("RGBA")
    circle.putalpha(big.resize((150, 150), Image.Resampling.BOX))
    processing_reference("circle", "processing/photo.png", "circle", circle, "psnr", 30,
                         note="golden: the centred square with a 4x supersampled circular alpha")
    gray = photo_im.convert("L")
    processing_reference("grayscale", "processing/photo.png", "grayscale", gray, "psnr", 45,
                         note="Pillow's L conversion (ITU-R 601-2 luma)")
    processing_reference("rotate-90", "processing/photo.png", "rotate 90", photo_im.transpose(Image.Transpose.ROTATE_270), "exact")
    processing_reference("flip-h", "processing/photo.png", "flip h", photo_im.transpose(Image.Transpose.FLIP_LEFT_RIGHT), "exact")
    processing_reference("crop", "processing/photo.png", "crop 10,20,50,40", photo_im.crop((10, 20, 60, 60)), "exact")


# MARK: - bad inputs and other formats

def bad_fixtures():
    bad("bad/empty.jpg", b"", ["empty"], "no bytes at all")
    bad("bad/random.bin", bytes(rng.randrange(256) for _ in range(2048)), ["unknownFormat"], "random bytes")
    noise = bytes(rng.randrange(256) for _ in range(2048))
    bad("bad/random-behind-jpeg.jpg", b"\xff\xd8\xff" + noise, ["corrupt", "truncated"], "JPEG signature, then noise", "jpeg")
    bad("bad/random-behind-png.png", b"\x89PNG\r\n\x1a\n" + noise, ["corrupt", "truncated"], "PNG signature, then noise", "png")
    bad("bad/random-behind-gif.gif", b"GIF89a" + noise, ["corrupt", "truncated", "tooLarge"], "GIF signature, then noise", "gif")
    bad("bad/random-behind-webp.webp", b"RIFF" + struct.pack("<I", len(noise) + 4) + b"WEBP" + noise,
        ["corrupt", "truncated"], "WebP signature, then noise", "webp")

    for src, fmt in (("jpeg/baseline.jpg", "jpeg"), ("jpeg/progressive.jpg", "jpeg"), ("png/rgba8.png", "png"),
                     ("png/rgb8-adam7.png", "png"), ("gif/animated.gif", "gif"), ("webp/lossy.webp", "webp"),
                     ("webp/lossless.webp", "webp"), ("webp/animated.webp", "webp")):
        data = open(path(src), "rb").read()
        name = "bad/truncated-" + src.replace("/", "-")
        bad(name, data[: len(data) * 6 // 10], ["truncated"], f"{src} cut at 60%", fmt)
    data = open(path("png/rgb8.png"), "rb").read()
    bad("bad/truncated-in-header.png", data[:20], ["truncated"], "a PNG cut inside IHDR", "png")
    data = open(path("gif/still.gif"), "rb").read()
    bad("bad/truncated-in-header.gif", data[:9], ["truncated"], "a GIF cut inside the screen descriptor", "gif")

    # PNG checksum failure in a critical chunk.
    data = bytearray(open(path("png/rgb8.png"), "rb").read())
    idat = data.index(b"IDAT")
    data[idat + 6] ^= 0xFF
    bad("bad/png-bad-crc.png", bytes(data), ["corrupt"], "one byte of IDAT flipped (CRC error)", "png")

    # Decompression bombs: headers declare more pixels than the default 100-megapixel limit.
    ihdr = struct.pack(">IIBBBBB", 100000, 100000, 8, 2, 0, 0, 0)
    bomb = b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + png_chunk(b"IDAT", zlib.compress(b"\x00" * 300001)) + png_chunk(b"IEND", b"")
    bad("bad/png-100000x100000.png", bomb, ["tooLarge"], "IHDR declares 100000x100000 RGB", "png", (100000, 100000))
    # A valid, blank 12000x12000 1-bit PNG: 144 megapixels, a few kilobytes.
    row = b"\x00" + b"\x00" * (12000 // 8)
    comp = zlib.compressobj(9)
    payload = b"".join(comp.compress(row) for _ in range(12000)) + comp.flush()
    huge = (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", 12000, 12000, 1, 0, 0, 0, 0))
            + png_chunk(b"IDAT", payload) + png_chunk(b"IEND", b""))
    bad("bad/png-huge-blank.png", huge, ["tooLarge"], "a valid blank 12000x12000 PNG (144 megapixels)", "png", (12000, 12000))
    # JPEG whose SOF claims 60000x60000.
    data = bytearray(open(path("jpeg/baseline.jpg"), "rb").read())
    sof = data.index(b"\xff\xc0")
    data[sof + 5:sof + 9] = struct.pack(">HH", 60000, 60000)
    bad("bad/jpeg-60000x60000.jpg", bytes(data), ["tooLarge"], "SOF0 declares 60000x60000", "jpeg", (60000, 60000))
    # GIF whose logical screen is 65535x65535.
    data = bytearray(open(path("gif/still.gif"), "rb").read())
    data[6:10] = struct.pack("<HH", 65535, 65535)
    bad("bad/gif-65535x65535.gif", bytes(data), ["tooLarge"], "logical screen 65535x65535", "gif", (65535, 65535))
    # Animated WebP whose canvas claims 16383x16383 (frames stay small, so the file is valid).
    data = bytearray(open(path("webp/animated.webp"), "rb").read())
    vp8x = data.index(b"VP8X")
    data[vp8x + 12:vp8x + 18] = (16382).to_bytes(3, "little") + (16382).to_bytes(3, "little")
    bad("bad/webp-canvas-16383.webp", bytes(data), ["tooLarge"], "VP8X canvas 16383x16383", "webp", (16383, 16383))

    # BMP and ICO bombs and truncations.
    data = bytearray(open(path("bmp/pillow-rgb.bmp"), "rb").read())
    data[18:26] = struct.pack("<ii", 50000, 50000)
    bad("bad/bmp-50000x50000.bmp", bytes(data), ["tooLarge"], "BMP header declares 50000x50000", "bmp", (50000, 50000))
    data = open(path("bmp/pillow-rgb.bmp"), "rb").read()
    bad("bad/truncated-bmp.bmp", data[: len(data) * 6 // 10], ["truncated"], "a BMP cut at 60%", "bmp")
    data = open(path("bmp/rle8.bmp"), "rb").read()
    bad("bad/truncated-bmp-rle8.bmp", data[: len(data) * 6 // 10], ["truncated"], "an RLE8 BMP cut at 60%", "bmp")
    data = open(path("ico/bmp-entries.ico"), "rb").read()
    bad("bad/truncated-ico.ico", data[: len(data) // 2], ["truncated"], "an ICO cut in half", "ico")

    # Formats recognised but not decoded.
    im = scene(16, 16)
    buf = io.BytesIO(); im.save(buf, "TIFF"); bad("other/image.tiff", buf.getvalue(), ["unsupportedFormat"], "TIFF", "tiff")
    try:
        buf = io.BytesIO(); im.save(buf, "AVIF"); avif = buf.getvalue()
    except (KeyError, OSError):
        avif = struct.pack(">I", 28) + b"ftypavif" + b"\x00\x00\x00\x00" + b"avifmif1miaf" + b"\x00" * 64
    bad("other/image.avif", avif, ["unsupportedFormat"], "AVIF", "avif")
    heic = struct.pack(">I", 24) + b"ftypheic" + b"\x00\x00\x00\x00" + b"mif1heic" + b"\x00" * 64
    bad("other/image.heic", heic, ["unsupportedFormat"], "HEIC (an ftyp box only)", "heic")
    jxl = b"\xff\x0a" + bytes(rng.randrange(256) for _ in range(64))
    bad("other/image.jxl", jxl, ["unsupportedFormat"], "JPEG XL codestream signature", "jxl")

    # A PNG named .jpg: the bytes decide.
    shutil.copy(path("png/rgb8.png"), path("other/lying-extension.jpg"))
    entry = next(e for e in manifest if e["file"] == "png/rgb8.png")
    lying = dict(entry, file="other/lying-extension.jpg", note="a PNG file named .jpg")
    manifest.append(lying)


def main():
    # Everything here is regenerated, except images/fuzz: inputs the fuzzers found, kept as
    # regression fixtures.
    if os.path.isdir(REFERENCE):
        shutil.rmtree(REFERENCE)
    os.makedirs(REFERENCE)
    os.makedirs(IMAGES, exist_ok=True)
    for name in os.listdir(IMAGES):
        if name != "fuzz":
            shutil.rmtree(os.path.join(IMAGES, name))
    jpeg_fixtures()
    png_fixtures()
    gif_fixtures()
    webp_fixtures()
    bmp_fixtures()
    processing_fixtures()
    bad_fixtures()
    with open(os.path.join(ROOT, "manifest.json"), "w") as f:
        json.dump({"generator": f"scripts/make-fixtures.py with Pillow {Image.__version__}",
                   "fixtures": manifest, "processing": processing}, f, indent=1)
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(dp, fn)) for dp, _, fns in os.walk(ROOT) for fn in fns)
    print(f"{len(manifest)} fixtures, {total / 1024:.0f} KB in {os.path.relpath(ROOT)}")


if __name__ == "__main__":
    main()
