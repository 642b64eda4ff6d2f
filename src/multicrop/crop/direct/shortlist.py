"""A slide's alternatives for a judge: framings of the same subject, none repeating another slide."""

from __future__ import annotations

import numpy as np

from ...geometry import Box, iou
from ..selector import greedy

__all__ = ["apart", "shortlist_of"]


def shortlist_of(i: int, chosen: list[int], m, main: np.ndarray, ok: np.ndarray, q: np.ndarray, n: int,
                 sel) -> list[int]:
    """Crop ``i`` and up to ``n - 1`` alternatives framing its subject as fully (``selection.shortlist``)."""
    if n <= 1:
        return [i]
    rule, shares, mm = sel.shortlist, m.shares, main[i]
    others = [j for j in chosen if j != i]
    cover = shares[others].max(axis=0) if others else np.zeros(shares.shape[1])
    shared = np.minimum(shares, cover[None, :]).sum(1)
    fit = ok & (main == mm) & (shares[:, mm] >= shares[i, mm] - rule.slack) & (shared <= shared[i] + rule.slack)
    score = np.where(fit, q, -np.inf)
    return [i] + greedy(m.boxes, lambda c, iou: score, k=n - 1, start=[i], iou_limit=rule.iou)


def apart(lists: list[tuple], boxes: list[Box], limit: float) -> list[tuple]:
    """Each slide's alternatives, less those that overlap another slide by more than IoU ``limit`` and more
    than the slide itself does: a judge's pick never repeats a close-up, portrait or zoom that follows."""
    out = []
    for n, alts in enumerate(lists):
        others = [b for m, b in enumerate(boxes) if m != n]
        own = [max(limit, iou(boxes[n], b)) for b in others]
        out.append(alts[:1] + tuple(a for a in alts[1:] if all(iou(a.box, b) <= o for b, o in zip(others, own))))
    return out
