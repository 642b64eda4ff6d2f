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

from pathlib import Path

from ..errors import DatasetError
from .outline_photos import IMAGE_SUFFIXES, Outline, OutlinedPhoto, OutlineSet
from .outline_shapes import Polygons, RunLength, decode_rle, polygon_mask, rle_counts_from_string, split_rings
from .outlines_coco import load_coco_outlines
from .outlines_yolo import load_yolo_outlines, read_class_names

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
