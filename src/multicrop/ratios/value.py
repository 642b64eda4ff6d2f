"""The :class:`Ratio` value and its text form, ``"2:3"`` (:func:`parse_ratio`).

Re-exported by :mod:`multicrop.ratios`; the settings made of ratios (presets,
platform sizes, the setting parser) are :mod:`multicrop.ratios.presets`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..errors import InvalidParameterError
from ..serialize import TEXT_TYPES

__all__ = ["Ratio", "parse_ratio"]


@dataclass(frozen=True, slots=True)
class Ratio:
    """A target aspect ratio ``width:height`` (e.g. ``Ratio(2, 3)`` is portrait).

    Examples
    --------
    >>> Ratio(4, 5).value
    0.8
    >>> str(Ratio(3, 2))
    '3:2'
    """

    width: float
    height: float

    def __post_init__(self) -> None:
        for name in ("width", "height"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
                raise InvalidParameterError(f"ratio {name} must be a positive number, got {v!r}")

    @property
    def value(self) -> float:
        """Width divided by height."""
        return self.width / self.height

    def __str__(self) -> str:
        def fmt(v: float) -> str:
            return str(int(v)) if float(v).is_integer() else f"{v:g}"

        return f"{fmt(self.width)}:{fmt(self.height)}"


_RATIO_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*[:x/]\s*(\d+(?:\.\d+)?)\s*$")


def parse_ratio(text: str | Ratio) -> Ratio:
    """Parse ``"2:3"``, ``"2x3"``, ``"4/5"`` or ``"1.91:1"`` into a :class:`Ratio`.

    Raises
    ------
    InvalidParameterError
        If ``text`` is not of the form ``W:H`` with positive numbers.

    Examples
    --------
    >>> parse_ratio("1.91:1")
    Ratio(width=1.91, height=1)
    >>> parse_ratio("wide")
    Traceback (most recent call last):
    ...
    multicrop.errors.InvalidParameterError: ratio must look like '2:3' or '1.91:1', got 'wide'
    """
    if isinstance(text, Ratio):
        return text
    m = _RATIO_RE.match(str(text))
    if not m:
        raise InvalidParameterError(f"ratio must look like '2:3' or '1.91:1', got {text!r}")
    w, h = (float(g) for g in m.groups())
    w = int(w) if w.is_integer() else w
    h = int(h) if h.is_integer() else h
    if w <= 0 or h <= 0:
        raise InvalidParameterError(f"ratio parts must be positive, got {text!r}")
    return Ratio(w, h)


#: A Ratio is written as its text form, ``"2:3"``.
TEXT_TYPES[Ratio] = parse_ratio
