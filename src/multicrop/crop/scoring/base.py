"""Values shared by every scorer: the scored crop and the per-photo context."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from ...geometry import Box
from ...ratios import Ratio
from ...measures import box_sums, gradient_magnitude, luminance, summed_area_table
from ...serialize import Serializable

__all__ = ["ScoredCrop", "ScoringContext", "Scorer", "int_corners"]


def int_corners(boxes, width: int, height: int) -> tuple[np.ndarray, ...]:
    """Integer corner arrays ``(x1, y1, x2, y2)`` of ``boxes``: rounded outward, clipped to a ``width`` x
    ``height`` image, each box at least 1 px (the pixels a scorer, a mask table or a crop reads)."""
    c = np.array([b.corners() for b in boxes], dtype=np.float64).reshape(-1, 4)
    x1 = np.clip(np.floor(c[:, 0] + 1e-6), 0, width - 1).astype(np.int64)
    y1 = np.clip(np.floor(c[:, 1] + 1e-6), 0, height - 1).astype(np.int64)
    x2 = np.clip(np.ceil(c[:, 2] - 1e-6), x1 + 1, width).astype(np.int64)
    y2 = np.clip(np.ceil(c[:, 3] - 1e-6), y1 + 1, height).astype(np.int64)
    return x1, y1, x2, y2


@dataclass(frozen=True)
class ScoredCrop(Serializable):
    """A candidate crop with its score.

    Attributes
    ----------
    box : Box
        The crop, in the pixels of the image it was scored on (analysis
        pixels inside the pipeline, source pixels in a :class:`CropResult`).
    score : float
        Higher is better; comparable only within one scorer and version.
    parts : dict of str to float
        The terms the score is made of (scorer-specific names).
    ratio : Ratio
        The target ratio the box was made for.

    Examples
    --------
    >>> c = ScoredCrop(Box(0, 0, 20, 30), 0.5, {"kept": 1.0}, Ratio(2, 3))
    >>> ScoredCrop.from_dict(c.to_dict()) == c
    True
    """

    box: Box
    score: float
    parts: dict[str, float] = field(default_factory=dict, compare=True)
    ratio: Ratio | None = None

    def with_box(self, box: Box) -> ScoredCrop:
        """The same crop, moved to other coordinates (e.g. source pixels)."""
        return ScoredCrop(box, self.score, self.parts, self.ratio)


class ScoringContext:
    """What scorers know about one photo, with summed-area tables built once.

    Parameters
    ----------
    image : ndarray of uint8, shape (H, W, 3)
        The analysis copy (RGB).
    saliency : ndarray of float, shape (H, W)
        Saliency map in ``[0, 1]`` (faces already raised, if any).
    faces : sequence of Box
        Face boxes in the same pixels.
    """

    def __init__(self, image: np.ndarray, saliency: np.ndarray, faces: tuple[Box, ...] = ()) -> None:
        self.image = image
        self.saliency = saliency.astype(np.float64, copy=False)
        self.faces = tuple(faces)
        self.height, self.width = saliency.shape
        self._cache: dict[str, np.ndarray] = {}

    def sat(self, name: str) -> np.ndarray:
        """Summed-area table of a named per-pixel map (built on first use).

        Names: ``saliency``, ``saliency_x``, ``saliency_y`` (saliency times the
        column / row index), ``gradient`` (Sobel magnitude of luminance),
        ``luma`` (luminance in [0, 1]).
        """
        if name not in self._cache:
            self._cache[name] = summed_area_table(self._map(name))
        return self._cache[name]

    def _map(self, name: str) -> np.ndarray:
        s = self.saliency
        if name == "saliency":
            return s
        if name == "saliency_x":
            return s * np.arange(self.width)[None, :]
        if name == "saliency_y":
            return s * np.arange(self.height)[:, None]
        if name == "luma":
            return self._luma()
        if name == "gradient":
            return gradient_magnitude(self._luma())
        raise KeyError(name)

    def _luma(self) -> np.ndarray:
        if "_luma" not in self._cache:
            if self.image.shape[:2] != self.saliency.shape:
                raise ValueError(
                    f"image shape {self.image.shape[:2]} differs from saliency shape {self.saliency.shape}"
                )
            self._cache["_luma"] = luminance(self.image).astype(np.float32) / 255.0
        return self._cache["_luma"]

    def box_sums(self, name: str, x1: np.ndarray, y1: np.ndarray, x2: np.ndarray, y2: np.ndarray) -> np.ndarray:
        """Sums of a named map over integer boxes ``[y1:y2, x1:x2]`` (arrays)."""
        return box_sums(self.sat(name), x1, y1, x2, y2)

    def int_corners(self, boxes) -> tuple[np.ndarray, ...]:
        """Integer corner arrays of boxes, clipped to the image, each box at least 1 px (:func:`int_corners`)."""
        return int_corners(boxes, self.width, self.height)


@runtime_checkable
class Scorer(Protocol):
    """What the pipeline needs from a scorer.

    ``region`` is the partition region the crop is for (default: the whole
    image); ``subject`` the salient box inside it that the crop should frame
    (None when there is none, e.g. for ``topk``).
    """

    name: str
    version: str
    description: str

    def score(self, context: ScoringContext, boxes: list[Box], *, ratio: Ratio,
              region: Box | None = None, subject: Box | None = None) -> list[ScoredCrop]: ...
