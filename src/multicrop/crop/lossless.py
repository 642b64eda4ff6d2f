"""Lossless JPEG crops with ``jpegtran -crop`` (libjpeg-turbo).

A JPEG can be cut without decoding and re-encoding when the crop's top-left
corner lies on the iMCU grid (8 or 16 pixels, by chroma subsampling); its
right and bottom edges may fall anywhere.  :func:`snap_box` moves a box's
top-left corner to the grid and keeps its width and height, so the ratio is
exactly the box's; :func:`lossless_crop` cuts it.  The decoded pixels of the
crop equal the same region of the decoded original (luma exactly; chroma too
for 4:4:4, and away from the edges for subsampled chroma, whose upsampling
reads neighbouring samples).

Where that cannot be done, :func:`lossless_reason` says why and the caller
re-encodes (recording the reason): no ``jpegtran`` on the PATH, a source
that is not a JPEG file, an output format other than JPEG, an EXIF rotation
(not applied losslessly here), CMYK.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

from ..errors import MulticropError
from ..geometry import Box
from ..io import LoadedImage

__all__ = ["LOSSLESS_MODES", "jpegtran", "lossless_reason", "snap_box", "lossless_crop", "start_crop", "finish_crop",
           "insert_exif"]

LOSSLESS_MODES = ("auto", "never")


@functools.lru_cache(maxsize=1)
def jpegtran() -> str | None:
    """Path of the ``jpegtran`` program, or None (``MULTICROP_JPEGTRAN`` overrides the PATH lookup)."""
    env = os.environ.get("MULTICROP_JPEGTRAN")
    if env is not None:
        return env or None
    return shutil.which("jpegtran")


def lossless_reason(loaded: LoadedImage, suffix: str, mode: str) -> str | None:
    """Why this photo's crops cannot be cut losslessly, or None when they can."""
    if mode == "never":
        return "--lossless never"
    if loaded.format != "JPEG" or loaded.path is None:
        return "the source is not a JPEG file"
    if suffix not in (".jpg", ".jpeg"):
        return f"the output format is {suffix[1:]}, not JPEG"
    if loaded.orientation != 1:
        return f"EXIF orientation {loaded.orientation} is not applied losslessly"
    if loaded.mode not in ("RGB", "L") or loaded.jpeg_block is None:
        return f"{loaded.mode} JPEGs are re-encoded"
    if jpegtran() is None:
        return "jpegtran (libjpeg-turbo-progs) is not installed"
    return None


def snap_box(box: Box, block: tuple[int, int], size: tuple[int, int]) -> Box:
    """``box`` with its top-left corner on the ``block`` grid, same width and height, inside ``size``.

    Examples
    --------
    >>> snap_box(Box(21, 9, 100, 150), (16, 16), (400, 300))
    Box(x=16, y=16, w=100, h=150)
    >>> snap_box(Box(395, 0, 5, 5), (16, 16), (400, 300))
    Box(x=384, y=0, w=5, h=5)
    """
    x, y, w, h = (int(v) for v in (box.x, box.y, box.w, box.h))
    bx, by = block
    nx = round(x / bx) * bx
    if nx + w > size[0]:
        nx = (x // bx) * bx
    ny = round(y / by) * by
    if ny + h > size[1]:
        ny = (y // by) * by
    return Box(nx, ny, w, h)


def insert_exif(jpeg: bytes, exif: bytes) -> bytes:
    """``jpeg`` with an APP1 EXIF segment (``exif`` starts ``b"Exif\\0\\0"``) after SOI and any APP0."""
    if not exif:
        return jpeg
    if len(exif) + 2 > 0xFFFF:
        return jpeg
    seg = b"\xff\xe1" + (len(exif) + 2).to_bytes(2, "big") + exif
    pos = 2
    if jpeg[2:4] == b"\xff\xe0":
        pos = 4 + int.from_bytes(jpeg[4:6], "big")
    return jpeg[:pos] + seg + jpeg[pos:]


def start_crop(source: str | os.PathLike, box: Box, *, keep_all: bool = False) -> subprocess.Popen | MulticropError:
    """Start ``jpegtran -crop`` for ``box`` (its top-left on the iMCU grid); :func:`finish_crop` collects it.

    Several crops of one photo run at once: each jpegtran call entropy-decodes
    the whole file, so on a multi-core machine they overlap.  Returns the
    error instead of raising it when jpegtran cannot be started.
    """
    prog = jpegtran()
    if prog is None:
        return MulticropError("jpegtran is not installed")
    spec = f"{int(box.w)}x{int(box.h)}+{int(box.x)}+{int(box.y)}"
    cmd = [prog, "-copy", "all" if keep_all else "icc", "-crop", spec, str(source)]
    try:
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as exc:
        return MulticropError(f"jpegtran failed ({exc})")


def finish_crop(proc: subprocess.Popen | MulticropError, box: Box, dest: str | os.PathLike, *, exif: bytes = b"",
                keep_all: bool = False) -> None:
    """Wait for :func:`start_crop`'s process and write its crop (with ``exif`` unless ``keep_all``) to ``dest``.

    Raises
    ------
    MulticropError
        jpegtran failed (its message), or its output is not ``box``'s size.
    """
    if isinstance(proc, MulticropError):
        raise proc
    try:
        out, err = proc.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise MulticropError("jpegtran failed (timed out)") from None
    if proc.returncode != 0 or not out:
        msg = err.decode("utf-8", "replace").strip().splitlines()
        raise MulticropError(f"jpegtran failed ({msg[-1] if msg else f'exit {proc.returncode}'})")
    data = out if keep_all else insert_exif(out, exif)
    size = _jpeg_size(data)
    if size != (int(box.w), int(box.h)):
        raise MulticropError(f"jpegtran wrote {size}, not {int(box.w)}x{int(box.h)}")
    Path(dest).write_bytes(data)


def lossless_crop(source: str | os.PathLike, box: Box, dest: str | os.PathLike, *, exif: bytes = b"",
                  keep_all: bool = False) -> None:
    """Cut ``box`` (top-left already on the iMCU grid) from the JPEG ``source`` into ``dest``.

    Parameters
    ----------
    exif : bytes
        EXIF block written into the crop (the ICC profile is copied by
        jpegtran); ignored with ``keep_all``, which copies every marker.

    Raises
    ------
    MulticropError
        jpegtran failed (its message), or its output is not ``box``'s size.
    """
    finish_crop(start_crop(source, box, keep_all=keep_all), box, dest, exif=exif, keep_all=keep_all)


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    """``(width, height)`` from the first SOF marker."""
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        length = int.from_bytes(data[i + 2:i + 4], "big")
        if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            return int.from_bytes(data[i + 7:i + 9], "big"), int.from_bytes(data[i + 5:i + 7], "big")
        i += 2 + length
    return None
