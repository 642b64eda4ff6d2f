"""Crops rendered from the full-resolution photo at a requested pixel width, cached: the strip's
thumbnails (its CSS height times the screen's pixel ratio) and the post preview's slides.

A crop shown ``width`` px wide needs little more of the photo than ``width`` px across the crop: a
JPEG is decoded at the largest of libjpeg's DCT scales (1/2, 1/4, 1/8) that still leaves twice that
many (measured on the bundled example upscaled 2x, a 300 px thumbnail of a 1600 px crop is 0.21
grey levels from the full decode's at 1/2, 1.07 at 1/4: the DCT downscale is softer than Lanczos
unless it keeps twice the pixels), and decodes faster (that 20 MP JPEG: 0.14 s whole, 0.06 s at
1/2, 0.04 s at 1/4, on this project's 2-core machine).  Other
formats are decoded at full size.  The latest two decodes are kept while they are used (a strip
asks for all its cards at once; one unused for 20 s is dropped at the next render), the rendered
JPEGs in an LRU of bytes.
"""

from __future__ import annotations

import io
import threading
import time
from collections import OrderedDict

from PIL import Image

from ..geometry import Box
from ..io.opener import open_image
from ..io.orientation import transpose
from .photos import Photo

__all__ = ["RenderCache", "dct_scale"]


def dct_scale(box: Box, width: int, fmt: str | None) -> int:
    """The largest of 1, 2, 4, 8 that leaves ``box`` at least ``2 * width`` px wide (1 unless a JPEG).

    Examples
    --------
    >>> dct_scale(Box(0, 0, 3000, 3750), 300, "JPEG"), dct_scale(Box(0, 0, 3000, 3750), 300, "PNG")
    (4, 1)
    >>> dct_scale(Box(0, 0, 500, 500), 300, "JPEG")
    1
    """
    if fmt not in ("JPEG", "MPO"):
        return 1
    s = 1
    while s < 8 and box.w / (2 * s) >= 2 * width:
        s *= 2
    return s


class RenderCache:
    """Rendered crops by (photo, box, width): ``max_bytes`` of JPEGs, and each photo's latest decode."""

    def __init__(self, *, max_bytes: int = 64 * 1024 * 1024, decodes: int = 2, keep_s: float = 20.0) -> None:
        self.max_bytes, self.decodes, self.keep_s = max_bytes, decodes, keep_s
        self._jpegs: OrderedDict[tuple, bytes] = OrderedDict()
        # (photo, DCT scale) -> (decode, when last used): a 24 MP decode is 72 MB, so kept only a moment
        self._images: OrderedDict[tuple[str, int], tuple[Image.Image, float]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()
        self.renders = 0  # crops rendered (not served from the cache): the tests read it

    def forget(self, pid: str) -> None:
        """Drop everything of photo ``pid`` (it was deleted)."""
        with self._lock:
            for key in [k for k in self._jpegs if k[0] == pid]:
                self._size -= len(self._jpegs.pop(key))
            for key in [k for k in self._images if k[0] == pid]:
                del self._images[key]  # never closed: another thread may be cutting from it

    def _decoded(self, photo: Photo, scale: int) -> Image.Image:
        key, now = (photo.id, scale), time.monotonic()
        with self._lock:
            for old in [k for k, (_, used) in self._images.items() if now - used > self.keep_s]:
                del self._images[old]
            if key in self._images:
                self._images[key] = (self._images[key][0], now)
                self._images.move_to_end(key)
                return self._images[key][0]
        loaded = photo.loaded
        if scale == 1 or loaded.path is None:
            im = loaded.open_full(rgb=True)
        else:
            W, H = loaded.size
            im = open_image(loaded.path, max_pixels=W * H)
            im.draft("RGB", (W // scale, H // scale))  # the DCT does the downscale (the raw frame: W, H or H, W)
            im.load()
            im = transpose(im).convert("RGB")
        with self._lock:
            self._images[key] = (im, now)
            while len(self._images) > self.decodes:
                self._images.popitem(last=False)
        return im

    def render(self, photo: Photo, box: Box, width: int) -> bytes:
        """The crop ``box`` (whole source px) as a JPEG at most ``width`` px wide (never enlarged)."""
        key = (photo.id, box.x, box.y, box.w, box.h, width)
        with self._lock:
            if key in self._jpegs:
                self._jpegs.move_to_end(key)
                return self._jpegs[key]
        W, H = photo.loaded.size
        im = self._decoded(photo, dct_scale(box, width, photo.loaded.format))
        sx, sy = im.width / W, im.height / H
        piece = im.crop((round(box.x * sx), round(box.y * sy), round(box.x2 * sx), round(box.y2 * sy)))
        if piece.width > width:
            piece = piece.resize((width, max(1, round(piece.height * width / piece.width))), Image.Resampling.LANCZOS)
        buf = io.BytesIO()
        piece.save(buf, format="JPEG", quality=90)
        data = buf.getvalue()
        with self._lock:
            self.renders += 1
            if key not in self._jpegs:
                self._jpegs[key] = data
                self._size += len(data)
            while self._size > self.max_bytes and self._jpegs:
                self._size -= len(self._jpegs.popitem(last=False)[1])
        return data
