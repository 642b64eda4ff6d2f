"""A request's crop settings as the page sends them: k, and the strategies that take ``k="auto"``.

:func:`_parse_k` reads k from a request through the one count grammar the
command line uses too (:func:`multicrop.ratios.count_or_auto`: a positive
integer or ``auto``, with the same error); :func:`auto_k_strategies` tells
the page with which strategies this version accepts ``k="auto"``.
:mod:`multicrop.web.photos` re-exports both.
"""

from __future__ import annotations

from typing import Any

from ..ratios import count_or_auto

__all__ = ["auto_k_strategies"]


def _parse_k(k: Any) -> int | str:
    """k from a request (text or a JSON integer): a positive integer or ``"auto"``, as ``--k`` reads it."""
    return count_or_auto(k, "k")


def auto_k_strategies() -> list[str]:
    """The strategies with which this version's CropConfig accepts ``k="auto"`` (may be none):
    :data:`multicrop.crop.config.AUTO_K_STRATEGIES`, the one place that says so."""
    from ..crop.config import AUTO_K_STRATEGIES

    return list(AUTO_K_STRATEGIES)
