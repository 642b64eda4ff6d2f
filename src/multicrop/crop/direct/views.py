"""A photo without a subject: views of the scene, the first and closer ones at ``k="auto"``, up to ``k`` at a fixed ``k``."""

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

__all__ = ["NO_SUBJECT", "no_candidate", "scene_views"]

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
    more_views = n - 1 if n > 1 else closer
    if more_views > 0 and rule.enabled:
        more, more_cuts = _windows(ctx, scorer, config, bounds, min_side, ratios, rule.scales, bodies)
        allowed = more_cuts == 0
        limit = rule.iou
        if n <= 1:  # closer views: inside the first, as a zoom is
            zoom = config.selection.close_ups
            top = np.array([views[0].box.corners()])
            allowed &= np.array([box_shares(top, c.box)[0] >= zoom.inside - 1e-9 for c in more], bool)
            limit = zoom.iou
        score = np.where(allowed, np.array([c.score for c in more]), -np.inf)
        picked = greedy([c.box for c in more], lambda chosen, iou: score, k=more_views, also=[views[0].box],
                        iou_limit=limit)
        picked_views = [more[i] for i in picked]
        views += sorted(picked_views, key=lambda c: (c.box.x, c.box.y)) if n > 1 else picked_views
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
