"""COCO instances files: polygons, plain and compressed run-length segmentations."""

from __future__ import annotations

from pathlib import Path

from ..errors import DatasetError
from .outline_photos import Outline, OutlinedPhoto, OutlineSet
from .outline_shapes import Polygons, RunLength, rle_counts_from_string

__all__ = ["load_coco_outlines"]


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
    from ..errors import InputFileError
    from ..io import read_json_bounded
    from ..io.files import MANIFEST_LIMIT

    try:
        data = read_json_bounded(path, limit=MANIFEST_LIMIT, what="COCO file")
    except InputFileError as exc:
        raise DatasetError(str(exc)) from None
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
