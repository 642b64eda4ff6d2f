"""Boxes and the arithmetic between them (ratios, presets and their parser are :mod:`multicrop.ratios`).

Coordinates are in pixels of the image they refer to, ``x`` to the right and
``y`` down; a box covers columns ``x .. x + w`` and rows ``y .. y + h``
(half-open).  Boxes are immutable; helpers return new boxes.
"""

from __future__ import annotations

import math
from math import isfinite
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from .errors import InvalidParameterError
from .serialize import Serializable

__all__ = [
    "Box",
    "iou",
    "iou_matrix",
    "fit_ratio_box",
    "snap_box",
]


#: Coordinate types :class:`Box` checks in one step (any other is checked one by one).
_PLAIN = frozenset((int, float, np.float64, np.int64))


@dataclass(frozen=True, slots=True)
class Box(Serializable):
    """An axis-aligned box ``(x, y, w, h)``.

    Examples
    --------
    >>> b = Box(10, 20, 30, 40)
    >>> b.x2, b.y2, b.area
    (40, 60, 1200)
    >>> b.scale(0.5)
    Box(x=5.0, y=10.0, w=15.0, h=20.0)
    """

    x: float
    y: float
    w: float
    h: float

    def __post_init__(self) -> None:
        x, y, w, h = self.x, self.y, self.w, self.h
        # The common case at once (a crop search makes thousands of boxes); anything else is
        # checked one by one, with the same errors.
        if not (type(x) in _PLAIN and type(y) in _PLAIN and type(w) in _PLAIN and type(h) in _PLAIN
                and isfinite(x) and isfinite(y) and isfinite(w) and isfinite(h)):
            for name in ("x", "y", "w", "h"):
                v = getattr(self, name)
                if not isinstance(v, (int, float, np.integer, np.floating)) or not math.isfinite(v):
                    raise InvalidParameterError(f"Box.{name} must be a finite number, got {v!r}")
        if w < 0 or h < 0:
            raise InvalidParameterError(
                f"Box width and height must be >= 0, got w={self.w!r}, h={self.h!r}"
            )

    @property
    def x2(self) -> float:
        return self.x + self.w

    @property
    def y2(self) -> float:
        return self.y + self.h

    @property
    def area(self) -> float:
        return self.w * self.h

    @property
    def center(self) -> tuple[float, float]:
        return (self.x + self.w / 2, self.y + self.h / 2)

    @property
    def aspect(self) -> float:
        """Width over height (``inf`` for a zero-height box)."""
        return self.w / self.h if self.h else math.inf

    @classmethod
    def from_corners(cls, x1: float, y1: float, x2: float, y2: float) -> Box:
        """Box from two opposite corners given in any order."""
        return cls(min(x1, x2), min(y1, y2), abs(x2 - x1), abs(y2 - y1))

    def corners(self) -> tuple[float, float, float, float]:
        """``(x1, y1, x2, y2)``."""
        return (self.x, self.y, self.x2, self.y2)

    def scale(self, sx: float, sy: float | None = None) -> Box:
        """Scale coordinates (e.g. between an analysis and the source resolution)."""
        sy = sx if sy is None else sy
        return Box(self.x * sx, self.y * sy, self.w * sx, self.h * sy)

    def translate(self, dx: float, dy: float) -> Box:
        return Box(self.x + dx, self.y + dy, self.w, self.h)

    def clip(self, width: float, height: float) -> Box:
        """Intersection with the image ``[0, width) x [0, height)``."""
        x1 = min(max(self.x, 0), width)
        y1 = min(max(self.y, 0), height)
        x2 = min(max(self.x2, 0), width)
        y2 = min(max(self.y2, 0), height)
        return Box(x1, y1, x2 - x1, y2 - y1)

    def intersection(self, other: Box) -> float:
        """Area of the overlap with ``other``."""
        iw = min(self.x2, other.x2) - max(self.x, other.x)
        ih = min(self.y2, other.y2) - max(self.y, other.y)
        return max(iw, 0.0) * max(ih, 0.0)

    def contains(self, other: Box, *, tol: float = 0.0) -> bool:
        """Whether ``other`` lies inside this box (with tolerance ``tol`` pixels)."""
        return (
            other.x >= self.x - tol
            and other.y >= self.y - tol
            and other.x2 <= self.x2 + tol
            and other.y2 <= self.y2 + tol
        )

    def round(self) -> Box:
        """Integer box with the same corners rounded to the nearest pixel."""
        x1, y1 = round(self.x), round(self.y)
        return Box(x1, y1, round(self.x2) - x1, round(self.y2) - y1)



class _Aspect(Protocol):
    """Anything with a width-to-height ``value`` (a :class:`multicrop.ratios.Ratio`)."""

    @property
    def value(self) -> float: ...


def _aspect(ratio: _Aspect | float) -> float:
    return float(ratio.value) if hasattr(ratio, "value") else float(ratio)


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two boxes (0 when both are empty).

    Examples
    --------
    >>> iou(Box(0, 0, 2, 2), Box(1, 0, 2, 2))
    0.3333333333333333
    """
    inter = a.intersection(b)
    union = a.area + b.area - inter
    return inter / union if union > 0 else 0.0


def iou_matrix(a: list[Box] | tuple[Box, ...], b: list[Box] | tuple[Box, ...]) -> np.ndarray:
    """Pairwise IoU, shape ``(len(a), len(b))``, vectorised."""
    if not len(a) or not len(b):
        return np.zeros((len(a), len(b)))
    A = np.array([x.corners() for x in a], dtype=float)
    B = np.array([x.corners() for x in b], dtype=float)
    iw = np.clip(np.minimum(A[:, None, 2], B[None, :, 2]) - np.maximum(A[:, None, 0], B[None, :, 0]), 0, None)
    ih = np.clip(np.minimum(A[:, None, 3], B[None, :, 3]) - np.maximum(A[:, None, 1], B[None, :, 1]), 0, None)
    inter = iw * ih
    area_a = (A[:, 2] - A[:, 0]) * (A[:, 3] - A[:, 1])
    area_b = (B[:, 2] - B[:, 0]) * (B[:, 3] - B[:, 1])
    union = area_a[:, None] + area_b[None, :] - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(union > 0, inter / union, 0.0)
    return out


def fit_ratio_box(
    region: Box, ratio: _Aspect | float, *, center: tuple[float, float] | None = None, scale: float = 1.0
) -> Box:
    """Largest box of exactly ``ratio`` inside ``region``, times ``scale``, centred on ``center``.

    The box is shifted (not shrunk) to stay inside ``region``.  Coordinates are
    floats; use :func:`snap_box` for whole pixels.

    Examples
    --------
    >>> fit_ratio_box(Box(0, 0, 300, 100), 1.0)
    Box(x=100.0, y=0.0, w=100.0, h=100.0)
    """
    r = _aspect(ratio)
    if r <= 0 or not math.isfinite(r):
        raise InvalidParameterError(f"ratio must be positive and finite, got {ratio!r}")
    if not 0 < scale <= 1:
        raise InvalidParameterError(f"scale must be in (0, 1], got {scale!r}")
    w = min(region.w, region.h * r) * scale
    h = w / r
    cx, cy = center if center is not None else region.center
    x = min(max(cx - w / 2, region.x), region.x2 - w)
    y = min(max(cy - h / 2, region.y), region.y2 - h)
    return Box(float(x), float(y), float(w), float(h))


def snap_box(box: Box, ratio: _Aspect | float, width: int, height: int) -> Box:
    """Integer box of ``ratio`` (within one pixel) close to ``box``, inside ``width x height``.

    The width is rounded to whole pixels and the height chosen to match the
    ratio; the box is then shifted to lie inside the image.  The result's
    aspect differs from ``ratio`` by at most one pixel of height.

    Raises
    ------
    InvalidParameterError
        If no box of that ratio of at least 1x1 pixel fits the image.

    Examples
    --------
    >>> snap_box(Box(0.2, 0.2, 200.3, 300.1), 2 / 3, 1000, 1000)
    Box(x=0, y=0, w=200, h=300)
    """
    r = _aspect(ratio)
    w = min(box.w, width, height * r)
    w = max(int(round(w)), 1)
    h = int(round(w / r))
    if h > height:
        h = height
        w = max(int(math.floor(h * r)), 1)
        h = min(int(round(w / r)), height)
    if w > width or h < 1:
        raise InvalidParameterError(f"no box of ratio {r:.4g} fits a {width}x{height} image")
    cx, cy = box.center
    x = int(round(min(max(cx - w / 2, 0), width - w)))
    y = int(round(min(max(cy - h / 2, 0), height - h)))
    return Box(x, y, w, h)



