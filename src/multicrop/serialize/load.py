"""JSON data back to typed values: :func:`from_data`, guided by the dataclasses' type hints."""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

from ..errors import InvalidParameterError
from .dump import TEXT_TYPES
from .rules import plan as _plan

__all__ = ["from_data"]

T = TypeVar("T")


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
    steps = _plan(cls)
    data = {k: v for k, v in data.items() if k not in steps.computed}
    unknown = sorted(set(data) - set(steps.fields))
    if unknown:
        raise InvalidParameterError(
            f"{where}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(repr(u) for u in unknown)}; "
            f"allowed: {', '.join(sorted(steps.fields))}"
        )
    data = {steps.fields[k]: v for k, v in data.items()}
    for name, parts in steps.pairs.items():
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
