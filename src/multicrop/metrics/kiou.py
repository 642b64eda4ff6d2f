"""Top-k IoU (kIoU), the Carousel multi-crop metric.

For one image and a threshold ``mu``: the IoU of every (prediction,
ground-truth) pair is computed; pairs with IoU >= ``mu`` are sorted by IoU,
highest first, and matched greedily one-to-one (a matched prediction and a
matched ground-truth box leave the pool).  Each matched pair contributes its
IoU; **each unmatched ground-truth box contributes 0**.

Denominator.  kIoU@mu is the sum of matched IoUs over the whole dataset
divided by the number of ground-truth boxes of the whole dataset (a
box-weighted mean).  The paper's VPN* kIoU@0.5 = 0.179, below the 0.5
threshold, shows that unmatched boxes are averaged in as zeros; we divide by
the ground-truth count, not by ``k``, because ``subcrops`` and the number of
boxes disagree in 6 label files.  The per-image mean (each image's
sum / its box count, averaged over images) is reported beside it.

kIoU@0.5:0.95 is the mean of kIoU@mu over mu in {0.50, 0.55, ..., 0.95}.

Ties.  Pairs of equal IoU are taken in a canonical order of the boxes'
coordinates, so the result does not depend on the order boxes are listed in.

References
----------
.. [1] R. Loya, A. Hamara, B. Estell, B. Kilpatrick and A. C. Freeman,
   "Carousel: A High-Resolution Dataset for Multi-Target Automatic Image
   Cropping", section IV-B "Metrics" and Table II.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import InvalidParameterError
from ..geometry import Box, iou_matrix
from ..serialize import Serializable

__all__ = [
    "KIOU_THRESHOLDS",
    "Match",
    "ImageKIoU",
    "KIoUSummary",
    "match_boxes",
    "image_kiou",
    "kiou",
    "kiou_range",
    "summarize_kiou",
]

#: mu in {0.50, 0.55, ..., 0.95}, the thresholds averaged by kIoU@0.5:0.95.
KIOU_THRESHOLDS: tuple[float, ...] = tuple(round(0.5 + 0.05 * i, 2) for i in range(10))


@dataclass(frozen=True)
class Match:
    """A matched pair: indices into the prediction and ground-truth lists, and its IoU."""

    pred: int
    gt: int
    iou: float


@dataclass(frozen=True)
class ImageKIoU:
    """One image's kIoU at one threshold.

    Attributes
    ----------
    total : float
        Sum of the matched pairs' IoU.
    n_gt : int
        Number of ground-truth boxes (the denominator).
    matches : tuple of Match
    """

    total: float
    n_gt: int
    matches: tuple[Match, ...]

    @property
    def mean(self) -> float:
        """``total / n_gt`` (0 for an image without ground truth)."""
        return self.total / self.n_gt if self.n_gt else 0.0


@dataclass(frozen=True)
class KIoUSummary(Serializable):
    """kIoU of a set of images.

    ``kiou_50_95`` and ``kiou_50`` are box-weighted (the paper's numbers);
    the ``image_mean_*`` fields average each image's own mean instead.
    """

    kiou_50_95: float
    kiou_50: float
    image_mean_50_95: float
    image_mean_50: float
    n_images: int
    n_gt: int


def _check_threshold(threshold: float) -> float:
    t = float(threshold)
    if not 0.0 < t <= 1.0:
        raise InvalidParameterError(f"threshold must be in (0, 1], got {threshold!r}")
    return t


def match_boxes(
    predictions: Sequence[Box], ground_truth: Sequence[Box], *, threshold: float = 0.5
) -> tuple[Match, ...]:
    """Greedy one-to-one matching of pairs with IoU >= ``threshold``, best first.

    Returns
    -------
    tuple of Match
        In the order they were matched (IoU descending).

    Examples
    --------
    >>> gt = [Box(0, 0, 10, 10), Box(20, 0, 10, 10)]
    >>> pred = [Box(1, 0, 10, 10), Box(0, 0, 10, 10)]
    >>> [(m.pred, m.gt, round(m.iou, 3)) for m in match_boxes(pred, gt)]
    [(1, 0, 1.0)]
    """
    t = _check_threshold(threshold)
    m = iou_matrix(list(predictions), list(ground_truth))
    if m.size == 0:
        return ()
    # Canonical tie order: by the boxes' coordinates, not their list positions.
    p_rank = _rank([p.corners() for p in predictions])
    g_rank = _rank([g.corners() for g in ground_truth])
    pi, gi = np.nonzero(m >= t)
    order = np.lexsort((g_rank[gi], p_rank[pi], -m[pi, gi]))
    used_p: set[int] = set()
    used_g: set[int] = set()
    out: list[Match] = []
    for j in order:
        p, g = int(pi[j]), int(gi[j])
        if p in used_p or g in used_g:
            continue
        used_p.add(p)
        used_g.add(g)
        out.append(Match(p, g, float(m[p, g])))
    return tuple(out)


def _rank(corners: list[tuple[float, float, float, float]]) -> np.ndarray:
    """Rank of each box in the lexicographic order of its corners."""
    order = sorted(range(len(corners)), key=lambda i: corners[i])
    rank = np.empty(len(corners), dtype=np.int64)
    rank[order] = np.arange(len(corners))
    return rank


def image_kiou(
    predictions: Sequence[Box], ground_truth: Sequence[Box], *, threshold: float = 0.5
) -> ImageKIoU:
    """kIoU of one image at one threshold (unmatched ground truth counts 0).

    Examples
    --------
    >>> gt = [Box(0, 0, 10, 10), Box(20, 0, 10, 10)]
    >>> r = image_kiou([Box(0, 0, 10, 10)], gt)
    >>> r.total, r.n_gt, r.mean
    (1.0, 2, 0.5)
    """
    matches = match_boxes(predictions, ground_truth, threshold=threshold)
    return ImageKIoU(total=float(sum(m.iou for m in matches)), n_gt=len(ground_truth), matches=matches)


def kiou(
    predictions: Sequence[Sequence[Box]],
    ground_truth: Sequence[Sequence[Box]],
    *,
    threshold: float = 0.5,
) -> float:
    """kIoU@``threshold`` of a dataset: matched IoU summed over images / ground-truth boxes.

    Parameters
    ----------
    predictions, ground_truth : sequence of sequence of Box
        One list of boxes per image, in the same order.

    Raises
    ------
    InvalidParameterError
        Lists of different lengths, or no ground-truth box at all.

    Examples
    --------
    >>> gt = [[Box(0, 0, 10, 10)], [Box(0, 0, 10, 10), Box(50, 0, 10, 10)]]
    >>> pred = [[Box(0, 0, 10, 10)], [Box(0, 0, 10, 5)]]
    >>> kiou(pred, gt, threshold=0.5)   # (1 + 0.5 + 0) / 3
    0.5
    """
    _check_lengths(predictions, ground_truth)
    results = [image_kiou(p, g, threshold=threshold) for p, g in zip(predictions, ground_truth)]
    n = sum(r.n_gt for r in results)
    if n == 0:
        raise InvalidParameterError("ground_truth holds no box; kIoU is undefined")
    return sum(r.total for r in results) / n


def kiou_range(
    predictions: Sequence[Sequence[Box]],
    ground_truth: Sequence[Sequence[Box]],
    *,
    thresholds: Sequence[float] = KIOU_THRESHOLDS,
) -> float:
    """kIoU averaged over ``thresholds`` (default: kIoU@0.5:0.95)."""
    if not len(thresholds):
        raise InvalidParameterError("thresholds must not be empty")
    return float(np.mean([kiou(predictions, ground_truth, threshold=t) for t in thresholds]))


def _check_lengths(predictions: Sequence, ground_truth: Sequence) -> None:
    if len(predictions) != len(ground_truth):
        raise InvalidParameterError(
            f"predictions and ground_truth must list the same images, got {len(predictions)} "
            f"and {len(ground_truth)}"
        )


def summarize_kiou(
    predictions: Sequence[Sequence[Box]], ground_truth: Sequence[Sequence[Box]]
) -> KIoUSummary:
    """kIoU@0.5:0.95 and kIoU@0.5, box-weighted and per-image means.

    Examples
    --------
    >>> s = summarize_kiou([[Box(0, 0, 10, 10)]], [[Box(0, 0, 10, 10), Box(30, 0, 5, 5)]])
    >>> s.kiou_50, s.kiou_50_95, s.image_mean_50, s.n_gt
    (0.5, 0.5, 0.5, 2)
    """
    _check_lengths(predictions, ground_truth)
    n_gt = sum(len(g) for g in ground_truth)
    if n_gt == 0:
        raise InvalidParameterError("ground_truth holds no box; kIoU is undefined")
    per_t = []
    per_t_img = []
    for t in KIOU_THRESHOLDS:
        res = [image_kiou(p, g, threshold=t) for p, g in zip(predictions, ground_truth)]
        per_t.append(sum(r.total for r in res) / n_gt)
        per_t_img.append(float(np.mean([r.mean for r in res])))
    return KIoUSummary(
        kiou_50_95=float(np.mean(per_t)),
        kiou_50=float(per_t[0]),
        image_mean_50_95=float(np.mean(per_t_img)),
        image_mean_50=float(per_t_img[0]),
        n_images=len(ground_truth),
        n_gt=n_gt,
    )
