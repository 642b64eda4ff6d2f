"""Cutting an image into one region per subject: orientation, cut lines, failures.

The last step of the partitioner (Carousel §IV-A): the variance of the
subjects' centres picks the orientation (more spread in x: vertical cuts);
each cut lies midway between adjacent subjects or, given the saliency map, on
the least salient line between them.  A cut through a subject or a too narrow
region is a failure; with ``orientation_fallback`` the other orientation is
tried before one is reported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..geometry import Box
from .config import PartitionConfig

__all__ = ["ORIENTATIONS", "Cuts", "cut_regions", "place_cut"]

#: Directions of the cuts.
ORIENTATIONS = ("vertical", "horizontal")


@dataclass(frozen=True)
class Cuts:
    """The regions of one cutting and whether it worked.

    Attributes
    ----------
    regions : tuple of Box
        Integer boxes tiling the image, ordered along the cut axis.
    orientation : {"vertical", "horizontal"}
    failure : str or None
        Why the regions are unusable, or None.
    fallback : str or None
        ``"orientation"`` when the paper's orientation failed and the other
        one is used, else None.
    """

    regions: tuple[Box, ...]
    orientation: str
    failure: str | None = None
    fallback: str | None = None


def place_cut(profile: np.ndarray | None, a: Box, b: Box, *, vertical: bool, centre_weight: float) -> int:
    """Where to cut between adjacent subjects ``a`` and ``b`` (ordered along the axis).

    Without a saliency profile: midway between the facing edges (the paper).
    With one: the least salient line between the facing edges, or between the
    subjects' centres when they overlap, with a mild preference for the middle
    of that span (``centre_weight`` times the squared distance from the middle
    in half-spans, relative to the span's most salient line).

    Examples
    --------
    >>> a, b = Box(0, 0, 10, 10), Box(30, 0, 10, 10)
    >>> place_cut(None, a, b, vertical=True, centre_weight=0.25)
    20
    >>> profile = np.ones(40); profile[12] = 0
    >>> place_cut(profile, a, b, vertical=True, centre_weight=0.25)
    12
    """
    lo_a, hi_a = (a.x, a.x2) if vertical else (a.y, a.y2)
    lo_b, hi_b = (b.x, b.x2) if vertical else (b.y, b.y2)
    mid = (hi_a + lo_b) / 2
    if profile is None:
        return int(round(mid))
    if hi_a < lo_b:
        lo, hi = hi_a, lo_b
    else:
        lo, hi = (lo_a + hi_a) / 2, (lo_b + hi_b) / 2
        mid = (lo + hi) / 2
    i0 = max(1, int(math.ceil(lo)))
    i1 = min(len(profile) - 1, int(math.floor(hi)))
    if i1 < i0:
        return int(round(mid))
    cols = np.arange(i0, i1 + 1)
    seg = profile[i0: i1 + 1]
    half = max((hi - lo) / 2, 1.0)
    cost = seg / (float(seg.max()) + 1e-12) + centre_weight * ((cols - mid) / half) ** 2
    return int(cols[int(np.argmin(cost))])


def cut_regions(
    subjects: tuple[Box, ...], *, width: int, height: int, config: PartitionConfig,
    saliency: np.ndarray | None = None,
) -> Cuts:
    """One region per subject, cut in the orientation the subjects' spread picks.

    Parameters
    ----------
    subjects : tuple of Box
        The salient subjects, in image pixels (at least one).
    width, height : int
        Image size.
    config : PartitionConfig
        ``bisect_tolerance``, ``min_region_aspect``, ``cut_centre_weight``
        and ``orientation_fallback``.
    saliency : ndarray, shape (height, width), optional
        Map whose row/column sums place the cuts.

    Examples
    --------
    >>> c = cut_regions((Box(0, 0, 40, 40), Box(30, 50, 40, 40)), width=100, height=100,
    ...                 config=PartitionConfig())
    >>> c.orientation, [r.h for r in c.regions], c.failure
    ('horizontal', [45, 55], None)
    """
    k = len(subjects)
    if k == 1:
        orientation = "vertical" if width >= height else "horizontal"
    else:
        cx = np.array([b.center[0] for b in subjects])
        cy = np.array([b.center[1] for b in subjects])
        orientation = "vertical" if cx.var() >= cy.var() else "horizontal"
    first = _cut_along(subjects, width, height, orientation == "vertical", config, saliency)
    if first.failure is None or k == 1 or not config.orientation_fallback:
        return first
    other = "horizontal" if orientation == "vertical" else "vertical"
    second = _cut_along(subjects, width, height, other == "vertical", config, saliency)
    if second.failure is None:
        return Cuts(second.regions, other, None, "orientation")
    return first


def _cut_along(subjects: tuple[Box, ...], W: int, H: int, vertical: bool, cfg: PartitionConfig,
               saliency: np.ndarray | None) -> Cuts:
    """Regions cut along one axis between the subjects, and the failure (or None)."""
    k = len(subjects)
    extent = W if vertical else H
    order = sorted(subjects, key=lambda b: (b.center[0] if vertical else b.center[1]))
    profile = None
    if saliency is not None:
        profile = saliency.sum(axis=0 if vertical else 1, dtype=np.float64)
    cuts = [0]
    for a, b in zip(order, order[1:]):
        cuts.append(place_cut(profile, a, b, vertical=vertical, centre_weight=cfg.cut_centre_weight))
    cuts.append(extent)
    # Keep cuts ordered and inside the image even when boxes overlap.
    for j in range(1, k):
        cuts[j] = min(max(cuts[j], cuts[j - 1] + 1), extent - (k - j))
    regions = tuple(
        Box(c0, 0, c1 - c0, H) if vertical else Box(0, c0, W, c1 - c0) for c0, c1 in zip(cuts, cuts[1:])
    )
    failure = _bisected(cuts[1:-1], subjects, vertical, cfg.bisect_tolerance) or _too_narrow(
        regions, cfg.min_region_aspect
    )
    return Cuts(regions, "vertical" if vertical else "horizontal", failure)


def _bisected(cuts: list[int], subjects: tuple[Box, ...], vertical: bool, tolerance: float) -> str | None:
    """The first cut that leaves more than ``tolerance`` of a subject on its far side, described."""
    axis = "x" if vertical else "y"
    for j, c in enumerate(cuts, start=1):
        for b in subjects:
            lo, hi = (b.x, b.x2) if vertical else (b.y, b.y2)
            size = hi - lo
            if size > 0 and lo < c < hi and min(c - lo, hi - c) > tolerance * size:
                return f"cut {j} at {axis}={c} bisects a salient box ({axis} {lo:.0f}..{hi:.0f})"
    return None


def _too_narrow(regions: tuple[Box, ...], min_aspect: float) -> str | None:
    """The first region whose short side is under ``min_aspect`` of its long side, described."""
    for j, reg in enumerate(regions, start=1):
        if min(reg.w, reg.h) < min_aspect * max(reg.w, reg.h):
            return f"region {j} is {reg.w:.0f}x{reg.h:.0f}, narrower than 1:{1 / min_aspect:.3g}"
    return None
