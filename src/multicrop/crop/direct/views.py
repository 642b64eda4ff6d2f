"""Views of the scene: for a photo without a subject the first and closer ones at ``k="auto"``, up to ``k`` at a
fixed ``k``; and the closer view inside the one slide of a k-auto carousel of subjects (:func:`closer_views`)."""

from __future__ import annotations

import numpy as np

from ...errors import ImageTooSmallError
from ...geometry import Box
from ...ratios import Ratio
from ..candidates import sliding_windows
from ..config import CropConfig
from ..scoring.base import ScoredCrop, Scorer, ScoringContext
from ..subjects import Subject
from .measure import MaskTables, box_shares, measure
from .notes import plural, size_notes
from ..selector import greedy
from .types import DirectSelection

__all__ = ["NO_SUBJECT", "closer_views", "no_candidate", "scene_views"]

#: The first note of a photo with no subject.
NO_SUBJECT = "no subject found (no person, animal or thing detected, nothing salient)"


def no_candidate(bounds: Box, ratios: tuple[Ratio, ...], min_side: float) -> ImageTooSmallError:
    """The one-line error when no crop of ``ratios`` fits the photo."""
    names = ", ".join(str(r) for r in ratios)
    return ImageTooSmallError(
        f"no crop of ratio {names} with sides of at least {min_side:.0f} analysis px fits a photo of "
        f"{bounds.w:.0f}x{bounds.h:.0f} analysis px; use a ratio nearer the photo's or a larger photo")


def _windows(ctx: ScoringContext, scorer: Scorer, config: CropConfig, bounds: Box, min_side: float,
             ratios: tuple[Ratio, ...], scales: tuple[float, ...], bodies: list[Subject]) -> tuple[list[ScoredCrop],
                                                                                                    np.ndarray]:
    """Scored windows of ``scales`` of every ratio and how many ``bodies`` (guards) each slices."""
    crops: list[ScoredCrop] = []
    cuts: list[np.ndarray] = []
    for ratio in ratios:
        boxes = [b for b in sliding_windows(bounds, ratio, scales=scales, config=config.candidates)
                 if min(b.w, b.h) >= min_side - 1e-6]
        if not boxes:
            continue
        cut = np.zeros(len(boxes))
        if bodies:
            m = measure(ctx, [(b, ratio) for b in boxes], [], bodies, bounds, MaskTables(),
                        portrait_width=config.selection.no_sliced_body.portrait_width)
            cut = config.selection.no_sliced_body.cuts(m)[0]
        crops += scorer.score(ctx, boxes, ratio=ratio, region=bounds)
        cuts.append(cut)
    return crops, (np.concatenate(cuts) if cuts else np.zeros(0))


def scene_views(ctx: ScoringContext, scorer: Scorer, config: CropConfig, *, bounds: Box, min_side: float,
                ratios: tuple[Ratio, ...], scale: float, guards: list[Subject] = (), n: int = 1,
                closer: int = 0) -> DirectSelection:
    """No subject: the best-composed view of the whole scene (windows of ``scene_views.scales[:2]``),
    and with ``n > 1`` (a fixed k) up to ``n - 1`` more, each the best-scored window of any of
    ``scene_views.scales`` with IoU at most ``scene_views.iou`` with the views before it, in reading
    order after the first; with ``closer`` (k auto: ``objective.min_slides`` - 1) up to that many views
    inside the first instead, as zooms are (``close_ups.inside`` of them in it, IoU at most
    ``close_ups.iou`` with every view), the best-scored first.  A view slicing none of the ``guards``
    (bodies too unsure to be subjects) wins over any that does; the further views slice none.  The
    notes say so.
    """
    rule = config.selection.scene_views
    bodies = [b for g in guards for b in g.bodies]
    wide, cuts = _windows(ctx, scorer, config, bounds, min_side, ratios, rule.scales[:2], bodies)
    if not wide:
        raise no_candidate(bounds, ratios, min_side)
    first = max(range(len(wide)), key=lambda i: (-cuts[i], wide[i].score))
    views = [wide[first]]
    if n > 1 and rule.enabled:
        more, more_cuts = _windows(ctx, scorer, config, bounds, min_side, ratios, rule.scales, bodies)
        score = np.where(more_cuts == 0, np.array([c.score for c in more]), -np.inf)
        picked = greedy([c.box for c in more], lambda chosen, iou: score, k=n - 1, also=[views[0].box],
                        iou_limit=rule.iou)
        views += sorted((more[i] for i in picked), key=lambda c: (c.box.x, c.box.y))
    elif closer > 0:
        views += closer_views(ctx, scorer, config, first=views[0].box, shown=[views[0].box], bounds=bounds,
                              min_side=min_side, ratios=ratios, n=closer, bodies=bodies)
    if n > 1 and rule.enabled:
        how = (f"{plural(len(views), 'view')} of the scene" + ("" if len(views) >= n else
               f", asked for {n} (no other view slicing nothing differs enough from these)"))
    elif len(views) > 1:
        how = f"one view of the scene and {plural(len(views) - 1, 'closer view')} inside it"
    else:
        how = "one view of the scene"
    notes = [f"{NO_SUBJECT}: {how}"] + size_notes([v.box for v in views], scale, bounds, config.selection.pool)
    return DirectSelection(tuple(views), (0.0,) * len(views), (), 1, tuple(notes), tuple((v,) for v in views),
                           (-1,) * len(views), topped=len(views) - 1 if n <= 1 else 0)


def closer_views(ctx: ScoringContext, scorer: Scorer, config: CropConfig, *, first: Box, shown: list[Box], bounds: Box,
                 min_side: float, ratios: tuple[Ratio, ...], n: int, subjects: list[Subject] = (),
                 bodies: list[Subject] = (), hold: int | None = None) -> list[ScoredCrop]:
    """Up to ``n`` views inside the slide ``first``, as a zoom is (``close_ups.inside`` of each in it, IoU at most
    ``close_ups.iou`` with every slide ``shown``), the best-scored first: windows of ``scene_views.scales`` that
    break no hard rule: none of ``bodies`` sliced or cut at a portrait line, no face cut, none of ``subjects``
    held by half, and one of them held whole (``holds_main``) where there are any: ``subjects[hold]`` where
    given (the slide's own main subject: the view looks closer at it).  None where ``scene_views`` is off."""
    sel = config.selection
    if n <= 0 or not sel.scene_views.enabled:
        return []
    crops: list[ScoredCrop] = []
    breaks: list[np.ndarray] = []
    tables = MaskTables()
    for ratio in ratios:  # every window is scored (a learned scorer ranks them together), those outside refused
        boxes = [b for b in sliding_windows(bounds, ratio, scales=sel.scene_views.scales, config=config.candidates)
                 if min(b.w, b.h) >= min_side - 1e-6]
        if not boxes:
            continue
        m = measure(ctx, [(b, ratio) for b in boxes], list(subjects), list(bodies), bounds, tables,
                    portrait_width=sel.no_sliced_body.portrait_width)
        cut, portrait = sel.no_sliced_body.cuts(m)
        inside = box_shares(m.C, first) * first.area / (m.area * bounds.area)  # share of each window in ``first``
        broken = ((cut > 0) | (portrait > 0) | sel.no_cut_face.violations(m) | sel.no_half_salient.violations(m)
                  | (inside < sel.close_ups.inside - 1e-9))
        if subjects:  # the main subject (``hold``), else some subject, held whole
            whole = sel.holds_main.whole_matrix(m)
            broken |= ~(whole[:, [hold]] if hold is not None else whole).any(axis=1)
        breaks.append(broken)
        crops += scorer.score(ctx, boxes, ratio=ratio, region=bounds)
    if not crops:
        return []
    score = np.where(np.concatenate(breaks), -np.inf, np.array([c.score for c in crops]))
    picked = greedy([c.box for c in crops], lambda chosen, iou: score, k=n, also=list(shown),
                    iou_limit=sel.close_ups.iou)
    return [crops[i] for i in picked]
