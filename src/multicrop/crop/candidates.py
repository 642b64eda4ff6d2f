"""Candidate crops: GAIC grid anchors, fixed-ratio sliding windows and subject framings.

Grid anchors follow GAIC (Zeng et al.): the region is divided into
``bins x bins`` bins; a crop's top-left corner lies on one of the first
``corner_bins`` bin boundaries of each axis and its bottom-right corner on one
of the last ``corner_bins``; crops smaller than ``min_area`` are dropped.  Our
adaptation: GAIC measures ``min_area`` against the region, we measure it
against the largest box of the target ratio that fits the region, so that a
ratio unlike the region's shape (3:2 in a 2:3 region, whose largest box is
44 % of it) is not held to a size it cannot reach.  The aspect ratio is
constrained to the target: anchors whose aspect is within
``ratio_tolerance`` of it are kept and shrunk about their centre to the
exact ratio.  A very wide or tall region (4288x613 for a 2:3 target) yields
no anchor at all; then fixed-ratio sliding windows are used.
:func:`subject_windows` adds crops framing a region's subject.

References
----------
H. Zeng, L. Li, Z. Cao, L. Zhang, "Grid Anchor based Image Cropping: A New
Benchmark and An Efficient Model", TPAMI 2020.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidParameterError
from ..geometry import Box, fit_ratio_box
from ..ratios import Ratio
from .config import CandidateConfig

__all__ = ["grid_anchors", "sliding_windows", "candidate_boxes", "subject_windows", "corner_key"]


def _ratio_value(ratio: Ratio | float) -> float:
    r = ratio.value if isinstance(ratio, Ratio) else float(ratio)
    if not math.isfinite(r) or r <= 0:
        raise InvalidParameterError(f"ratio must be positive and finite, got {ratio!r}")
    return r


def corner_key(box: Box, digits: int) -> tuple[float, float, float, float]:
    """``box``'s corners rounded to ``digits`` decimals: boxes with equal keys are the same candidate."""
    x, y = box.x, box.y
    return round(x, digits), round(y, digits), round(x + box.w, digits), round(y + box.h, digits)


def _dedupe(boxes: list[Box]) -> list[Box]:
    seen: set[tuple[float, ...]] = set()
    out = []
    for b in boxes:
        key = corner_key(b, 3)
        if key not in seen:
            seen.add(key)
            out.append(b)
    return out


def grid_anchors(region: Box, ratio: Ratio | float, *, config: CandidateConfig | None = None) -> list[Box]:
    """GAIC grid anchors inside ``region``, snapped to the exact ``ratio``.

    Parameters
    ----------
    region : Box
        The area the crops must lie in (a partition, or the whole image).
    ratio : Ratio or float
        Target width over height.
    config : CandidateConfig, optional

    Returns
    -------
    list of Box
        Float boxes of exactly ``ratio`` inside ``region`` (possibly empty).

    Examples
    --------
    >>> len(grid_anchors(Box(0, 0, 1200, 800), Ratio(3, 2))) > 10
    True
    >>> grid_anchors(Box(0, 0, 4288, 613), Ratio(2, 3))
    []
    >>> len(grid_anchors(Box(0, 0, 800, 1200), Ratio(3, 2)))   # 3:2 in a 2:3 region
    3
    """
    cfg = config or CandidateConfig()
    r = _ratio_value(ratio)
    if region.w <= 0 or region.h <= 0:
        return []
    n, m = cfg.bins, cfg.corner_bins
    bx, by = region.w / n, region.h / n
    xs1 = region.x + bx * np.arange(m)
    ys1 = region.y + by * np.arange(m)
    xs2 = region.x2 - bx * np.arange(m)
    ys2 = region.y2 - by * np.arange(m)
    x1, y1, x2, y2 = (a.ravel() for a in np.meshgrid(xs1, ys1, xs2, ys2, indexing="ij"))
    w, h = x2 - x1, y2 - y1
    aspect = w / h
    fit = fit_ratio_box(region, r)
    ok = (w * h >= cfg.min_area * fit.area - 1e-9) & (
        np.abs(np.log(aspect / r)) <= math.log(cfg.ratio_tolerance) + 1e-12
    )
    out = []
    for i in np.flatnonzero(ok):
        anchor = Box(float(x1[i]), float(y1[i]), float(w[i]), float(h[i]))
        out.append(fit_ratio_box(anchor, r))
    return _dedupe(out)


def sliding_windows(region: Box, ratio: Ratio | float, *, config: CandidateConfig | None = None,
                    scales: tuple[float, ...] | None = None) -> list[Box]:
    """Fixed-ratio windows at several sizes sliding over ``region``.

    Each size is a fraction (``scales``) of the largest box of ``ratio`` that
    fits the region; windows step by ``window_stride`` of their size in both
    directions, and the last window of a row or column touches the far edge.

    Examples
    --------
    >>> wins = sliding_windows(Box(0, 0, 4288, 613), Ratio(2, 3), scales=(1.0,))
    >>> len(wins), round(wins[0].w, 2), wins[0].h, wins[-1].x2
    (77, 408.67, 613.0, 4288.0)
    """
    cfg = config or CandidateConfig()
    r = _ratio_value(ratio)
    if region.w <= 0 or region.h <= 0:
        return []
    full = fit_ratio_box(region, r)
    out = []
    for s in scales or cfg.window_scales:
        w, h = full.w * s, full.h * s
        step_x = max(w * cfg.window_stride, 1.0)
        step_y = max(h * cfg.window_stride, 1.0)
        nx = int(math.floor((region.w - w) / step_x + 1e-9)) + 1
        ny = int(math.floor((region.h - h) / step_y + 1e-9)) + 1
        xs = [region.x + i * step_x for i in range(nx)]
        ys = [region.y + j * step_y for j in range(ny)]
        if region.x2 - w - xs[-1] > 1e-6:
            xs.append(region.x2 - w)
        if region.y2 - h - ys[-1] > 1e-6:
            ys.append(region.y2 - h)
        out.extend(Box(float(x), float(y), float(w), float(h)) for y in ys for x in xs)
    return _dedupe(out)


def candidate_boxes(region: Box, ratio: Ratio | float, *, config: CandidateConfig | None = None,
                    windows: bool = False) -> list[Box]:
    """Grid anchors in ``region``, or sliding windows when the grid yields none.

    Parameters
    ----------
    windows : bool
        Add sliding windows even when anchors exist (used by the ``topk``
        strategy, which looks for small subjects over the whole image).
    """
    anchors = grid_anchors(region, ratio, config=config)
    if anchors and not windows:
        return anchors
    return _dedupe(anchors + sliding_windows(region, ratio, config=config))


def subject_windows(subject: Box, ratio: Ratio | float, *, bounds: Box,
                    config: CandidateConfig | None = None, fills: tuple[float, ...] | None = None,
                    placements: tuple[float, ...] = (0.5,)) -> list[Box]:
    """Crops of ``ratio`` that frame ``subject`` as a photographer would (the one framing generator).

    For each fill (``fills``, default ``config.subject_fills``) the crop is
    sized so that the subject spans that fraction of it along its limiting
    side; the subject's centre is placed at each of ``placements`` of the
    crop along each axis (0.5: centred; 1/3 and 2/3: on a third), and the
    crop moved to lie in ``bounds`` (no larger than the largest box of
    ``ratio`` inside it).  ``partition`` centres its framings, ``direct``
    also puts them on the thirds.
    These may reach past the subject's partition region: overlapping crops are
    normal in multi-crop sets (91 of the 251 ground-truth pairs of Carousel
    overlap).

    Examples
    --------
    >>> wins = subject_windows(Box(40, 40, 20, 20), Ratio(1, 1), bounds=Box(0, 0, 200, 100))
    >>> min(round(b.w) for b in wins), max(round(b.w) for b in wins)
    (22, 40)
    >>> all(b.x >= 0 and b.x2 <= 200 and b.y >= 0 and b.y2 <= 100 for b in wins)
    True
    """
    cfg = config or CandidateConfig()
    r = _ratio_value(ratio)
    if subject.w <= 0 or subject.h <= 0 or bounds.w <= 0 or bounds.h <= 0:
        return []
    cx, cy = subject.center
    largest = fit_ratio_box(bounds, r)
    out = []
    for f in cfg.subject_fills if fills is None else fills:
        w = max(subject.w / f, subject.h * r / f)
        w = min(w, largest.w)
        h = w / r
        for px in placements:
            for py in placements:
                x = min(max(cx - px * w, bounds.x), bounds.x2 - w)
                y = min(max(cy - py * h, bounds.y), bounds.y2 - h)
                out.append(Box(float(x), float(y), float(w), float(h)))
    return _dedupe(out)
