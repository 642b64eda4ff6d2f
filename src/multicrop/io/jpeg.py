"""The one JPEG marker parser: frame header, sampling, APPn/COM segments and the first scan's offset.

The truncation check (:func:`multicrop.io.integrity.min_data_bytes`), the lossless
cutter (:func:`multicrop.io.lossless.jpeg_header`) and :attr:`LoadedImage.jpeg_block`
all read a JPEG's markers through :func:`read_markers`.  The completeness check
(:func:`multicrop.io.complete.jpeg_problem`) walks the whole stream, scan data
included, which this parser stops before; it takes its marker tables from here.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import MulticropError

__all__ = ["JpegMarkers", "read_markers", "SOF_MARKERS", "HUFFMAN_SOF", "PROGRESSIVE_SOF", "RST_MARKERS"]

#: Start-of-frame markers (every SOFn but DHT 0xC4, JPG 0xC8 and DAC 0xCC).
SOF_MARKERS = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})
#: Baseline, extended and progressive Huffman coding.
HUFFMAN_SOF = (0xC0, 0xC1, 0xC2)
#: Progressive start-of-frame markers (Huffman and arithmetic, sequential or differential).
PROGRESSIVE_SOF = frozenset({0xC2, 0xC6, 0xCA, 0xCE})
#: Restart markers RST0 to RST7, standalone inside scan data.
RST_MARKERS = range(0xD0, 0xD8)
_STANDALONE = frozenset({0x01, *RST_MARKERS})


@dataclass(frozen=True)
class JpegMarkers:
    """What a JPEG's markers before its first scan say.

    Attributes
    ----------
    sof : int
        The start-of-frame marker (0xC0 baseline, 0xC2 progressive, ...).
    size : (int, int)
        ``(width, height)`` of the (first) picture.
    sampling : tuple of (int, int)
        Each component's ``(h, v)`` sampling factors.
    segments : tuple of bytes
        Every APPn and COM segment before the frame header, whole (marker, length and payload).
    scan : int or None
        Offset of the first scan's entropy-coded data; None when the markers stop before it.
    """

    sof: int
    size: tuple[int, int]
    sampling: tuple[tuple[int, int], ...]
    segments: tuple[bytes, ...]
    scan: int | None = None

    @property
    def components(self) -> int:
        return len(self.sampling)

    @property
    def block(self) -> tuple[int, int]:
        """The iMCU size in pixels (8 or 16 per axis): the grid a lossless crop's corner lies on."""
        if len(self.sampling) <= 1:
            return (8, 8)
        return (8 * max(f[0] for f in self.sampling), 8 * max(f[1] for f in self.sampling))


def read_markers(data: bytes) -> JpegMarkers:
    """Parse the markers of the JPEG stream ``data`` up to its first scan (or as far as they go).

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
    >>> m = read_markers(buf.getvalue())
    >>> m.size, m.block, m.components, m.scan is not None
    ((40, 24), (16, 8), 3, True)
    """
    if data[:2] != b"\xff\xd8":
        raise MulticropError("not a JPEG stream (no SOI marker)")
    segments: list[bytes] = []
    frame: tuple[int, tuple[int, int], tuple[tuple[int, int], ...]] | None = None
    i, n = 2, len(data)
    while i + 4 <= n:
        if data[i] != 0xFF:
            if frame is None:
                raise MulticropError(f"corrupt JPEG markers at byte {i}")
            break
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in _STANDALONE:
            i += 2
            continue
        length = int.from_bytes(data[i + 2:i + 4], "big")
        end = i + 2 + length
        if marker == 0xDA:
            if frame is None:
                break
            return JpegMarkers(*frame, tuple(segments), end)
        if length < 2 or end > n:
            break
        if frame is None and (0xE0 <= marker <= 0xEF or marker == 0xFE):
            segments.append(data[i:end])
        elif frame is None and marker in SOF_MARKERS:
            seg = data[i + 4:end]
            if len(seg) < 6:
                break
            h, w, nc = int.from_bytes(seg[1:3], "big"), int.from_bytes(seg[3:5], "big"), seg[5]
            sampling = tuple((seg[7 + 3 * c] >> 4, seg[7 + 3 * c] & 15) for c in range(nc) if 7 + 3 * c < len(seg))
            frame = (marker, (w, h), sampling)
        i = end
    if frame is None:
        raise MulticropError("no JPEG frame header before the first scan")
    return JpegMarkers(*frame, tuple(segments), None)
