"""Truncation checks: a file shorter than its header says it can be, or a PNG whose data ends early."""

from __future__ import annotations

import os
import zlib
from typing import BinaryIO

from PIL import Image

from ..errors import ImageTruncatedError, MulticropError
from .formats import _prefix
from .jpeg import HUFFMAN_SOF, read_markers

__all__ = ["min_data_bytes", "png_data_short", "check_complete"]


def _jpeg_layout(source: str | os.PathLike | BinaryIO) -> tuple[int, list[tuple[int, int]], int] | None:
    """(SOF marker, [(h, v) sampling per component], offset of the first scan's data) of a JPEG, or None."""
    data = _prefix(source, 1 << 20)  # markers before the first scan; APP segments are at most 64 KB each
    try:
        m = read_markers(data)
    except MulticropError:
        return None
    return None if m.scan is None else (m.sof, list(m.sampling), m.scan)


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def min_data_bytes(im: Image.Image, source: str | os.PathLike | BinaryIO) -> int:
    """Fewest bytes a complete file of ``im``'s format, size and mode can have (0 when no bound is known).

    Sound lower bounds, so no complete file is ever refused: a Huffman-coded
    JPEG spends at least one bit on the DC coefficient of every 8x8 block of
    every component; Deflate (PNG) expands at most 1032 times (half of that is used), and a PNG row
    holds at least a filter byte and one bit per pixel; an uncompressed BMP
    holds its rows.  A file shorter than this is truncated, or its header lies
    about its size.
    """
    w, h = im.size
    if im.format in ("JPEG", "MPO"):
        layout = _jpeg_layout(source)
        if layout is None or layout[0] not in HUFFMAN_SOF or not layout[1]:
            return 0
        _, comps, scan = layout
        hmax, vmax = max(c[0] for c in comps) or 1, max(c[1] for c in comps) or 1
        blocks = sum(_ceil(_ceil(w * ch, hmax), 8) * _ceil(_ceil(h * cv, vmax), 8) for ch, cv in comps)
        return scan + blocks // 8
    if im.format == "PNG":
        return h * (1 + _ceil(w, 8)) // 2064  # half Deflate's 1032:1 ceiling: a margin for chunk overheads
    if im.format == "BMP" and im.tile and im.tile[0][0] == "raw":
        bits = {"1": 1, "L": 8, "P": 1, "RGB": 24, "RGBA": 32}.get(im.mode, 1)
        return int(im.tile[0][2]) + h * _ceil(w * bits, 8)
    return 0


def _kb(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1_000_000 else f"{n / 1e3:.1f} KB" if n >= 1000 else f"{n} bytes"


_PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))


def _png_rows_bytes(w: int, h: int, depth: int, colour: int, interlace: int) -> int:
    """Bytes the PNG's image data must inflate to: every row of every pass, with its filter byte."""
    bits = depth * _PNG_CHANNELS.get(colour, 1)
    if not interlace:
        return h * (1 + _ceil(w * bits, 8))
    total = 0
    for x0, y0, dx, dy in _ADAM7:
        pw, ph = _ceil(max(0, w - x0), dx), _ceil(max(0, h - y0), dy)
        if pw and ph:
            total += ph * (1 + _ceil(pw * bits, 8))
    return total


def png_data_short(source: str | os.PathLike | BinaryIO) -> tuple[int, int] | None:
    """``(bytes inflated, bytes needed)`` when a PNG's image data ends before its last row, else None.

    Pillow decodes a PNG whose compressed stream ends early without a word
    (the missing rows stay black), so the IDAT stream is inflated here,
    1 MB at a time and discarded, until it holds every row the header
    declares or ends.
    """
    try:
        fh = open(source, "rb") if isinstance(source, (str, os.PathLike)) else source
    except OSError:
        return None
    pos = None if isinstance(source, (str, os.PathLike)) else fh.tell()
    try:
        fh.seek(0)
        if fh.read(8) != b"\x89PNG\r\n\x1a\n":
            return None
        need = got = 0
        inflater = zlib.decompressobj()
        while True:
            head = fh.read(8)
            if len(head) < 8:
                break
            length, kind = int.from_bytes(head[:4], "big"), head[4:]
            if kind == b"IHDR":
                ihdr = fh.read(length)
                w, h = int.from_bytes(ihdr[0:4], "big"), int.from_bytes(ihdr[4:8], "big")
                need = _png_rows_bytes(w, h, ihdr[8], ihdr[9], ihdr[12])
                fh.seek(4, os.SEEK_CUR)
                continue
            if kind == b"IDAT":
                left = length
                while left > 0 and got < need and not inflater.eof:
                    data = fh.read(min(left, 1 << 20))
                    if not data:
                        break
                    left -= len(data)
                    while data and got < need and not inflater.eof:
                        got += len(inflater.decompress(data, 1 << 20))
                        data = inflater.unconsumed_tail
                if got >= need:
                    return None
                fh.seek(left + 4, os.SEEK_CUR)
                continue
            if kind == b"IEND":
                break
            fh.seek(length + 4, os.SEEK_CUR)
        return (got, need) if need and got < need else None
    except (OSError, zlib.error, ValueError):
        return None  # a damaged stream: Pillow's own decode reports it
    finally:
        if pos is None:
            fh.close()
        else:
            fh.seek(pos)


def check_complete(im: Image.Image, source: str | os.PathLike | BinaryIO, label: str, n_bytes: int) -> None:
    w, h = im.size
    if n_bytes >= 0:
        need = min_data_bytes(im, source)
        if n_bytes < need:
            raise ImageTruncatedError(
                f"{label}: truncated or corrupt image: its {im.format} header says {w}x{h}, which needs at least "
                f"{_kb(need)}, but the file has {_kb(n_bytes)}")
    if im.format == "PNG":
        short = png_data_short(source)
        if short is not None:
            raise ImageTruncatedError(
                f"{label}: truncated or corrupt image: its PNG data ends after {_kb(short[0])} of the "
                f"{_kb(short[1])} that {w}x{h} needs")
