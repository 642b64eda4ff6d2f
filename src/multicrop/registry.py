"""One registry mechanism for every pluggable kind.

Every pluggable kind of multicrop (saliency methods, detectors, crop scorers, judge
backends, combiners, Carousel methods, ratings formats) is a
:class:`Registry` of **classes**.  Each registered class carries three class
attributes, ``name``, ``version`` (part of every cache key and output that
its results reach) and ``description``, plus whatever capability flags its
kind defines.  Built-ins register exactly the way a plugin does, and a
duplicate name is an error.

Two functions reach every kind by its name:

``available(kind)``
    The registered names, sorted.
``create(kind, name, **options)``
    An instance: ``cls(**options)``.  An unknown name raises
    :class:`~multicrop.errors.UnknownNameError` with "did you mean"
    suggestions; unknown options fail in the class's constructor.

Third-party packages add entries through Python entry points, for the three
kinds where plugins are real: ``multicrop.saliency``, ``multicrop.detectors``,
``multicrop.scorers`` and ``multicrop.judge_backends`` (each entry point loads a class).
They are read on a registry's first lookup, through :mod:`importlib.metadata` (about 40 ms
of imports) only if :func:`multicrop.distributions.may_declare` finds the group named in an
``entry_points.txt`` on ``sys.path`` (else there are none to read).

Examples
--------
>>> reg = Registry("colour")
>>> @reg.register
... class Red:
...     name, version, description = "red", "1", "pure red"
...     def __init__(self, *, alpha=255):
...         self.rgba = (255, 0, 0, alpha)
>>> reg.create("red", alpha=128).rgba
(255, 0, 0, 128)
>>> reg.get("rde")
Traceback (most recent call last):
...
multicrop.errors.UnknownNameError: unknown colour 'rde'; did you mean 'red'? Available: red
>>> available("ratings-format")
['csv', 'eva', 'para']
"""

from __future__ import annotations

import difflib
import importlib
import sys
import threading
from collections.abc import Iterator
from typing import Any, Generic, TypeVar

from .errors import RegistryError, UnknownNameError

__all__ = ["Registry", "available", "create", "get", "registry_of", "KINDS"]

T = TypeVar("T", bound=type)

#: The kinds, each with the ``module:attribute`` of its :class:`Registry`;
#: importing that module registers the built-ins of the kind.
KINDS: dict[str, str] = {
    "saliency": "multicrop.saliency:SALIENCY",
    "detector": "multicrop.detectors:DETECTORS",
    "scorer": "multicrop.crop.scoring:SCORERS",
    "judge-backend": "multicrop.judges.backends:JUDGE_BACKENDS",
    "combiner": "multicrop.fusion.combiners:COMBINERS",
    "carousel-method": "multicrop.evaluation.carousel.methods:METHODS",
    "ratings-format": "multicrop.datasets.ratings:RATINGS_FORMATS",
}

#: Class attributes every registered class must carry.
REQUIRED_ATTRIBUTES = ("name", "version", "description")


class Registry(Generic[T]):
    """A named collection of pluggable classes of one kind.

    Parameters
    ----------
    kind : str
        Name of the kind (``"saliency"``, ``"judge-backend"``, ...), as in
        :data:`KINDS` and in error messages.
    entry_point_group : str, optional
        Group of Python entry points through which third-party packages add
        classes (loaded on first lookup).

    Raises
    ------
    RegistryError
        If another registry already has this ``kind``.
    """

    def __init__(self, kind: str, *, entry_point_group: str | None = None) -> None:
        self.kind = kind
        self.entry_point_group = entry_point_group
        self._items: dict[str, T] = {}
        self._entry_points_loaded = entry_point_group is None
        self._entry_points_done = self._entry_points_loaded
        # Two threads may look up at once (``multicrop crop`` analyses two photos at a time): the plugins are
        # registered once, and a lookup waits until they all are.  Re-entrant: a plugin may look up on import.
        self._lock = threading.RLock()

    def register(self, cls: T) -> T:
        """Register ``cls`` under ``cls.name``; usable as a class decorator.

        Raises
        ------
        RegistryError
            If ``cls`` is not a class, lacks ``name``/``version``/``description``,
            or its name is taken.
        """
        if not isinstance(cls, type):
            raise RegistryError(f"{self.kind}: only classes are registered, got {cls!r}")
        missing = [a for a in REQUIRED_ATTRIBUTES if not hasattr(cls, a)]
        if missing:
            raise RegistryError(f"{self.kind} class {cls.__name__} lacks {', '.join(missing)}")
        name = cls.name
        if not isinstance(name, str) or not name:
            raise RegistryError(f"{self.kind} name must be a non-empty string, got {name!r}")
        if name in self._items:
            raise RegistryError(f"{self.kind} {name!r} is already registered")
        self._items[name] = cls
        return cls

    def unregister(self, name: str) -> None:
        """Remove ``name`` (for tests and plugins)."""
        self.get(name)
        del self._items[name]

    def _load_entry_points(self) -> None:
        if self._entry_points_done:
            return
        with self._lock:
            if not self._entry_points_loaded:  # loaded already, or being loaded by this thread (a plugin's import)
                self._load_entry_points_once()
                self._entry_points_done = True

    def _load_entry_points_once(self) -> None:
        eps = _entry_points(self.entry_point_group)
        clash = [ep for ep in eps if ep.name in self._items]
        if clash:
            # Duplicate names are an error, for plugins as for built-ins; raised on
            # every lookup until the conflicting distribution is removed.
            who = "; ".join(
                f"{ep.name!r} from distribution {getattr(getattr(ep, 'dist', None), 'name', None) or '(unknown)'}"
                f" ({getattr(ep, 'value', '?')})" for ep in clash
            )
            raise RegistryError(
                f"{self.kind} entry point(s) in group {self.entry_point_group!r} reuse a registered name: {who}; "
                "uninstall that distribution or ask its author to rename the entry point"
            )
        self._entry_points_loaded = True
        for ep in eps:
            cls = ep.load()
            if getattr(cls, "name", None) != ep.name:
                raise RegistryError(
                    f"{self.kind} entry point {ep.name!r} ({ep.value}) loads a class named "
                    f"{getattr(cls, 'name', None)!r}; the two names must agree"
                )
            self.register(cls)

    def get(self, name: str) -> T:
        """The class registered as ``name``.

        Raises
        ------
        UnknownNameError
            If no such name exists; the message lists close matches.
        """
        self._load_entry_points()
        try:
            return self._items[name]
        except (KeyError, TypeError):
            pass
        names = sorted(self._items)
        close = difflib.get_close_matches(str(name), names, n=3, cutoff=0.5)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else "."
        raise UnknownNameError(
            f"unknown {self.kind.replace('-', ' ')} {name!r}{hint} Available: {', '.join(names) or '(none)'}"
        )

    def create(self, name: str, /, **options: Any) -> Any:
        """An instance of the class registered as ``name``: ``cls(**options)``."""
        return self.get(name)(**options)

    def names(self) -> list[str]:
        """Sorted registered names."""
        self._load_entry_points()
        return sorted(self._items)

    def items(self) -> list[tuple[str, T]]:
        """Sorted ``(name, class)`` pairs."""
        return [(n, self._items[n]) for n in self.names()]

    def __contains__(self, name: object) -> bool:
        self._load_entry_points()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())


def _entry_points(group: str) -> list[Any]:
    from .distributions import may_declare

    if "importlib.metadata" not in sys.modules and not may_declare(group, sys.path, sys.meta_path):
        return []  # importlib.metadata would find none; importing it costs ~40 ms
    import importlib.metadata

    return list(importlib.metadata.entry_points(group=group))


def registry_of(kind: str) -> Registry:
    """The registry of ``kind`` (:data:`KINDS`), importing its module on first use.

    Raises
    ------
    UnknownNameError
        If no such kind exists.
    """
    try:
        module, attribute = KINDS[kind].split(":")
    except (KeyError, TypeError):
        close = difflib.get_close_matches(str(kind), list(KINDS), n=3, cutoff=0.5)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else "."
        raise UnknownNameError(f"unknown kind {kind!r}{hint} Available: {', '.join(sorted(KINDS))}") from None
    return getattr(importlib.import_module(module), attribute)


def available(kind: str) -> list[str]:
    """Sorted names registered for ``kind``."""
    return registry_of(kind).names()


def get(kind: str, name: str) -> type:
    """The class registered as ``name`` for ``kind``."""
    return registry_of(kind).get(name)


def create(kind: str, name: str, /, **options: Any) -> Any:
    """An instance of ``name`` of ``kind``, built with ``options``."""
    return registry_of(kind).create(name, **options)
