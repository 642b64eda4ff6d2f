"""A seamless band the person placed: its whole-pixel slides and what they slice.

:func:`seamless_band` cuts the slides from the band (on a JPEG's block grid
when asked, so that every slide can be cut losslessly); :func:`placed_layout`
says which subjects those slides slice or leave out, by the rules
:func:`multicrop.crop.seamless.seamless_layout` chooses with.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import InvalidParameterError
from ..geometry import Box
from ..ratios import Ratio, parse_ratio
from .seamless import _EDGE_SHARE, SeamlessLayout, _notes, _subject_parts

__all__ = ["seamless_band", "placed_layout"]


def seamless_band(band: Box, *, size: tuple[int, int], ratio: Ratio | str, slides: int,
                  block: tuple[int, int] | None = None) -> tuple[Box, ...]:
    """The ``slides`` adjacent whole-pixel slides of ``ratio`` that tile ``band`` (source px).

    The band must be ``slides`` slides of ``ratio`` side by side (its width over its height is
    ``slides`` times the ratio, to a pixel of rounding or 1 %): a band of another shape is refused,
    never reshaped.  Its corner and slide width are rounded to whole pixels, and with ``block``
    (a JPEG's iMCU size, :func:`multicrop.io.lossless.jpeg_header`) moved to that grid -- the corner
    to the nearest grid point, the slide width to the nearest multiple of the block's width -- so
    that every slide's top-left corner lies on the grid and each can be cut losslessly while they
    still meet edge to edge.  The slides are kept inside the photo (moved in, then made narrower by
    a grid step, when rounding would push them past its edge).

    Parameters
    ----------
    band : Box
        The band, inside the ``size`` photo.
    size : (int, int)
        The photo's width and height.
    ratio : Ratio or str
        The slides' ratio.
    slides : int
        How many slides tile the band.
    block : (int, int), optional
        The grid the slides' corners must lie on.

    Returns
    -------
    tuple of Box
        Left to right; slide ``i + 1`` starts at the column after slide ``i`` ends.

    Raises
    ------
    InvalidParameterError
        A bad slide count, a band of another shape, or one that leaves no whole-pixel slide.

    Examples
    --------
    >>> [tuple(b.to_dict().values()) for b in seamless_band(Box(10.4, 3, 801, 500), size=(1000, 600),
    ...                                                     ratio="4:5", slides=2)]
    [(10, 3, 400, 500), (410, 3, 400, 500)]
    >>> [(b.x, b.y, b.w, b.h) for b in seamless_band(Box(10.4, 3, 801, 500), size=(1000, 600), ratio="4:5",
    ...                                              slides=2, block=(16, 8))]
    [(16, 0, 400, 500), (416, 0, 400, 500)]
    """
    r = parse_ratio(ratio) if not isinstance(ratio, Ratio) else ratio
    if isinstance(slides, bool) or not isinstance(slides, int) or slides < 1:
        raise InvalidParameterError(f"slides must be an integer >= 1, got {slides!r}")
    W, H = (int(v) for v in size)
    n = slides
    want = band.h * r.value * n
    if abs(band.w - want) > max(1.5, 0.01 * band.w):
        raise InvalidParameterError(
            f"band: a {band.w:g}x{band.h:g} band is not {n} slides of {r} side by side (its width/height is "
            f"{band.w / band.h:.4g}, {n} x {r} is {r.value * n:.4g}); send a band of that shape")
    bx, by = block if block else (1, 1)
    w = max(bx, int(round(band.w / n / bx)) * bx)
    x0, y0 = int(round(band.x / bx)) * bx, int(round(band.y / by)) * by
    while w > bx and (n * w > W or round(w / r.value) > H):
        w -= bx
    h = int(round(w / r.value))
    if w < 1 or h < 1 or n * w > W or h > H:
        raise InvalidParameterError(f"band: no whole-pixel slide of {r} fits {n} times across the {W}x{H} photo")
    x0 = min(max(x0, 0), (W - n * w) // bx * bx)
    y0 = min(max(y0, 0), (H - h) // by * by)
    return tuple(Box(x0 + i * w, y0, w, h) for i in range(n))


def placed_layout(boxes: Sequence[Box], *, size: tuple[int, int], analysis_size: tuple[int, int], ratio: Ratio | str,
                  subjects: Sequence[Any] = (), min_slide_width: int | None = None) -> SeamlessLayout:
    """The slides ``boxes`` (:func:`seamless_band`'s, source px) as a layout: which subjects a seam runs through
    or the band leaves partly out, by the rules :func:`seamless_layout` chooses with, and the notes on them.

    Parameters
    ----------
    boxes : sequence of Box
        Adjacent slides of one size, left to right.
    size : (int, int)
        The photo's width and height.
    analysis_size : (int, int)
        The width and height of the analysis the ``subjects`` boxes are in.
    ratio : Ratio or str
    subjects : sequence of Box, or of objects with ``box`` (and ``describe()``)
    min_slide_width : int, optional
        A note says when the slides are narrower.

    Examples
    --------
    >>> lay = placed_layout([Box(0, 0, 100, 125), Box(100, 0, 100, 125)], size=(400, 200), analysis_size=(40, 20),
    ...                     ratio="4:5", subjects=[Box(8, 2, 4, 4), Box(30, 2, 4, 4)])
    >>> lay.sliced, lay.cut, lay.notes
    ((0,), (1,), ('a slide edge runs through the subject', 'the subject reaches past the band the slides cover and is partly left out'))
    """
    r = parse_ratio(ratio) if not isinstance(ratio, Ratio) else ratio
    if not boxes:
        raise InvalidParameterError("boxes: a panorama needs at least one slide")
    W, H = (int(v) for v in size)
    sx, sy = W / analysis_size[0], H / analysis_size[1]
    subs, _, names = _subject_parts(subjects)
    band = Box(boxes[0].x, boxes[0].y, boxes[-1].x2 - boxes[0].x, boxes[0].h)
    seams = [b.x for b in boxes[1:]]
    sliced, cut = [], []
    for i, sub in enumerate(b.scale(sx, sy) for b in subs):
        depth = max((min(x - sub.x, sub.x2 - x) / max(sub.w, 1e-9) for x in seams), default=0.0)
        if depth > _EDGE_SHARE:
            sliced.append(i)
        ix = max(0.0, min(sub.x2, band.x2) - max(sub.x, band.x))
        iy = max(0.0, min(sub.y2, band.y2) - max(sub.y, band.y))
        if 1 - ix * iy / max(sub.w * sub.h, 1e-9) > 0.02:
            cut.append(i)
    kept = band.w * band.h / (W * H)
    return SeamlessLayout(tuple(boxes), band, r, kept, tuple(sliced), tuple(cut),
                          _notes(r, boxes, kept, sliced, cut, names, min_slide_width, chosen=False))
