"""What :mod:`importlib.metadata` would find on ``sys.path``, answered without importing it when that is sure.

Importing :mod:`importlib.metadata` costs about 40 ms (it pulls in :mod:`email`,
:mod:`zipfile`, :mod:`csv` ...); ``multicrop crop`` needs two answers from it:
its own version (in every record) and whether a plugin declares an entry point
of a registry's group (usually none does).  Both are read here from the
``*.dist-info`` / ``*.egg-info`` folders on the path, the way
:mod:`importlib.metadata` reads them; anything unusual (a zip on the path, a
finder that offers distributions of its own, an unreadable file) answers
"ask :mod:`importlib.metadata`" instead of guessing.

Examples
--------
>>> may_declare("multicrop.no-such-group", [])
False
>>> version_on_path("no-such-distribution", []) is None
True
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["may_declare", "version_on_path"]


class _Unsure(Exception):
    """A path entry or finder only :mod:`importlib.metadata` can read."""


def _check_finders(finders: Iterable[Any]) -> None:
    from importlib.machinery import PathFinder

    if any(f is not PathFinder and hasattr(f, "find_distributions") for f in finders):
        raise _Unsure


def _folders(path: Iterable[str]) -> Iterator[tuple[str, str]]:
    """``(folder, normalised distribution name)`` of each metadata folder on ``path``, in importlib's order.

    The folders :class:`importlib.metadata.FastPath` lists: ``NAME[-VERSION].dist-info``
    and ``.egg-info`` children of each entry, and ``EGG-INFO`` inside a ``*.egg`` entry.
    """
    for root in path:
        if not isinstance(root, str):  # bytes or another object on sys.path: importlib.metadata decides
            raise _Unsure
        root = root or "."
        try:
            children = os.listdir(root)
        except OSError:
            if os.path.exists(root):  # a zip or another file
                raise _Unsure from None
            continue
        base = os.path.basename(root).lower()
        for child in children:
            low = child.lower()
            if low.endswith((".dist-info", ".egg-info")):
                yield os.path.join(root, child), _normalise(low.rpartition(".")[0].partition("-")[0])
            elif base.endswith(".egg") and low == "egg-info":
                yield os.path.join(root, child), _normalise(base.rpartition(".")[0].partition("-")[0])


def _normalise(name: str) -> str:
    import re

    return re.sub(r"[-_.]+", "_", name).lower()


def _read(folder: str, name: str) -> bytes | None:
    """The file ``name`` of a metadata folder, None if it has none."""
    try:
        with open(os.path.join(folder, name), "rb") as f:
            return f.read()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError:  # unreadable: importlib.metadata decides
        raise _Unsure from None


def may_declare(group: str, path: Iterable[str], finders: Iterable[Any] = ()) -> bool:
    """False only if no distribution on ``path`` can declare an entry point of ``group``.

    That is: no ``entry_points.txt`` of a metadata folder on ``path`` contains
    the text ``group``, and nothing on ``path`` or in ``finders`` is a place
    only :mod:`importlib.metadata` can read (then True: ask it).
    """
    try:
        _check_finders(finders)
        return any(group.encode() in (_read(folder, "entry_points.txt") or b"") for folder, _ in _folders(path))
    except _Unsure:
        return True


def version_on_path(distribution: str, path: Iterable[str], finders: Iterable[Any] = ()) -> str | None:
    """The ``Version`` of the first distribution named ``distribution`` on ``path``, as ``importlib.metadata.version`` reads it.

    None when this cannot be sure (no such distribution, a metadata file
    without a plain ``Version:`` line, or a place only :mod:`importlib.metadata`
    reads): the caller then asks :mod:`importlib.metadata`.
    """
    want = _normalise(distribution)
    try:
        _check_finders(finders)
        for folder, name in _folders(path):
            if name != want:
                continue
            text = _read(folder, "METADATA")
            text = _read(folder, "PKG-INFO") if text is None else text
            if text is None:
                return None
            for line in text.decode("utf-8", "replace").splitlines():
                if not line.strip():  # the headers end at the first blank line
                    return None
                key, sep, value = line.partition(":")
                if sep and key.strip().lower() == "version":
                    return value.strip() or None
            return None
    except _Unsure:
        return None
    return None
