"""Every body seen whole: a slide for each person, animal or vehicle the slides show only in part."""

from __future__ import annotations

import numpy as np

from ...geometry import Box
from ..selector import greedy
from ..subjects import Subject
from .measure import Measurements, box_shares
from .settings import SelectionConfig

__all__ = ["every_body", "before_held", "shown_whole"]


def every_body(m: Measurements, ok: np.ndarray, whole: np.ndarray, q: np.ndarray, subs: list[Subject],
               detail: np.ndarray, slides: list[Box], picked: list[int | None], k: int, sel: SelectionConfig, *,
               keep_first: bool = False) -> list[tuple[int, int]]:
    """Slides for the detected people, animals and vehicles (not details at k auto) that none of ``slides`` holds
    whole, where a candidate breaking no hard rule does: the best-scored one, IoU at most ``every_body.iou`` with
    every slide, up to ``k`` slides in all; more important subjects first.

    ``picked`` gives each slide's candidate index (None for a close-up, whose box is judged against the subject's
    box by ``holds_main.body_whole``).  The wide view first: a new slide that holds one of ``slides`` (by
    ``close_ups.inside`` of it) goes before it, else last; never before the first with ``keep_first`` (the user's
    focus leads).  Returns ``(position, candidate)`` pairs, to insert in that order.
    """
    rule = sel.every_body
    if not rule.enabled or not slides:
        return []
    boxes, index = list(slides), list(picked)
    need = sel.holds_main.body_whole
    out: list[tuple[int, int]] = []
    bodies = [j for j, s in enumerate(subs) if s.is_body and s.source == "detector" and not detail[j]]
    for j in sorted(bodies, key=lambda j: -subs[j].importance):
        if len(boxes) >= k:
            break
        held = any(bool(whole[i, j]) if i is not None else
                   box_shares(np.array([b.corners()]), subs[j].box)[0] >= need - 1e-9 for b, i in zip(boxes, index))
        allowed = ok & whole[:, j]
        if held or not allowed.any():
            continue
        step = greedy(m.boxes, lambda c, iou: np.where(allowed, q, -np.inf), k=1, also=boxes, iou_limit=rule.iou)
        if step:
            i = step[0]
            at = before_held(m.C[i], boxes, sel.close_ups.inside, keep_first)
            at = len(boxes) if at is None else at
            boxes.insert(at, m.boxes[i])
            index.insert(at, i)
            out.append((at, i))
    return out


def before_held(corners: np.ndarray, slides: list[Box], inside: float, keep_first: bool = False) -> int | None:
    """The wide view first: where a slide of ``corners`` goes among ``slides`` if it holds one of them (by
    ``inside`` of its area): before the first it holds, yet never before the first slide with ``keep_first``;
    None when it holds none."""
    held = [n for n, b in enumerate(slides) if box_shares(np.asarray(corners)[None, :], b)[0] >= inside - 1e-9]
    return None if not held else max(held[0], 1 if keep_first else 0)


def shown_whole(j: int, picked: list[int], closer, whole: np.ndarray, subs: list[Subject], sel) -> bool:
    """Whether a slide holds subject ``j`` whole: a pool candidate ``picked`` by ``whole``, a close-up by its box."""
    need = sel.holds_main.body_whole if subs[j].bodies else sel.holds_main.whole
    return bool(whole[picked, j].any()) or any(box_shares(np.array([c.box.corners()]), subs[j].box)[0] >= need - 1e-9
                                                for c, *_ in closer)
