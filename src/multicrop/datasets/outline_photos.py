"""Outlined photos: each photo's outlined objects, and a folder's set of them (what the loaders return)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import DatasetError, ImageLoadError
from ..io import read_header
from ..io.formats import STEM_SUFFIXES
from .outline_shapes import Polygons, RunLength

__all__ = ["IMAGE_SUFFIXES", "Outline", "OutlineSet", "OutlinedPhoto", "find_image", "photo_size"]

#: Photo file endings looked for next to a label (first match wins).
IMAGE_SUFFIXES: tuple[str, ...] = STEM_SUFFIXES


@dataclass(frozen=True)
class Outline:
    """One outlined object of a photo.

    Attributes
    ----------
    category : int
        Class id as written in the labels (COCO category id).
    name : str
        Class name (from ``classes.txt`` or the COCO categories; ``""`` if unknown).
    shape : Polygons or RunLength
    crowd : bool
        COCO's ``iscrowd``: the outline covers a crowd of objects, not one.
    """

    category: int
    name: str
    shape: Polygons | RunLength
    crowd: bool = False

    def mask(self, width: int, height: int) -> np.ndarray:
        """Boolean mask of shape ``(height, width)``."""
        return self.shape.mask(width, height)


@dataclass(frozen=True)
class OutlinedPhoto:
    """A photo and its outlined objects.

    Attributes
    ----------
    id : str
        The label file's stem (YOLO) or the COCO file name's stem.
    path : Path
        The photo.
    size : (int, int)
        ``(width, height)`` of the stored pixels the outlines refer to.
    objects : tuple of Outline
    """

    id: str
    path: Path
    size: tuple[int, int]
    objects: tuple[Outline, ...]

    def masks(self) -> np.ndarray:
        """Boolean masks of every object, shape ``(n_objects, height, width)``."""
        w, h = self.size
        if not self.objects:
            return np.zeros((0, h, w), dtype=bool)
        return np.stack([o.mask(w, h) for o in self.objects])

    @property
    def categories(self) -> tuple[int, ...]:
        """Class id of each object, in the order of :meth:`masks`."""
        return tuple(o.category for o in self.objects)


@dataclass(frozen=True)
class OutlineSet:
    """A folder of outlined photos.

    Attributes
    ----------
    root : Path
    format : {"yolo", "coco"}
    photos : tuple of OutlinedPhoto
        Sorted by id.
    classes : dict of int to str
        Class names by id (may be empty).
    skipped : tuple of (str, str)
        ``(id, reason)`` of labels that had no readable photo.
    """

    root: Path
    format: str
    photos: tuple[OutlinedPhoto, ...]
    classes: dict[int, str] = field(default_factory=dict)
    skipped: tuple[tuple[str, str], ...] = ()

    def __len__(self) -> int:
        return len(self.photos)

    def __iter__(self) -> Iterator[OutlinedPhoto]:
        return iter(self.photos)


def photo_size(path: Path) -> tuple[int, int]:
    """``(width, height)`` of the stored pixels (the grid outlines refer to; EXIF orientation not applied)."""
    try:
        w, h = read_header(path, complete=False).size
    except ImageLoadError as exc:
        raise DatasetError(f"{path}: not a readable image ({exc})") from None
    return int(w), int(h)


def find_image(folder: Path, stem: str) -> Path | None:
    for suffix in IMAGE_SUFFIXES:
        p = folder / f"{stem}{suffix}"
        if p.is_file():
            return p
    return None
