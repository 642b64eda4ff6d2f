"""How much of the person a close-up frames it may leave out: their legs below its bottom edge, never a side,
never through a hand or a foot, never at an elbow or a knee.

A close-up holds the person it frames whole: 99 % of their pose mask
(``no_sliced_body.whole``).  A standing figure is tall, so a close-up of at most
``close_ups.share`` of a portrait-format photo often cannot hold their feet.  A
photographer then cuts at the bottom edge, as a three-quarter shot does: here a
close-up may hold a person with a pose (a mask and keypoints) by
``close_ups.mask_own`` of the mask where everything it leaves out lies below its
bottom edge and no edge crosses a hand or a foot, or passes an elbow or a knee,
by less than ``close_ups.joint_margin`` of their height.  Sides and top hold the
person whole: a side that trims a person trims an arm, and the pose may miss an
arm.  A neighbour's joints are not checked (neighbours keep ``mask_whole``)."""

from __future__ import annotations

import numpy as np

from ...geometry import Box
from ..scoring.base import ScoringContext
from ..subjects import Subject
from .measure import MaskTables, Measurements

__all__ = ["PARTS", "masked", "core_box", "joints_at_edge", "held_whole"]

#: MediaPipe pose keypoints a crop's edge must not pass near, by part: an edge may not cross a hand or a foot
#: (wrist to fingertips, ankle to toe) nor pass by an elbow or a knee.
PARTS = ((13,), (14,), (15, 17, 19, 21), (16, 18, 20, 22), (25,), (26,), (27, 29, 31), (28, 30, 32))


def masked(body: Subject) -> bool:
    """A person with a mask (a pose's, or what a body in front leaves of their box): whole from a mask's share."""
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
    """Crops (corners ``C``) with an edge inside the photo (not on ``bounds``) that crosses a hand or a foot the
    pose sees, or passes an elbow or a knee, by less than ``margin`` of the person's box height (:data:`PARTS`):
    a photographer crops a limb between its joints, not at one."""
    kp = None if person.keypoints is None else np.asarray(person.keypoints)
    out = np.zeros(len(C), bool)
    if kp is None or margin <= 0:
        return out
    d, eps = margin * person.box.h, 1e-6
    x1, y1, x2, y2 = (C[:, i] for i in range(4))
    for part in PARTS:
        seen = [i for i in part if i < len(kp) and kp[i, 2] >= min_vis]
        if not seen:
            continue
        px, py = kp[seen, 0], kp[seen, 1]
        lx, hx, ly, hy = px.min() - d, px.max() + d, py.min() - d, py.max() + d   # the part, grown by the margin
        across = (hx > x1) & (lx < x2)
        along = (hy > y1) & (ly < y2)
        out |= (((lx < x1) & (x1 < hx) & (x1 > bounds.x + eps)) | ((lx < x2) & (x2 < hx) & (x2 < bounds.x2 - eps))) & along
        out |= (((ly < y1) & (y1 < hy) & (y1 > bounds.y + eps)) | ((ly < y2) & (y2 < hy) & (y2 < bounds.y2 - eps))) & across
    return out


def held_whole(ctx: ScoringContext, m: Measurements, at: int, person: Subject, bounds: Box, tables: MaskTables,
               whole: float, mask_own: float, joint_margin: float) -> np.ndarray:
    """Candidates that hold ``m.subjects[at]`` (``person``, with a pose mask) as a close-up may: ``whole`` of
    the mask, or ``mask_own`` of it with what they leave out below their bottom edge and no edge at a joint."""
    held = m.shares[:, at]
    if person.keypoints is None:  # a mask without a pose (what a body in front leaves of a box): whole only
        return held >= whole - 1e-9
    down = [Box.from_corners(c.x, c.y, c.x2, bounds.y2) for c in m.boxes]
    sides = tables.shares(person.weight, ctx.int_corners(down)) >= whole - 1e-9 if down else np.zeros(0, bool)
    trimmed = (held >= mask_own - 1e-9) & sides & ~joints_at_edge(m.C, person, joint_margin, bounds)
    return (held >= whole - 1e-9) | trimmed
