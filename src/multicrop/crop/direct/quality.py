"""Each candidate's quality ``q``: the scorer's framing score plus the soft terms, validity, which subjects are
details at k auto, and the largest part of a subject where no candidate is valid."""

from __future__ import annotations

import numpy as np

from ...geometry import Box
from ..scoring.base import ScoredCrop, Scorer, ScoringContext
from ..subjects import Subject
from .measure import Measurements
from .settings import SelectionConfig

__all__ = ["details", "largest_part", "main_subjects", "scored_framings", "quality", "valid"]


def main_subjects(m: Measurements, sel: SelectionConfig) -> tuple[np.ndarray, np.ndarray]:
    """Per candidate, its main subject (the most important one held whole, else the one held most),
    and the ``(n, subjects)`` matrix of subjects held whole."""
    imp = np.array([s.importance for s in m.subjects])
    whole = sel.holds_main.whole_matrix(m)
    held = whole.any(axis=1)
    main = np.where(held, np.argmax(np.where(whole, imp[None, :] + 1e-3 * m.shares, -1.0), axis=1),
                    np.argmax(m.shares * imp[None, :], axis=1))
    return main, whole


def scored_framings(ctx: ScoringContext, scorer: Scorer, m: Measurements, main: np.ndarray) -> list[ScoredCrop]:
    """Each candidate scored as a framing of its main subject (one scorer call per subject and ratio)."""
    scored: list[ScoredCrop | None] = [None] * len(m)
    groups: dict[tuple, list[int]] = {}
    for i, r in enumerate(m.ratios):
        groups.setdefault((int(main[i]), r), []).append(i)
    for (j, r), idx in groups.items():
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


def valid(m: Measurements, main: np.ndarray, sel: SelectionConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The hard rules, relaxed per subject only where no candidate of it meets them.

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


def largest_part(m, main: np.ndarray, top: int, cuts: np.ndarray, q: np.ndarray, sel) -> int:
    """The framing of subject ``top`` when no candidate meets the hard rules: among its framings (every
    candidate where none has it as main subject) holding the most of it (within 5 points), those cutting no
    face first, then the fewest bodies sliced, then the best quality."""
    share = m.shares[:, top]
    mine = main == top
    if not mine.any():
        mine = np.ones(len(m), bool)
    pool = mine & (share >= share[mine].max() - 0.05)
    faces = sel.no_cut_face.violations(m)
    order = np.lexsort((-q, cuts, faces.astype(int), ~pool))
    return int(order[0])
