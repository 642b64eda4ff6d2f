"""The analysis decode: a reduced copy for analysis, array and PIL adapters.

Opening (the allow-list, the bomb check, headers) is :mod:`multicrop.io.opener`; the
format table :mod:`multicrop.io.formats`; truncation checks :mod:`multicrop.io.integrity`;
EXIF orientation :mod:`multicrop.io.orientation`.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from PIL import Image

from ..errors import InvalidParameterError, MulticropError
from .formats import ALLOWED_FORMATS, DEFAULT_MAX_PIXELS, FORMATS, OPEN_FORMATS, SUPPORTED_SUFFIXES, ImageFormat
from .formats import identify_format  # noqa: F401 - re-exported (tests, callers of the old home)
from .integrity import check_complete, min_data_bytes, png_data_short  # noqa: F401 - re-exported
from .complete import check_complete_jpeg
from .jpeg import read_markers
from .metadata import EXIF_UNREADABLE
from .loaded import LoadedImage
from .modes import SIXTEEN_BIT_MODES, to_rgb
from .orientation import exif_unreadable as _exif_unreadable
from .orientation import orientation as _orientation
from .orientation import transpose as _transpose
from .opener import Header, _load_error, _n_bytes, _too_large, open_image, pillow_bomb_check_off, read_header  # noqa: F401

__all__ = [
    "DEFAULT_MAX_PIXELS",
    "FORMATS",
    "ImageFormat",
    "ALLOWED_FORMATS",
    "OPEN_FORMATS",
    "SUPPORTED_SUFFIXES",
    "Header",
    "open_image",
    "read_header",
    "LoadedImage",
    "load_image",
]


def _reduce(im: Image.Image, max_side: int) -> Image.Image:
    w, h = im.size
    f = max(w, h) / max_side
    if f <= 1:
        return im
    size = (max(1, round(w / f)), max(1, round(h / f)))
    gap = None if im.mode in SIXTEEN_BIT_MODES else 2.0  # Image.reduce has no 16-bit modes
    return im.resize(size, Image.Resampling.BOX if f >= 2 else Image.Resampling.BILINEAR, reducing_gap=gap)


def _analysis_copy(im: Image.Image, max_side: int) -> np.ndarray:
    """The reduced 8-bit RGB copy; reduced first where the mode allows, so no full-size conversion."""
    if im.mode in ("1", "P", "PA"):  # resize would use nearest neighbour on these
        return np.asarray(_reduce(to_rgb(im), max_side))
    return np.asarray(to_rgb(_reduce(im, max_side)))


def load_image(
    source: str | os.PathLike | np.ndarray | Image.Image,
    *,
    max_side: int = 1600,
    max_pixels: int = DEFAULT_MAX_PIXELS,
) -> LoadedImage:
    """Open a photo and decode a reduced copy for analysis.

    JPEGs are decoded at reduced size by DCT scaling (``Image.draft``), so a
    200 MP photo costs a fraction of its full decode here; the full image is
    decoded once, later, only to cut the crops.

    Parameters
    ----------
    source : path, ndarray of shape (H, W[, C]) or PIL.Image.Image
        The photo.  Arrays are taken as RGB(A) or greyscale, uint8 or float
        in [0, 1].
    max_side : int
        Long side of the analysis copy in pixels.
    max_pixels : int
        Refuse images with more pixels than this (decompression-bomb guard).

    Returns
    -------
    LoadedImage

    Raises
    ------
    ImageLoadError
        Missing, unreadable, truncated or corrupt file.
    ImageTooLargeError
        More than ``max_pixels`` pixels.

    Examples
    --------
    >>> img = load_image(np.zeros((3000, 2000, 3), np.uint8), max_side=600)
    >>> img.size, img.analysis.shape
    ((2000, 3000), (600, 400, 3))
    """
    if not isinstance(max_side, int) or max_side < 16:
        raise InvalidParameterError(f"max_side must be an integer >= 16, got {max_side!r}")
    if isinstance(source, np.ndarray):
        return _from_pil(_array_to_pil(source), None, max_side, max_pixels)
    if isinstance(source, Image.Image):
        return _from_pil(source, None, max_side, max_pixels)

    path = Path(source)
    im = open_image(path, max_pixels=max_pixels)
    try:
        w, h = im.size
        if w * h > max_pixels:
            raise _too_large(path, w, h, max_pixels)
        check_complete(im, path, str(path), _n_bytes(path))
        if im.format in ("JPEG", "MPO"):  # cut with EOI, missing scans, junk (io.complete)
            check_complete_jpeg(path, str(path))
        fmt = im.format
        icc = im.info.get("icc_profile")
        exif = im.info.get("exif")
        has_alpha = im.mode in ("RGBA", "LA", "PA") or (im.mode == "P" and "transparency" in im.info)
        qtables = subsampling = block = None
        mode = im.mode
        if fmt in ("JPEG", "MPO"):
            block = _jpeg_block(path)
            from PIL import JpegImagePlugin

            qtables = dict(getattr(im, "quantization", None) or {}) or None
            subsampling = JpegImagePlugin.get_sampling(im)
            if subsampling not in (0, 1, 2) or im.mode != "RGB":  # grey, CMYK: Pillow's defaults
                qtables = subsampling = None
            # Pillow keeps the decoded size >= the requested one on both axes,
            # so ask for the reduced size itself, not a max_side square.
            f = max(w, h) / max_side
            if f > 1:
                im.draft("RGB", (max(1, int(w / f)), max(1, int(h / f))))
        try:
            im.load()
        except (OSError, SyntaxError, ValueError, EOFError) as exc:
            raise _load_error(str(path), exc) from None
        notes: tuple[str, ...] = ()
        if _exif_unreadable(im):
            notes, exif = (EXIF_UNREADABLE,), None
        orientation = _orientation(im)
        full = (h, w) if orientation in (5, 6, 7, 8) else (w, h)
        im = _transpose(im)
        arr = _analysis_copy(im, max_side)
        if icc and im.mode == "CMYK":
            icc = None  # crops are converted to sRGB
        return LoadedImage(
            analysis=arr, size=full, path=path, format=fmt, icc_profile=icc, exif=exif, has_alpha=has_alpha,
            jpeg_qtables=qtables, jpeg_subsampling=subsampling, warnings=notes,
            orientation=orientation, mode=mode, jpeg_block=block,
        )
    finally:
        im.close()


def _jpeg_block(path: Path) -> tuple[int, int] | None:
    """The JPEG's iMCU block from its markers (:func:`~multicrop.io.jpeg.read_markers`), None when unreadable.

    The first MiB holds the markers of nearly every JPEG; where metadata
    segments push the frame header past it, the whole file is read.
    """
    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 20)
            try:
                return read_markers(head).block
            except MulticropError:
                if len(head) < 1 << 20:
                    return None
                return read_markers(head + fh.read()).block
    except (OSError, MulticropError):
        return None


def _array_to_pil(arr: np.ndarray) -> Image.Image:
    if arr.ndim not in (2, 3) or (arr.ndim == 3 and arr.shape[2] not in (1, 3, 4)):
        raise InvalidParameterError(
            f"image array must have shape (H, W), (H, W, 3) or (H, W, 4), got {arr.shape}"
        )
    if arr.size == 0:
        raise InvalidParameterError(f"image array is empty, shape {arr.shape}")
    if arr.dtype != np.uint8:
        a = arr.astype(np.float64)
        if np.issubdtype(arr.dtype, np.floating):
            a = a * 255.0
        elif arr.dtype == np.uint16:
            a = a / 257.0
        arr = np.clip(a + 0.5, 0, 255).astype(np.uint8)
    if arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[:, :, 0]
    return Image.fromarray(np.ascontiguousarray(arr))


def _from_pil(im: Image.Image, path: Path | None, max_side: int, max_pixels: int) -> LoadedImage:
    w, h = im.size
    if w * h > max_pixels:
        raise _too_large("image", w, h, max_pixels)
    im = _transpose(im)
    has_alpha = im.mode in ("RGBA", "LA", "PA") or (im.mode == "P" and "transparency" in im.info)
    return LoadedImage(
        analysis=_analysis_copy(im, max_side),
        size=im.size,
        path=path,
        format=im.format,
        icc_profile=im.info.get("icc_profile"),
        has_alpha=has_alpha,
        _full=im,
    )

