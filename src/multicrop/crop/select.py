"""Choosing k crops from scored candidates, and placing them in source pixels.

Two strategies:

``partition``
    One crop per saliency partition (Carousel §IV-A), chosen greedily
    (:func:`select_distinct`): a region's candidates may reach past it
    towards its subject, so two regions could otherwise pick nearly the
    same crop; each region takes its best candidate whose IoU with the crops
    already chosen is at most ``distinct_iou``.
``topk``
    The paper's VPN* protocol: candidates over the whole image, the k best
    kept greedily with non-maximum suppression (IoU at most ``nms_iou``).

Both choose with the crop wing's one greedy selector,
:func:`multicrop.crop.selector.greedy`, as ``direct`` does.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import InvalidParameterError
from ..geometry import Box, iou, snap_box  # noqa: F401 - Box is used by the doctests
from .scoring.base import ScoredCrop
from .selector import greedy

__all__ = ["SELECT_VERSION", "select_distinct", "select_topk", "to_source"]

#: Part of every result's ``versions``: bump when the selection of crops changes.
#: select-2: ``partition`` picks per region greedily with an overlap limit
#: (select-1 took each region's best crop independently).
SELECT_VERSION = "select-2"


def select_distinct(
    scored: Sequence[Sequence[ScoredCrop]], *, max_iou: float
) -> tuple[list[ScoredCrop], list[str]]:
    """One crop per region, no two overlapping by more than ``max_iou`` (IoU) where possible.

    Regions choose greedily, the region with the highest-scoring candidate
    first (the greedy order of non-maximum suppression, as in
    :func:`select_topk`, applied to regions): each takes its best candidate
    whose IoU with every crop already chosen is at most ``max_iou``.  If no
    candidate qualifies, the region takes its best candidate anyway and the
    overlap is reported.

    Parameters
    ----------
    scored : sequence of sequence of ScoredCrop
        The candidates of each region.
    max_iou : float
        Largest IoU allowed between two chosen crops.

    Returns
    -------
    crops : list of ScoredCrop
        One per region, in region order.
    overlaps : list of str
        One message per region that could not avoid an overlap,
        ``"crop i overlaps crop j, IoU x.xx"`` (1-based region numbers).

    Raises
    ------
    InvalidParameterError
        If a region has no candidate.

    Examples
    --------
    >>> a, b = ScoredCrop(Box(0, 0, 10, 10), 0.9), ScoredCrop(Box(1, 0, 10, 10), 0.8)
    >>> c = ScoredCrop(Box(30, 0, 10, 10), 0.5)
    >>> crops, overlaps = select_distinct([[a, c], [b, c]], max_iou=0.3)
    >>> [x.box.x for x in crops], overlaps
    ([0, 30], [])
    >>> crops, overlaps = select_distinct([[a], [b]], max_iou=0.3)
    >>> overlaps
    ['crop 2 overlaps crop 1, IoU 0.82']
    """
    for i, crops in enumerate(scored):
        if not crops:
            raise InvalidParameterError(f"region {i + 1} has no candidate crop")
    order = sorted(range(len(scored)), key=lambda i: -max(c.score for c in scored[i]))
    chosen: dict[int, ScoredCrop] = {}
    overlaps: list[str] = []
    for i in order:
        boxes, scores = [c.box for c in scored[i]], np.array([c.score for c in scored[i]])
        shown = [o.box for o in chosen.values()]
        pick = greedy(boxes, lambda _, __: scores, k=1, also=shown, iou_limit=max_iou)
        if not pick:  # none distinct: the region's best anyway (the first on ties), and the overlap reported
            pick = [int(np.argmax(scores))]
            j, worst = max(((j, iou(boxes[pick[0]], o.box)) for j, o in chosen.items()), key=lambda t: t[1])
            overlaps.append(f"crop {i + 1} overlaps crop {j + 1}, IoU {worst:.2f}")
        chosen[i] = scored[i][pick[0]]
    return [chosen[i] for i in range(len(scored))], overlaps


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
    scores = np.array([c.score for c in scored], dtype=np.float64)
    return [scored[i] for i in greedy([c.box for c in scored], lambda _, __: scores, k=k, iou_limit=nms_iou)]


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
    >>> from multicrop.ratios import Ratio
    >>> c = ScoredCrop(Box(10, 5, 20, 30), 1.0, {}, Ratio(2, 3))
    >>> to_source(c, scale=(10.0, 10.0), size=(1000, 800)).box
    Box(x=100, y=50, w=200, h=300)
    """
    box = crop.box.scale(*scale)
    ratio = crop.ratio if crop.ratio is not None else box.aspect
    return crop.with_box(snap_box(box, ratio, *size))
