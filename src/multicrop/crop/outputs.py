"""Write a :class:`~multicrop.crop.pipeline.CropResult` to disk: crops, JSON record, preview.

For a photo ``<stem>.<ext>`` the files are ``<stem>_1.<ext> .. <stem>_k.<ext>``
(full source resolution, in the source's own mode where the format can hold
it; JPEG crops of JPEGs cut losslessly, all in one pass, where
:mod:`multicrop.io.lossless` can), ``<stem>_<i>_w<width>.<ext>`` (copies downscaled for a platform, when
asked; never upscaled), ``<stem>.json`` and ``<stem>_preview.jpg`` (a small
JPEG).  Every file of one photo is written under a temporary name and all are
renamed only once every one of them is complete: a failure part-way leaves no
file behind.  No file is written over an input of the run or over a file
that is not this photo's previous output (:mod:`multicrop.io.guard`: our
naming rule and the SHA-256 the record's ``written`` map keeps for each file
it wrote); the previous set's files that the new set does not reuse are
removed, and nothing else.  Crops
carry only the EXIF tags :mod:`multicrop.io.metadata` keeps, unless
``WriteOptions.keep_metadata``.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from ..errors import InvalidParameterError, MulticropError
from ..geometry import Box
from ..ratios import Ratio, platform_height
from ..io import LoadedImage, atomic_path, open_image
from ..io import lossless as _lossless
from ..io.guard import FileId, plan_names, remove_stale, written_hashes
from ..io.parts import remove_parts
from ..io.metadata import filter_exif
from ..io.save import FORMAT_BY_SUFFIX, save_image
from ..serialize import Serializable, to_data
from .config import OutputConfig
from .pipeline import CropResult
from .stems import Stem, unique_stems

__all__ = ["write_outputs", "render_preview", "output_suffix", "unique_stems", "lossless_reason", "Stem",
           "WrittenCrop", "WriteOptions", "LOSSLESS_MODES", "PREVIEW_SUFFIX"]


def __getattr__(name: str) -> Any:
    """``render_preview``, re-exported from :mod:`.preview` when first asked (``--no-preview`` never imports it)."""
    if name == "render_preview":
        from .preview import render_preview

        return render_preview
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: The preview is a small JPEG (a full-size PNG cost about 0.5 s at 12 MP).
PREVIEW_SUFFIX = "_preview.jpg"

LOSSLESS_MODES = ("auto", "never")


@dataclass(frozen=True)
class WriteOptions:
    """How files are written, beyond :class:`~multicrop.crop.config.OutputConfig` (never changes a box).

    Attributes
    ----------
    keep_metadata : bool
        Copy every EXIF tag (GPS, serial numbers, maker notes included);
        default: only those :mod:`multicrop.io.metadata` lists.
    lossless : {"auto", "never"}
        ``auto``: JPEG crops of JPEGs (and MPOs) are cut without re-encoding
        where possible (:mod:`multicrop.io.lossless`).
    exact : bool
        The crops must keep their corners to the pixel (a seamless panorama's
        slides meet edge to edge): they are cut losslessly only when every
        corner lies on the JPEG block grid already, else all are re-encoded.
    protected : frozenset of (int, int)
        File ids (:func:`multicrop.io.guard.file_id`) of the run's inputs,
        which no output may replace.
    taken : frozenset of str
        Stems other photos of the batch write under.
    """

    keep_metadata: bool = False
    lossless: str = "auto"
    exact: bool = False
    protected: frozenset[FileId] = frozenset()
    taken: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if self.lossless not in LOSSLESS_MODES:
            raise InvalidParameterError(
                f"lossless must be one of {', '.join(LOSSLESS_MODES)}, got {self.lossless!r}")

def output_suffix(result: CropResult, config: OutputConfig | None = None) -> str:
    """Extension of the crops: ``config.format``'s if given, else the source's, else ``.jpg``."""
    if config is not None and config.suffix is not None:
        return config.suffix
    src = Path(result.source).suffix.lower() if result.source else ""
    return src if src in FORMAT_BY_SUFFIX else ".jpg"


def _resized(crop: Image.Image, width: int, ratio: Ratio | None = None) -> Image.Image:
    """``crop`` downscaled to ``width`` (callers never ask for more than its width).

    With the crop's ``ratio`` the height is the platform's exact size for it
    (1080 px of 1.91:1 is 1080x566, Instagram's size, not 1080x565), else the
    crop's own proportion.
    """
    height = max(1, round(crop.height * width / crop.width)) if ratio is None else platform_height(ratio, width)
    if crop.size == (width, height):
        return crop
    if crop.mode in ("1", "P", "PA"):  # resizing these would be nearest-neighbour
        alpha = crop.mode == "PA" or "transparency" in crop.info
        crop = crop.convert("L" if crop.mode == "1" else "RGBA" if alpha else "RGB")
    gap = None if crop.mode.startswith("I;16") else 3.0  # Image.reduce has no 16-bit modes
    return crop.resize((width, height), Image.Resampling.LANCZOS, reducing_gap=gap)


@dataclass(frozen=True)
class WrittenCrop(Serializable):
    """The files written for one crop, as its record entry adds them.

    Attributes
    ----------
    index : int
        1-based crop number.
    path : str
        The full-resolution crop's file name.
    resized : dict of str to str or None
        Per width asked for, the downscaled copy's file name, or None when
        the crop is narrower (copies are never upscaled).
    resize_skipped : dict of str to str
        Per skipped width, why.
    """

    index: int
    path: str
    resized: dict[str, str | None] = field(default_factory=dict)
    resize_skipped: dict[str, str] = field(default_factory=dict)

    def warnings(self) -> list[str]:
        """One line per skipped copy, as the record's ``warnings`` and the CLI show them."""
        return [f"crop {self.index}: no {w} px wide copy: {why}" for w, why in self.resize_skipped.items()]


@dataclass(frozen=True)
class _Saver:
    """Writes images with the source's profile, metadata and (for JPEG) quality tables."""

    format: str
    quality: int
    icc_profile: bytes | None
    exif: bytes | None
    qtables: dict | None
    subsampling: int | None

    @classmethod
    def for_source(cls, loaded: LoadedImage, fmt: str, quality: int, *, keep_metadata: bool = False) -> _Saver:
        jpeg = fmt == "JPEG"
        return cls(fmt, quality, loaded.icc_profile, filter_exif(loaded.exif, keep_all=keep_metadata) or None,
                   loaded.jpeg_qtables if jpeg else None, loaded.jpeg_subsampling if jpeg else None)

    def save(self, image: Image.Image, path: Path) -> None:
        save_image(image, path, quality=self.quality, icc_profile=self.icc_profile, exif=self.exif,
                   qtables=self.qtables, subsampling=self.subsampling, format=self.format)


def _width_copies(piece: Image.Image, i: int, stem: str, suffix: str, widths: tuple[int, ...], saver: _Saver,
                  target: Callable[[str], Path], ratio: Ratio | None = None
                  ) -> tuple[dict[str, str | None], dict[str, str]]:
    """Write crop ``i``'s width copies (never upscaled) under the names ``target`` makes temporary."""
    resized: dict[str, str | None] = {}
    skipped: dict[str, str] = {}
    for w in widths:
        if w > piece.width:
            resized[str(w)] = None
            skipped[str(w)] = f"the crop is only {piece.width} px wide; copies are never upscaled"
            continue
        rname = f"{stem}_{i}_w{w}{suffix}"
        saver.save(_resized(piece, w, ratio), target(rname))
        resized[str(w)] = rname
    return resized, skipped


def _names(stem: str, boxes: list[Box], suffix: str, out_cfg: OutputConfig) -> list[str]:
    """Every file name one photo writes under ``stem``."""
    names = []
    for i, box in enumerate(boxes, start=1):
        names.append(f"{stem}_{i}{suffix}")
        names.extend(f"{stem}_{i}_w{w}{suffix}" for w in out_cfg.widths if w <= box.w)
    if out_cfg.preview:
        names.append(f"{stem}{PREVIEW_SUFFIX}")
    if out_cfg.record:
        names.append(f"{stem}.json")
    return names


def lossless_reason(loaded: LoadedImage, suffix: str, mode: str) -> str | None:
    """Why this photo's crops cannot be cut losslessly, or None when they can."""
    if mode == "never":
        return "--lossless never"
    if loaded.format not in ("JPEG", "MPO") or loaded.path is None:
        return "the source is not a JPEG file"
    if FORMAT_BY_SUFFIX.get(suffix) != "JPEG":
        return f"the output format is {suffix[1:]}, not JPEG"
    if loaded.orientation != 1:
        return f"EXIF orientation {loaded.orientation} is not applied losslessly"
    if loaded.mode not in ("RGB", "L"):
        return f"{loaded.mode} JPEGs are re-encoded"
    if _lossless.backend() is None:
        return "neither libturbojpeg (libturbojpeg0) nor jpegtran (libjpeg-turbo-progs) is installed"
    return None


def _lossless_cuts(loaded: LoadedImage, boxes: list[Box], why_not: str | None, *, exif: bytes,
                   keep_all: bool) -> list[_lossless.LosslessCut | None]:
    """Every crop cut losslessly in one pass, or None per crop where that is not done."""
    if why_not is not None:
        return [None] * len(boxes)
    try:
        return list(_lossless.cut_jpeg(loaded.path, boxes, exif=exif, keep_all=keep_all))
    except (MulticropError, OSError) as exc:
        return [_lossless.LosslessCut(b, error=str(exc)) for b in boxes]


class _FullImage:
    """The full-resolution decode, made on first use only (lossless crops need none)."""

    def __init__(self, loaded: LoadedImage) -> None:
        self.loaded, self.image = loaded, None

    def get(self) -> Image.Image:
        if self.image is None:
            self.image = self.loaded.open_full()
        return self.image

    def close(self) -> None:
        if self.image is not None and not self.loaded.in_memory:  # never close the caller's image
            self.image.close()
        self.image = None


def write_outputs(
    result: CropResult,
    out_dir: str | os.PathLike,
    *,
    config: OutputConfig | None = None,
    stem: str | None = None,
    warnings: tuple[str, ...] = (),
    options: WriteOptions | None = None,
) -> dict[str, Any]:
    """Write the crops (and JSON record and preview) of one photo, all or nothing.

    Parameters
    ----------
    result : CropResult
        From :func:`multicrop.crop_photo`; must carry its image.
    out_dir : path
        Created if needed.
    config : OutputConfig, optional
        Format (default the source's; crops keep the source's mode where the
        format can hold it, see :func:`multicrop.io.to_output_mode`),
        quality, width copies, preview and record.  A crop narrower than a
        width is never upscaled: that copy is skipped, its ``resized`` entry
        is ``None``, ``resize_skipped`` says why, and a line is added to
        ``warnings``.
    stem : str, optional
        Preferred base name (default: the source file's stem, or ``image``);
        moved to ``<stem>-N`` (with a warning) when a name is held by a file
        this photo's previous run did not write, or by an input.
    warnings : tuple of str
        Notes about this photo from the caller (e.g. a renamed duplicate
        stem), recorded in the record's ``warnings``.
    options : WriteOptions, optional
        Metadata, lossless cutting, the run's inputs.

    Returns
    -------
    dict
        The JSON record: ``result.to_dict()`` plus ``stem``, ``warnings``
        (list of str), ``preview``, ``removed`` (the previous set's files
        deleted), ``written`` (``{name: "sha256:..."}`` of every file written
        but the record itself), and per crop the fields of :class:`WrittenCrop` and
        ``lossless`` (bool) with ``lossless_fallback`` (why not, or None);
        a lossless crop's ``box`` is the one cut (top-left on the JPEG block
        grid, same size).
    """
    out_cfg = config or OutputConfig()
    opts = options or WriteOptions()
    if result.image is None:
        raise InvalidParameterError("the result carries no image to cut crops from")
    out = Path(out_dir)
    suffix = output_suffix(result, out_cfg)
    loaded = result.image
    boxes = [c.box for c in result.crops]
    plan = plan_names(out, stem or (Path(result.source).stem if result.source else "image"),
                      lambda s: _names(s, boxes, suffix, out_cfg), source=result.source,
                      protected=opts.protected, taken=opts.taken)
    stem = plan.stem
    remove_parts(out, stem)
    saver = _Saver.for_source(loaded, FORMAT_BY_SUFFIX[suffix], out_cfg.quality, keep_metadata=opts.keep_metadata)
    why_not = lossless_reason(loaded, suffix, opts.lossless)
    if why_not is None and opts.exact and not _lossless.on_grid(boxes, loaded.jpeg_block):
        why_not = "the slides meet edge to edge and their corners are off the JPEG block grid"
    rec = result.to_dict()
    rec["stem"] = stem
    rec["warnings"] = list(warnings) + list(loaded.warnings)
    if loaded.format == "MPO":
        rec["warnings"].append("the source holds more than one picture (MPO); the crops are cut from the first")
    if plan.blocked:
        rec["warnings"].append(f"{plan.blocked}; this photo's files are named {stem}_* and {stem}.json")
    written_names: list[str] = []
    temps: dict[str, Path] = {}
    with contextlib.ExitStack() as stack:
        def target(name: str) -> Path:
            written_names.append(name)
            temps[name] = stack.enter_context(atomic_path(out / name))
            return temps[name]

        full = _FullImage(loaded)
        cuts = _lossless_cuts(loaded, boxes, why_not, exif=saver.exif or b"", keep_all=opts.keep_metadata)
        try:
            for i, (crop, crec, cut) in enumerate(zip(result.crops, rec["crops"], cuts), start=1):
                name = f"{stem}_{i}{suffix}"
                box, reason, tmp = crop.box, why_not, target(name)
                if cut is not None:
                    reason = cut.error
                    if cut.data is not None:
                        box = cut.box
                        tmp.write_bytes(cut.data)
                if reason is not None:
                    piece = full.get().crop(tuple(int(v) for v in box.corners()))
                    saver.save(piece, tmp)
                elif out_cfg.widths:  # from the crop's own bytes: no decode of the whole photo
                    piece = open_image(io.BytesIO(cut.data))
                    piece.load()
                else:
                    piece = None
                resized, skipped = ({}, {}) if piece is None else _width_copies(
                    piece, i, stem, suffix, out_cfg.widths, saver, target, crop.ratio)
                written = WrittenCrop(i, name, resized, skipped)
                crec.update(to_data(written))
                crec["box"] = to_data(box)
                crec["lossless"] = reason is None
                crec["lossless_fallback"] = reason
                rec["warnings"].extend(written.warnings())
                del piece
                cuts[i - 1] = None  # the crop's bytes are on disk now
        finally:
            full.close()
        if out_cfg.preview:
            from .preview import render_preview  # Pillow's ImageDraw and ImageFont: ~30 ms of imports

            pname = f"{stem}{PREVIEW_SUFFIX}"
            render_preview(result).save(target(pname), format="JPEG", quality=80)
            rec["preview"] = pname
        previous = plan.previous - set(written_names) - ({f"{stem}.json"} if out_cfg.record else set())
        rec["removed"] = sorted(previous)
        # The proof a rerun asks for before it replaces or removes a file: what we wrote, byte for byte.
        rec["written"] = written_hashes(temps)
        if out_cfg.record:
            text = json.dumps(rec, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
            target(f"{stem}.json").write_text(text, encoding="utf-8", errors="backslashreplace")
    remove_stale(out, previous, written_names, opts.protected)
    return rec
