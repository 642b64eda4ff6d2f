"""The smallest box of a ratio whose saliency reaches a target: the partitioner's search.

The best sum over all positions grows with the box size (a larger box at the
same ratio contains a smaller one), so the smallest size is found by
bisection over sizes, each size tested at every position at once through a
summed-area table: ``O(HW log max(H, W))``, vectorised.
"""

from __future__ import annotations

import math

import numpy as np

from ..geometry import Box

from ..ratios import Ratio
from ..measures import summed_area_table

__all__ = ["smallest_box", "window_sums", "box_dims"]

#: Relative tolerance under which two saliency sums count as equal (float rounding).
SUM_TOLERANCE = 1e-9


def window_sums(sat: np.ndarray, bw: int, bh: int) -> np.ndarray:
    """Sums of every ``bw x bh`` window of the map behind ``sat``.

    Returns
    -------
    ndarray of float64, shape (H - bh + 1, W - bw + 1)
        Indexed by the window's top-left corner.

    Examples
    --------
    >>> window_sums(summed_area_table(np.ones((3, 4))), 2, 2).tolist()
    [[4.0, 4.0, 4.0], [4.0, 4.0, 4.0]]
    """
    return sat[bh:, bw:] - sat[:-bh, bw:] - sat[bh:, :-bw] + sat[:-bh, :-bw]


def box_dims(side: int, ratio: float, width: int, height: int) -> tuple[int, int]:
    """Width and height of the box of ``ratio`` whose long side is ``side`` (at least 1 px, inside the map).

    Examples
    --------
    >>> box_dims(30, 1.5, 100, 100), box_dims(30, 0.5, 100, 20)
    ((30, 20), (15, 20))
    """
    if ratio >= 1:
        bw, bh = side, max(1, round(side / ratio))
    else:
        bh, bw = side, max(1, round(side * ratio))
    return min(bw, width), min(bh, height)


def _largest_side_within(hi: int, max_area: float, r: float, w: int, h: int) -> int | None:
    """Largest long side ``<= hi`` whose box area is at most ``max_area`` (None if none)."""
    lo, ok = 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        bw, bh = box_dims(mid, r, w, h)
        if bw * bh <= max_area:
            ok, lo = mid, mid + 1
        else:
            hi = mid - 1
    return ok


def _longest_side(r: float, w: int, h: int) -> int:
    """Long side of the largest box of ratio ``r`` inside a ``w x h`` map."""
    if r >= 1:
        side = min(w, math.floor(h * r)) if h * r < w else w
    else:
        side = min(h, math.floor(w / r)) if w / r < h else h
    return max(1, side)


def _best_at(sat: np.ndarray, side: int, r: float, w: int, h: int) -> tuple[float, Box]:
    """The largest window sum of the boxes with long side ``side``, and that box.

    Ties (a subject smaller than the box) go to the middle of the tied positions.
    """
    bw, bh = box_dims(side, r, w, h)
    sums = window_sums(sat, bw, bh)
    top = float(sums.max())
    tied = np.flatnonzero(sums >= top - SUM_TOLERANCE * max(abs(top), 1.0))
    y, x = divmod(int(tied[len(tied) // 2]), sums.shape[1])
    return top, Box(x, y, bw, bh)


def smallest_box(
    saliency: np.ndarray, *, ratio: Ratio | float, target: float, max_area: float | None = None,
    sat: np.ndarray | None = None,
) -> Box | None:
    """Smallest box of ``ratio`` whose saliency sum reaches ``target``.

    Among the positions of that size the one with the largest sum wins.

    Parameters
    ----------
    saliency : ndarray, shape (H, W)
    ratio : Ratio or float
        Width over height of the box.
    target : float
        Saliency sum to reach.
    max_area : float, optional
        Boxes larger than this (pixels) are not valid.
    sat : ndarray, shape (H + 1, W + 1), optional
        The summed-area table of ``saliency``, when the caller has it.

    Returns
    -------
    Box or None
        Integer box, or None when no valid box reaches ``target``.

    Examples
    --------
    >>> s = np.zeros((50, 80)); s[10:20, 30:40] = 1
    >>> smallest_box(s, ratio=1.0, target=100)
    Box(x=30, y=10, w=10, h=10)
    """
    r = ratio.value if isinstance(ratio, Ratio) else float(ratio)
    h, w = saliency.shape
    sat = summed_area_table(saliency) if sat is None else sat
    need = target - SUM_TOLERANCE * max(abs(target), 1.0)
    lo, hi = 1, _longest_side(r, w, h)
    if max_area is not None:
        hi = _largest_side_within(hi, max_area, r, w, h)
        if hi is None:
            return None
    if _best_at(sat, hi, r, w, h)[0] < need:
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if _best_at(sat, mid, r, w, h)[0] >= need:
            hi = mid
        else:
            lo = mid + 1
    return _best_at(sat, lo, r, w, h)[1]
