"""Write a :class:`~multicrop.crop.pipeline.CropResult` to disk: crops, JSON record, preview.

For a photo ``<stem>.<ext>`` the files are ``<stem>_1.<ext> .. <stem>_k.<ext>``
(full source resolution, in the source's own mode where the format can hold
it), ``<stem>_<i>_w<width>.<ext>`` (copies downscaled for a platform, when
asked; never upscaled), ``<stem>.json`` and ``<stem>_preview.png``.  Every
file of one photo is written under a temporary name and all are renamed only
once every one of them is complete: a failure part-way leaves no file behind.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from ..errors import InvalidParameterError
from ..io import atomic_path
from ..io.save import FORMAT_BY_SUFFIX, save_image
from .pipeline import CropResult

__all__ = ["write_outputs", "render_preview", "output_suffix", "format_suffix", "unique_stems"]

_COLOURS = [(46, 204, 113), (52, 152, 219), (241, 196, 15), (231, 76, 60), (155, 89, 182), (26, 188, 156)]


def format_suffix(fmt: str) -> str:
    """The file extension for a crop format name such as ``"png"`` or ``".jpg"``.

    Raises
    ------
    InvalidParameterError
        For a format with no writer.

    Examples
    --------
    >>> format_suffix("PNG"), format_suffix(".tif")
    ('.png', '.tif')
    """
    suffix = fmt.lower() if fmt.startswith(".") else f".{fmt.lower()}"
    if suffix not in FORMAT_BY_SUFFIX:
        raise InvalidParameterError(
            f"format must be one of {', '.join(s[1:] for s in sorted(FORMAT_BY_SUFFIX))}, got {fmt!r}"
        )
    return suffix


def unique_stems(sources: list[str | os.PathLike]) -> list[tuple[str, int | None]]:
    """Output base names for a batch, so that no two photos write the same files.

    The first photo with a given stem keeps it; later ones get ``<stem>-2``,
    ``<stem>-3``, ... (a name no photo of the batch has).  Stems are compared
    case-insensitively, as some file systems do.

    Returns
    -------
    list of (str, int or None)
        Per source, its stem and, when it was renamed, the index of the
        earlier source that kept the name.

    Examples
    --------
    >>> unique_stems(["a/x.jpg", "b/x.png", "x-2.jpg", "y.jpg"])
    [('x', None), ('x-3', 0), ('x-2', None), ('y', None)]
    """
    stems = [Path(s).stem for s in sources]
    taken = {s.casefold() for s in stems}
    first: dict[str, int] = {}
    out: list[tuple[str, int | None]] = []
    for i, stem in enumerate(stems):
        key = stem.casefold()
        if key not in first:
            first[key] = i
            out.append((stem, None))
            continue
        n = 2
        while f"{stem}-{n}".casefold() in taken:
            n += 1
        new = f"{stem}-{n}"
        taken.add(new.casefold())
        first[new.casefold()] = i
        out.append((new, first[key]))
    return out


def output_suffix(result: CropResult, fmt: str | None = None) -> str:
    """Extension of the crops: ``fmt`` if given, else the source's, else ``.jpg``.

    Raises
    ------
    InvalidParameterError
        For a format with no writer.
    """
    if fmt:
        return format_suffix(fmt)
    src = Path(result.source).suffix.lower() if result.source else ""
    return src if src in FORMAT_BY_SUFFIX else ".jpg"


def render_preview(result: CropResult, *, max_side: int = 1024) -> Image.Image:
    """The analysed photo with the saliency map, partition and numbered crops drawn on it."""
    if result.image is None:
        raise InvalidParameterError("the result carries no image to draw a preview on")
    img = result.image.analysis.astype(np.float32)
    if result.saliency is not None:
        s = np.clip(result.saliency, 0, 1)[..., None].astype(np.float32) * 0.55
        img = img * (1 - s) + np.array([255, 40, 40], np.float32) * s
    im = Image.fromarray(np.clip(img + 0.5, 0, 255).astype(np.uint8))
    f = min(1.0, max_side / max(im.size))
    if f < 1:
        im = im.resize((round(im.width * f), round(im.height * f)), Image.Resampling.BILINEAR)
    draw = ImageDraw.Draw(im)
    pw, ph = im.size
    sx, sy = pw / result.size[0], ph / result.size[1]
    lw = max(2, round(max(pw, ph) / 400))
    p = result.partition_source
    if p is not None:
        for region in p.regions[1:]:
            r = region.scale(sx, sy)
            line = [(r.x, 0), (r.x, ph)] if p.orientation == "vertical" else [(0, r.y), (pw, r.y)]
            draw.line(line, fill=(255, 255, 0), width=lw)
        for b in p.boxes:
            draw.rectangle(b.scale(sx, sy).corners(), outline=(0, 255, 255), width=max(1, lw // 2))
    for i, crop in enumerate(result.crops, start=1):
        b = crop.box.scale(sx, sy)
        colour = _COLOURS[(i - 1) % len(_COLOURS)]
        draw.rectangle(b.corners(), outline=colour, width=lw + 1)
        label = str(i)
        tb = draw.textbbox((0, 0), label, font_size=max(12, 8 * lw))
        draw.rectangle((b.x, b.y, b.x + tb[2] + 2 * lw, b.y + tb[3] + 2 * lw), fill=colour)
        draw.text((b.x + lw, b.y + lw), label, fill=(0, 0, 0), font_size=max(12, 8 * lw))
    return im


def _resized(crop: Image.Image, width: int) -> Image.Image:
    """``crop`` downscaled to ``width`` (callers never ask for more than its width)."""
    if crop.width == width:
        return crop
    if crop.mode in ("1", "P", "PA"):  # resizing these would be nearest-neighbour
        alpha = crop.mode == "PA" or "transparency" in crop.info
        crop = crop.convert("L" if crop.mode == "1" else "RGBA" if alpha else "RGB")
    gap = None if crop.mode.startswith("I;16") else 3.0  # Image.reduce has no 16-bit modes
    return crop.resize((width, max(1, round(crop.height * width / crop.width))), Image.Resampling.LANCZOS,
                       reducing_gap=gap)


def write_outputs(
    result: CropResult,
    out_dir: str | os.PathLike,
    *,
    fmt: str | None = None,
    widths: tuple[int, ...] = (),
    preview: bool = True,
    record: bool = True,
    stem: str | None = None,
    warnings: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Write the crops (and JSON record and preview) of one photo, all or nothing.

    Parameters
    ----------
    result : CropResult
        From :func:`multicrop.crop_photo`; must carry its image.
    out_dir : path
        Created if needed.
    fmt : str, optional
        Crop format extension (``jpg``, ``png``, ``webp``, ``tif``); default
        the source's.  Crops keep the source's mode where the format can hold
        it (see :func:`multicrop.io.to_output_mode`).
    widths : tuple of int
        Also write each crop downscaled to these widths (e.g. 1080).  A crop
        narrower than a width is never upscaled: that copy is skipped, its
        ``resized`` entry is ``None``, ``resize_skipped`` says why, and a
        line is added to ``warnings``.
    preview, record : bool
        Write ``<stem>_preview.png`` / ``<stem>.json``.
    stem : str, optional
        Base name (default: the source file's stem, or ``image``).
    warnings : tuple of str
        Notes about this photo from the caller (e.g. a renamed duplicate
        stem), recorded in the record's ``warnings``.

    Returns
    -------
    dict
        The JSON record: ``result.to_dict()`` plus ``stem``, ``warnings``
        (list of str), ``preview`` and per crop ``index``, ``path``,
        ``resized`` (``{"<width>": "<file>" or None}``) and
        ``resize_skipped`` (``{"<width>": "<reason>"}``, empty when none).
    """
    if result.image is None:
        raise InvalidParameterError("the result carries no image to cut crops from")
    for w in widths:
        if isinstance(w, bool) or not isinstance(w, int) or w < 1:
            raise InvalidParameterError(f"widths must be positive integers, got {w!r}")
    out = Path(out_dir)
    stem = stem or (Path(result.source).stem if result.source else "image")
    suffix = output_suffix(result, fmt)
    fmt_name = FORMAT_BY_SUFFIX[suffix]
    loaded = result.image
    rec = result.to_dict()
    rec["stem"] = stem
    rec["warnings"] = list(warnings)
    cfg = result.config
    save_kw = dict(quality=cfg.quality, icc_profile=loaded.icc_profile, exif=loaded.exif, format=fmt_name)
    if fmt_name == "JPEG":
        save_kw.update(qtables=loaded.jpeg_qtables, subsampling=loaded.jpeg_subsampling)
    with contextlib.ExitStack() as stack:
        def target(name: str) -> Path:
            return stack.enter_context(atomic_path(out / name))

        # One full-resolution decode in the source's own mode; each crop is
        # converted for the format on its own (no second full-size copy).
        full = loaded.open_full()
        try:
            for i, (crop, crec) in enumerate(zip(result.crops, rec["crops"]), start=1):
                x1, y1, x2, y2 = (int(v) for v in crop.box.corners())
                piece = full.crop((x1, y1, x2, y2))
                name = f"{stem}_{i}{suffix}"
                save_image(piece, target(name), **save_kw)
                crec["index"] = i
                crec["path"] = name
                crec["resized"] = {}
                crec["resize_skipped"] = {}
                for w in widths:
                    if w > piece.width:
                        reason = f"the crop is only {piece.width} px wide; copies are never upscaled"
                        crec["resized"][str(w)] = None
                        crec["resize_skipped"][str(w)] = reason
                        rec["warnings"].append(f"crop {i}: no {w} px wide copy: {reason}")
                        continue
                    rname = f"{stem}_{i}_w{w}{suffix}"
                    save_image(_resized(piece, w), target(rname), **save_kw)
                    crec["resized"][str(w)] = rname
                del piece
        finally:
            if full is not loaded._full:  # never close the caller's in-memory image
                full.close()
            del full
        if preview:
            pname = f"{stem}_preview.png"
            render_preview(result).save(target(pname), format="PNG", compress_level=1)
            rec["preview"] = pname
        if record:
            text = json.dumps(rec, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
            target(f"{stem}.json").write_text(text, encoding="utf-8")
    return rec
