"""The shapes of instance outlines and their masks: polygon rings and COCO run-length counts.

Masks are drawn with :func:`cv2.fillPoly` at the photo's size (sub-pixel
vertices, a 4x finer grid, majority vote), and COCO's run-length counts,
plain or compressed, are decoded here without pycocotools.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import DatasetError

__all__ = ["Polygons", "RunLength", "decode_rle", "polygon_mask", "rle_counts_from_string", "split_rings"]

#: Sub-pixel bits handed to :func:`cv2.fillPoly` (vertices placed to 1/16 of a fine pixel).
_SHIFT = 4
#: Polygons are filled on a grid this many times finer than the photo, then each pixel
#: is inside when more than half its sub-pixels are.
_FINE = 4


@dataclass(frozen=True)
class Polygons:
    """An outline drawn as one or more rings, in the photo's pixels.

    Attributes
    ----------
    rings : tuple of tuple of float
        Each ring ``(x1, y1, x2, y2, ...)``, at least three points, pixel
        coordinates with ``(0, 0)`` the top-left corner of the top-left
        pixel (COCO's convention).
    """

    rings: tuple[tuple[float, ...], ...]

    def mask(self, width: int, height: int) -> np.ndarray:
        """Boolean mask of shape ``(height, width)``."""
        return polygon_mask(self.rings, width=width, height=height)


@dataclass(frozen=True)
class RunLength:
    """An outline given as COCO run-length counts (column-major, zeros first).

    Attributes
    ----------
    counts : tuple of int
    size : (int, int)
        ``(height, width)`` the counts were written for.
    """

    counts: tuple[int, ...]
    size: tuple[int, int]

    def mask(self, width: int, height: int) -> np.ndarray:
        """Boolean mask of shape ``(height, width)``; nearest-neighbour resized if written for another size."""
        h, w = self.size
        m = decode_rle(self.counts, height=h, width=w)
        if (h, w) != (height, width):
            import cv2

            m = cv2.resize(m.astype(np.uint8), (width, height), interpolation=cv2.INTER_NEAREST).astype(bool)
        return m


def split_rings(values: Sequence[float]) -> tuple[tuple[float, ...], ...]:
    """Split a flat ``x1 y1 x2 y2 ...`` list into closed rings.

    A ring ends where its first point comes back; the point after it starts
    the next ring.  Rings of fewer than three distinct points are dropped.

    Raises
    ------
    DatasetError
        If the list has an odd number of values.

    Examples
    --------
    >>> split_rings([0, 0, 1, 0, 1, 1, 0, 0, 5, 5, 6, 5, 6, 6, 5, 5])
    ((0, 0, 1, 0, 1, 1, 0, 0), (5, 5, 6, 5, 6, 6, 5, 5))
    >>> split_rings([0, 0, 1, 0, 1, 1])
    ((0, 0, 1, 0, 1, 1),)
    """
    if len(values) % 2:
        raise DatasetError(f"a polygon needs x y pairs, got {len(values)} numbers")
    rings: list[tuple[float, ...]] = []
    start = 0
    for i in range(2, len(values), 2):
        if values[i] == values[start] and values[i + 1] == values[start + 1] and i > start:
            rings.append(tuple(values[start: i + 2]))
            start = i + 2
    if start < len(values):
        rings.append(tuple(values[start:]))
    return tuple(r for r in rings if len({(r[j], r[j + 1]) for j in range(0, len(r), 2)}) >= 3)


def polygon_mask(rings: Sequence[Sequence[float]], *, width: int, height: int) -> np.ndarray:
    """Rasterise rings (pixel coordinates) into a boolean mask with :func:`cv2.fillPoly`.

    Coordinates follow COCO: ``(0, 0)`` is the top-left corner of the
    top-left pixel.  A pixel is inside when more than half of it is: the
    rings are filled on a grid four times finer (``fillPoly`` fills its
    boundary pixels too, so at the photo's own size every outline would
    grow by up to a pixel) and a pixel is inside when more than 8 of its
    16 sub-pixels were filled.  Edges are so placed to within a quarter
    pixel (a right or bottom edge through the middle of a pixel takes it).  The rings are filled one by one and
    joined (an object drawn in parts; overlaps stay filled).

    Parameters
    ----------
    rings : sequence of sequence of float
        Each ``(x1, y1, x2, y2, ...)``.
    width, height : int

    Returns
    -------
    ndarray of bool, shape (height, width)

    Examples
    --------
    >>> polygon_mask([(0, 0, 2, 0, 2, 2, 0, 2)], width=4, height=3).astype(int).tolist()
    [[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 0, 0]]
    """
    import cv2  # where used, like the pipeline

    W, H = int(width), int(height)
    out = np.zeros((H, W), dtype=bool)
    f = _FINE
    scale = 1 << _SHIFT
    polys = [np.asarray(r, dtype=np.float64).reshape(-1, 2) for r in rings]
    polys = [q for q in polys if len(q)]
    if not polys:
        return out
    allpts = np.concatenate(polys)
    # Only the pixels the rings can reach are drawn finely.
    x0, y0 = (max(int(np.floor(v)) - 1, 0) for v in allpts.min(axis=0))
    x1 = min(int(np.ceil(allpts[:, 0].max())) + 1, W)
    y1 = min(int(np.ceil(allpts[:, 1].max())) + 1, H)
    if x1 <= x0 or y1 <= y0:
        return out
    fine = np.zeros(((y1 - y0) * f, (x1 - x0) * f), dtype=np.uint8)
    for q in polys:
        # fine sub-pixel centres sit on integers: corner coordinate x -> (x - x0) * f - 0.5
        pts = (q - (x0, y0)) * f - 0.5
        cv2.fillPoly(fine, [np.round(pts * scale).astype(np.int32)], 1, lineType=cv2.LINE_8, shift=_SHIFT)
    share = fine.reshape(y1 - y0, f, x1 - x0, f).sum(axis=(1, 3))
    out[y0:y1, x0:x1] = share * 2 > f * f
    return out


def rle_counts_from_string(text: str) -> tuple[int, ...]:
    """Counts of COCO's compressed RLE string (the ``counts`` of an RLE dict).

    COCO writes each count in 5-bit groups, least significant first, each
    group plus 48 as one character, bit 6 saying another group follows and
    bit 5 of the last group carrying the sign; from the fourth count on, the
    value written is the difference to the count two places before.

    Raises
    ------
    DatasetError
        On a character outside the encoding or a string cut short.

    Examples
    --------
    >>> rle_counts_from_string("5220")
    (5, 2, 2, 2)
    """
    counts: list[int] = []
    p = 0
    while p < len(text):
        x = 0
        k = 0
        more = True
        while more:
            if p >= len(text):
                raise DatasetError(f"RLE string ends inside a count: {text!r}")
            c = ord(text[p]) - 48
            if not 0 <= c < 64:
                raise DatasetError(f"RLE string holds {text[p]!r}, outside COCO's encoding")
            x |= (c & 0x1F) << (5 * k)
            more = bool(c & 0x20)
            p += 1
            k += 1
            if not more and c & 0x10:
                x |= -1 << (5 * k)
        if len(counts) > 2:
            x += counts[-2]
        counts.append(x)
    return tuple(counts)


def decode_rle(counts: Sequence[int] | str, *, height: int, width: int) -> np.ndarray:
    """Boolean mask of COCO run-length counts (column-major, starting with zeros).

    Parameters
    ----------
    counts : sequence of int, or str
        Uncompressed counts, or COCO's compressed string.
    height, width : int

    Raises
    ------
    DatasetError
        If a count is negative or the counts do not add up to ``height * width``.
    """
    runs = rle_counts_from_string(counts) if isinstance(counts, str) else tuple(int(c) for c in counts)
    n = int(height) * int(width)
    if any(c < 0 for c in runs) or sum(runs) != n:
        raise DatasetError(f"RLE counts add up to {sum(runs)} pixels (negative: {any(c < 0 for c in runs)}); "
                           f"a {width}x{height} mask has {n}")
    values = np.zeros(len(runs), dtype=bool)
    values[1::2] = True
    flat = np.repeat(values, runs)
    return flat.reshape(int(width), int(height)).T.copy()
