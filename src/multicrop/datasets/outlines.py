"""Folders of photos with instance outlines: YOLO-segmentation polygons and COCO JSON.

Two layouts are read, both giving one :class:`OutlineSet` of
:class:`OutlinedPhoto` values, each with its :class:`Outline` objects:

YOLO segmentation (:func:`load_yolo_outlines`)::

    ROOT/
      images/<id>.jpg | .jpeg | .png | .webp   the photo
      labels/<id>.txt                          one object a line: ``class x1 y1 x2 y2 ...``,
                                               coordinates normalised to 0-1 by the photo's
                                               width and height
      classes.txt                              (optional) ``id: name`` lines, ``#`` comments

  A line may hold several closed rings one after another (a COCO object
  drawn in parts): a ring ends where its first point comes back, and the
  next point starts a new ring.  A line whose first point never comes back
  is one ring (the usual YOLO file, which leaves polygons open).

COCO (:func:`load_coco_outlines`): an ``instances_*.json`` with ``images``,
``annotations`` and ``categories``; segmentations are polygons (lists of
``x y`` pixel coordinates), uncompressed RLE (``counts`` a list) or
compressed RLE (``counts`` a string), both column-major as COCO writes
them, decoded here (:func:`decode_rle`) without pycocotools.  The photos
are looked up beside the JSON, in ``images/`` or in the folder given.

Class ids are taken as written (COCO category ids in both layouts); what
counts as a person, an animal or a vehicle is the business of whoever
measures (:mod:`multicrop.evaluation.subjects`).

Masks are drawn when asked for (:meth:`OutlinedPhoto.masks`), with
:func:`cv2.fillPoly` at the photo's size, so a folder of thousands of
photos loads in the time it takes to read its text files.

Examples
--------
>>> rings = ((1.0, 1.0, 5.0, 1.0, 5.0, 4.0, 1.0, 4.0),)
>>> m = polygon_mask(rings, width=8, height=6)
>>> m.shape, int(m.sum())
((6, 8), 12)
>>> decode_rle([3, 2, 1], height=2, width=3).astype(int).tolist()
[[0, 0, 1], [0, 1, 0]]
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import DatasetError, ImageLoadError
from ..io import read_header
from ..io.formats import STEM_SUFFIXES

__all__ = [
    "IMAGE_SUFFIXES",
    "Polygons",
    "RunLength",
    "Outline",
    "OutlinedPhoto",
    "OutlineSet",
    "load_outlines",
    "load_yolo_outlines",
    "load_coco_outlines",
    "read_class_names",
    "split_rings",
    "polygon_mask",
    "decode_rle",
    "rle_counts_from_string",
]

#: Photo file endings looked for next to a label (first match wins).
IMAGE_SUFFIXES: tuple[str, ...] = STEM_SUFFIXES

#: Sub-pixel bits handed to :func:`cv2.fillPoly` (vertices placed to 1/16 of a fine pixel).
_SHIFT = 4
#: Polygons are filled on a grid this many times finer than the photo, then each pixel
#: is inside when more than half its sub-pixels are.
_FINE = 4


@dataclass(frozen=True)
class Polygons:
    """An outline drawn as one or more rings, in the photo's pixels.

    Attributes
    ----------
    rings : tuple of tuple of float
        Each ring ``(x1, y1, x2, y2, ...)``, at least three points, pixel
        coordinates with ``(0, 0)`` the top-left corner of the top-left
        pixel (COCO's convention).
    """

    rings: tuple[tuple[float, ...], ...]

    def mask(self, width: int, height: int) -> np.ndarray:
        """Boolean mask of shape ``(height, width)``."""
        return polygon_mask(self.rings, width=width, height=height)


@dataclass(frozen=True)
class RunLength:
    """An outline given as COCO run-length counts (column-major, zeros first).

    Attributes
    ----------
    counts : tuple of int
    size : (int, int)
        ``(height, width)`` the counts were written for.
    """

    counts: tuple[int, ...]
    size: tuple[int, int]

    def mask(self, width: int, height: int) -> np.ndarray:
        """Boolean mask of shape ``(height, width)``; nearest-neighbour resized if written for another size."""
        h, w = self.size
        m = decode_rle(self.counts, height=h, width=w)
        if (h, w) != (height, width):
            import cv2

            m = cv2.resize(m.astype(np.uint8), (width, height), interpolation=cv2.INTER_NEAREST).astype(bool)
        return m


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


# --------------------------------------------------------------------------- geometry


def split_rings(values: Sequence[float]) -> tuple[tuple[float, ...], ...]:
    """Split a flat ``x1 y1 x2 y2 ...`` list into closed rings.

    A ring ends where its first point comes back; the point after it starts
    the next ring.  Rings of fewer than three distinct points are dropped.

    Raises
    ------
    DatasetError
        If the list has an odd number of values.

    Examples
    --------
    >>> split_rings([0, 0, 1, 0, 1, 1, 0, 0, 5, 5, 6, 5, 6, 6, 5, 5])
    ((0, 0, 1, 0, 1, 1, 0, 0), (5, 5, 6, 5, 6, 6, 5, 5))
    >>> split_rings([0, 0, 1, 0, 1, 1])
    ((0, 0, 1, 0, 1, 1),)
    """
    if len(values) % 2:
        raise DatasetError(f"a polygon needs x y pairs, got {len(values)} numbers")
    rings: list[tuple[float, ...]] = []
    start = 0
    for i in range(2, len(values), 2):
        if values[i] == values[start] and values[i + 1] == values[start + 1] and i > start:
            rings.append(tuple(values[start: i + 2]))
            start = i + 2
    if start < len(values):
        rings.append(tuple(values[start:]))
    return tuple(r for r in rings if len({(r[j], r[j + 1]) for j in range(0, len(r), 2)}) >= 3)


def polygon_mask(rings: Sequence[Sequence[float]], *, width: int, height: int) -> np.ndarray:
    """Rasterise rings (pixel coordinates) into a boolean mask with :func:`cv2.fillPoly`.

    Coordinates follow COCO: ``(0, 0)`` is the top-left corner of the
    top-left pixel.  A pixel is inside when more than half of it is: the
    rings are filled on a grid four times finer (``fillPoly`` fills its
    boundary pixels too, so at the photo's own size every outline would
    grow by up to a pixel) and a pixel is inside when more than 8 of its
    16 sub-pixels were filled.  Edges are so placed to within a quarter
    pixel (a right or bottom edge through the middle of a pixel takes it).  The rings are filled one by one and
    joined (an object drawn in parts; overlaps stay filled).

    Parameters
    ----------
    rings : sequence of sequence of float
        Each ``(x1, y1, x2, y2, ...)``.
    width, height : int

    Returns
    -------
    ndarray of bool, shape (height, width)

    Examples
    --------
    >>> polygon_mask([(0, 0, 2, 0, 2, 2, 0, 2)], width=4, height=3).astype(int).tolist()
    [[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 0, 0]]
    """
    import cv2  # where used, like the pipeline

    W, H = int(width), int(height)
    out = np.zeros((H, W), dtype=bool)
    f = _FINE
    scale = 1 << _SHIFT
    polys = [np.asarray(r, dtype=np.float64).reshape(-1, 2) for r in rings]
    polys = [q for q in polys if len(q)]
    if not polys:
        return out
    allpts = np.concatenate(polys)
    # Only the pixels the rings can reach are drawn finely.
    x0, y0 = (max(int(np.floor(v)) - 1, 0) for v in allpts.min(axis=0))
    x1 = min(int(np.ceil(allpts[:, 0].max())) + 1, W)
    y1 = min(int(np.ceil(allpts[:, 1].max())) + 1, H)
    if x1 <= x0 or y1 <= y0:
        return out
    fine = np.zeros(((y1 - y0) * f, (x1 - x0) * f), dtype=np.uint8)
    for q in polys:
        # fine sub-pixel centres sit on integers: corner coordinate x -> (x - x0) * f - 0.5
        pts = (q - (x0, y0)) * f - 0.5
        cv2.fillPoly(fine, [np.round(pts * scale).astype(np.int32)], 1, lineType=cv2.LINE_8, shift=_SHIFT)
    share = fine.reshape(y1 - y0, f, x1 - x0, f).sum(axis=(1, 3))
    out[y0:y1, x0:x1] = share * 2 > f * f
    return out


def rle_counts_from_string(text: str) -> tuple[int, ...]:
    """Counts of COCO's compressed RLE string (the ``counts`` of an RLE dict).

    COCO writes each count in 5-bit groups, least significant first, each
    group plus 48 as one character, bit 6 saying another group follows and
    bit 5 of the last group carrying the sign; from the fourth count on, the
    value written is the difference to the count two places before.

    Raises
    ------
    DatasetError
        On a character outside the encoding or a string cut short.

    Examples
    --------
    >>> rle_counts_from_string("5220")
    (5, 2, 2, 2)
    """
    counts: list[int] = []
    p = 0
    while p < len(text):
        x = 0
        k = 0
        more = True
        while more:
            if p >= len(text):
                raise DatasetError(f"RLE string ends inside a count: {text!r}")
            c = ord(text[p]) - 48
            if not 0 <= c < 64:
                raise DatasetError(f"RLE string holds {text[p]!r}, outside COCO's encoding")
            x |= (c & 0x1F) << (5 * k)
            more = bool(c & 0x20)
            p += 1
            k += 1
            if not more and c & 0x10:
                x |= -1 << (5 * k)
        if len(counts) > 2:
            x += counts[-2]
        counts.append(x)
    return tuple(counts)


def decode_rle(counts: Sequence[int] | str, *, height: int, width: int) -> np.ndarray:
    """Boolean mask of COCO run-length counts (column-major, starting with zeros).

    Parameters
    ----------
    counts : sequence of int, or str
        Uncompressed counts, or COCO's compressed string.
    height, width : int

    Raises
    ------
    DatasetError
        If a count is negative or the counts do not add up to ``height * width``.
    """
    runs = rle_counts_from_string(counts) if isinstance(counts, str) else tuple(int(c) for c in counts)
    n = int(height) * int(width)
    if any(c < 0 for c in runs) or sum(runs) != n:
        raise DatasetError(f"RLE counts add up to {sum(runs)} pixels (negative: {any(c < 0 for c in runs)}); "
                           f"a {width}x{height} mask has {n}")
    values = np.zeros(len(runs), dtype=bool)
    values[1::2] = True
    flat = np.repeat(values, runs)
    return flat.reshape(int(width), int(height)).T.copy()


# --------------------------------------------------------------------------- loading


def read_class_names(path: str | Path) -> dict[int, str]:
    """``id: name`` lines of a ``classes.txt`` (``#`` starts a comment).

    Raises
    ------
    DatasetError
        On a line that is not ``id: name``.
    """
    out: dict[int, str] = {}
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
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


def _photo_size(path: Path) -> tuple[int, int]:
    """``(width, height)`` of the stored pixels (the grid outlines refer to; EXIF orientation not applied)."""
    try:
        w, h = read_header(path, complete=False).size
    except ImageLoadError as exc:
        raise DatasetError(f"{path}: not a readable image ({exc})") from None
    return int(w), int(h)


def _find_image(folder: Path, stem: str) -> Path | None:
    for suffix in IMAGE_SUFFIXES:
        p = folder / f"{stem}{suffix}"
        if p.is_file():
            return p
    return None


def _yolo_objects(path: Path, size: tuple[int, int], classes: dict[int, str]) -> tuple[Outline, ...]:
    w, h = size
    objects = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
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
        If ``labels/`` is missing or holds no ``.txt`` file, or a label line is malformed.
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
        img = _find_image(images, f.stem)
        if img is None:
            skipped.append((f.stem, f"no photo {f.stem}.jpg (or .jpeg/.png/.webp) in {images}"))
            continue
        size = _photo_size(img)
        photos.append(OutlinedPhoto(f.stem, img, size, _yolo_objects(f, size, classes)))
    return OutlineSet(root, "yolo", tuple(photos), classes, tuple(skipped))


def _coco_shape(seg, size: tuple[int, int], where: str) -> Polygons | RunLength:
    w, h = size
    if isinstance(seg, list):
        rings = tuple(tuple(float(v) for v in ring) for ring in seg if len(ring) >= 6 and len(ring) % 2 == 0)
        if not rings:
            raise DatasetError(f"{where}: a polygon segmentation needs at least three points")
        return Polygons(rings)
    if isinstance(seg, dict) and "counts" in seg:
        rh, rw = (int(v) for v in seg.get("size", (h, w)))
        counts = seg["counts"]
        runs = rle_counts_from_string(counts) if isinstance(counts, str) else tuple(int(c) for c in counts)
        if sum(runs) != rh * rw or any(c < 0 for c in runs):
            raise DatasetError(f"{where}: RLE counts add up to {sum(runs)} pixels, its size {rw}x{rh} has {rh * rw}")
        return RunLength(runs, (rh, rw))
    raise DatasetError(f"{where}: segmentation must be a list of polygons or an RLE dict with 'counts'")


def load_coco_outlines(path: str | Path, *, images: str | Path | None = None) -> OutlineSet:
    """Read a COCO instances JSON: polygon and RLE segmentations, the photos beside it.

    Parameters
    ----------
    path : path
        The JSON file.
    images : path, optional
        Folder of the photos (default: ``images/`` next to the JSON, or the
        JSON's own folder, or ``../images`` for an ``annotations/`` folder).

    Raises
    ------
    DatasetError
        If the JSON is not a COCO instances file or a segmentation is malformed.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{path}: not a readable JSON file ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("images"), list) \
            or not isinstance(data.get("annotations"), list):
        raise DatasetError(f"{path}: a COCO instances file needs 'images' and 'annotations' lists")
    classes = {int(c["id"]): str(c.get("name", "")) for c in data.get("categories", [])}
    if images is not None:
        folders = [Path(images)]
    else:
        folders = [path.parent / "images", path.parent, path.parent.parent / "images"]
    by_image: dict[int, list[dict]] = {}
    for a in data["annotations"]:
        by_image.setdefault(int(a["image_id"]), []).append(a)
    photos, skipped = [], []
    for im in data["images"]:
        name = str(im["file_name"])
        stem = Path(name).stem
        found = next((f / name for f in folders if (f / name).is_file()), None)
        if found is None:
            skipped.append((stem, f"no photo {name} in {', '.join(map(str, folders))}"))
            continue
        size = (int(im["width"]), int(im["height"]))
        objects = []
        for a in by_image.get(int(im["id"]), []):
            where = f"{path}: annotation {a.get('id', '?')}"
            if "segmentation" not in a:
                raise DatasetError(f"{where}: no segmentation")
            category = int(a["category_id"])
            objects.append(Outline(category, classes.get(category, ""), _coco_shape(a["segmentation"], size, where),
                                   bool(a.get("iscrowd", 0))))
        photos.append(OutlinedPhoto(stem, found, size, tuple(objects)))
    return OutlineSet(path.parent, "coco", tuple(sorted(photos, key=lambda p: p.id)), classes, tuple(skipped))


def load_outlines(source: str | Path) -> OutlineSet:
    """Read a folder of outlined photos, either layout.

    ``source`` is a COCO JSON file, a folder with ``labels/`` (YOLO), or a
    folder holding one ``instances_*.json`` (directly or in ``annotations/``).

    Raises
    ------
    DatasetError
        If neither layout is found.
    """
    source = Path(source)
    if source.is_file() and source.suffix.lower() == ".json":
        return load_coco_outlines(source)
    if not source.is_dir():
        raise DatasetError(f"{source}: not a folder or a COCO JSON file")
    if (source / "labels").is_dir():
        return load_yolo_outlines(source)
    found = sorted(source.glob("instances_*.json")) + sorted(source.glob("annotations/instances_*.json"))
    if len(found) == 1:
        return load_coco_outlines(found[0])
    if len(found) > 1:
        raise DatasetError(f"{source}: several COCO files ({', '.join(p.name for p in found)}); name one")
    raise DatasetError(f"{source}: neither labels/ (YOLO segmentation) nor an instances_*.json (COCO) found")
