"""One item of a Carousel directory, read from its label and metadata files.

:func:`load_item` reads ``dataset/<name>.json`` (AnyLabeling/LabelMe boxes in
source pixels) and ``dataset/<name>_metadata.json`` (``subcrops``, title,
creator, licence, URL) into a :class:`CarouselItem`;
:func:`multicrop.datasets.carousel.load_carousel` walks a whole directory with it.

The real label files have quirks that are handled here, never "fixed" on disk:

* ``subcrops`` differs from the number of labelled boxes in 6 files.  ``k``
  (the number of crops a method is asked for) is ``subcrops``; every labelled
  box is ground truth.
* A box's ``label`` ("2x3" = portrait, "3x2" = landscape) may contradict its
  geometry; the geometry wins (and a note is kept on the item).
* Coordinates may be slightly outside the image (one is -0.78 px); boxes are
  clipped to the image.
* The two corners may come in either order.
* Both orientations may appear in one image.

References
----------
.. [1] R. Loya, A. Hamara, B. Estell, B. Kilpatrick and A. C. Freeman,
   "Carousel: A High-Resolution Dataset for Multi-Target Automatic Image
   Cropping", section III (the dataset and its label files); data at
   https://github.com/RafeLoya/carousel.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..errors import DatasetError, InvalidParameterError
from ..geometry import Box
from ..io.formats import STEM_SUFFIXES
from ..ratios import RATIO_PRESETS, Ratio

__all__ = [
    "CAROUSEL_RATIOS",
    "IMAGE_SUFFIXES",
    "METADATA_SUFFIX",
    "CarouselMetadata",
    "CarouselItem",
    "box_ratio",
    "dataset_dir",
    "load_item",
]

#: The two ratios the Carousel annotators used (portrait 2:3, landscape 3:2): the ``carousel`` preset.
CAROUSEL_RATIOS: tuple[Ratio, ...] = RATIO_PRESETS["carousel"]
#: Image suffixes looked for beside each label file, in order.
IMAGE_SUFFIXES: tuple[str, ...] = STEM_SUFFIXES
#: Suffix of an item's metadata file (``<name>_metadata.json``) beside its label file ``<name>.json``.
METADATA_SUFFIX = "_metadata.json"
_LABEL_RATIOS = {"2x3": Ratio(2, 3), "3x2": Ratio(3, 2)}


@dataclass(frozen=True)
class CarouselMetadata:
    """What ``<name>_metadata.json`` says about a photo.

    ``subcrops`` is the annotators' number of distinct salient regions, the
    ``k`` a method is asked for.
    """

    subcrops: int
    title: str = ""
    creator: str = ""
    licence: str = ""
    url: str = ""


@dataclass(frozen=True)
class CarouselItem:
    """One labelled photo.

    Attributes
    ----------
    name : str
        File stem shared by the image and its JSON files.
    image_path : Path or None
        The photo, or None when it is absent (labels-only copies).
    width, height : int
        Source size in pixels (``imageWidth``/``imageHeight``).
    k : int
        Number of crops to predict (``subcrops`` from the metadata).
    boxes : tuple of Box
        Ground-truth boxes in source pixels, clipped to the image, in file order.
    ratios : tuple of Ratio
        Each box's ratio, from its geometry (nearest of 2:3 and 3:2).
    metadata : CarouselMetadata
    hard_failure : bool
        Listed in ``hard_failures.txt`` (the paper's 45 partition failures).
    labels : tuple of str
        The raw ``label`` strings, kept for reference (geometry wins).
    notes : tuple of str
        Quirks found while reading this item (count mismatch, contradicting
        label, clipped coordinate).
    partition_info : Mapping or None
        Contents of ``partitions/<name>/partition_info.json`` when present.
    """

    name: str
    image_path: Path | None
    width: int
    height: int
    k: int
    boxes: tuple[Box, ...]
    ratios: tuple[Ratio, ...]
    metadata: CarouselMetadata
    hard_failure: bool = False
    labels: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    partition_info: Mapping[str, Any] | None = field(default=None, compare=False)

    @property
    def orientations(self) -> frozenset[str]:
        """``{"portrait", "landscape"}`` subset present among the boxes."""
        return frozenset("portrait" if r.value < 1 else "landscape" for r in self.ratios)


def box_ratio(box: Box, ratios: tuple[Ratio, ...] = CAROUSEL_RATIOS) -> Ratio:
    """The ratio in ``ratios`` nearest to ``box``'s aspect (in log space).

    Examples
    --------
    >>> str(box_ratio(Box(0, 0, 909.5, 606.3)))
    '3:2'
    """
    if box.w <= 0 or box.h <= 0:
        raise InvalidParameterError(f"box must have a positive size, got {box}")
    a = math.log(box.w / box.h)
    return min(ratios, key=lambda r: abs(math.log(r.value) - a))


def _read_json(path: Path) -> Any:
    from ..errors import InputFileError
    from ..io import LABEL_LIMIT, read_text_bounded
    from ..io.files import MAX_JSON_DEPTH, json_depth

    if not path.exists() and not path.is_symlink():
        raise DatasetError(f"{path.name}: missing")
    try:  # regular files only, bounded: a FIFO or device named x.json never blocks the loader
        text = read_text_bounded(path, limit=LABEL_LIMIT)
    except InputFileError as exc:
        raise DatasetError(f"{path.name}: unreadable ({str(exc).split(': ', 1)[-1]})") from None
    depth = json_depth(text)  # arrays nested thousands deep: one skipped file, not a RecursionError
    if depth > MAX_JSON_DEPTH:
        raise DatasetError(f"{path.name}: malformed JSON (nested {depth:,} deep, more than the {MAX_JSON_DEPTH} "
                           "allowed)")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path.name}: malformed JSON ({exc.msg} at line {exc.lineno})") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise DatasetError(f"{path.name}: malformed JSON ({exc})") from None


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise DatasetError(f"{what} must be a finite number, got {value!r}")
    return float(value)


def _find_image(directory: Path, name: str, image_path_hint: str | None) -> Path | None:
    if image_path_hint:
        p = directory / Path(image_path_hint).name
        if p.is_file():
            return p
    for suffix in IMAGE_SUFFIXES:
        p = directory / f"{name}{suffix}"
        if p.is_file():
            return p
    return None


def dataset_dir(root: Path) -> Path:
    """The ``dataset/`` folder of a Carousel directory ``root``.

    Raises
    ------
    DatasetError
        If ``root`` has no ``dataset/`` folder.
    """
    if (root / "dataset").is_dir():
        return root / "dataset"
    raise DatasetError(f"{root}: not a Carousel directory (no 'dataset/' folder inside)")


def load_item(
    root: str | Path,
    name: str,
    *,
    hard_failures: frozenset[str] = frozenset(),
    require_image: bool = True,
) -> CarouselItem:
    """Read one item of a Carousel directory.

    Parameters
    ----------
    root : path
        Directory holding ``dataset/``.
    name : str
        File stem of the item.
    hard_failures : frozenset of str
        Names to flag as hard failures.
    require_image : bool
        Raise when the photo is missing (otherwise ``image_path`` is None).

    Raises
    ------
    DatasetError
        Missing or malformed label/metadata file, missing image when
        ``require_image``, no usable box.
    """
    root = Path(root)
    ddir = dataset_dir(root)
    labels = _read_json(ddir / f"{name}.json")
    meta_raw = _read_json(ddir / f"{name}{METADATA_SUFFIX}")
    if not isinstance(labels, dict) or not isinstance(meta_raw, dict):
        raise DatasetError(f"{name}: label and metadata files must hold JSON objects")
    try:
        width = int(_number(labels["imageWidth"], "imageWidth"))
        height = int(_number(labels["imageHeight"], "imageHeight"))
        shapes = labels["shapes"]
        subcrops = meta_raw["subcrops"]
    except KeyError as exc:
        raise DatasetError(f"{name}: missing field {exc.args[0]!r}") from None
    if width <= 0 or height <= 0:
        raise DatasetError(f"{name}: image size must be positive, got {width}x{height}")
    if isinstance(subcrops, bool) or not isinstance(subcrops, int) or subcrops < 1:
        raise DatasetError(f"{name}: subcrops must be a positive integer, got {subcrops!r}")
    if not isinstance(shapes, list) or not shapes:
        raise DatasetError(f"{name}: 'shapes' must be a non-empty list of boxes")

    notes: list[str] = []
    read = [_read_shape(name, i, shape, width, height, notes) for i, shape in enumerate(shapes)]
    if subcrops != len(read):
        notes.append(f"subcrops={subcrops} but {len(read)} boxes; k=subcrops, all boxes kept")
    image_path = _find_image(ddir, name, labels.get("imagePath"))
    if image_path is None and require_image:
        raise DatasetError(f"{name}: image missing (looked for {name}.jpg/.jpeg/.png in {ddir})")
    return CarouselItem(
        name=name,
        image_path=image_path,
        width=width,
        height=height,
        k=subcrops,
        boxes=tuple(box for box, _, _ in read),
        ratios=tuple(ratio for _, ratio, _ in read),
        metadata=CarouselMetadata(
            subcrops=subcrops,
            title=str(meta_raw.get("title", "")),
            creator=str(meta_raw.get("creator", "")),
            licence=str(meta_raw.get("copyright_license_type", meta_raw.get("licence", ""))),
            url=str(meta_raw.get("website_url", meta_raw.get("url", ""))),
        ),
        hard_failure=name in hard_failures,
        labels=tuple(label for _, _, label in read),
        notes=tuple(notes),
        partition_info=_partition_info(root / "partitions" / name / "partition_info.json"),
    )


def _read_shape(name: str, i: int, shape: Any, width: int, height: int, notes: list[str]) -> tuple[Box, Ratio, str]:
    """Box (clipped to the image), ratio (from its geometry) and raw label of ``shapes[i]``; quirks go to ``notes``."""
    try:
        (x1, y1), (x2, y2) = shape["points"]
        x1, y1, x2, y2 = (_number(v, f"shapes[{i}].points") for v in (x1, y1, x2, y2))
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, DatasetError):
            raise DatasetError(f"{name}: {exc}") from None
        raise DatasetError(f"{name}: shapes[{i}].points must be two [x, y] corners") from None
    raw = Box.from_corners(x1, y1, x2, y2)
    box = raw.clip(width, height)
    if box != raw:
        notes.append(f"box {i} clipped to the image (corners {raw.corners()})")
    if box.w <= 0 or box.h <= 0:
        raise DatasetError(f"{name}: shapes[{i}] has no area inside the {width}x{height} image")
    ratio = box_ratio(box)
    label = str(shape.get("label", ""))
    said = _LABEL_RATIOS.get(label.strip().lower())
    if said is not None and said != ratio:
        notes.append(f"box {i} label {label!r} contradicts its geometry ({ratio}); geometry kept")
    return box, ratio, label


def _partition_info(path: Path) -> Mapping[str, Any] | None:
    """The paper's ``partition_info.json`` for an item, when the directory has one."""
    if not path.is_file():
        return None
    data = _read_json(path)
    return MappingProxyType(data) if isinstance(data, dict) else MappingProxyType({"value": data})
