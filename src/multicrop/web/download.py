"""The carousel as a zip: crops (full resolution or platform width) plus the JSON record.

The files are written by :func:`multicrop.crop.outputs.write_outputs`, the
writer the command line uses, with its defaults, so the zip follows the same
rules: private EXIF tags (GPS, serial numbers, ...) dropped, JPEG crops of
JPEGs cut losslessly where jpegtran can, the source's format, quality and
colour profile otherwise.
"""

from __future__ import annotations

import io
import json
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from ..crop.config import OutputConfig
from ..crop.outputs import WriteOptions, write_outputs
from ..crop.pipeline import CropResult
from ..crop.scoring import ScoredCrop
from ..errors import InvalidParameterError
from ..geometry import Box, parse_ratio, snap_box

__all__ = ["edited_crops", "carousel_zip"]

def edited_crops(result: CropResult, boxes: list[dict[str, Any]]) -> tuple[ScoredCrop, ...]:
    """The page's crops (moved, added, reordered) as whole-pixel boxes of their exact ratio.

    Each entry holds ``x, y, w, h`` in source pixels and ``ratio`` (``"2:3"``);
    a box that matches one of ``result``'s crops keeps its score.

    Raises
    ------
    InvalidParameterError
        No boxes, or a box with a bad ratio or no area in the photo.
    """
    if not boxes:
        raise InvalidParameterError("boxes: the carousel needs at least one crop")
    W, H = result.size
    known = {c.box.round(): c for c in result.crops}
    out = []
    for i, b in enumerate(boxes, start=1):
        try:
            ratio = parse_ratio(str(b["ratio"]))
            raw = Box(float(b["x"]), float(b["y"]), float(b["w"]), float(b["h"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidParameterError(f"boxes[{i}]: needs numbers x, y, w, h and a ratio such as '2:3' ({exc})") from None
        if raw.w < 1 or raw.h < 1:
            raise InvalidParameterError(f"boxes[{i}]: {raw.w:g}x{raw.h:g} has no area")
        box = snap_box(raw, ratio, W, H)
        hit = known.get(box)
        out.append(hit if hit is not None else ScoredCrop(box, float("nan"), {}, ratio))
    return tuple(out)


def carousel_zip(result: CropResult, stem: str, *, width: int | None = None) -> bytes:
    """Zip of the crops of ``result`` and its JSON record.

    Parameters
    ----------
    result : CropResult
        Must carry its image (``crop_photo`` results do).
    stem : str
        Base name of the files (``<stem>_1.jpg`` ...).
    width : int, optional
        Platform width: the zip holds the copies downscaled to it (crops
        narrower than it are kept at full size and a warning is recorded)
        instead of the full-resolution crops.
    """
    if result.image is None:
        raise InvalidParameterError("the result carries no image to cut crops from")
    out_cfg = OutputConfig(widths=(width,) if width else (), preview=False, record=True)
    with tempfile.TemporaryDirectory(prefix="multicrop-zip-") as tmp:
        rec = write_outputs(result, tmp, config=out_cfg, stem=stem, options=WriteOptions())
        names = []
        for crop in rec["crops"]:
            small = crop.get("resized", {}).get(str(width)) if width else None
            names.append(small or crop["path"])
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
            for name in names:
                zf.write(Path(tmp) / name, arcname=name)
            rec["files"] = names
            zf.writestr(f"{stem}.json", json.dumps(rec, sort_keys=True, indent=2, ensure_ascii=False) + "\n")
    return buf.getvalue()
