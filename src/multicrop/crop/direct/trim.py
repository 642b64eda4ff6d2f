"""How much of the person a close-up frames it may leave out: their feet and shins, never a side, never at a joint.

A close-up holds the person it frames whole: 99 % of their pose mask
(``no_sliced_body.whole``).  A standing figure is tall, so a close-up of at most
``close_ups.share`` of a portrait-format photo often cannot hold their feet.  A
photographer then cuts at the bottom edge, through the shins, as a three-quarter
shot does: here a close-up may hold a person with a pose mask by
``close_ups.mask_own`` of it where everything it leaves out lies below its
bottom edge and no edge passes within ``close_ups.joint_margin`` of their height
of a joint, hand or foot the pose sees.  Sides and top hold the person whole:
a side that trims a person trims an arm, and the pose may miss an arm.
"""

from __future__ import annotations

import numpy as np

from ...geometry import Box
from ..scoring.base import ScoringContext
from ..subjects import Subject
from .measure import MaskTables, Measurements

__all__ = ["JOINTS", "masked", "core_box", "joints_at_edge", "held_whole"]

#: MediaPipe pose keypoints a crop's edge must not pass near: elbows, wrists, hands, knees, ankles, feet.
JOINTS = (13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 25, 26, 27, 28, 29, 30, 31, 32)


def masked(body: Subject) -> bool:
    """A person with a pose mask: the one kind of body a close-up may leave the feet of."""
    return body.kind == "person" and body.weight is not None


def core_box(body: Subject, keep: float) -> Box:
    """``body``'s box cut at the row above which ``keep`` of its mask lies (the framing of a three-quarter
    shot); the box itself for a body without a mask, or when that row is its bottom."""
    if body.weight is None:
        return body.box
    b = body.box
    rows = np.cumsum(body.weight.sum(axis=1, dtype=np.float64))
    total = float(rows[-1]) if len(rows) else 0.0
    if total <= 0:
        return b
    bottom = float(np.searchsorted(rows, keep * total, side="left") + 1)
    if bottom >= b.y2 or bottom <= b.y:
        return b
    return Box.from_corners(b.x, b.y, b.x2, bottom)


def joints_at_edge(C: np.ndarray, person: Subject, margin: float, bounds: Box, min_vis: float = 0.3) -> np.ndarray:
    """Crops (corners ``C``) with an edge inside the photo (not on ``bounds``) within ``margin`` of the
    person's box height of a joint, hand or foot the pose sees (:data:`JOINTS`): a photographer crops a limb
    between its joints, not at one."""
    kp = None if person.keypoints is None else np.asarray(person.keypoints)
    if kp is None or margin <= 0:
        return np.zeros(len(C), bool)
    pts = kp[[i for i in JOINTS if i < len(kp) and kp[i, 2] >= min_vis], :2]
    if not len(pts):
        return np.zeros(len(C), bool)
    d = margin * person.box.h
    x, y = pts[None, :, 0], pts[None, :, 1]
    x1, y1, x2, y2 = (C[:, i, None] for i in range(4))
    across = (x > x1 - d) & (x < x2 + d)
    along = (y > y1 - d) & (y < y2 + d)
    eps = 1e-6
    at = ((np.abs(x - x1) < d) & (x1 > bounds.x + eps) & along) | ((np.abs(x - x2) < d) & (x2 < bounds.x2 - eps) & along)
    at |= ((np.abs(y - y1) < d) & (y1 > bounds.y + eps) & across) | ((np.abs(y - y2) < d) & (y2 < bounds.y2 - eps) & across)
    return at.any(axis=1)


def held_whole(ctx: ScoringContext, m: Measurements, at: int, person: Subject, bounds: Box, tables: MaskTables,
               whole: float, mask_own: float, joint_margin: float) -> np.ndarray:
    """Candidates that hold ``m.subjects[at]`` (``person``, with a pose mask) as a close-up may: ``whole`` of
    the mask, or ``mask_own`` of it with what they leave out below their bottom edge and no edge at a joint."""
    held = m.shares[:, at]
    down = [Box.from_corners(c.x, c.y, c.x2, bounds.y2) for c in m.boxes]
    sides = tables.shares(person.weight, ctx.int_corners(down)) >= whole - 1e-9 if down else np.zeros(0, bool)
    trimmed = (held >= mask_own - 1e-9) & sides & ~joints_at_edge(m.C, person, joint_margin, bounds)
    return (held >= whole - 1e-9) | trimmed
