"""Crop scorers: a registry of classes that rate candidate crops.

A scorer is a class with ``name``, ``version`` (part of every output; bump it
when scores change), ``description``, capability flags, a constructor taking
keyword options (``weights`` for the built-in one) and
``score(context, boxes, *, ratio, region=None, subject=None) -> list[ScoredCrop]``
(see :class:`Scorer`).  The built-in ``composition`` scorer registers exactly
the way a third-party scorer does, through :data:`SCORERS` or the
``multicrop.scorers`` entry-point group.
"""

from __future__ import annotations

from ...registry import Registry
from .base import ScoredCrop, Scorer, ScoringContext
from .composition import CompositionScorer

__all__ = ["SCORERS", "ScoredCrop", "Scorer", "ScoringContext", "CompositionScorer", "get_scorer"]

#: Registered scorer classes, by name.
SCORERS: Registry[type] = Registry("scorer", entry_point_group="multicrop.scorers")
SCORERS.register(CompositionScorer)


def get_scorer(config) -> Scorer:
    """The scorer ``config.scorer``, built with the weights in ``config``.

    Raises
    ------
    UnknownNameError
        If no scorer has that name (the message suggests close ones).
    """
    return SCORERS.create(config.scorer, weights=config.weights)
