"""Zoom in after the wide shot: close-ups of the bodies the chosen crops show only wide."""

from __future__ import annotations

import dataclasses

import numpy as np

from ...geometry import Box, Ratio, iou_matrix
from ..config import CandidateConfig
from ..scoring.base import ScoredCrop, Scorer, ScoringContext
from ..subjects import Subject
from .selector import greedy
from .measure import MaskTables, box_shares, measure
from .pool import direct_pool
from .settings import SelectionConfig

__all__ = ["close_ups"]


def close_ups(ctx: ScoringContext, scorer: Scorer, sel: SelectionConfig, candidates: CandidateConfig, *,
              bounds: Box, min_side: float, ratios: tuple[Ratio, ...], subjects: list[Subject],
              guards: list[Subject], chosen: list[Box], n: int, tables: MaskTables,
              scale: float = 1.0) -> list[tuple[ScoredCrop, int]]:
    """Up to ``n`` close-ups of bodies that the ``chosen`` crops show only in a wide view.

    Each person, animal or vehicle large enough (``close_ups.min_area``,
    ``close_ups.relative``; a group's members one by one, largest first) that
    no chosen crop of at most ``close_ups.share`` of the photo holds whole gets
    the best-scored framing of its own that holds it whole, within the
    close-up's size and overlap limits, and breaks no hard rule; the rule's
    two exceptions are explicit variants of :class:`~.rules.NoSlicedBody`: an
    animal or vehicle behind it in its group may show by ``sliver``, a masked
    person beside it counts as whole from ``mask_whole``.  Returns
    ``(crop, index of the subject it belongs to)`` pairs in the order chosen.
    """
    rule = sel.close_ups
    if n <= 0 or not rule.enabled or rule.share <= 0:
        return []
    frame = max(bounds.area, 1e-9)
    units = [(m.box.area, m, j) for j, s in enumerate(subjects) for m in s.bodies if m.is_body]
    largest = max((a for a, _, _ in units), default=0.0)
    units = [u for u in units if u[0] >= max(rule.min_area * frame, rule.relative * largest)]
    units.sort(key=lambda u: -u[0])
    bodies = [b for s in subjects + guards for b in s.bodies]
    body_rule = sel.no_sliced_body
    behind_rule = dataclasses.replace(body_rule, sliver=rule.sliver)
    masked_rule = dataclasses.replace(body_rule, whole=rule.mask_whole)
    taken = list(chosen)
    out: list[tuple[ScoredCrop, int]] = []
    for _, unit, j in units:
        if len(out) >= n:
            break
        holding = [c for c in taken if box_shares(np.array([c.corners()]), unit.box)[0] >= body_rule.whole - 1e-9]
        if any(c.area <= rule.share * frame for c in holding):
            continue
        limit = min([rule.share * frame] + [rule.shrink * c.area for c in holding])
        pool = direct_pool(bounds, [unit], ratios, sel.pool, candidates, min_side, scale=scale, windows=False,
                           max_area=limit)
        if not pool:
            continue
        m = measure(ctx, pool, [unit], bodies, bounds, tables, portrait_width=body_rule.portrait_width)
        whole = m.shares[:, 0] >= body_rule.whole - 1e-9
        behind = np.array([b is not unit and b.weight is not None and b.kind != "person"
                           and any(b is x for x in subjects[j].bodies) for b in bodies], bool)
        masked = np.array([b.kind == "person" and b.weight is not None and b is not unit for b in bodies], bool)
        rest = ~behind & ~masked
        cuts = np.zeros(len(m))
        for r, only in ((behind_rule, behind), (masked_rule, masked), (body_rule, rest)):
            if only.any():
                c, p = r.cuts(m, only)
                cuts = cuts + c + p
        apart = iou_matrix(m.boxes, taken).max(axis=1) <= rule.iou
        ok = whole & (cuts == 0) & apart & ~sel.no_cut_face.violations(m)
        if not ok.any():
            continue
        idx = np.flatnonzero(ok)
        sub = m.take(idx)
        crops: list[ScoredCrop] = []
        for r in ratios:
            mine = [i for i, rr in enumerate(sub.ratios) if rr == r]
            crops += scorer.score(ctx, [sub.boxes[i] for i in mine], ratio=r, subject=unit.box)
        zero = np.zeros(len(sub), int)
        q = np.array([c.score for c in crops]) + sel.headroom.term(sub, zero) + sel.lead_room.term(sub, zero)
        best = greedy([c.box for c in crops], lambda chosen, iou: q, k=1)
        if best:
            out.append((crops[best[0]], j))
            taken.append(crops[best[0]].box)
    return out
