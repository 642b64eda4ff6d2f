"""Option values shared by several commands."""

from __future__ import annotations

from ..errors import InvalidParameterError

__all__ = ["count_or_auto"]


def count_or_auto(value: str, option: str) -> int | str:
    """A command-line count: ``auto`` (any case, spaces around ignored) or a positive integer.

    Examples
    --------
    >>> count_or_auto(" Auto ", "--k"), count_or_auto("3", "--k")
    ('auto', 3)
    >>> count_or_auto("0", "--slides")
    Traceback (most recent call last):
    ...
    multicrop.errors.InvalidParameterError: --slides must be a positive integer or auto, got '0'
    """
    if value.strip().lower() == "auto":
        return "auto"
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise InvalidParameterError(f"{option} must be a positive integer or auto, got {value!r}")
    return n
