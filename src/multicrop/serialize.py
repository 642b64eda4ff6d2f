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

import dataclasses
import math
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import PurePath
from typing import Any, TypeVar

from .errors import InvalidParameterError

__all__ = ["to_data", "from_data", "Serializable", "TEXT_TYPES", "serialized", "computed"]

T = TypeVar("T")

#: Types written as a string: type -> parser of that string (``str()`` writes
#: it).  Filled by the modules that define them (``geometry`` adds Ratio).
TEXT_TYPES: dict[type, Callable[[str], Any]] = {}


@dataclasses.dataclass(frozen=True)
class _Rules:
    """How one field or computed property is written (see :func:`serialized`)."""

    skip: bool = False
    key: str | None = None
    round: int | None = None
    pairs: tuple[str, ...] | None = None
    omit_none: bool = False


_METADATA = "multicrop.serialize"


def serialized(*, skip: bool = False, key: str | None = None, round: int | None = None,
               pairs: tuple[str, ...] | None = None, omit_none: bool = False) -> dict[str, Any]:
    """Field metadata saying how :func:`to_data` writes the field: ``field(metadata=serialized(...))``.

    Parameters
    ----------
    skip : bool
        Not written (what a value carries for its own use: an image, a cache,
        a setting that changes no result); still accepted on load.
    key : str, optional
        Written (and read) under this key instead of the field's name.
    round : int, optional
        Floats inside the value are rounded to this many decimals.
    pairs : tuple of str, optional
        A sequence of tuples is written as objects with these keys
        (``("call_key", "problem")``) and read back as tuples.
    omit_none : bool
        Not written when the value is None.
    """
    if round is not None and (isinstance(round, bool) or not isinstance(round, int) or round < 0):
        raise InvalidParameterError(f"round must be an integer >= 0, got {round!r}")
    if pairs is not None and (not isinstance(pairs, tuple) or not pairs
                              or not all(isinstance(p, str) for p in pairs)):
        raise InvalidParameterError(f"pairs must be a tuple of key names, got {pairs!r}")
    return {_METADATA: _Rules(skip, key, round, pairs, omit_none)}


class computed(property):  # noqa: N801 - used as a decorator, like property
    """A property :func:`to_data` writes after the fields (and :func:`from_data` ignores).

    ``@computed(round=4)`` over a method makes it a property whose value the
    data holds under its name (or ``key``), with :func:`serialized`'s
    ``round`` and ``omit_none``: derived values a record shows, such as a
    count or a share, without a hand-written converter.
    """

    def __init__(self, fget: Callable[[Any], Any] | None = None, *, key: str | None = None,
                 round: int | None = None, omit_none: bool = False) -> None:
        super().__init__(fget)
        self.rules = serialized(key=key, round=round, omit_none=omit_none)[_METADATA]

    def __call__(self, fget: Callable[[Any], Any]) -> computed:
        out = computed(fget)
        out.rules = self.rules
        out.__doc__ = fget.__doc__
        return out


@dataclasses.dataclass(frozen=True)
class _Plan:
    """How one dataclass is written and read back."""

    steps: tuple[tuple[str, str, _Rules], ...]  # (key, attribute, rules) in writing order
    computed: frozenset[str]  # keys of computed properties: ignored on load
    fields: dict[str, str]  # load key -> field name (a renamed field is read under its key only)
    pairs: dict[str, tuple[str, ...]]  # field name -> names of its pairs' parts


_PLANS: dict[type, _Plan] = {}
_NO_RULES = _Rules()


def _plan(cls: type) -> _Plan:
    plan = _PLANS.get(cls)
    if plan is None:
        class_round = getattr(cls, "__data_round__", None)
        steps, fields, pairs = [], {}, {}
        for f in dataclasses.fields(cls):
            rules = f.metadata.get(_METADATA, _NO_RULES)
            if class_round is not None and rules.round is None:
                rules = dataclasses.replace(rules, round=class_round)
            if not rules.skip:
                steps.append((rules.key or f.name, f.name, rules))
            if f.init:
                fields[rules.key or f.name] = f.name
            if rules.pairs is not None:
                pairs[f.name] = rules.pairs
        keys = set()
        for klass in reversed(cls.__mro__):
            for name, v in vars(klass).items():
                if isinstance(v, computed) and name not in {n for _, n, _ in steps}:
                    rules = getattr(cls, name).rules
                    steps.append((rules.key or name, name, rules))
                    keys.add(rules.key or name)
        plan = _PLANS[cls] = _Plan(tuple(steps), frozenset(keys), fields, pairs)
    return plan


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
    for key, name, rules in _plan(type(value)).steps:
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


def from_data(cls: type[T], data: Any, *, where: str | None = None) -> T:
    """Build a value of type ``cls`` from :func:`to_data` output.

    Parameters
    ----------
    cls : type
        A dataclass, or any type hint made of dataclasses, builtins,
        ``tuple[...]``, ``list[...]``, ``dict[str, ...]``, ``X | None`` and
        :data:`TEXT_TYPES`.
    data : object
        Parsed JSON.
    where : str, optional
        Name of the value in error messages (default: the class name).

    Raises
    ------
    InvalidParameterError
        On unknown keys, missing required fields or values of the wrong type
        (the message names the path), or whatever the class's own
        validation raises.
    """
    return _load(cls, data, where or getattr(cls, "__name__", str(cls)))


def _load(tp: Any, data: Any, where: str) -> Any:
    if tp is Any:
        return data
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if data is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _load(arg, data, where)
            except (InvalidParameterError, TypeError, ValueError) as exc:
                errors.append(str(exc))
        raise InvalidParameterError(f"{where}: {data!r} matches none of {tp}: {'; '.join(errors)}")
    if origin is tuple:
        args = typing.get_args(tp)
        items = _sequence(data, where)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_load(args[0], v, f"{where}[{i}]") for i, v in enumerate(items))
        if len(args) != len(items):
            raise InvalidParameterError(f"{where}: expected {len(args)} items, got {len(items)}")
        return tuple(_load(a, v, f"{where}[{i}]") for i, (a, v) in enumerate(zip(args, items)))
    if origin is list:
        (arg,) = typing.get_args(tp) or (Any,)
        return [_load(arg, v, f"{where}[{i}]") for i, v in enumerate(_sequence(data, where))]
    if origin in (dict, Mapping) or tp is dict:
        args = typing.get_args(tp) or (str, Any)
        if not isinstance(data, Mapping):
            raise InvalidParameterError(f"{where}: expected an object, got {type(data).__name__}")
        return {k: _load(args[1], v, f"{where}.{k}") for k, v in data.items()}
    if tp in TEXT_TYPES:
        if isinstance(data, tp):
            return data
        if not isinstance(data, str):
            raise InvalidParameterError(f"{where}: expected a string, got {data!r}")
        return TEXT_TYPES[tp](data)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _load_dataclass(tp, data, where)
    return _load_scalar(tp, data, where)


def _sequence(data: Any, where: str) -> list:
    if isinstance(data, (str, bytes)) or not isinstance(data, (list, tuple)):
        raise InvalidParameterError(f"{where}: expected a list, got {data!r}")
    return list(data)


def _load_scalar(tp: Any, data: Any, where: str) -> Any:
    if tp is float:
        if data is None:
            return math.nan
        if isinstance(data, (int, float)) and not isinstance(data, bool):
            return data  # an int is a valid float (PEP 484) and round-trips unchanged
    elif tp is int:
        if isinstance(data, int) and not isinstance(data, bool):
            return data
    elif tp is bool:
        if isinstance(data, bool):
            return data
    elif tp is str:
        if isinstance(data, str):
            return data
    elif isinstance(tp, type) and isinstance(data, tp):
        return data
    else:
        raise TypeError(f"{where}: cannot load type {tp!r}")
    name = getattr(tp, "__name__", str(tp))
    raise InvalidParameterError(f"{where}: expected {name}, got {data!r}")


def _load_dataclass(cls: type, data: Any, where: str) -> Any:
    if isinstance(data, cls):
        return data
    if not isinstance(data, Mapping):
        raise InvalidParameterError(f"{where}: expected an object, got {type(data).__name__}")
    plan = _plan(cls)
    data = {k: v for k, v in data.items() if k not in plan.computed}
    unknown = sorted(set(data) - set(plan.fields))
    if unknown:
        raise InvalidParameterError(
            f"{where}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(repr(u) for u in unknown)}; "
            f"allowed: {', '.join(sorted(plan.fields))}"
        )
    data = {plan.fields[k]: v for k, v in data.items()}
    for name, parts in plan.pairs.items():
        if isinstance(data.get(name), list):
            data[name] = [tuple(v[p] for p in parts) if isinstance(v, Mapping) and set(v) == set(parts) else v
                          for v in data[name]]
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    hints = _hints(cls)
    kwargs = {name: _load(hints[name], value, f"{where}.{name}") for name, value in data.items()}
    missing = [n for n, f in fields.items() if n not in kwargs
               and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    if missing:
        raise InvalidParameterError(f"{where}: missing {', '.join(repr(m) for m in missing)}")
    return cls(**kwargs)


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


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
