"""The photographer's rules of ``direct``, one frozen class each.

A rule has its sentence (``reason``), the measurement that justifies it
(``evidence``: a scoreboard line, ``docs/scoreboard.md``), an ``enabled``
switch and its thresholds.  A :class:`HardRule` marks the candidates that
break it (``violations``, vectorised over a :class:`~.measure.Measurements`);
a :class:`SoftTerm` adds a term to each candidate's quality (``term``).
Selection (:mod:`multicrop.crop.direct.select`) reads only these methods, so a
new rule is one class here, one test and one docs line
(``docs/cropping.md`` has the table, made by :func:`rule_table`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from ...errors import InvalidParameterError
from ...geometry import fit_ratio_box
from ...ratios import Ratio
from ..settings import Settings, num
from ..subjects import Subject, facing

if TYPE_CHECKING:  # measure.py imports the scorer, which imports the settings
    from .measure import Measurements

__all__ = ["Rule", "HardRule", "SoftTerm", "HoldsMain", "NoSlicedBody", "NoCutFace", "NoHalfSalient",
           "AspectFit", "PhotoOrientation", "Headroom", "LeadRoom", "NotTooWide", "OneSubject", "rule_table"]


@dataclass(frozen=True)
class Rule(Settings):
    """One rule: its sentence, its evidence and an off switch (``enabled=False``)."""

    enabled: bool = True
    reason: ClassVar[str] = ""
    evidence: ClassVar[str] = ""


@dataclass(frozen=True)
class HardRule(Rule):
    """A constraint: candidates that break it are not chosen (unless nothing else frames a subject)."""

    def violations(self, m: Measurements) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


@dataclass(frozen=True)
class SoftTerm(Rule):
    """A term added to each candidate's quality, given the index of its main subject."""

    def term(self, m: Measurements, main: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


# -- hard rules ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class HoldsMain(HardRule):
    reason = ("every slide holds its main subject whole: a person, animal or vehicle by ``body_whole`` of it, "
              "anything else by ``whole``")
    evidence = ("off: coco-subjects k = 3 empty 6.6 % -> 28.1 % (outside its interval), k auto person-cut "
                "5.8 % -> 8.0 % and covered 90.8 % -> 82.9 % (direct-10)")
    whole: float = num(0.9, 0, 1, lo_open=True)
    body_whole: float = num(0.99, 0, 1, lo_open=True)

    def whole_matrix(self, m: Measurements) -> np.ndarray:
        """``(n, subjects)``: which subjects each candidate holds whole."""
        need = np.array([self.body_whole if s.bodies else self.whole for s in m.subjects])
        return m.shares >= need[None, :] - 1e-9

    def violations(self, m: Measurements) -> np.ndarray:
        if not self.enabled:
            return np.zeros(len(m), bool)
        return ~self.whole_matrix(m).any(axis=1)


@dataclass(frozen=True)
class NoSlicedBody(HardRule):
    reason = ("a person, animal or vehicle is held whole (``whole`` of it) or left out (at most ``sliver`` of its "
              "outline where it has one, else of its box); a "
              "person may be cut only at a portrait line, and only where no candidate frames them whole; a crowd "
              "is held or left by all but ``crowd`` of it; a group no crop holds whole gives its largest part "
              "held by ``part``")
    evidence = "coco-subjects person-cut 24.7 % -> 3.6 % (direct-3 -> direct-6)"
    sliver: float = num(0.01, 0, 1)
    whole: float = num(0.99, 0, 1, lo_open=True)
    crowd: float = num(0.15, 0, 0.5)
    part: float = num(0.4, 0, 1)
    portrait_width: float = num(0.9, 0, 1)

    def _check(self) -> None:
        if self.sliver >= self.whole:
            raise InvalidParameterError(f"NoSlicedBody.sliver must be < whole ({self.whole}), got {self.sliver!r}")

    def sliced(self, m: Measurements, only=None) -> np.ndarray:
        """``(n, bodies)``: which bodies each candidate slices (``only``: a mask of the bodies judged)."""
        s, shown = m.body_shares, m.out_shares
        crowd = np.array([b.kind == "crowd" for b in m.bodies], bool)
        out = np.where(crowd[None, :], (s > self.crowd) & (s < 1 - self.crowd), (shown > self.sliver) & (s < self.whole))
        if only is not None:
            out &= np.asarray(only, bool)[None, :]
        return out

    def cuts(self, m: Measurements, only=None) -> tuple[np.ndarray, np.ndarray]:
        """Per candidate: bodies sliced through, and bodies cut at a portrait line."""
        if not self.enabled or not m.bodies:
            return np.zeros(len(m)), np.zeros(len(m))
        sliced = self.sliced(m, only)
        ok = sliced & m.portrait
        return (sliced & ~ok).sum(1).astype(float), ok.sum(1).astype(float)

    def violations(self, m: Measurements) -> np.ndarray:
        cut, portrait = self.cuts(m)
        return (cut > 0) | (portrait > 0)

    @staticmethod
    def note(at: int, cut: float, portrait: float, what: str) -> str | None:
        if cut <= 0 and portrait <= 0:
            return None
        n = int(cut)
        how = ("cuts a person at a portrait line" if n <= 0 else
               "cuts through 1 person, animal or vehicle" if n == 1 else
               f"cuts through {n} people, animals or vehicles")
        return f"crop {at} {how}: no candidate of the allowed ratios frames the {what} without a cut"


@dataclass(frozen=True)
class NoCutFace(HardRule):
    reason = "a face is held whole (``whole`` of it) or not touched (at most ``touched``)"
    evidence = ("off: no box of the scoreboard changes (direct-10; its photos' faces lie inside detected people, "
                "whom NoSlicedBody holds); kept for a face with no body found, tests/crop/test_direct.py")
    touched: float = num(0.02, 0, 1)
    whole: float = num(0.98, 0, 1, lo_open=True)

    def violations(self, m: Measurements) -> np.ndarray:
        if not self.enabled or m.faces.shape[1] == 0:
            return np.zeros(len(m), bool)
        return ((m.faces > self.touched) & (m.faces < self.whole)).any(axis=1)


@dataclass(frozen=True)
class NoHalfSalient(HardRule):
    reason = "a salient thing no detector names is held whole (``whole``) or by less than ``hold`` of it"
    evidence = ("off: the crops of 3 coco-subjects photos and 2 carousel-synth-hard scenes change, no figure "
                "moves (direct-10): the partition's cuts on carousel-synth are half-held blobs, which it keeps out")
    hold: float = num(0.5, 0, 1)
    whole: float = num(0.9, 0, 1, lo_open=True)

    def _check(self) -> None:
        if self.hold > self.whole:
            raise InvalidParameterError(f"NoHalfSalient.hold must be <= whole ({self.whole}), got {self.hold!r}")

    def violations(self, m: Measurements) -> np.ndarray:
        if not self.enabled:
            return np.zeros(len(m), bool)
        soft = np.array([not s.is_body for s in m.subjects], bool)
        return ((m.shares >= self.hold) & (m.shares < self.whole) & soft[None, :]).any(axis=1)


# -- soft terms ----------------------------------------------------------------------------------

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


def rule_table(rules: dict[str, Rule]) -> str:
    """A Markdown table of rules: setting name, kind, thresholds, reason and evidence (for docs/cropping.md)."""
    rows = ["| setting | kind | thresholds | rule | evidence |", "|---|---|---|---|---|"]
    for name, rule in rules.items():
        kind = "hard" if isinstance(rule, HardRule) else "soft" if isinstance(rule, SoftTerm) else "stage"
        values = ", ".join(f"{k} {v}" for k, v in rule.to_dict().items() if k != "enabled")
        reason, evidence = (t.replace("``", "`") for t in (type(rule).reason, type(rule).evidence))
        rows.append(f"| `{name}` | {kind} | {values} | {reason} | {evidence} |")
    return "\n".join(rows)
