"""Which detected things stand together: groups no crop separates, what bodies in front hide, clusters.

The helpers behind :func:`multicrop.crop.subjects.find_subjects`'s groups and crowds; they read a
subject's ``box``, ``is_body`` and ``weight`` and build no subject themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from ..geometry import Box

if TYPE_CHECKING:
    from .subjects import Subject

__all__ = ["overlap", "joined_groups", "clusters", "fill_box", "near_box", "visible_parts", "union"]


def overlap(a: Box, b: Box) -> float:
    """Intersection of two boxes over the smaller one's area."""
    x1, y1 = max(a.x, b.x), max(a.y, b.y)
    x2, y2 = min(a.x2, b.x2), min(a.y2, b.y2)
    inter = max(x2 - x1, 0.0) * max(y2 - y1, 0.0)
    return inter / max(min(a.area, b.area), 1e-9)


def joined_groups(items: list[Subject], threshold: float, margin: float, near: float) -> list[list[int]]:
    """Index sets of subjects that no crop separates (transitively joined).

    Two bodies are joined when their boxes overlap by ``threshold`` of the
    smaller one, or when one's box grown by ``margin`` of its height takes
    in part of the other (they stand so close that a crop framing one with
    any margin takes a slice of the other).  A body and an object are joined
    when they overlap by ``threshold`` (a rider's horse, a bench someone sits
    on, an umbrella held); two objects never are (the dishes on a table stay
    apart).
    """
    def joined(a: Subject, b: Subject) -> bool:
        if not (a.is_body or b.is_body):
            return False
        if overlap(a.box, b.box) >= threshold:
            return True
        return a.is_body and b.is_body and (near_box(a.box, b.box, margin, near) or near_box(b.box, a.box, margin, near))

    return clusters(items, joined)


def clusters(items: Sequence, joined: Callable[[object, object], bool]) -> list[list[int]]:
    """Index sets of ``items`` joined transitively by ``joined(a, b)`` (union-find), in first-seen order."""
    parent = list(range(len(items)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(len(items)):
        for j in range(i + 1, len(items)):
            if joined(items[i], items[j]):
                parent[root(i)] = root(j)
    out: dict[int, list[int]] = {}
    for i in range(len(items)):
        out.setdefault(root(i), []).append(i)
    return list(out.values())


def fill_box(mask: np.ndarray, box: Box, value: float | bool) -> None:
    """Set the whole pixels of ``box`` (clipped to ``mask``) to ``value``, in place."""
    b = box.clip(mask.shape[1], mask.shape[0]).round()
    mask[int(b.y):int(b.y2), int(b.x):int(b.x2)] = value


def near_box(a: Box, b: Box, margin: float, share: float) -> bool:
    """``a`` grown by ``margin`` of its height on every side overlaps ``b`` by more than ``share`` of ``b``."""
    m = margin * a.h
    g = Box(a.x - m, a.y - m, a.w + 2 * m, a.h + 2 * m)
    x1, y1, x2, y2 = max(g.x, b.x), max(g.y, b.y), min(g.x2, b.x2), min(g.y2, b.y2)
    return max(x2 - x1, 0.0) * max(y2 - y1, 0.0) > share * max(b.area, 1e-9)


def visible_parts(members: list[Subject], w: int, h: int, margin: float) -> list[Subject]:
    """Members of a group with the part of them that bodies in front hide taken out of their weight.

    Where the box of a body with no mask overlaps another body's box that
    ends lower in the frame by at least ``margin`` of the first one's height
    (nearer the bottom: nearer the camera on level ground; two boxes of one
    animal end level), that other one is in front, and the overlap is its own.  A body behind
    then weighs only what shows of its box, so a close-up of the one in front
    does not count as slicing the one behind it.
    """
    if len(members) < 2:
        return members
    out = []
    for m in members:
        fronts = [o for o in members if o is not m and o.is_body and o.box.y2 > m.box.y2 + margin * m.box.h + 1e-6
                  and overlap(m.box, o.box) > 0]
        if m.weight is not None or not m.is_body or not fronts:
            out.append(m)
            continue
        weight = np.zeros((h, w), np.float32)
        fill_box(weight, m.box, 1.0)
        for o in fronts:
            fill_box(weight, o.box, 0.0)
        out.append(m if float(weight.sum()) < 1.0 else replace(m, weight=weight))
    return out


def union(boxes: Sequence[Box]) -> Box:
    """The smallest box holding every one of ``boxes``."""
    return Box.from_corners(min(b.x for b in boxes), min(b.y for b in boxes),
                            max(b.x2 for b in boxes), max(b.y2 for b in boxes))
