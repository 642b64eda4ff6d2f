"""Every body seen whole: a slide for each person, animal or vehicle the chosen slides show only in part."""

from __future__ import annotations

import numpy as np

from ..selector import greedy
from ..subjects import Subject
from .measure import Measurements, box_shares
from .settings import SelectionConfig

__all__ = ["every_body"]


def every_body(m: Measurements, ok: np.ndarray, whole: np.ndarray, q: np.ndarray, subs: list[Subject],
               detail: np.ndarray, chosen: list[int], k: int, sel: SelectionConfig, *,
               keep_first: bool = False) -> list[int]:
    """``chosen`` with a slide more for each detected person, animal or vehicle (not a detail) that no chosen
    slide holds whole, where a candidate breaking no hard rule does: the best-scored one, IoU at most
    ``every_body.iou`` with every slide, up to ``k`` slides; more important subjects first.  The wide view
    first: a slide that holds a chosen one (by ``close_ups.inside`` of it) goes before it, else last; never before
    the first with ``keep_first`` (the user's focus leads)."""
    rule = sel.every_body
    if not rule.enabled or not chosen:
        return list(chosen)
    out = list(chosen)
    bodies = [j for j, s in enumerate(subs) if s.is_body and s.source == "detector" and not detail[j]]
    for j in sorted(bodies, key=lambda j: -subs[j].importance):
        if len(out) >= k:
            break
        allowed = ok & whole[:, j]
        if whole[out, j].any() or not allowed.any():
            continue
        step = greedy(m.boxes, lambda c, iou: np.where(allowed, q, -np.inf), k=1, start=out, iou_limit=rule.iou)
        if step:
            i = step[0]
            holds = [n for n, c in enumerate(out) if box_shares(m.C[[i]], m.boxes[c])[0] >= sel.close_ups.inside - 1e-9]
            at = holds[0] if holds else len(out)
            out.insert(max(at, 1) if keep_first else at, i)
    return out
