"""Values to JSON data: :func:`to_data` (see :mod:`multicrop.serialize` for the rules)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from pathlib import PurePath
from typing import Any

from .rules import plan

__all__ = ["to_data", "TEXT_TYPES"]

#: Types written as a string: type -> parser of that string (``str()`` writes
#: it).  Filled by the modules that define them (``geometry`` adds Ratio).
TEXT_TYPES: dict[type, Callable[[str], Any]] = {}


def _rounded(data: Any, digits: int) -> Any:
    if isinstance(data, float):
        return round(data, digits)
    if isinstance(data, dict):
        return {k: _rounded(v, digits) for k, v in data.items()}
    if isinstance(data, list):
        return [_rounded(v, digits) for v in data]
    return data


def _dump_dataclass(value: Any) -> dict[str, Any]:
    out = {}
    for key, name, rules in plan(type(value)).steps:
        v = getattr(value, name)
        if v is None and rules.omit_none:
            continue
        if rules.pairs is not None:
            v = [dict(zip(rules.pairs, item, strict=True)) for item in v]
        v = to_data(v)
        out[key] = v if rules.round is None else _rounded(v, rules.round)
    return out


def to_data(value: Any) -> Any:
    """JSON-ready builtins (dict, list, str, int, float, bool, None) for ``value``."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None  # JSON has no NaN or infinity
    if type(value) in TEXT_TYPES:
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _dump_dataclass(value)
    if isinstance(value, Mapping):
        return {str(k): to_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_data(v) for v in value]
    if type(value).__module__ == "numpy":  # scalars and arrays; numpy itself is not imported here
        return to_data(value.item() if getattr(value, "ndim", 0) == 0 else value.tolist())
    if isinstance(value, PurePath):
        return str(value)
    raise TypeError(f"cannot serialize {type(value).__name__}: {value!r}")
