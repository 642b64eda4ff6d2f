"""The base of the crop wing's nested settings: ranges as field metadata, one check, nested ``set``.

Every group of settings (:class:`multicrop.crop.subject_config.SubjectConfig`'s
parts, the rules of :mod:`multicrop.crop.direct.rules`) is a frozen dataclass
derived from :class:`Settings`; a number declares its range where it is
declared (:func:`num`), and one ``__post_init__`` checks them all, so a rule's
threshold is written once.  :meth:`Settings.set` changes nested values the way
scikit-learn's ``set_params`` does (``set(details__area=0.0)``).

Examples
--------
>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Room(Settings):
...     share: float = num(0.5, 0, 1)
>>> Room().set(share=0.2).share
0.2
>>> Room(share=2.0)
Traceback (most recent call last):
...
multicrop.errors.InvalidParameterError: Room.share must be in [0, 1], got 2.0
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import field
from typing import Any

from ..errors import InvalidParameterError
from ..serialize import Serializable

__all__ = ["Settings", "num", "count", "fractions"]


def num(default: float, lo: float, hi: float, *, lo_open: bool = False) -> Any:
    """A number field in ``[lo, hi]`` (``(lo, hi]`` with ``lo_open``)."""
    return field(default=default, metadata={"range": (lo, hi, lo_open)})


def count(default: int, minimum: int = 0) -> Any:
    """An integer field of at least ``minimum``."""
    return field(default=default, metadata={"int": minimum})


def fractions(default: tuple[float, ...]) -> Any:
    """A non-empty tuple of numbers in ``(0, 1]``."""
    return field(default=default, metadata={"fractions": True})


class Settings(Serializable):
    """Mixin for frozen settings dataclasses: checks field metadata, nested :meth:`set`."""

    __slots__ = ()

    def __post_init__(self) -> None:
        cls = type(self).__name__
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            v = getattr(self, f.name)
            where = f"{cls}.{f.name}"
            if "range" in f.metadata:
                lo, hi, lo_open = f.metadata["range"]
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                    raise InvalidParameterError(f"{where} must be a number, got {v!r}")
                if (v <= lo if lo_open else v < lo) or v > hi:
                    raise InvalidParameterError(f"{where} must be in {'(' if lo_open else '['}{lo}, {hi}], got {v!r}")
            elif "int" in f.metadata:
                if isinstance(v, bool) or not isinstance(v, int) or v < f.metadata["int"]:
                    raise InvalidParameterError(f"{where} must be an integer >= {f.metadata['int']}, got {v!r}")
            elif "fractions" in f.metadata:
                try:
                    vals = tuple(float(x) for x in v)
                except (TypeError, ValueError):
                    vals = ()
                if not vals or any(not 0 < x <= 1 for x in vals):
                    raise InvalidParameterError(f"{where} must be numbers in (0, 1], got {v!r}")
                object.__setattr__(self, f.name, vals)
            elif f.type in ("bool", bool) and not isinstance(v, bool):
                raise InvalidParameterError(f"{where} must be true or false, got {v!r}")
        self._check()

    def _check(self) -> None:
        """Checks between fields (a subclass's own)."""

    def set(self, **changes: Any):
        """A copy with values changed; ``a__b=v`` changes field ``b`` of the nested ``a``.

        Raises
        ------
        InvalidParameterError
            For a name that is no field (the message lists the allowed ones).
        """
        direct: dict[str, Any] = {}
        nested: dict[str, dict[str, Any]] = {}
        names = {f.name for f in dataclasses.fields(self)}  # type: ignore[arg-type]
        for key, value in changes.items():
            head, _, rest = key.partition("__")
            if head not in names:
                raise InvalidParameterError(
                    f"{type(self).__name__}: unknown setting {head!r}; allowed: {', '.join(sorted(names))}")
            if rest:
                nested.setdefault(head, {})[rest] = value
            else:
                direct[head] = value
        for head, sub in nested.items():
            direct[head] = getattr(self, head).set(**sub)
        return dataclasses.replace(self, **direct)  # type: ignore[type-var]
