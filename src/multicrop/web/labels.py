"""Label mode: fixed-ratio boxes per photo, saved in the layout of the real Carousel label files.

For a photo ``<name>.<ext>`` in the folder, :meth:`LabelFolder.save` writes
``<name>.json`` (LabelMe/AnyLabeling: ``shapes`` of two corner ``points``,
``label`` ``"2x3"``/``"3x2"``, ``shape_type`` ``"rectangle (2:3)"``,
``imagePath``, ``imageWidth``, ``imageHeight``) and ``<name>_metadata.json``
(``subcrops``, ``title``, ``creator``, ``copyright_license_type``,
``website_url``), so :func:`multicrop.datasets.carousel.load_carousel` reads
the folder as it reads the dataset.

Photos live in ``DIR/dataset/`` (the Carousel layout) or, when there is no
such folder, in ``DIR`` itself.  A name from a request is only ever looked up
among the photos listed at start; it is never joined to a path.

A save checks everything, then writes: every box finite, inside the photo,
of an allowed ratio and of a size that matches that ratio (a 300x100 box
labelled 2:3 is refused, never reshaped); a file is written only over a
file of its own kind (``<name>.json`` over a LabelMe label of this photo,
``<name>_metadata.json`` over a metadata file), never over a crop record or
anything else.  A photo whose stem ends in ``_metadata`` (its label would be
another photo's metadata) and photos sharing one stem (``x.jpg`` and
``x.png`` would share one label) are not offered; :attr:`LabelFolder.skipped`
says why.

The files' spelling (a ratio's label, a box's fit to its ratio, reading a
label file) is :mod:`multicrop.web.label_format` (re-exported here).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from ..errors import DatasetError, InvalidParameterError, MulticropError
from ..geometry import Box
from ..ratios import DEFAULT_RATIOS, Ratio, parse_ratio, parse_ratios
from ..io import SUPPORTED_SUFFIXES, atomic_write_text, is_photo, load_image
from ..io.files import read_text_bounded
from .label_format import _META, LABELME_VERSION, _read, ratio_fits, ratio_label  # noqa: F401 - re-exported

__all__ = ["LabelFolder", "ratio_label", "ratio_fits"]


class LabelFolder:
    """The photos of a label folder and their labels.

    Parameters
    ----------
    root : path
        The folder given to ``multicrop serve --label``.
    ratios : str or tuple of Ratio
        The ratios boxes may have (default ``2:3,3:2``).

    Raises
    ------
    DatasetError
        ``root`` is not a directory or holds no photo.
    """

    def __init__(self, root: str | Path, *, ratios: Any = DEFAULT_RATIOS) -> None:
        root = Path(root)
        if not root.is_dir():
            raise DatasetError(f"--label {root}: not a directory")
        self.root = root
        self.dir = root / "dataset" if (root / "dataset").is_dir() else root
        self.ratios = parse_ratios(ratios)
        found = [p for p in sorted(self.dir.iterdir()) if is_photo(p) and p.is_file()]  # the one photo rule
        by_stem: dict[str, list[Path]] = {}
        for p in found:
            by_stem.setdefault(p.stem, []).append(p)
        #: ``{file name: why it is not offered}``: reserved suffix, or a stem shared with another photo.
        self.skipped: dict[str, str] = {}
        self._photos: dict[str, Path] = {}
        for stem, paths in by_stem.items():
            if stem.endswith(_META[:-len(".json")]):
                for p in paths:
                    self.skipped[p.name] = f"its label would be {stem}.json, another photo's metadata file " \
                                           f"(the {_META[:-5]} suffix is reserved); rename it"
            elif len(paths) > 1:
                for p in paths:
                    self.skipped[p.name] = (f"{', '.join(q.name for q in paths)} would share one label "
                                            f"{stem}.json; rename all but one")
            else:
                self._photos[stem] = paths[0]
        if not self._photos:
            raise DatasetError(f"--label {root}: no photo in {self.dir} "
                               f"(looked for {', '.join(sorted(SUPPORTED_SUFFIXES))})"
                               + "".join(f"; {n}: {why}" for n, why in self.skipped.items()))
        self._sizes: dict[str, tuple[int, int]] = {}

    @property
    def names(self) -> list[str]:
        return list(self._photos)

    def photo(self, name: str) -> Path:
        """The photo called ``name``.

        Raises
        ------
        KeyError
            ``name`` is not one of the folder's photos (traversal attempts included).
        """
        return self._photos[name]

    def size(self, name: str) -> tuple[int, int]:
        if name not in self._sizes:
            self._sizes[name] = load_image(self.photo(name), max_side=64).size
        return self._sizes[name]

    def _label_path(self, name: str) -> Path:
        return self.photo(name).with_name(f"{name}.json")

    def _meta_path(self, name: str) -> Path:
        return self.photo(name).with_name(f"{name}{_META}")

    def is_labelled(self, name: str) -> bool:
        return self._label_path(name).is_file()

    def progress(self) -> dict[str, int]:
        return {"labelled": sum(self.is_labelled(n) for n in self._photos), "total": len(self._photos)}

    def items(self) -> list[dict[str, Any]]:
        return [{"name": n, "file": p.name, "labelled": self.is_labelled(n)} for n, p in self._photos.items()]

    def load(self, name: str) -> dict[str, Any]:
        """Boxes (source pixels, with ratio) and metadata of ``name``; empty when not labelled yet."""
        w, h = self.size(name)
        boxes: list[dict[str, Any]] = []
        meta: dict[str, Any] = {"k": None, "title": "", "creator": "", "licence": "", "url": ""}
        lp, mp = self._label_path(name), self._meta_path(name)
        if lp.is_file():
            data = _read(lp)
            for shape in data.get("shapes", []):
                (x1, y1), (x2, y2) = shape["points"]
                b = Box.from_corners(min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2))
                boxes.append({"x": b.x, "y": b.y, "w": b.w, "h": b.h, "ratio": str(self._nearest(b))})
        if mp.is_file():
            m = _read(mp)
            meta = {"k": m.get("subcrops"), "title": m.get("title", ""), "creator": m.get("creator", ""),
                    "licence": m.get("copyright_license_type", ""), "url": m.get("website_url", "")}
        return {"name": name, "file": self.photo(name).name, "width": w, "height": h, "boxes": boxes,
                "metadata": meta, "labelled": lp.is_file(), "ratios": [str(r) for r in self.ratios]}

    def _nearest(self, box: Box) -> Ratio:
        return min(self.ratios, key=lambda r: abs(box.aspect - r.value))

    def save(self, name: str, boxes: list[dict[str, Any]], metadata: dict[str, Any]) -> dict[str, Any]:
        """Write ``<name>.json`` and ``<name>_metadata.json`` (atomically); the saved state.

        ``k`` defaults to the number of boxes.  With no box, the label file is
        removed (the photo counts as not labelled) and the metadata kept.

        Raises
        ------
        InvalidParameterError
            A box that is not finite, not of an allowed ratio, of a size
            that does not match its ratio, outside the photo; or a bad k.
        DatasetError
            ``<name>.json`` or ``<name>_metadata.json`` exists and is not a
            file of that kind (nothing is written).
        """
        w, h = self.size(name)
        shapes = []
        for i, b in enumerate(boxes, start=1):
            try:
                ratio = parse_ratio(str(b["ratio"]))
                x, y, bw, bh = (float(b[key]) for key in ("x", "y", "w", "h"))
            except (KeyError, TypeError, ValueError) as exc:
                raise InvalidParameterError(f"boxes[{i}]: needs x, y, w, h and a ratio ({exc})") from None
            if not all(math.isfinite(v) for v in (x, y, bw, bh)):
                raise InvalidParameterError(f"boxes[{i}]: x, y, w and h must be finite numbers, "
                                            f"got ({x}, {y}, {bw}, {bh})")
            if ratio not in self.ratios:
                raise InvalidParameterError(
                    f"boxes[{i}]: ratio {ratio} is not allowed; allowed: {', '.join(map(str, self.ratios))}")
            if bw < 1 or bh < 1 or x < -0.5 or y < -0.5 or x + bw > w + 0.5 or y + bh > h + 0.5:
                raise InvalidParameterError(f"boxes[{i}]: ({x:g}, {y:g}, {bw:g}x{bh:g}) is not inside the {w}x{h} photo")
            if not ratio_fits(bw, bh, ratio):
                raise InvalidParameterError(
                    f"boxes[{i}]: a {bw:g}x{bh:g} box is not {ratio} (its width/height is {bw / bh:.4g}, "
                    f"{ratio} is {ratio.value:.4g}); send a box of that ratio")
            # two decimals: a hundredth of a pixel, what a label can mean (not 13 decimals of float noise)
            corners = [[round(x, 2), round(y, 2)], [round(x + bw, 2), round(y + bh, 2)]]
            shapes.append({"label": ratio_label(ratio), "text": "", "points": corners,
                           "group_id": None, "shape_type": f"rectangle ({ratio})", "flags": {}})
        k = metadata.get("k")
        k = len(shapes) if k in (None, "") else k
        if isinstance(k, bool) or (isinstance(k, float) and not k.is_integer()):
            raise InvalidParameterError(f"metadata.k must be a positive integer, got {k!r}")
        try:
            k = int(k)
        except (TypeError, ValueError, OverflowError):
            raise InvalidParameterError(f"metadata.k must be a positive integer, got {k!r}") from None
        if k < 1 and shapes:
            raise InvalidParameterError(f"metadata.k must be a positive integer, got {k!r}")
        meta = {"website_url": str(metadata.get("url", "") or ""), "subcrops": max(k, 1),
                "title": str(metadata.get("title", "") or ""), "creator": str(metadata.get("creator", "") or ""),
                "copyright_license_type": str(metadata.get("licence", "") or "")}
        lp, mp = self._label_path(name), self._meta_path(name)
        # check whole, then write: both texts are built and both targets checked before either file changes
        meta_text = json.dumps(meta, indent=4, allow_nan=False) + "\n"
        label_text = None
        if shapes:
            label = {"version": LABELME_VERSION, "flags": {}, "shapes": shapes, "imagePath": self.photo(name).name,
                     "imageData": None, "imageHeight": h, "imageWidth": w, "text": ""}
            label_text = json.dumps(label, indent=2, allow_nan=False) + "\n"
        self._check_own(lp, name, label=True)
        self._check_own(mp, name, label=False)
        atomic_write_text(mp, meta_text)
        if label_text is not None:
            atomic_write_text(lp, label_text)
        elif lp.is_file():
            lp.unlink()
        return self.load(name)


    def _check_own(self, path: Path, name: str, *, label: bool) -> None:
        """Refuse to replace ``path`` unless it is absent or a file of the kind we write there."""
        if not os.path.lexists(path):
            return
        what = "label" if label else "metadata file"
        if path.is_symlink() or not path.is_file():
            raise DatasetError(f"{path.name}: exists and is not a regular file; not replaced by the {what}")
        try:
            data = json.loads(read_text_bounded(path, what="label folder"))
        except (MulticropError, ValueError, RecursionError):
            data = None
        if label:
            ours = (isinstance(data, dict) and isinstance(data.get("shapes"), list)
                    and data.get("imagePath") in (None, self.photo(name).name))
        else:
            ours = isinstance(data, dict) and "subcrops" in data and "shapes" not in data
        if not ours:
            raise DatasetError(f"{path.name}: exists and is not a {what} of {self.photo(name).name} "
                               f"(a crop record or another file?); move it away to save this photo's {what}")
