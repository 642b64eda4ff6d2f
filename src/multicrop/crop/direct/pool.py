"""One pool of candidates over the whole photo: windows, grid anchors and framings of every subject."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from ...geometry import Box, fit_ratio_box
from ...ratios import Ratio
from ..candidates import corner_key, grid_anchors, sliding_windows, subject_windows
from ..config import CandidateConfig
from ..subjects import Subject
from .settings import PoolConfig

__all__ = ["min_long_side", "direct_pool", "bottom_windows", "most_parts", "overflows_across", "pan_places",
           "pan_windows"]


def min_long_side(bounds: Box, ratio: Ratio, pool: PoolConfig, scale: float) -> float:
    """Shortest allowed long side (analysis pixels) of a crop of ``ratio``.

    At least ``min_crop_share`` of the photo's long side; and, where the photo
    is large enough that a crop of ``platform_side`` source pixels is at most
    ``platform_share`` of its long side, at least ``platform_side``.  Never more
    than the largest crop of the ratio.
    """
    largest = fit_ratio_box(bounds, ratio.value)
    long = max(bounds.w, bounds.h)
    need = pool.min_crop_share * long
    if pool.platform_side and long * scale * pool.platform_share >= pool.platform_side:
        need = max(need, pool.platform_side / scale)
    return min(need, max(largest.w, largest.h))


def direct_pool(bounds: Box, subjects: Sequence[Subject], ratios: tuple[Ratio, ...], pool: PoolConfig,
                candidates: CandidateConfig, min_side: float, *, scale: float = 1.0, windows: bool = True,
                max_area: float | None = None, extra: Sequence[Box] = ()) -> list[tuple[Box, Ratio]]:
    """Every candidate ``(box, ratio)``, without repeats.

    ``windows``: fixed-ratio windows and GAIC anchors over ``bounds`` besides
    the subjects' framings (close-ups take the framings alone).  ``max_area``:
    no candidate larger than this (analysis pixels squared).  ``extra``: boxes
    whose bottom edge a crop keeps (a group's portraits: :func:`bottom_windows`).
    """
    grid = dataclasses.replace(candidates, window_stride=pool.window_stride, window_scales=pool.window_scales)
    out: list[tuple[Box, Ratio]] = []
    for ratio in ratios:
        min_long = min_long_side(bounds, ratio, pool, scale)
        boxes: list[Box] = []
        if windows:  # only the window sizes the filter below keeps (every window of a scale has its size)
            full = fit_ratio_box(bounds, ratio.value)
            scales = tuple(s for s in grid.window_scales if min(full.w, full.h) * s >= min_side - 1e-6
                           and max(full.w, full.h) * s >= min_long - 1e-6
                           and (max_area is None or (full.w * s) * (full.h * s) <= max_area))
            boxes = sliding_windows(bounds, ratio, config=grid, scales=scales) if scales else []
            boxes += grid_anchors(bounds, ratio, config=candidates)
        for target in extra:
            boxes += bottom_windows(target, ratio, bounds)
        for s in subjects:
            boxes += subject_windows(s.box, ratio, bounds=bounds, fills=pool.fills, placements=pool.placements)
        seen = set()
        for box in boxes:
            w, h = box.w, box.h
            if (min(w, h) < min_side - 1e-6 or max(w, h) < min_long - 1e-6
                    or (max_area is not None and w * h > max_area)):
                continue
            key = corner_key(box, 1)
            if key not in seen:
                seen.add(key)
                out.append((box, ratio))
    return out


def bottom_windows(target: Box, ratio: Ratio, bounds: Box, headroom: Sequence[float] = (0.0, 0.06, 0.12)) -> list[Box]:
    """Crops of ``ratio`` whose bottom edge is ``target``'s and whose top is ``headroom`` of its height above
    its top (at most the photo's), centred on it across: the framings of a portrait line."""
    out = []
    for room in headroom:
        top = max(bounds.y, target.y - room * target.h)
        h = target.y2 - top
        w = ratio.value * h
        if w > bounds.w + 1e-6 or h <= 0:
            continue
        x = min(max(target.center[0] - w / 2, bounds.x), bounds.x2 - w)
        out.append(Box(x, top, w, h))
    return out


def overflows_across(subject: Box, box: Box) -> bool:
    """Whether ``subject`` overflows crop ``box`` more across (its width) than down (its height)."""
    return subject.w - box.w >= subject.h - box.h


def pan_places(subject: Box, full: Box, bounds: Box, across: bool, n: int) -> list[float]:
    """Where ``n`` crops of ``full``'s size start (x ``across``, else y) to pan evenly from one end of ``subject``
    to the other, inside ``bounds``."""
    lo, hi = (subject.x, subject.x2) if across else (subject.y, subject.y2)
    edge_lo, edge_hi = (bounds.x, bounds.x2) if across else (bounds.y, bounds.y2)
    size = full.w if across else full.h
    start = min(max(lo, edge_lo), edge_hi - size)
    end = max(min(hi - size, edge_hi - size), start)
    return [float(t) for t in np.linspace(start, end, n)]


def most_parts(subject: Box, full: Box, across: bool, limit: float) -> int:
    """How many crops of ``full``'s size fit along ``subject`` with IoU at most ``limit`` between neighbours."""
    length, size = (subject.w, full.w) if across else (subject.h, full.h)
    step = size * (1 - limit) / (1 + limit)  # the shortest shift two crops of one size may be apart
    return 1 + int(max(length - size, 0.0) / step + 1e-9)


def pan_windows(bounds: Box, subjects: Sequence[Subject], ratios: tuple[Ratio, ...], parts: int, limit: float,
                pool: Sequence[tuple[Box, Ratio]] = ()) -> list[tuple[Box, Ratio]]:
    """For each subject longer than the largest crop of every ratio, those largest crops at the places of 2 to
    ``parts`` parts along it (:func:`pan_places`; no more than fit apart by IoU ``limit``), none twice and none
    already in ``pool``: the candidates of :func:`~.quality.parts_along` only."""
    fulls = [fit_ratio_box(bounds, r.value) for r in ratios]
    seen = {(corner_key(b, 1), r) for b, r in pool}
    out: list[tuple[Box, Ratio]] = []
    for s in subjects:
        if not all(s.box.w > f.w + 1e-6 or s.box.h > f.h + 1e-6 for f in fulls):
            continue
        for ratio, full in zip(ratios, fulls):  # the crop spans the other axis: the subject overflows this one
            across = overflows_across(s.box, full)
            for n in range(2, min(parts, most_parts(s.box, full, across, limit)) + 1):
                for p in pan_places(s.box, full, bounds, across, n):
                    box = Box(p, full.y, full.w, full.h) if across else Box(full.x, p, full.w, full.h)
                    if (corner_key(box, 1), ratio) not in seen:
                        seen.add((corner_key(box, 1), ratio))
                        out.append((box, ratio))
    return out
