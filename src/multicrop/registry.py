"""One registry mechanism for every pluggable kind.

Saliency backends, crop scorers, evaluation methods and judge backends are all
kept in :class:`Registry` instances.  Built-ins register themselves exactly the
way a third-party package would.  Capabilities are attributes of the
registered objects, never special cases on names in generic code.

Examples
--------
>>> reg = Registry("colour")
>>> @reg.register("red")
... def red():
...     return (255, 0, 0)
>>> reg.get("red")()
(255, 0, 0)
>>> reg.get("rde")
Traceback (most recent call last):
...
multicrop.errors.UnknownNameError: unknown colour 'rde'; did you mean 'red'? Available: red
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
import importlib.metadata
from typing import Generic, TypeVar

from .errors import RegistryError, UnknownNameError

__all__ = ["Registry"]

T = TypeVar("T")


class Registry(Generic[T]):
    """A named collection of pluggable objects.

    Parameters
    ----------
    kind : str
        Human name of what is registered ("saliency backend", ...), used in
        error messages.
    entry_point_group : str, optional
        Group name of Python entry points through which third-party packages
        add entries (loaded lazily on first lookup).
    """

    def __init__(self, kind: str, *, entry_point_group: str | None = None) -> None:
        self.kind = kind
        self.entry_point_group = entry_point_group
        self._items: dict[str, T] = {}
        self._entry_points_loaded = entry_point_group is None

    def register(self, name: str, obj: T | None = None) -> Callable[[T], T] | T:
        """Register ``obj`` under ``name``; usable as a decorator.

        Raises
        ------
        RegistryError
            If ``name`` is already registered or is not a non-empty string.
        """
        if not isinstance(name, str) or not name:
            raise RegistryError(f"{self.kind} name must be a non-empty string, got {name!r}")

        def add(item: T) -> T:
            if name in self._items:
                raise RegistryError(f"{self.kind} {name!r} is already registered")
            self._items[name] = item
            return item

        if obj is not None:
            return add(obj)
        return add

    def unregister(self, name: str) -> None:
        """Remove ``name`` (mainly for tests and plugins)."""
        self.get(name)
        del self._items[name]

    def _load_entry_points(self) -> None:
        if self._entry_points_loaded:
            return
        eps = list(importlib.metadata.entry_points(group=self.entry_point_group))
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
            self.register(ep.name, ep.load())

    def get(self, name: str) -> T:
        """Return the object registered as ``name``.

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
            f"unknown {self.kind} {name!r}{hint} Available: {', '.join(names) or '(none)'}"
        )

    def names(self) -> list[str]:
        """Sorted registered names."""
        self._load_entry_points()
        return sorted(self._items)

    def items(self) -> list[tuple[str, T]]:
        """Sorted ``(name, object)`` pairs."""
        return [(n, self._items[n]) for n in self.names()]

    def __contains__(self, name: object) -> bool:
        self._load_entry_points()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())
