"""The result of direct selection."""

from __future__ import annotations

from dataclasses import dataclass

from ..scoring.base import ScoredCrop
from ..subjects import Subject

__all__ = ["DirectSelection"]


@dataclass(frozen=True)
class DirectSelection:
    """Chosen crops (analysis pixels, in carousel order: the objective's slides as chosen, each close-up,
    portrait and zoom in right after its subject's crop, a wider view before the first crop it holds, never
    before a focus crop), their gains, main subjects and notes."""

    crops: tuple[ScoredCrop, ...]
    gains: tuple[float, ...]
    subjects: tuple[Subject, ...]
    n_distinct: int
    notes: tuple[str, ...]
    #: Per chosen crop, alternatives framing the same subject (the chosen crop first).
    shortlists: tuple[tuple[ScoredCrop, ...], ...] = ()
    #: Per chosen crop, the index into ``subjects`` of its main subject (-1: none).
    mains: tuple[int, ...] = ()
    #: Chosen crops that cut a person, animal or vehicle (no framing of their subject could avoid it).
    cut: int = 0
    #: Slides that must not choose the ratio of a ``one_ratio`` carousel: those k auto added only to make a
    #: carousel of one slide two (``objective.min_slides``), a fixed k's wide view of its subjects, and
    #: ``force_k``'s fills.
    topped: int = 0
    #: No candidate met the hard rules: the crops are the largest part of a subject, or its parts along it
    #: (a ``one_ratio`` carousel takes such a ratio only where every ratio is so).
    unframed: bool = False
