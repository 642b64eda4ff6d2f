"""The Carousel multi-target cropping dataset (labels, metadata, failure list).

Layout read by :func:`load_carousel`::

    ROOT/
      dataset/<name>.jpg | <name>.jpeg      the photo (optional: see ``require_images``)
      dataset/<name>.json                   AnyLabeling/LabelMe boxes in source pixels
      dataset/<name>_metadata.json          subcrops (= k), title, creator, licence, URL
      partitions/<name>/partition_info.json (optional) the paper's partitions
      hard_failures.txt                     the 45 names whose partitioning failed

The label files' quirks are handled item by item in
:mod:`multicrop.datasets.carousel_item` (whose names stay importable from
here); this module walks the directory, reads the failure list and keeps what
could not be loaded, with the reason.

References
----------
.. [1] R. Loya, A. Hamara, B. Estell, B. Kilpatrick and A. C. Freeman,
   "Carousel: A High-Resolution Dataset for Multi-Target Automatic Image
   Cropping", sections III (the dataset) and IV-C (protocol); data at
   https://github.com/RafeLoya/carousel.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import DatasetError, InvalidParameterError
from ..io.files import CONFIG_LIMIT, read_text_bounded
from .carousel_item import (
    CAROUSEL_RATIOS,
    IMAGE_SUFFIXES,
    METADATA_SUFFIX,
    CarouselItem,
    CarouselMetadata,
    box_ratio,
    dataset_dir,
    load_item,
)

__all__ = [
    "CAROUSEL_RATIOS",
    "IMAGE_SUFFIXES",
    "SUBSETS",
    "CarouselMetadata",
    "CarouselItem",
    "SkippedItem",
    "CarouselDataset",
    "load_carousel",
    "load_item",
    "box_ratio",
    "read_hard_failures",
]

#: Subsets accepted by :meth:`CarouselDataset.subset`.
SUBSETS: tuple[str, ...] = ("all", "ok", "failures")


@dataclass(frozen=True)
class SkippedItem:
    """A name that could not be loaded, and why."""

    name: str
    reason: str


@dataclass(frozen=True)
class CarouselDataset:
    """A loaded Carousel directory.

    Attributes
    ----------
    root : Path
    items : tuple of CarouselItem
        Sorted by name.
    skipped : tuple of SkippedItem
        Items that could not be loaded (missing image, malformed JSON ...).
    hard_failures : frozenset of str
        Names listed in ``hard_failures.txt``.
    """

    root: Path
    items: tuple[CarouselItem, ...]
    skipped: tuple[SkippedItem, ...] = ()
    hard_failures: frozenset[str] = frozenset()

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[CarouselItem]:
        return iter(self.items)

    def __getitem__(self, name: str) -> CarouselItem:
        for item in self.items:
            if item.name == name:
                return item
        raise KeyError(name)

    def subset(self, name: str) -> tuple[CarouselItem, ...]:
        """Items of a subset: ``all``, ``ok`` (not a hard failure) or ``failures``.

        Raises
        ------
        InvalidParameterError
            If ``name`` is not one of :data:`SUBSETS`.
        """
        if name == "all":
            return self.items
        if name == "ok":
            return tuple(i for i in self.items if not i.hard_failure)
        if name == "failures":
            return tuple(i for i in self.items if i.hard_failure)
        raise InvalidParameterError(f"subset must be one of {', '.join(SUBSETS)}; got {name!r}")

    @property
    def unknown_hard_failures(self) -> tuple[str, ...]:
        """Names in ``hard_failures.txt`` with no loaded item (sorted)."""
        names = {i.name for i in self.items}
        return tuple(sorted(self.hard_failures - names))

    def summary(self) -> str:
        """One paragraph: how many items loaded, how many skipped and why."""
        n_boxes = sum(len(i.boxes) for i in self.items)
        n_fail = sum(i.hard_failure for i in self.items)
        lines = [
            f"{len(self.items)} images loaded from {self.root} ({n_boxes} boxes, "
            f"{n_fail} hard failures), {len(self.skipped)} skipped"
        ]
        lines += [f"  skipped {s.name}: {s.reason}" for s in self.skipped]
        return "\n".join(lines)


def read_hard_failures(path: str | Path) -> frozenset[str]:
    """Names listed in a ``hard_failures.txt`` (one per line, blanks and ``#`` ignored)."""
    p = Path(path)
    if not p.is_file():
        return frozenset()
    text = read_text_bounded(p, limit=CONFIG_LIMIT, what="hard-failures list")
    names = (line.strip() for line in text.splitlines())
    return frozenset(n for n in names if n and not n.startswith("#"))


def load_carousel(root: str | Path, *, require_images: bool = True) -> CarouselDataset:
    """Load every item of a Carousel directory; bad items are skipped, not fatal.

    Parameters
    ----------
    root : path
        Directory holding ``dataset/`` and ``hard_failures.txt``.
    require_images : bool
        Skip items whose photo is missing (True, for evaluation) or load them
        with ``image_path=None`` (False, for label statistics).

    Returns
    -------
    CarouselDataset
        Items sorted by name; ``skipped`` says what could not be read and why.

    Raises
    ------
    DatasetError
        If ``root`` has no ``dataset/`` folder.

    Examples
    --------
    >>> import tempfile, pathlib, json
    >>> root = pathlib.Path(tempfile.mkdtemp()); (root / "dataset").mkdir()
    >>> shape = {"label": "3x2", "points": [[30, 20], [0, 0]]}
    >>> _ = (root / "dataset" / "a.json").write_text(json.dumps(
    ...     {"shapes": [shape], "imageWidth": 60, "imageHeight": 40}))
    >>> _ = (root / "dataset" / "a_metadata.json").write_text('{"subcrops": 1}')
    >>> ds = load_carousel(root, require_images=False)
    >>> ds.items[0].boxes, ds.items[0].k
    ((Box(x=0.0, y=0.0, w=30.0, h=20.0),), 1)
    """
    root = Path(root)
    ddir = dataset_dir(root)
    hard = read_hard_failures(root / "hard_failures.txt")
    names = sorted(
        p.stem for p in ddir.glob("*.json") if not p.name.endswith(METADATA_SUFFIX)
    )
    # Metadata files without a label file are reported too.
    orphan_meta = sorted(
        p.name[: -len(METADATA_SUFFIX)]
        for p in ddir.glob(f"*{METADATA_SUFFIX}")
        if not (ddir / (p.name[: -len(METADATA_SUFFIX)] + ".json")).is_file()
    )
    items: list[CarouselItem] = []
    skipped: list[SkippedItem] = [SkippedItem(n, f"{n}.json: missing") for n in orphan_meta]
    for name in names:
        try:
            items.append(load_item(root, name, hard_failures=hard, require_image=require_images))
        except DatasetError as exc:
            reason = str(exc)
            prefix = f"{name}: "
            skipped.append(SkippedItem(name, reason[len(prefix):] if reason.startswith(prefix) else reason))
    skipped.sort(key=lambda s: s.name)
    return CarouselDataset(root=root, items=tuple(items), skipped=tuple(skipped), hard_failures=hard)
