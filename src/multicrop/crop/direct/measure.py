"""What every rule reads: one :class:`Measurements` value per pool of candidates.

Everything here is a measurement, not a judgement: the share of every subject
and every body inside every candidate, which candidates could cut a person at
a portrait line, how much of each face a candidate holds.  The rules
(:mod:`multicrop.crop.direct.rules`) turn these arrays into violations and
terms with their own thresholds, so no rule re-measures and no threshold is
hidden here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...geometry import Box
from ...ratios import Ratio
from ...measures import box_sums, summed_area_table
from ..scoring.base import ScoringContext
from ..people import face_seen
from ..subjects import Subject, portrait_lines

__all__ = ["MaskTables", "Measurements", "measure", "box_shares", "subject_shares"]


class MaskTables:
    """Summed-area tables of subject masks, made once per photo and shared by every pool."""

    def __init__(self) -> None:
        self._tables: dict[int, tuple[np.ndarray, float, np.ndarray]] = {}

    def shares(self, weight: np.ndarray, corners: tuple[np.ndarray, ...]) -> np.ndarray:
        """Share of ``weight``'s total inside each box of integer ``corners`` (x1, y1, x2, y2)."""
        key = id(weight)
        if key not in self._tables or self._tables[key][2] is not weight:
            self._tables[key] = (summed_area_table(weight.astype(np.float64)), max(float(weight.sum()), 1e-9), weight)
        table, total, _ = self._tables[key]
        return box_sums(table, *corners) / total


def box_shares(C: np.ndarray, box: Box) -> np.ndarray:
    """Share of ``box``'s area inside each crop (corners ``C``, shape (n, 4))."""
    iw = np.clip(np.minimum(C[:, 2], box.x2) - np.maximum(C[:, 0], box.x), 0, None)
    ih = np.clip(np.minimum(C[:, 3], box.y2) - np.maximum(C[:, 1], box.y), 0, None)
    return iw * ih / max(box.area, 1e-9)


def subject_shares(ctx: ScoringContext, boxes: list[Box], subjects: list[Subject], tables: MaskTables) -> np.ndarray:
    """``shares[i, j]``: the share of subject j inside box i (its mask, else its box or its members' boxes)."""
    C = corners_of(boxes)
    ints = ctx.int_corners(boxes)
    out = np.zeros((len(boxes), len(subjects)))
    for j, s in enumerate(subjects):
        if s.weight is not None:
            out[:, j] = tables.shares(s.weight, ints)
        elif s.members:
            areas = np.array([m.box.area for m in s.members])
            held = np.stack([box_shares(C, m.box) for m in s.members], axis=1)
            out[:, j] = (held * areas[None, :]).sum(1) / max(areas.sum(), 1e-9)
        else:
            out[:, j] = box_shares(C, s.box)
    return np.clip(out, 0, 1)


def corners_of(boxes: list[Box]) -> np.ndarray:
    return np.array([b.corners() for b in boxes], dtype=np.float64).reshape(-1, 4)


def portrait_ok(C: np.ndarray, person: Subject, bounds: Box, width: float) -> np.ndarray:
    """Crops that could cut ``person`` as a portrait: a person whose face the pose sees
    (:func:`multicrop.crop.people.face_seen`), head and ``width`` of the body held, bottom edge on a
    portrait line (:func:`multicrop.crop.subjects.portrait_lines`)."""
    b = person.box
    lines = portrait_lines(person) if person.kind == "person" and face_seen(person) else ()
    if not lines:
        return np.zeros(len(C), bool)
    head = (C[:, 1] <= b.y + 1e-6) | (C[:, 1] <= bounds.y + 0.5)
    wide = (np.minimum(C[:, 2], b.x2) - np.maximum(C[:, 0], b.x)) / max(b.w, 1e-9) >= width
    bottom = np.zeros(len(C), bool)
    for lo, hi in lines:
        bottom |= (C[:, 3] >= lo) & (C[:, 3] <= hi)
    return head & wide & bottom


def face_shares(ctx: ScoringContext, boxes: list[Box]) -> np.ndarray:
    """``(n, faces)``: the share of each face box inside each crop (integer corners, as the scorer)."""
    if not ctx.faces or not boxes:
        return np.zeros((len(boxes), 0))
    x1, y1, x2, y2 = (a.astype(np.float64) for a in ctx.int_corners(boxes))
    F = corners_of(list(ctx.faces))
    iw = np.clip(np.minimum(x2[:, None], F[None, :, 2]) - np.maximum(x1[:, None], F[None, :, 0]), 0, None)
    ih = np.clip(np.minimum(y2[:, None], F[None, :, 3]) - np.maximum(y1[:, None], F[None, :, 1]), 0, None)
    return iw * ih / np.maximum((F[:, 2] - F[:, 0]) * (F[:, 3] - F[:, 1]), 1e-9)[None, :]


@dataclass(frozen=True)
class Measurements:
    """One pool's candidates measured against the photo's subjects, bodies and faces.

    ``shares`` is ``(n, subjects)``; ``body_shares`` and ``portrait`` are
    ``(n, bodies)`` (every person, animal, vehicle and crowd the crops must
    not slice: the subjects' members and the guards; a body's mask where it
    has one, else its box); ``faces`` ``(n, faces)``.
    ``area`` is each crop's share of the photo.
    """

    boxes: list[Box]
    ratios: list[Ratio]
    C: np.ndarray
    bounds: Box
    subjects: list[Subject]
    bodies: list[Subject]
    shares: np.ndarray
    body_shares: np.ndarray
    portrait: np.ndarray
    faces: np.ndarray
    area: np.ndarray = field(repr=False)
    body_out: np.ndarray | None = field(default=None, repr=False)

    @property
    def out_shares(self) -> np.ndarray:
        """``(n, bodies)``: how much of each body a crop shows when deciding it is left out: the share of
        its outline (:attr:`multicrop.crop.subjects.Subject.outline`) where it has one, else ``body_shares``."""
        return self.body_shares if self.body_out is None else self.body_out

    def __len__(self) -> int:
        return len(self.boxes)

    def take(self, idx) -> Measurements:
        """The measurements of some candidates only."""
        idx = np.asarray(idx, dtype=np.int64)
        return Measurements([self.boxes[i] for i in idx], [self.ratios[i] for i in idx], self.C[idx], self.bounds,
                            self.subjects, self.bodies, self.shares[idx], self.body_shares[idx],
                            self.portrait[idx], self.faces[idx], self.area[idx],
                            None if self.body_out is None else self.body_out[idx])


def measure(ctx: ScoringContext, pool: list[tuple[Box, Ratio]], subjects: list[Subject], bodies: list[Subject],
            bounds: Box, tables: MaskTables, *, portrait_width: float = 0.9) -> Measurements:
    """Measure every candidate of ``pool`` once (see :class:`Measurements`)."""
    boxes = [b for b, _ in pool]
    C = corners_of(boxes)
    n = len(boxes)
    ints = ctx.int_corners(boxes) if n else None
    body_shares = np.zeros((n, len(bodies)))
    portrait = np.zeros((n, len(bodies)), bool)
    for j, body in enumerate(bodies):
        body_shares[:, j] = tables.shares(body.weight, ints) if body.weight is not None else box_shares(C, body.box)
        portrait[:, j] = portrait_ok(C, body, bounds, portrait_width)
    outlined = [j for j, b in enumerate(bodies) if b.weight is None and b.outline is not None]
    body_out = body_shares.copy() if outlined else None  # "left out" on the outline where a body has one
    for j in outlined:
        body_out[:, j] = tables.shares(bodies[j].outline, ints)
    shares = subject_shares(ctx, boxes, subjects, tables) if n else np.zeros((0, len(subjects)))
    area = (C[:, 2] - C[:, 0]) * (C[:, 3] - C[:, 1]) / max(bounds.area, 1e-9)
    return Measurements(boxes, [r for _, r in pool], C, bounds, list(subjects), list(bodies), shares, body_shares,
                        portrait, face_shares(ctx, boxes), area, body_out)
