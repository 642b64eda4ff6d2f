"""Choosing k crops from scored candidates, and placing them in source pixels.

Two strategies:

``partition``
    The best-scoring candidate of each saliency partition (Carousel §IV-A),
    one crop per region, so the crops are distinct by construction.
``topk``
    The paper's VPN* protocol: candidates over the whole image, the k best
    kept greedily with non-maximum suppression (IoU at most ``nms_iou``).
"""

from __future__ import annotations

from collections.abc import Sequence

from .errors import InvalidParameterError
from .geometry import Box, iou, snap_box  # noqa: F401 - Box is used by the doctests
from .scoring.base import ScoredCrop

__all__ = ["best_per_region", "select_topk", "to_source"]


def best_per_region(scored: Sequence[Sequence[ScoredCrop]]) -> list[ScoredCrop]:
    """The highest-scoring crop of each region (first one on ties).

    Raises
    ------
    InvalidParameterError
        If a region has no candidate.

    Examples
    --------
    >>> a, b = ScoredCrop(Box(0, 0, 1, 1), 0.2), ScoredCrop(Box(1, 0, 1, 1), 0.7)
    >>> [c.score for c in best_per_region([[a, b], [a]])]
    [0.7, 0.2]
    """
    out = []
    for i, crops in enumerate(scored):
        if not crops:
            raise InvalidParameterError(f"region {i + 1} has no candidate crop")
        out.append(max(crops, key=lambda c: c.score))
    return out


def select_topk(scored: Sequence[ScoredCrop], *, k: int, nms_iou: float = 0.3) -> list[ScoredCrop]:
    """Greedy non-maximum suppression: the best crops whose pairwise IoU is at most ``nms_iou``.

    Returns fewer than ``k`` crops when suppression leaves fewer.

    Examples
    --------
    >>> cs = [ScoredCrop(Box(0, 0, 10, 10), 0.9), ScoredCrop(Box(1, 0, 10, 10), 0.8),
    ...       ScoredCrop(Box(20, 0, 10, 10), 0.5)]
    >>> [c.score for c in select_topk(cs, k=2)]
    [0.9, 0.5]
    """
    if k < 1:
        raise InvalidParameterError(f"k must be >= 1, got {k!r}")
    kept: list[ScoredCrop] = []
    for c in sorted(scored, key=lambda c: -c.score):
        if all(iou(c.box, o.box) <= nms_iou for o in kept):
            kept.append(c)
            if len(kept) == k:
                break
    return kept


def to_source(crop: ScoredCrop, *, scale: tuple[float, float], size: tuple[int, int]) -> ScoredCrop:
    """Move a crop from analysis to source pixels: exact ratio (within 1 px), whole pixels, inside.

    Parameters
    ----------
    scale : (float, float)
        Source pixels per analysis pixel in x and y.
    size : (int, int)
        Source ``(width, height)``.

    Examples
    --------
    >>> from multicrop.geometry import Ratio
    >>> c = ScoredCrop(Box(10, 5, 20, 30), 1.0, {}, Ratio(2, 3))
    >>> to_source(c, scale=(10.0, 10.0), size=(1000, 800)).box
    Box(x=100, y=50, w=200, h=300)
    """
    box = crop.box.scale(*scale)
    ratio = crop.ratio if crop.ratio is not None else box.aspect
    return crop.with_box(snap_box(box, ratio, *size))
