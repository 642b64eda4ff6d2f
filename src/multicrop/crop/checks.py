"""Validation helpers shared by the crop wing's config classes (one clear line per bad value)."""

from __future__ import annotations

import math

from ..errors import InvalidParameterError

__all__ = ["check_range", "check_int", "check_positive_int", "check_bool"]


def check_range(obj: object, name: str, lo: float, hi: float, *, lo_open: bool = False) -> None:
    v = getattr(obj, name)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise InvalidParameterError(f"{name} must be a number, got {v!r}")
    if (v <= lo if lo_open else v < lo) or v > hi:
        raise InvalidParameterError(
            f"{name} must be in {'(' if lo_open else '['}{lo}, {hi}], got {v!r}"
        )


def check_int(obj: object, name: str, *, minimum: int) -> None:
    v = getattr(obj, name)
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise InvalidParameterError(f"{name} must be an integer >= {minimum}, got {v!r}")


def check_positive_int(obj: object, name: str) -> None:
    v = getattr(obj, name)
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise InvalidParameterError(f"{name} must be a positive integer, got {v!r}")


def check_bool(obj: object, name: str) -> None:
    v = getattr(obj, name)
    if not isinstance(v, bool):
        raise InvalidParameterError(f"{name} must be true or false, got {v!r}")
