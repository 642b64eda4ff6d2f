"""Crop scorers: a registry of objects that rate candidate crops.

A scorer is any object with a ``name``, a ``version`` (part of every output;
bump it when scores change), capability flags, a ``from_config(config)``
class method and ``score(context, boxes, *, ratio, region) -> list[ScoredCrop]``.
The built-in ``composition`` scorer is registered exactly the way a judge
(a later module) or a third-party checkpoint would be, through :data:`SCORERS`
or the ``multicrop.scorers`` entry-point group.
"""

from __future__ import annotations

from ...registry import Registry
from .base import ScoredCrop, Scorer, ScoringContext

__all__ = ["SCORERS", "ScoredCrop", "Scorer", "ScoringContext", "get_scorer"]

#: Registered scorer classes, by name.
SCORERS: Registry[type] = Registry("scorer", entry_point_group="multicrop.scorers")


def get_scorer(config) -> Scorer:
    """Instantiate the scorer ``config.scorer`` with the weights in ``config``.

    Raises
    ------
    UnknownNameError
        If no scorer has that name (the message suggests close ones).
    """
    return SCORERS.get(config.scorer).from_config(config)


def _register_builtins() -> None:
    from .composition import CompositionScorer

    SCORERS.register(CompositionScorer.name, CompositionScorer)


_register_builtins()
