"""Zoom in after the wide shot: close-ups of the bodies the chosen crops show only wide."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ...geometry import Box, iou_matrix
from ...ratios import Ratio
from ..config import CandidateConfig
from ..grouping import union
from ..people import face_seen, portrait_lines
from ..scoring.base import ScoredCrop, Scorer, ScoringContext
from ..subjects import Subject
from ..selector import greedy
from .measure import MaskTables, box_shares, measure, subject_shares
from .pool import direct_pool
from .trim import core_box, held_whole, masked
from .settings import SelectionConfig

__all__ = ["close_ups", "establishing", "zoom_levels"]


def close_ups(ctx: ScoringContext, scorer: Scorer, sel: SelectionConfig, candidates: CandidateConfig, *,
              bounds: Box, min_side: float, ratios: tuple[Ratio, ...], subjects: list[Subject],
              guards: list[Subject], chosen: list[Box], n: int, tables: MaskTables,
              scale: float = 1.0, portraits: bool = False, whole: bool = True) -> list[tuple[ScoredCrop, int, bool]]:
    """Up to ``n`` close-ups of bodies that the ``chosen`` crops show only in a wide view.

    Each person, animal or vehicle large enough (``close_ups.min_area``,
    ``close_ups.relative``; a group's members one by one, largest first) that
    no chosen crop of at most ``close_ups.share`` of the photo holds whole gets
    the best-scored framing of its own that holds it whole, within the
    close-up's size and overlap limits, and breaks no hard rule; the rule's
    two exceptions are explicit variants of :class:`~.rules.NoSlicedBody`: an
    animal or vehicle behind it in its group may show by ``sliver``, a masked
    person beside it counts as whole from ``mask_whole``; a person it frames may lose their legs below its
    bottom edge (:func:`multicrop.crop.direct.trim.held_whole`).  A group of four or
    more is zoomed into by its sub-groups too (:func:`sub_groups`).  With
    ``portraits`` (a fixed k, or k auto's second slide), each person with a pose also offers two deeper
    zooms, head to waist and head to chest, cut only at their portrait lines
    (:func:`multicrop.crop.subjects.portrait_lines`).  Larger units come first.  Without ``whole`` only the
    portraits are offered (k auto's top-up, after a call that tried the rest).
    Returns ``(crop, index of the subject it belongs to, whether it is a portrait)`` in the order chosen.
    """
    rule = sel.close_ups
    if n <= 0 or not rule.enabled or rule.share <= 0:
        return []
    frame = max(bounds.area, 1e-9)
    units = [(m.box.area, (m,), j, None) for j, s in enumerate(subjects) for m in s.bodies if m.is_body]
    largest = max((u[0] for u in units), default=0.0)
    units += [(union([m.box for m in run]).area, run, j, None) for j, s in enumerate(subjects)
              for run in sub_groups(s, rule.groups)]
    if not whole:
        units = []
    if portraits:
        units += [(t.area, (m,), j, t) for j, s in enumerate(subjects) for m in s.bodies for t in upper_bodies(m)]
    units = [u for u in units if u[0] >= max(rule.min_area * frame, rule.relative * largest * (u[3] is None))]
    units.sort(key=lambda u: -u[0])
    bodies = [b for s in subjects + guards for b in s.bodies]
    body_rule = sel.no_sliced_body
    behind_rule = dataclasses.replace(body_rule, sliver=rule.sliver)
    masked_rule = dataclasses.replace(body_rule, whole=rule.mask_whole)
    soft = [s for s in subjects if not s.is_body]  # things no body rule guards: held whole or by a sliver
    taken = list(chosen)
    out: list[tuple[ScoredCrop, int, bool]] = []
    for _, run, j, target in units:
        if len(out) >= n:
            break
        unit = union([m.box for m in run]) if target is None else target
        holding = [c for c in taken if box_shares(np.array([c.corners()]), unit)[0] >= body_rule.whole - 1e-9]
        if target is None and any(c.area <= rule.share * frame for c in holding):
            continue
        limit = min([rule.share * frame] + [rule.shrink * c.area for c in holding])
        framed = [unit]
        if target is None:
            core = union([core_box(b, rule.mask_own) if masked(b) else b.box for b in run])
            if core.corners() != unit.corners():
                framed.append(core)
        pool = direct_pool(bounds, [_Framed(b) for b in framed], ratios, sel.pool, candidates, min_side, scale=scale,
                           windows=False, max_area=limit)
        if not pool:
            continue
        m = measure(ctx, pool, list(run), bodies, bounds, tables, portrait_width=body_rule.portrait_width)
        inside = [any(b is x for x in run) for b in bodies]
        if target is None:  # each body whole; a person with a pose mask may lose their feet (trim.held_whole)
            whole = np.ones(len(m), bool)
            for at, b in enumerate(run):
                whole &= (held_whole(ctx, m, at, b, bounds, tables, body_rule.whole, rule.mask_own, rule.joint_margin)
                          if masked(b) else m.shares[:, at] >= body_rule.whole - 1e-9)
        else:  # the head-to-line box held, the person cut only at a portrait line
            me = int(np.flatnonzero(inside)[0])
            whole = (box_shares(m.C, target) >= body_rule.whole - 1e-9) & m.portrait[:, me]
        behind = np.array([not i and b.weight is not None and b.kind != "person"
                           and any(b is x for x in subjects[j].bodies) for b, i in zip(bodies, inside)], bool)
        beside = np.array([masked(b) and not i for b, i in zip(bodies, inside)], bool)
        rest = ~behind & ~beside & ~np.array(inside, bool)  # the framed bodies: held as ``whole`` says
        cuts = np.zeros(len(m))
        for r, only in ((behind_rule, behind), (masked_rule, beside), (body_rule, rest)):
            if only.any():
                c, p = r.cuts(m, only)
                cuts = cuts + c + p
        apart = iou_matrix(m.boxes, taken).max(axis=1) <= rule.iou
        ok = whole & (cuts == 0) & apart & ~sel.no_cut_face.violations(m) & ~_holds_part(ctx, m, soft, tables, sel)
        if not ok.any():
            continue
        idx = np.flatnonzero(ok)
        sub = m.take(idx)
        crops: list[ScoredCrop] = []
        for r in ratios:
            mine = [i for i, rr in enumerate(sub.ratios) if rr == r]
            crops += scorer.score(ctx, [sub.boxes[i] for i in mine], ratio=r, subject=unit)
        one = sub if len(run) == 1 else dataclasses.replace(sub, subjects=[_as_group(run, unit)])
        zero = np.zeros(len(sub), int)
        q = np.array([c.score for c in crops]) + sum(t.term(one, zero) for t in (sel.headroom, sel.lead_room,
                                                                                  sel.aspect_fit))
        best = greedy([c.box for c in crops], lambda chosen, iou: q, k=1)
        if best:
            out.append((crops[best[0]], j, target is not None))
            taken.append(crops[best[0]].box)
    return out


def zoom_levels(m, ok: np.ndarray, q: np.ndarray, main: np.ndarray, shown: list[Box], mains: list[int],
                chosen: list[int], n: int, rule) -> list[int]:
    """Up to ``n`` more framings of subjects the ``shown`` crops are about, each a zoom in or out of one
    of them: a candidate allowed by ``ok`` (the caller's: no hard rule broken, no body cut at all, no
    subject held in part, a detected main subject) whose box lies within a crop of its own main
    subject, or holds one, by ``rule.inside`` of the smaller box's area, IoU at most ``rule.iou`` with
    every crop shown; the best ``q`` first (a fixed k, or k auto's second slide, after the close-ups)."""
    if n <= 0 or not rule.enabled or not rule.zooms:
        return []
    C = m.C
    area = (C[:, 2] - C[:, 0]) * (C[:, 3] - C[:, 1])
    nested = np.zeros(len(m), bool)
    for b, j in zip(shown, mains):
        held = box_shares(C, b) * b.area
        nested |= (main == j) & (held >= rule.inside * np.minimum(area, b.area) - 1e-9)
    score = np.where(ok & nested, q, -np.inf)
    also = _not_pool(m, shown, chosen)
    return greedy(m.boxes, lambda c, iou: score, k=n, start=chosen, also=also, iou_limit=rule.iou)


def establishing(m, ok: np.ndarray, q: np.ndarray, whole: np.ndarray, shown: list[Box], mains: list[int],
                 chosen: list[int], rule) -> int | None:
    """A fixed k still short, two or more subjects on slides of their own: the wide view of them (the issue's
    "an establishing crop first") -- a candidate allowed by ``ok`` (the caller's: no hard rule broken, no body
    cut at all, no subject held in part) that holds whole at least two of the slides' subjects ``mains`` and
    more of them than any pool slide ``chosen`` does, the most of them, then the best ``q``, IoU at most
    ``rule.iou`` with every crop ``shown``.  None where there is none (or ``close_ups`` or its ``zooms`` are
    off)."""
    subjects = sorted({j for j in mains if j >= 0})
    if len(subjects) < 2 or not rule.enabled or not rule.zooms:
        return None
    count = whole[:, subjects].sum(axis=1)
    held = max((int(count[i]) for i in chosen), default=0)  # a slide already showing them together needs no other
    score = np.where(ok & (count >= max(2, held + 1)), count * (float(q.max(initial=0.0)) + 1.0) + q, -np.inf)
    also = _not_pool(m, shown, chosen)
    picked = greedy(m.boxes, lambda c, iou: score, k=1, start=chosen, also=also, iou_limit=rule.iou)
    return picked[0] if picked else None


def _not_pool(m, shown: list[Box], chosen: list[int]) -> list[Box]:
    """The crops ``shown`` that are not the pool slides ``chosen`` (close-ups, views): greedy's ``also``."""
    return [b for b in shown if all(b is not m.boxes[i] for i in chosen)]


def _holds_part(ctx: ScoringContext, m, soft: list[Subject], tables: MaskTables, sel: SelectionConfig) -> np.ndarray:
    """Close-ups that hold a subject no body rule guards (a cup, a salient thing) by more than
    ``close_ups.sliver`` and less than ``no_half_salient.whole``: the zooms' rule, for close-ups too."""
    if not soft or not sel.no_half_salient.enabled:
        return np.zeros(len(m), bool)
    held = subject_shares(ctx, m.boxes, soft, tables)
    return ((held > sel.close_ups.sliver) & (held < sel.no_half_salient.whole)).any(axis=1)


@dataclass(frozen=True)
class _Framed:
    """A box to frame (the pool frames ``.box``)."""

    box: Box


def _as_group(run, box: Box) -> Subject:
    first = run[0]
    return Subject(first.kind, box, max(m.confidence for m in run), 1.0, first.source, f"{len(run)} of a group",
                   None, None, tuple(run))


def sub_groups(subject: Subject, enabled: bool = True) -> list[tuple[Subject, ...]]:
    """A group's sub-groups a carousel can zoom to: runs of neighbours in reading order (left to right),
    two members up to half the group, so a row of eight gives pairs, threes and fours."""
    members = [m for m in subject.members if m.is_body]
    if not enabled or len(members) < 4:
        return []
    row = sorted(members, key=lambda m: (m.box.center[0], m.box.y))
    half = len(row) // 2
    return [tuple(row[a:a + size]) for size in range(2, half + 1) for a in range(len(row) - size + 1)]


def upper_bodies(person: Subject) -> list[Box]:
    """A person's deeper zooms: head to waist and head to chest, at the middle of the portrait lines
    where the pose (or a standing figure's proportions) gives them; none for anyone else, nor for a
    person whose face the pose does not see (:func:`multicrop.crop.people.face_seen`)."""
    if person.kind != "person" or person.members or not face_seen(person):
        return []
    b = person.box
    return [Box(b.x, b.y, b.w, (lo + hi) / 2 - b.y) for lo, hi in portrait_lines(person)[:2][::-1]
            if (lo + hi) / 2 > b.y]
