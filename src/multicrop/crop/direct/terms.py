"""The soft terms of ``direct``: one frozen :class:`~.rules.SoftTerm` class each.

A term adds to each candidate's quality, given the index of its main
subject (``term``, vectorised over a :class:`~.measure.Measurements`); the
hard rules and the base classes are in :mod:`.rules`, whose
:func:`~.rules.rule_table` tabulates both for ``docs/cropping.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ...geometry import fit_ratio_box
from ...ratios import Ratio
from ..settings import num
from ..subjects import Subject, facing
from .rules import SoftTerm

if TYPE_CHECKING:  # measure.py imports the scorer, which imports the settings
    from .measure import Measurements

__all__ = ["AspectFit", "PhotoOrientation", "Headroom", "LeadRoom", "NotTooWide", "OneSubject", "tightest"]


@dataclass(frozen=True)
class AspectFit(SoftTerm):
    reason = "a slide's shape suits its subject's own extent (a standing person: a portrait slide)"
    evidence = ("off: carousel-synth given k kIoU@0.5 0.445 -> 0.441, its hard-failure geometries 0.220 -> 0.211, "
                "coco-subjects k auto one crop fewer (direct-10; all inside their intervals)")
    weight: float = num(0.15, 0, 1e6)
    sigma: float = num(0.5, 0, 10, lo_open=True)

    def term(self, m: Measurements, main: np.ndarray) -> np.ndarray:
        if not self.enabled:
            return np.zeros(len(m))
        aspect = np.array([max(s.box.w, 1.0) / max(s.box.h, 1.0) for s in m.subjects])
        crop = np.array([r.value for r in m.ratios])
        return self.weight * np.exp(-np.log(crop / aspect[main]) ** 2 / (2 * self.sigma ** 2))


@dataclass(frozen=True)
class PhotoOrientation(SoftTerm):
    reason = "slides keep the photo's own orientation where the subject allows (square ones have none)"
    evidence = ("off: carousel-synth k auto kIoU@0.5 0.412 -> 0.331 and given k 0.445 -> 0.367, both outside "
                "their intervals (direct-10); the labellers framed 83 % of slides in the photo's orientation")
    weight: float = num(0.2, 0, 1e6)

    def term(self, m: Measurements, main: np.ndarray) -> np.ndarray:
        b = m.bounds
        if not self.enabled or not self.weight or b.w == b.h:
            return np.zeros(len(m))
        sign = 1.0 if b.w > b.h else -1.0
        return self.weight * np.array([sign * (r.value - 1) > 0 for r in m.ratios], float)


@dataclass(frozen=True)
class Headroom(SoftTerm):
    reason = "a person's head keeps ``min_room`` of the slide's height above it unless the photo ends there"
    evidence = "off: coco-subjects k auto person-cut 5.8 % (5/86) -> 6.9 % (6/87) (direct-10)"
    min_room: float = num(0.03, 0, 1)
    weight: float = num(0.3, 0, 1e6)

    def term(self, m: Measurements, main: np.ndarray) -> np.ndarray:
        out = np.zeros(len(m))
        if not self.enabled:
            return out
        C = m.C
        h = np.maximum(C[:, 3] - C[:, 1], 1e-9)
        for j, s in enumerate(m.subjects):
            mine = main == j
            if s.kind == "person" and mine.any():
                top = min(x.box.y for x in (s.members or (s,)))
                cramped = ((top - C[:, 1]) / h < self.min_room) & (C[:, 1] > 0.5)
                out[mine] -= self.weight * cramped[mine]
        return out


@dataclass(frozen=True)
class LeadRoom(SoftTerm):
    reason = "a person who faces left or right has more of the slide in front of them than behind"
    evidence = ("off: one coco-subjects photo and 20 carousel-synth scenes change, every figure inside its "
                "interval (synth k auto kIoU@0.5:0.95 0.218 -> 0.220; direct-10): a photographer's rule the "
                "scoreboard does not measure")
    weight: float = num(0.1, 0, 1e6)

    def term(self, m: Measurements, main: np.ndarray) -> np.ndarray:
        out = np.zeros(len(m))
        if not self.enabled:
            return out
        C = m.C
        w = np.maximum(C[:, 2] - C[:, 0], 1e-9)
        for j, s in enumerate(m.subjects):
            mine = main == j
            f = facing(s) if s.kind == "person" and not s.members and mine.any() else 0.0
            if f:
                u = (s.box.center[0] - C[:, 0]) / w
                out[mine] += self.weight * np.clip(2 * f * (0.5 - u), -1, 1)[mine]
        return out


@dataclass(frozen=True)
class NotTooWide(SoftTerm):
    reason = ("the wide view once: a slide larger than ``share`` of the photo and than its subject's tightest "
              "framing loses up to ``weight``")
    evidence = ("weight 1.0 -> 0.25: coco-subjects k auto covered 90.8 % -> 94.7 % but featured 39.5 % -> 38.2 %, "
                "and 59.1 % -> 45.5 % on the 45 other photos: wide slides replace the close ones (direct-10)")
    weight: float = num(1.0, 0, 1e6)
    share: float = num(0.5, 0, 1)

    def term(self, m: Measurements, main: np.ndarray, *, ratios: tuple[Ratio, ...] = (), fill: float = 1.0
             ) -> np.ndarray:
        if not self.enabled:
            return np.zeros(len(m))
        free = np.maximum(self.share, tightest(m.subjects, ratios or tuple(set(m.ratios)), m.bounds, fill))[main]
        return -self.weight * np.clip((m.area - free) / max(1 - self.share, 1e-9), 0, 1)


@dataclass(frozen=True)
class OneSubject(SoftTerm):
    reason = "one main subject per slide: other subjects held cost ``weight`` times their importance"
    evidence = ("off: carousel-synth k auto kIoU@0.5 0.412 -> 0.362 and given k 0.445 -> 0.394 (outside their "
                "intervals); coco-subjects k = 3 person-cut 3.8 % -> 5.7 % (direct-10)")
    weight: float = num(1.0, 0, 1e6)

    def term(self, m: Measurements, main: np.ndarray) -> np.ndarray:
        if not self.enabled:
            return np.zeros(len(m))
        imp = np.array([s.importance for s in m.subjects])
        others = np.ones_like(m.shares)
        others[np.arange(len(m)), main] = 0.0
        return -self.weight * (others * imp[None, :] * m.shares).sum(1)


def tightest(subjects: list[Subject], ratios: tuple[Ratio, ...], bounds, fill: float) -> np.ndarray:
    """Per subject, the area (share of the photo) of its tightest framing in any of ``ratios``."""
    out = np.ones(len(subjects))
    for j, s in enumerate(subjects):
        for r in ratios:
            largest = fit_ratio_box(bounds, r.value)
            w = min(max(s.box.w, s.box.h * r.value) / fill, largest.w)
            out[j] = min(out[j], w * (w / r.value) / max(bounds.area, 1e-9))
    return out
