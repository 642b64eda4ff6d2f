"""What a lossless crop takes from its source JPEG: the header's size, grid and segments, and putting segments back.

:func:`jpeg_header` reads the picture's size, iMCU block, component count and
APPn/COM segments before the first scan; :func:`kept_segments` chooses the
segments a crop carries and :func:`insert_segments` puts them into the cut
file (the module docstring of :mod:`multicrop.io.lossless` says which and why).
Re-exported by :mod:`multicrop.io.lossless`.
"""

from __future__ import annotations

from collections.abc import Sequence

from .jpeg import JpegMarkers, read_markers

__all__ = ["JpegHeader", "insert_segments", "jpeg_header", "kept_segments"]


#: What :func:`jpeg_header` reads: the markers' own record (size, iMCU ``block``, ``components``, APPn/COM ``segments``).
JpegHeader = JpegMarkers


def jpeg_header(data: bytes) -> JpegMarkers:
    """Read the size, iMCU block, component count and APPn/COM segments of the JPEG ``data``.

    Raises
    ------
    MulticropError
        ``data`` is not a JPEG stream, or its markers end before a frame header.

    Examples
    --------
    >>> import io
    >>> from PIL import Image
    >>> buf = io.BytesIO()
    >>> Image.new("RGB", (40, 24)).save(buf, "JPEG", subsampling=1)
    >>> h = jpeg_header(buf.getvalue())
    >>> h.size, h.block, h.components
    ((40, 24), (16, 8), 3)
    """
    return read_markers(data)


def _segment(marker: int, payload: bytes) -> bytes:
    return bytes((0xFF, marker)) + (len(payload) + 2).to_bytes(2, "big") + payload


def kept_segments(header: JpegMarkers, *, exif: bytes = b"", keep_all: bool = False) -> list[bytes]:
    """The source's segments a crop carries: ICC profile and ``exif``; with ``keep_all`` all but MPF and JFIF.

    ``exif`` (the block Pillow reads, starting ``b"Exif\\0\\0"``) is ignored
    with ``keep_all``, which keeps the source's own EXIF segment.  A JFIF
    APP0 and an Adobe APP14 are never copied: the encoder writes its own.
    """
    if keep_all:
        return [s for s in header.segments
                if not (s[1] == 0xE2 and s[4:8] == b"MPF\0") and not (s[1] == 0xE0 and s[4:9] == b"JFIF\0")
                and not (s[1] == 0xEE and s[4:9] == b"Adobe")]
    out = [_segment(0xE1, exif)] if exif and len(exif) + 2 <= 0xFFFF else []
    return out + [s for s in header.segments if s[1] == 0xE2 and s[4:16] == b"ICC_PROFILE\0"]


def insert_segments(jpeg: bytes, segments: Sequence[bytes]) -> bytes:
    """``jpeg`` with whole marker ``segments`` put after its SOI and (when present) its JFIF APP0.

    Examples
    --------
    >>> insert_segments(b"\\xff\\xd8\\xff\\xdb..", [b"\\xff\\xfe\\x00\\x03!"])
    b'\\xff\\xd8\\xff\\xfe\\x00\\x03!\\xff\\xdb..'
    """
    if not segments:
        return jpeg
    pos = 2
    if jpeg[2:4] == b"\xff\xe0":
        pos = 4 + int.from_bytes(jpeg[4:6], "big")
    return jpeg[:pos] + b"".join(segments) + jpeg[pos:]
