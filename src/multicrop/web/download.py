"""The carousel as a zip: crops (full resolution or platform width) plus the JSON record.

The files are written by :func:`multicrop.crop.outputs.write_outputs`, the
writer the command line uses, with its defaults, so the zip follows the same
rules: private EXIF tags (GPS, serial numbers, ...) dropped, JPEG crops of
JPEGs cut losslessly where libjpeg-turbo can, the source's format, quality and
colour profile otherwise.  A seamless panorama's slides (``exact``) are cut
losslessly only when every slide's corner already lies on the JPEG block grid
(:func:`lossless_block`; the page places them there), else re-encoded where
they are, so that they always meet edge to edge.
"""

from __future__ import annotations

import io
import json
import math
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from ..crop.config import OutputConfig
from ..crop.outputs import WriteOptions, lossless_reason, write_outputs
from ..crop.pipeline import CropResult
from ..crop.scoring import ScoredCrop
from ..errors import InvalidParameterError
from ..geometry import Box, snap_box
from ..io import LoadedImage
from ..ratios import parse_ratio
from .labels import ratio_fits

__all__ = ["edited_crops", "carousel_zip", "box_in_photo", "zip_moved", "lossless_block"]

#: How far (source pixels) a box from the page may reach past the photo's edge: rounding, no more.
EDGE_TOLERANCE = 0.5


def box_in_photo(x: float, y: float, w: float, h: float, width: int, height: int, *, what: str) -> Box:
    """The box ``(x, y, w, h)`` if it lies in the ``width x height`` photo; never moved or clipped.

    Raises
    ------
    InvalidParameterError
        A coordinate that is not a finite number, a box under 1 px, or one
        reaching past the photo by more than :data:`EDGE_TOLERANCE`.

    Examples
    --------
    >>> box_in_photo(0, 0, 100, 50, 100, 50, what="box")
    Box(x=0.0, y=0.0, w=100.0, h=50.0)
    >>> box_in_photo(-5, 0, 10, 10, 100, 50, what="boxes[2]")
    Traceback (most recent call last):
    ...
    multicrop.errors.InvalidParameterError: boxes[2]: (-5, 0, 10x10) must lie in the 100x50 photo
    """
    vals = [float(v) for v in (x, y, w, h)]
    shown = f"({', '.join(f'{v:g}' for v in vals[:2])}, {vals[2]:g}x{vals[3]:g})"
    if not all(math.isfinite(v) for v in vals):
        raise InvalidParameterError(f"{what}: {shown} must be finite numbers in the {width}x{height} photo")
    x, y, w, h = vals
    t = EDGE_TOLERANCE
    if w < 1 or h < 1:
        raise InvalidParameterError(f"{what}: {w:g}x{h:g} has no area (at least 1x1 px)")
    if x < -t or y < -t or x + w > width + t or y + h > height + t:
        raise InvalidParameterError(f"{what}: {shown} must lie in the {width}x{height} photo")
    return Box(min(max(x, 0.0), width - min(w, width)), min(max(y, 0.0), height - min(h, height)),
               min(w, width), min(h, height))


def lossless_block(loaded: LoadedImage) -> tuple[int, int] | None:
    """The JPEG block grid (iMCU, px) a lossless crop's corner must lie on, or None when the photo's crops
    are re-encoded anyway (not a JPEG, an EXIF rotation, CMYK, no libjpeg-turbo: see
    :func:`multicrop.crop.outputs.lossless_reason`)."""
    if lossless_reason(loaded, ".jpg", "auto") is not None:
        return None
    return loaded.jpeg_block  # read from its markers when it was loaded


def edited_crops(result: CropResult, boxes: list[dict[str, Any]], *, exact: bool = False) -> tuple[ScoredCrop, ...]:
    """The page's crops (moved, added, reordered) as whole-pixel boxes of their exact ratio.

    Each entry holds ``x, y, w, h`` in source pixels and ``ratio`` (``"2:3"``);
    a box that matches one of ``result``'s crops keeps its score.  A box must
    lie in the photo: one reaching past it is refused, never moved in; one
    whose size is not its ratio is refused, never reshaped.  With ``exact``,
    whole-pixel boxes are kept as given (a seamless panorama's slides must
    stay adjacent).

    Raises
    ------
    InvalidParameterError
        No boxes, or a box with a bad ratio, no area, not in the photo, or of
        a size that does not match its ratio.
    """
    if not boxes:
        raise InvalidParameterError("boxes: the carousel needs at least one crop")
    W, H = result.size
    known = {c.box.round(): c for c in result.crops}
    out = []
    for i, b in enumerate(boxes, start=1):
        try:
            ratio = parse_ratio(str(b["ratio"]))
            x, y, w, h = (float(b[key]) for key in ("x", "y", "w", "h"))
        except InvalidParameterError as exc:  # a bad ratio
            raise InvalidParameterError(f"boxes[{i}]: {exc}") from None
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidParameterError(f"boxes[{i}]: needs numbers x, y, w, h and a ratio such as '2:3' ({exc})") from None
        raw = box_in_photo(x, y, w, h, W, H, what=f"boxes[{i}]")
        if not ratio_fits(raw.w, raw.h, ratio):  # refused, never reshaped to another box (nor mislabelled)
            raise InvalidParameterError(
                f"boxes[{i}]: a {raw.w:g}x{raw.h:g} box is not {ratio} (its width/height is {raw.w / raw.h:.4g}, "
                f"{ratio} is {ratio.value:.4g}); send a box of that ratio")
        whole = all(float(v).is_integer() for v in (raw.x, raw.y, raw.w, raw.h))
        box = raw.round() if exact and whole else snap_box(raw, ratio, W, H)
        hit = known.get(box)
        out.append(hit if hit is not None else ScoredCrop(box, float("nan"), {}, ratio))
    return tuple(out)


def carousel_zip(result: CropResult, stem: str, *, width: int | None = None, exact: bool = False,
                 source: str | None = None) -> bytes:
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
    exact : bool
        Cut every box exactly where it is: losslessly when every corner lies
        on the JPEG block grid (:func:`multicrop.io.lossless.on_grid`), else re-encoded, since a
        lossless cut moves a corner onto the 8/16 px grid, which would open
        gaps between a seamless panorama's slides.
    source : str, optional
        The name the record gives as its ``"source"`` (the upload's file
        name), instead of the file the crops are cut from (a server path).
    """
    if result.image is None:
        raise InvalidParameterError("the result carries no image to cut crops from")
    out_cfg = OutputConfig(widths=(width,) if width else (), preview=False, record=True)
    with tempfile.TemporaryDirectory(prefix="multicrop-zip-") as tmp:
        rec = write_outputs(result, tmp, config=out_cfg, stem=stem, options=WriteOptions(exact=exact))
        names = []
        for crop in rec["crops"]:
            small = crop.get("resized", {}).get(str(width)) if width else None
            names.append(small or crop["path"])
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
            for name in names:
                zf.write(Path(tmp) / name, arcname=name)
            rec["files"] = names
            if source is not None:
                rec["source"] = source
            zf.writestr(f"{stem}.json", json.dumps(rec, sort_keys=True, indent=2, ensure_ascii=False) + "\n")
    return buf.getvalue()


def zip_moved(data: bytes, stem: str, boxes: list[Box]) -> int:
    """How far (source px, the largest corner move) the zip's crops lie from ``boxes``: a lossless JPEG
    cut puts a crop's corner on the 8/16 px block grid, and the page says so instead of moving it silently."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        rec = json.loads(zf.read(f"{stem}.json"))
    moved = 0.0
    for crop, want in zip(rec.get("crops", []), boxes):
        got = crop.get("box", {})
        for key, v in (("x", want.x), ("y", want.y), ("w", want.w), ("h", want.h)):
            moved = max(moved, abs(float(got.get(key, v)) - v))
    return int(math.ceil(moved))
