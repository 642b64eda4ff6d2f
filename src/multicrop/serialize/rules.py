"""What a class declares about how it is written: :func:`serialized` field metadata and :func:`computed` properties.

:func:`plan` turns a dataclass's fields and computed properties into the
steps :mod:`multicrop.serialize.dump` writes and the keys
:mod:`multicrop.serialize.load` reads back (cached per class).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from ..errors import InvalidParameterError

__all__ = ["serialized", "computed", "plan", "Plan", "Rules"]


@dataclasses.dataclass(frozen=True)
class Rules:
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
    return {_METADATA: Rules(skip, key, round, pairs, omit_none)}


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
class Plan:
    """How one dataclass is written and read back."""

    steps: tuple[tuple[str, str, Rules], ...]  # (key, attribute, rules) in writing order
    computed: frozenset[str]  # keys of computed properties: ignored on load
    fields: dict[str, str]  # load key -> field name (a renamed field is read under its key only)
    pairs: dict[str, tuple[str, ...]]  # field name -> names of its pairs' parts


_PLANS: dict[type, Plan] = {}
_NO_RULES = Rules()


def plan(cls: type) -> Plan:
    """How dataclass ``cls`` is written and read: its fields' rules, then its computed properties (cached)."""
    found = _PLANS.get(cls)
    if found is None:
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
        members: dict[str, Any] = {}  # the class's own attribute wins over a base's, as attribute lookup does
        for klass in reversed(cls.__mro__):
            members.update(vars(klass))
        keys = set()
        for name, v in members.items():
            if isinstance(v, computed) and name not in fields.values():
                steps.append((v.rules.key or name, name, v.rules))
                keys.add(v.rules.key or name)
        found = _PLANS[cls] = Plan(tuple(steps), frozenset(keys), fields, pairs)
    return found
