"""Pillow image modes: 8-bit RGB for analysis, the closest writable mode for output.

Photos come in many modes (RGB, greyscale, 16-bit and float greyscale,
palette, alpha, CMYK); :func:`to_rgb` makes the 8-bit RGB copy the analysis
needs, :func:`to_output_mode` the mode closest to the source's that an output
format can hold.
"""

from __future__ import annotations

import io

import numpy as np
from PIL import Image, ImageCms

__all__ = ["SIXTEEN_BIT_MODES", "GREY_MODES", "to_rgb", "to_output_mode"]

_SRGB = ImageCms.createProfile("sRGB")


def to_rgb(image: Image.Image, *, keep_alpha: bool = False) -> Image.Image:
    """Convert any Pillow mode to 8-bit RGB (or RGBA when ``keep_alpha``).

    CMYK with an embedded profile goes through ImageCms to sRGB; 16-bit and
    float greyscale are rescaled, not clipped; palette and LA images keep
    their alpha when asked to.

    Examples
    --------
    >>> im = Image.fromarray(np.full((2, 2), 65535, np.uint16))
    >>> np.asarray(to_rgb(im))[0, 0].tolist()
    [255, 255, 255]
    """
    mode = image.mode
    has_alpha = mode in ("RGBA", "LA", "PA", "La", "RGBa") or (
        mode == "P" and "transparency" in image.info
    )
    if mode == "CMYK":
        icc = image.info.get("icc_profile")
        if icc:
            try:
                src = ImageCms.ImageCmsProfile(io.BytesIO(icc))
                return ImageCms.profileToProfile(image, src, _SRGB, outputMode="RGB")
            except (ImageCms.PyCMSError, OSError):
                pass
        return image.convert("RGB")
    if mode in ("I;16", "I;16B", "I;16L", "I;16N"):
        # round(v / 257) in integers: 4 bytes a pixel at most, not float64's 8
        arr = np.asarray(image).astype(np.uint32)
        arr += 128
        arr //= 257
        return Image.fromarray(arr.astype(np.uint8), "L").convert("RGB")
    if mode == "I":
        arr = np.asarray(image).astype(np.float64)
        hi = 65535.0 if arr.max(initial=0) > 255 else 255.0
        arr = np.clip(arr / hi * 255.0 + 0.5, 0, 255).astype(np.uint8)
        return Image.fromarray(arr, "L").convert("RGB")
    if mode == "F":
        arr = np.asarray(image, dtype=np.float64)
        if not np.isfinite(arr).all():  # NaN (no data) and infinities become 0: no cast warnings, no NaN max
            arr = np.where(np.isfinite(arr), arr, 0.0)
        hi = 1.0 if arr.max(initial=0) <= 1.0 else 255.0
        arr = np.clip(arr / hi * 255.0 + 0.5, 0, 255).astype(np.uint8)
        return Image.fromarray(arr, "L").convert("RGB")
    if keep_alpha and has_alpha:
        return image.convert("RGBA")
    if has_alpha:
        # Composite over white so transparent areas do not turn black.
        rgba = image.convert("RGBA")
        bg = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(bg, rgba).convert("RGB")
    if mode != "RGB":
        return image.convert("RGB")
    return image


#: Pillow's 16-bit greyscale modes.
SIXTEEN_BIT_MODES = frozenset({"I;16", "I;16B", "I;16L", "I;16N"})
#: Pillow's greyscale modes (1-bit to float).
GREY_MODES = frozenset({"1", "L", "LA", "La", "I", "F"}) | SIXTEEN_BIT_MODES


def _grey8(image: Image.Image) -> Image.Image:
    """8-bit greyscale of a 16-bit, 32-bit or float greyscale image (rescaled, not clipped)."""
    return to_rgb(image).convert("L")


def _to_i16(image: Image.Image) -> Image.Image:
    """16-bit greyscale of an ``I`` (32-bit) image, values clipped to [0, 65535]."""
    arr = np.clip(np.asarray(image), 0, 65535).astype(np.uint16)
    return Image.fromarray(arr)  # uint16 -> "I;16"


def _on_white(image: Image.Image, mode: str) -> Image.Image:
    """``image`` with its alpha composited over white, as ``mode`` ("RGB" or "L")."""
    rgba = image.convert("RGBA")
    bg = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
    return Image.alpha_composite(bg, rgba).convert(mode)


def to_output_mode(image: Image.Image, format: str) -> Image.Image:  # noqa: A002 - Pillow's name
    """``image`` in the mode closest to its own that ``format`` can write.

    Crops are cut from the source's native mode and converted only as far as
    the output format requires:

    ========================  ==============  ================  ===============  ===============
    source mode               JPEG            PNG               TIFF             WEBP
    ========================  ==============  ================  ===============  ===============
    RGB, L                    kept            kept              kept             RGB (L)
    16-bit grey (``I;16``)    8-bit L         kept              kept             8-bit, RGB
    ``I`` (32-bit), ``F``     8-bit L         ``I;16`` / 8-bit  kept             8-bit, RGB
    RGBA, LA, P with alpha    on white        kept              kept             RGBA
    P, 1                      RGB / L         kept              kept             RGB
    CMYK                      sRGB            sRGB              sRGB             sRGB
    ========================  ==============  ================  ===============  ===============

    CMYK goes through its embedded ICC profile to sRGB (:func:`to_rgb`) in
    every format, as the analysis copy does.  Returns ``image`` itself when
    nothing needs converting (no copy).

    Parameters
    ----------
    image : PIL.Image.Image
    format : {"JPEG", "PNG", "TIFF", "WEBP"}
        Pillow format name.

    Examples
    --------
    >>> g16 = Image.fromarray(np.full((2, 2), 1000, np.uint16))
    >>> to_output_mode(g16, "PNG").mode, to_output_mode(g16, "JPEG").mode
    ('I;16', 'L')
    >>> to_output_mode(Image.new("RGBA", (2, 2)), "JPEG").getpixel((0, 0))
    (255, 255, 255)
    """
    mode = image.mode
    fmt = format.upper()
    has_alpha = mode in ("RGBA", "LA", "PA", "La", "RGBa") or (mode == "P" and "transparency" in image.info)
    if mode == "CMYK":
        return to_rgb(image)
    if mode == "RGBa":
        image, mode = image.convert("RGBA"), "RGBA"
    elif mode == "La":
        image, mode = image.convert("LA"), "LA"
    if fmt == "TIFF":
        return image if mode not in ("PA", "I;16N") else image.convert("RGBA" if mode == "PA" else "I")
    if fmt == "PNG":
        if mode in ("1", "L", "LA", "RGB", "RGBA", "P", "I;16", "I;16B"):
            return image
        if mode == "I":
            return _to_i16(image)
        if mode in GREY_MODES:  # F, other 16-bit layouts
            return _grey8(image) if mode == "F" else _to_i16(image.convert("I"))
        return image.convert("RGBA" if has_alpha else "RGB")
    if fmt == "JPEG":
        if mode in ("L", "RGB"):
            return image
        if mode == "1":
            return image.convert("L")
        if mode == "LA":
            return _on_white(image, "L")
        if mode in GREY_MODES:
            return _grey8(image)
        return _on_white(image, "RGB") if has_alpha else image.convert("RGB")
    # WEBP (and anything else): 8-bit RGB or RGBA
    if mode in ("RGB", "RGBA"):
        return image
    if mode in GREY_MODES and mode not in ("1", "L", "LA"):
        return _grey8(image).convert("RGB")
    return image.convert("RGBA" if has_alpha else "RGB")
