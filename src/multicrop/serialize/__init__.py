"""One way to turn the project's frozen dataclasses into JSON data and back.

:func:`to_data` walks a value (dataclasses field by field, tuples and lists,
mappings, NumPy scalars and arrays, paths) into JSON-ready builtins;
:func:`from_data` rebuilds a typed value from such data, guided by the
dataclass's type hints, so the constructor (and its ``__post_init__``
validation) runs on every load.  :class:`Serializable` gives a dataclass the
``to_dict()`` / ``from_dict()`` pair through these two functions, so no class
writes its own converter.

Rules, the same for every class:

* a non-finite float (NaN, ±inf) is written as ``null`` (JSON has neither) and
  read back as NaN;
  an int given for a float stays an int, so values round-trip unchanged;
* tuples are written as lists and read back as tuples;
* types with a text form register it once (:data:`TEXT_TYPES`: a
  :class:`~multicrop.ratios.Ratio` is ``"2:3"``);
* unknown keys are an error that names the path to them, e.g.
  ``config.partition: unknown key 'treshold'``; missing keys take the
  field's default.

What a class writes beyond "every field under its name" is declared, never
coded: a field's ``metadata=serialized(...)`` leaves it out (``skip``),
writes it under another ``key``, rounds its floats (``round``), writes a
sequence of pairs as objects with named parts (``pairs``) or leaves it out
when None (``omit_none``); a :func:`computed` property is written after the
fields (``k``, ``ok``, a share) and ignored on load; a class attribute
``__data_round__ = n`` rounds every float of the class's fields.

This is ``dataclasses.asdict`` plus a typed loader, written here rather
than taken from msgspec or pydantic: their dataclass support ignores unknown
keys and would add a compiled dependency for ~150 lines of code.

Examples
--------
>>> from multicrop.geometry import Box
>>> from multicrop.ratios import Ratio
>>> to_data(Box(1, 2, 3, 4))
{'x': 1, 'y': 2, 'w': 3, 'h': 4}
>>> from_data(Box, {"x": 1, "y": 2, "w": 3, "h": 4})
Box(x=1, y=2, w=3, h=4)
>>> to_data({"ratios": (Ratio(2, 3), Ratio(3, 2)), "score": float("nan")})
{'ratios': ['2:3', '3:2'], 'score': None}
>>> from dataclasses import dataclass, field
>>> @dataclass(frozen=True)
... class Run:
...     done: int
...     seconds: float = field(default=0.0, metadata=serialized(round=2))
...     failures: tuple[tuple[str, str], ...] = field(default=(), metadata=serialized(pairs=("call", "error")))
...     cache: dict[str, int] = field(default_factory=dict, metadata=serialized(skip=True))
...     @computed()
...     def ok(self) -> bool:
...         return not self.failures
>>> to_data(Run(3, 1.23456, (("a", "timed out"),), {"x": 1}))
{'done': 3, 'seconds': 1.23, 'failures': [{'call': 'a', 'error': 'timed out'}], 'ok': False}
>>> from_data(Run, {'done': 3, 'failures': [{'call': 'a', 'error': 'timed out'}], 'ok': False})
Run(done=3, seconds=0.0, failures=(('a', 'timed out'),), cache={})
>>> from_data(Box, {"x": 1, "y": 2, "w": 3, "h": 4, "z": 0})
Traceback (most recent call last):
...
multicrop.errors.InvalidParameterError: Box: unknown key 'z'; allowed: h, w, x, y
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from .dump import TEXT_TYPES, to_data
from .load import from_data
from .rules import computed, serialized

__all__ = ["to_data", "from_data", "Serializable", "TEXT_TYPES", "serialized", "computed"]

T = TypeVar("T")


class Serializable:
    """Mixin giving a dataclass ``to_dict()`` and ``from_dict()`` through :func:`to_data` / :func:`from_data`."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of the fields (see the module's rules)."""
        return to_data(self)

    @classmethod
    def from_dict(cls: type[T], data: Mapping[str, Any]) -> T:
        """Inverse of :meth:`to_dict`; unknown keys are an error."""
        return from_data(cls, data)
