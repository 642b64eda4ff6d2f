"""The photographer's rules of ``direct``, one frozen class each.

A rule has its sentence (``reason``), the measurement that justifies it
(``evidence``: a scoreboard line, ``docs/scoreboard.md``), an ``enabled``
switch and its thresholds.  A :class:`HardRule` marks the candidates that
break it (``violations``, vectorised over a :class:`~.measure.Measurements`);
a :class:`SoftTerm` adds a term to each candidate's quality (``term``; the
terms are in :mod:`.terms`).  Selection (:mod:`multicrop.crop.direct.select`)
reads only these methods, so a new rule is one class here or there, one test
and one docs line (``docs/cropping.md`` has the table, made by
:func:`rule_table`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from ...errors import InvalidParameterError
from ..settings import Settings, num

if TYPE_CHECKING:  # measure.py imports the scorer, which imports the settings
    from .measure import Measurements

__all__ = ["Rule", "HardRule", "SoftTerm", "HoldsMain", "NoSlicedBody", "NoCutFace", "NoHalfSalient", "rule_table"]


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
              "held by ``part``, else, for people, its largest part cut only at portrait lines (a group portrait)")
    evidence = ("coco-subjects person-cut 24.7 % -> 3.6 % (direct-3 -> direct-6); group portraits (direct-16): "
                "Instagram k = 3 person-cut 8.7 % -> 7.0 %, no other row moved")
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

    def cut_labels(self, m: Measurements, i: int) -> list[str]:
        """The labels of the bodies candidate ``i`` slices through (a cut at a portrait line is no slice)."""
        row = self.sliced(m.take(np.array([i])))[0] & ~m.portrait[i]
        return [m.bodies[j].label or m.bodies[j].kind for j in np.flatnonzero(row)]

    @staticmethod
    def note(at: int, cut: float, portrait: float, what: str, who: str = "") -> str | None:
        """Why crop ``at`` cuts (``cut`` bodies sliced, ``portrait`` cut at portrait lines) while framing ``what``;
        ``who``: the sliced bodies counted by name (``notes.counted``), else they are counted as bodies."""
        if cut <= 0 and portrait <= 0:
            return None
        n = int(cut)
        how = ("cuts a person at a portrait line" if n <= 0 and portrait <= 1 else
               f"cuts {int(portrait)} people at portrait lines (a group portrait)" if n <= 0 else
               f"cuts through {who}" if who else
               "cuts through 1 person, animal or vehicle" if n == 1 else
               f"cuts through {n} people, animals or vehicles")
        return f"crop {at} {how}: no candidate of the allowed ratios frames the {what} without a cut"


@dataclass(frozen=True)
class NoCutFace(HardRule):
    reason = "a face is held whole (``whole`` of it) or not touched (at most ``touched``)"
    evidence = ("direct-13, where every near-best crop of a person cuts a face, the most complete one keeping the "
                "faces: coco-subjects k auto covered 90.8 % -> 88.2 %, person-cut 5.7 % -> 6.9 % (a man cut at the "
                "thighs, not the eyebrows: the benchmark is blind to faces); off before that: no box changed")
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


def rule_table(rules: dict[str, Rule]) -> str:
    """A Markdown table of rules: setting name, kind, thresholds, reason and evidence (for docs/cropping.md)."""
    rows = ["| setting | kind | thresholds | rule | evidence |", "|---|---|---|---|---|"]
    for name, rule in rules.items():
        kind = "hard" if isinstance(rule, HardRule) else "soft" if isinstance(rule, SoftTerm) else "stage"
        values = ", ".join(f"{k} {v}" for k, v in rule.to_dict().items() if k != "enabled")
        reason, evidence = (t.replace("``", "`") for t in (type(rule).reason, type(rule).evidence))
        rows.append(f"| `{name}` | {kind} | {values} | {reason} | {evidence} |")
    return "\n".join(rows)
