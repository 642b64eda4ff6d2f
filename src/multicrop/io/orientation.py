"""EXIF orientation: read it, apply it, and tell whether a photo's EXIF block can be read at all.

The one place multicrop turns a photo upright: :func:`transpose` (no copy
when there is nothing to do) is what :mod:`multicrop.io.load` applies to
every photo, and what any other reader of photos (report thumbnails, user
backgrounds) calls instead of ``ImageOps.exif_transpose``.
"""

from __future__ import annotations

import warnings

from PIL import Image

from .metadata import WARNINGS_LOCK

__all__ = ["orientation", "transpose", "exif_unreadable"]


def orientation(im: Image.Image) -> int:
    """The EXIF orientation (1 when absent or unreadable); Pillow's warnings on bad EXIF are silenced."""
    with WARNINGS_LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            value = im.getexif().get(0x0112, 1)
        except Exception:  # noqa: BLE001 - unreadable EXIF: no orientation
            return 1
    return value if isinstance(value, int) and 1 <= value <= 8 else 1


def transpose(im: Image.Image) -> Image.Image:
    """Apply the EXIF orientation; no copy when there is nothing to do (200 MP = 600 MB)."""
    value = orientation(im)
    if value == 1:
        return im
    method = {2: Image.Transpose.FLIP_LEFT_RIGHT, 3: Image.Transpose.ROTATE_180, 4: Image.Transpose.FLIP_TOP_BOTTOM,
              5: Image.Transpose.TRANSPOSE, 6: Image.Transpose.ROTATE_270, 7: Image.Transpose.TRANSVERSE,
              8: Image.Transpose.ROTATE_90}[value]
    return im.transpose(method)


def exif_unreadable(im: Image.Image) -> bool:
    """True when Pillow cannot parse the image's EXIF block without complaint."""
    from .metadata import read_exif

    if getattr(im, "_multicrop_warned", False):
        return True
    raw = im.info.get("exif")
    if raw:
        return read_exif(raw if isinstance(raw, bytes) else bytes(raw))[1]
    with WARNINGS_LOCK, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            im.getexif()
        except Exception:  # noqa: BLE001
            return True
    return bool(caught)
