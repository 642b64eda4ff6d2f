"""A request's crop settings as the page sends them: k, and the strategies that take ``k="auto"``.

:func:`_parse_k` reads k from a request (an integer, or a word such as
``auto`` that the crop config may accept); :func:`auto_k_strategies` tells
the page with which strategies this version accepts ``k="auto"``.
:mod:`multicrop.web.photos` re-exports both.
"""

from __future__ import annotations

from typing import Any

from ..crop.config import CropConfig
from ..errors import InvalidParameterError

__all__ = ["auto_k_strategies"]


def _parse_k(k: Any) -> Any:
    """k from a request: an integer, or a word the crop config may accept (e.g. ``auto``)."""
    if isinstance(k, str):
        k = k.strip()
        if k.lstrip("-").isdigit():
            return int(k)
        return k
    if isinstance(k, float) and k.is_integer():
        return int(k)
    if isinstance(k, int) and not isinstance(k, bool):
        return k
    raise InvalidParameterError(f"k must be an integer >= 1 or 'auto', got {k!r}")


def auto_k_strategies() -> list[str]:
    """The strategies with which this version's CropConfig accepts ``k="auto"`` (may be none)."""
    from ..crop.config import STRATEGIES

    out = []
    for strategy in STRATEGIES:
        try:
            CropConfig(k="auto", strategy=strategy)  # type: ignore[arg-type]
        except (InvalidParameterError, TypeError, ValueError):
            continue
        out.append(strategy)
    return out
