"""Each candidate's quality ``q``: the scorer's framing score plus the soft terms, validity, which subjects are
details at k auto, and the largest part of a subject where no candidate is valid (with the parts along it)."""

from __future__ import annotations

import numpy as np

from ...geometry import Box, fit_ratio_box, iou
from ..scoring.base import ScoredCrop, Scorer, ScoringContext
from ..subjects import Subject
from .measure import Measurements
from .pool import most_parts, overflows_across, pan_places
from .settings import SelectionConfig

__all__ = ["details", "largest_part", "main_subjects", "part_gains", "parts_along", "quality",
           "scored_framings", "unframed_parts", "valid"]


def main_subjects(m: Measurements, sel: SelectionConfig) -> tuple[np.ndarray, np.ndarray]:
    """Per candidate, its main subject (the most important one held whole, else the one held most),
    and the ``(n, subjects)`` matrix of subjects held whole."""
    imp = np.array([s.importance for s in m.subjects])
    whole = sel.holds_main.whole_matrix(m)
    held = whole.any(axis=1)
    main = np.where(held, np.argmax(np.where(whole, imp[None, :] + 1e-3 * m.shares, -1.0), axis=1),
                    np.argmax(m.shares * imp[None, :], axis=1))
    return main, whole


def scored_framings(ctx: ScoringContext, scorer: Scorer, m: Measurements, main: np.ndarray,
                    apart: int | None = None) -> list[ScoredCrop]:
    """Each candidate scored as a framing of its main subject (one scorer call per subject and ratio; candidates
    from ``apart`` on in calls of their own, so that they change no other candidate's score: a scorer may rate
    the boxes of one call against each other)."""
    scored: list[ScoredCrop | None] = [None] * len(m)
    groups: dict[tuple, list[int]] = {}
    for i, r in enumerate(m.ratios):
        groups.setdefault((int(main[i]), r, apart is not None and i >= apart), []).append(i)
    for (j, r, _), idx in groups.items():
        for i, c in zip(idx, scorer.score(ctx, [m.boxes[i] for i in idx], ratio=r, subject=m.subjects[j].box)):
            scored[i] = c
    return scored  # type: ignore[return-value]


def quality(m: Measurements, main: np.ndarray, scored: list[ScoredCrop], sel: SelectionConfig,
            ratios: tuple) -> np.ndarray:
    """``q``: the framing score plus every soft term, at least 0."""
    q = np.array([c.score for c in scored], dtype=np.float64)
    for term in sel.soft:
        q = q + term.term(m, main)
    q = q + sel.not_too_wide.term(m, main, ratios=ratios, fill=max(sel.pool.fills))
    return np.maximum(q, 0.0)


def valid(m: Measurements, main: np.ndarray, sel: SelectionConfig,
          apart: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The hard rules, relaxed per subject only where no candidate of it meets them; candidates from ``apart``
    on are never valid and change no other's validity (their cuts are measured all the same).

    A subject no crop holds whole without cutting another (larger than any
    crop, or in a crowd): a group gives the largest part of it held without
    slicing anyone (``no_sliced_body.part`` at least), else, cut only at
    portrait lines, its largest such part (a group portrait); else its most
    complete framings with the fewest bodies cut, faces kept where possible:
    where every near-best framing cuts a face, the most complete of those that
    keep every face and hold ``part`` of the subject (a face before the last
    few percent of a body).
    Returns the valid mask and the bodies cut / cut at a portrait line.
    """
    if apart is not None and apart < len(m):
        ok, cuts, portrait = valid(m.take(np.arange(apart)), main[:apart], sel)
        more = sel.no_sliced_body.cuts(m.take(np.arange(apart, len(m))))
        return (np.concatenate([ok, np.zeros(len(m) - apart, bool)]), np.concatenate([cuts, more[0]]),
                np.concatenate([portrait, more[1]]))
    n = len(m)
    rule = sel.no_sliced_body
    cuts, portrait = rule.cuts(m)
    s_main = m.shares[np.arange(n), main]
    other_cut = sel.no_half_salient.violations(m)
    faces_ok = ~sel.no_cut_face.violations(m)
    held = ~sel.holds_main.violations(m)
    ok = held & ~other_cut & (cuts == 0) & (portrait == 0) & faces_ok
    for j, s in enumerate(m.subjects):
        mine = main == j
        if not mine.any() or (ok & mine).any() or not (s.is_body or s.kind == "focus"):
            continue
        if len(s.members) > 1:  # a part slicing no one, else a group portrait (cuts only at portrait lines)
            clean = mine & (cuts == 0) & faces_ok & ~other_cut & (s_main >= rule.part)
            uncut = clean & (portrait == 0)
            clean = uncut if uncut.any() else clean
            if clean.any():
                ok |= clean & (s_main >= s_main[clean].max() - 0.05)
                continue
        best = s_main[mine].max()
        pool = mine & (s_main >= best - 0.05)
        if (pool & faces_ok).any():
            pool &= faces_ok
        elif (keep := mine & faces_ok & (s_main >= rule.part)).any():  # every near-best one cuts a face
            pool = keep & (s_main >= s_main[keep].max() - 0.05)
        ok |= pool & (cuts == cuts[pool].min())
    return ok, cuts, portrait


def details(subs: list[Subject], bounds: Box, sel, auto: bool) -> np.ndarray:
    """k auto, beside detected subjects: which subjects are details with no slide of their own."""
    rule = sel.details
    detected = np.array([s.source == "detector" for s in subs])
    if not (rule.enabled and auto and detected.any()):
        return np.zeros(len(subs), bool)
    box_area = np.array([s.box.area for s in subs]) / max(bounds.area, 1e-9)
    body = np.array([s.is_body for s in subs])
    largest = np.where(body, box_area[detected].max(initial=0.0), box_area.max())
    salient = np.array([s.kind == "salient" for s in subs])
    detail = (((box_area < rule.area) & (box_area < rule.relative * largest))
              | (salient & (box_area < rule.salient * box_area[body].max(initial=0.0))))
    return detail & np.array([s.kind != "focus" for s in subs])


def largest_part(m, main: np.ndarray, top: int, cuts: np.ndarray, q: np.ndarray, sel,
                 among: np.ndarray | None = None) -> int:
    """The framing of subject ``top`` when no candidate meets the hard rules: among its framings (every
    candidate where none has it as main subject) holding the most of it (within 5 points), those cutting no
    face first, then the fewest bodies sliced, then the best quality."""
    share = m.shares[:, top]
    among = np.ones(len(m), bool) if among is None else among
    mine = (main == top) & among
    if not mine.any():
        mine = among
    pool = mine & (share >= share[mine].max() - 0.05)
    faces = sel.no_cut_face.violations(m)
    order = np.lexsort((-q, cuts, faces.astype(int), ~pool))
    return int(order[0])


#: How much of a subject wider than every crop k auto's parts may leave out, in crop lengths (5 %).
PART_SLACK = 0.05


def parts_along(m: Measurements, first: int, subject: Box, across: bool, k: int, limit: float, avoid: np.ndarray,
                *, cover: bool) -> list[int]:
    """The parts of a subject wider (``across``) or taller than every crop, as a photographer pans along it: the
    largest crops of its largest part's ratio (candidate ``first``; the pool holds them at these places:
    :func:`~.pool.pan_windows`), spread evenly from one end of ``subject``'s box to the other, each the one nearest its place
    (nearer its place than its neighbours'; one not in ``avoid``, e.g. cutting a face or a body, first), IoU at
    most ``limit`` with the parts before it, in reading order (left to right, or top to bottom).  ``k`` parts at
    most; with ``cover`` (k auto) as few as show all of it but :data:`PART_SLACK` of a crop's length, where the
    IoU limit allows.  ``[first]`` where the subject is no longer than the crop or no two parts are found."""
    full = fit_ratio_box(m.bounds, m.ratios[first].value)
    lo, hi = (subject.x, subject.x2) if across else (subject.y, subject.y2)
    size = full.w if across else full.h
    most = min(k, most_parts(subject, full, across, limit))
    same = np.flatnonzero([r == m.ratios[first] and abs(b.w - full.w) <= 0.02 * full.w
                           and abs(b.h - full.h) <= 0.02 * full.h for b, r in zip(m.boxes, m.ratios)])
    if hi - lo <= size + 1e-6 or most < 2 or len(same) < 2:
        return [first]
    a, z = (0, 2) if across else (1, 3)
    pos = m.C[same, a]
    b, y = (1, 3) if across else (0, 2)  # the other axis: each crop's distance from the subject's middle on it
    off = np.abs((m.C[same, b] + m.C[same, y]) / 2 - subject.center[b])

    def place(n: int) -> list[int]:
        parts: list[int] = []
        places = pan_places(subject, full, m.bounds, across, n)
        reach = (places[-1] - places[0]) / (n - 1) / 2  # a part stays nearer its own place than its neighbours'
        for t in places:
            for c in np.lexsort((np.abs(pos - t) + off, avoid[same])):
                j = int(same[c])
                if abs(pos[c] - t) <= reach + 1e-6 and j not in parts and all(
                        iou(m.boxes[j], m.boxes[p]) <= limit + 1e-9 for p in parts):
                    parts.append(j)
                    break
        return sorted(parts, key=lambda j: m.C[j, a])

    def shown(parts: list[int]) -> float:
        seen = np.zeros(max(int(np.ceil(hi - lo)), 1), bool)
        for j in parts:
            seen[max(int(m.C[j, a] - lo), 0):max(int(np.ceil(m.C[j, z] - lo)), 0)] = True
        return float(seen.sum())

    n = min(most, max(2, int(np.ceil((hi - lo) / size - PART_SLACK)))) if cover else most
    parts = place(n)
    while cover and n < most and shown(parts) < hi - lo - PART_SLACK * size:
        n += 1
        parts = place(n)
    return parts if len(parts) > 1 else [first]


def part_gains(m: Measurements, parts: list[int], top: int, importance: float, across: bool) -> list[float]:
    """Each part's gain: its share of subject ``top`` times the share of its length no part before it shows."""
    gains, seen = [], []
    for i in parts:
        b = m.boxes[i]
        lo, hi = (b.x, b.x2) if across else (b.y, b.y2)
        shown = max((min(hi, h) - max(lo, l) for l, h in seen), default=0.0)
        gains.append(float(importance * m.shares[i, top] * (1 - max(shown, 0.0) / (hi - lo))))
        seen.append((lo, hi))
    return gains


def unframed_parts(m: Measurements, main: np.ndarray, top: int, whole: np.ndarray, cuts: np.ndarray, q: np.ndarray,
                   sel: SelectionConfig, k: int, limit: float, cover: bool,
                   among: np.ndarray) -> tuple[list[int], list[float], bool]:
    """Where no candidate meets the hard rules: the largest part of subject ``top`` (:func:`largest_part`, one of
    ``among``), or, where no crop holds it whole, its parts along it (:func:`parts_along`: at most ``k``, as few as
    cover it with ``cover``, IoU at most ``limit``); with their gains (:func:`part_gains`: of two such ratios, the
    one showing more of it) and whether they go across."""
    i = largest_part(m, main, top, cuts, q, sel, among)
    subject = m.subjects[top]
    across = overflows_across(subject.box, fit_ratio_box(m.bounds, m.ratios[i].value))
    parts = [i] if whole[among, top].any() else parts_along(m, i, subject.box, across, k, limit,
                                                        (cuts > 0) | sel.no_cut_face.violations(m), cover=cover)
    return parts, part_gains(m, parts, top, subject.importance, across), across
