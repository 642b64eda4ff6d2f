"""YOLO-segmentation folders: ``images/``, ``labels/`` (normalised polygons a line), optional ``classes.txt``."""

from __future__ import annotations

import math
from pathlib import Path

from ..errors import DatasetError, InputFileError
from ..io import CONFIG_LIMIT, LABEL_LIMIT, read_text_bounded
from .outline_photos import Outline, OutlinedPhoto, OutlineSet, find_image, photo_size
from .outline_shapes import Polygons, split_rings

__all__ = ["load_yolo_outlines", "read_class_names"]

#: Largest ``classes.txt`` read (bytes): a line per class.
CLASSES_LIMIT = CONFIG_LIMIT


def _read_text(path: str | Path, *, limit: int, what: str) -> str:
    """UTF-8 text of a regular file of at most ``limit`` bytes; a FIFO, device or oversized file is a DatasetError."""
    try:  # regular files only, bounded: a FIFO named x.txt never blocks the loader
        return read_text_bounded(path, limit=limit, what=what)
    except InputFileError as exc:
        raise DatasetError(str(exc)) from None


def read_class_names(path: str | Path) -> dict[int, str]:
    """``id: name`` lines of a ``classes.txt`` (``#`` starts a comment).

    Raises
    ------
    DatasetError
        On a line that is not ``id: name``, or a file that is not a regular
        UTF-8 file of at most :data:`CLASSES_LIMIT` bytes.
    """
    out: dict[int, str] = {}
    for n, line in enumerate(_read_text(path, limit=CLASSES_LIMIT, what="YOLO classes file").splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        key, sep, name = line.partition(":")
        try:
            if not sep:
                raise ValueError
            out[int(key)] = name.strip()
        except ValueError:
            raise DatasetError(f"{path}:{n}: expected 'id: name', got {line!r}") from None
    return out


def _yolo_objects(path: Path, size: tuple[int, int], classes: dict[int, str]) -> tuple[Outline, ...]:
    w, h = size
    objects = []
    for n, line in enumerate(_read_text(path, limit=LABEL_LIMIT, what="YOLO label file").splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        try:
            category = int(parts[0])
            xy = [float(v) for v in parts[1:]]
        except ValueError:
            raise DatasetError(f"{path}:{n}: expected 'class x1 y1 x2 y2 ...' numbers") from None
        if any(not math.isfinite(v) or not -0.01 <= v <= 1.01 for v in xy):
            raise DatasetError(f"{path}:{n}: coordinates must be normalised to 0-1")
        try:
            rings = split_rings(xy)
        except DatasetError as exc:
            raise DatasetError(f"{path}:{n}: {exc}") from None
        if not rings:
            raise DatasetError(f"{path}:{n}: a polygon needs at least three points")
        scaled = tuple(tuple(v * (w if j % 2 == 0 else h) for j, v in enumerate(r)) for r in rings)
        objects.append(Outline(category, classes.get(category, ""), Polygons(scaled)))
    return tuple(objects)


def load_yolo_outlines(root: str | Path) -> OutlineSet:
    """Read a YOLO-segmentation folder (``images/``, ``labels/``, optional ``classes.txt``).

    Labels without a photo are listed in ``skipped``; photos without a label
    file are left out (nothing says what they show).

    Raises
    ------
    DatasetError
        If ``labels/`` is missing or holds no ``.txt`` file, a label line is
        malformed, or a label file is not a regular file of at most
        :data:`multicrop.io.LABEL_LIMIT` bytes.
    """
    root = Path(root)
    labels = root / "labels"
    if not labels.is_dir():
        raise DatasetError(f"{root}: no labels/ folder (YOLO segmentation layout: images/, labels/)")
    files = sorted(labels.glob("*.txt"))
    if not files:
        raise DatasetError(f"{labels}: no .txt label files")
    classes = read_class_names(root / "classes.txt") if (root / "classes.txt").is_file() else {}
    images = root / "images"
    photos, skipped = [], []
    for f in files:
        img = find_image(images, f.stem)
        if img is None:
            skipped.append((f.stem, f"no photo {f.stem}.jpg (or .jpeg/.png/.webp) in {images}"))
            continue
        size = photo_size(img)
        photos.append(OutlinedPhoto(f.stem, img, size, _yolo_objects(f, size, classes)))
    return OutlineSet(root, "yolo", tuple(photos), classes, tuple(skipped))
