"""The one greedy selector of the crop wing: the best candidate at a time, with an IoU limit.

Direct selection's main loop, its ``force_k`` fill, its shortlists and its
close-ups all choose this way, and so do ``topk``'s non-maximum suppression
and ``partition``'s one crop per region (:mod:`multicrop.crop.select`).  A
greedy choice is within ``1 - 1/e`` of the best set for a monotone
submodular gain (Nemhauser, Wolsey and Fisher 1978).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..geometry import Box, iou_matrix

__all__ = ["greedy"]


def greedy(boxes: Sequence[Box], gain: Callable[[list[int], np.ndarray], np.ndarray], *, k: int,
           start: Sequence[int] = (), also: Sequence[Box] = (), iou_limit: float | None = None,
           stop: Callable[[int, float, list[int]], bool] | None = None) -> list[int]:
    """Choose up to ``k`` more of ``boxes``, each time the one of highest finite gain.

    Parameters
    ----------
    boxes : sequence of Box
        The candidates.
    gain : callable
        ``gain(chosen, iou_max) -> ndarray`` of one gain per candidate given
        those chosen so far (``start`` included) and each candidate's largest
        IoU with them and with ``also``; ``-inf`` marks a candidate not allowed.
    k : int
        At most this many are added.
    start : sequence of int
        Candidates already chosen (never chosen again).
    also : sequence of Box
        Boxes already shown that are no candidates (they count in ``iou_max``).
    iou_limit : float, optional
        No candidate whose IoU with a chosen one (or ``also``) is above this.
    stop : callable, optional
        ``stop(i, gain_i, chosen) -> bool``: end before adding ``i``.

    Returns
    -------
    list of int
        The indices added, in the order chosen.

    Examples
    --------
    >>> bs = [Box(0, 0, 10, 10), Box(1, 0, 10, 10), Box(20, 0, 10, 10)]
    >>> greedy(bs, lambda chosen, iou: np.array([3.0, 2.0, 1.0]), k=2, iou_limit=0.5)
    [0, 2]
    """
    chosen = [int(i) for i in start]
    n = len(boxes)
    iou_max = np.zeros(n)
    shown = [boxes[i] for i in chosen] + list(also)
    if shown and n:
        iou_max = iou_matrix(list(boxes), shown).max(axis=1)
    added: list[int] = []
    while len(added) < k and n:
        g = np.array(gain(chosen, iou_max), dtype=np.float64)
        if chosen:
            g[chosen] = -np.inf
        if iou_limit is not None:
            g[iou_max > iou_limit + 1e-12] = -np.inf
        i = int(np.argmax(g))
        if not np.isfinite(g[i]) or (stop is not None and stop(i, float(g[i]), chosen)):
            break
        chosen.append(i)
        added.append(i)
        iou_max = np.maximum(iou_max, iou_matrix(list(boxes), [boxes[i]])[:, 0])
    return added
