#!/usr/bin/env python3
"""Pillow's counterpart of `magpie thumbnail FILES --size 256 --quality 80`: 256 px JPEG
thumbnails (draft mode, Image.thumbnail) of every file, one after another."""
import os
import sys
import tempfile

from PIL import Image

out = tempfile.mkdtemp()
for path in sys.argv[1:]:
    with Image.open(path) as im:
        im.thumbnail((256, 256))
        im.save(os.path.join(out, os.path.basename(path)), "JPEG", quality=80)
