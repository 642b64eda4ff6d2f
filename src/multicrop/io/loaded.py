"""A photo ready for analysis: :class:`LoadedImage`, what :func:`multicrop.io.load_image` returns.

It holds the reduced analysis copy and what crops need from the source (size,
colour profile, EXIF, JPEG tables and iMCU grid); :meth:`LoadedImage.open_full`
decodes the full-resolution pixels again when the crops are cut.  Re-exported
by :mod:`multicrop.io.load` and :mod:`multicrop.io`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image

from ..errors import ImageLoadError
from .modes import to_rgb
from .opener import _load_error, open_image
from .orientation import transpose as _transpose

__all__ = ["LoadedImage"]


@dataclass(frozen=True)
class LoadedImage:
    """A photo ready for analysis.

    Attributes
    ----------
    analysis : ndarray of uint8, shape (h, w, 3)
        Reduced RGB copy (long side at most ``max_side``), EXIF-transposed.
    size : (int, int)
        Full-resolution ``(width, height)`` after EXIF transposition.
    path : Path or None
        Source file, or None for in-memory input.
    format : str or None
        Pillow format name of the source ("JPEG", "PNG", ...).
    icc_profile, exif : bytes or None
        Kept so that crops carry the source's colour profile and metadata.
    jpeg_qtables, jpeg_subsampling : dict or None, int or None
        The source JPEG's quantization tables and chroma subsampling, so
        JPEG crops keep the source's quality.
    warnings : tuple of str
        Problems met while reading that did not stop it (e.g.
        ``"EXIF unreadable, ignored"``), one line each.
    orientation : int
        The source's EXIF orientation (1 to 8; 1 when absent).
    mode : str or None
        The source's Pillow mode as stored ("RGB", "L", "CMYK", ...).
    jpeg_block : (int, int) or None
        A JPEG's iMCU size in pixels (8 or 16 per axis): the grid on which
        it can be cut losslessly.
    """

    analysis: np.ndarray
    size: tuple[int, int]
    path: Path | None = None
    format: str | None = None
    icc_profile: bytes | None = None
    exif: bytes | None = None
    has_alpha: bool = False
    jpeg_qtables: dict | None = field(default=None, repr=False, compare=False)
    jpeg_subsampling: int | None = None
    warnings: tuple[str, ...] = ()
    orientation: int = 1
    mode: str | None = None
    jpeg_block: tuple[int, int] | None = None
    _full: Image.Image | None = field(default=None, repr=False, compare=False)

    @property
    def in_memory(self) -> bool:
        """True when the full-resolution pixels are held (in-memory input), not decoded from a file.

        :meth:`open_full` then hands back that image itself, which a caller
        must not close.
        """
        return self._full is not None

    @property
    def scale(self) -> float:
        """Analysis pixels per source pixel (<= 1)."""
        return self.analysis.shape[1] / self.size[0]

    def open_full(self, *, rgb: bool = False, keep_alpha: bool = False) -> Image.Image:
        """Decode the full-resolution image, EXIF-transposed.

        By default in the source's own mode (16-bit greyscale stays
        ``I;16``, ``L`` stays ``L``, alpha is kept): crops are cut from it and
        converted per crop by :func:`~multicrop.io.to_output_mode`, so no second
        full-resolution copy is made.  ``rgb=True`` gives 8-bit RGB (RGBA
        with ``keep_alpha``) through :func:`~multicrop.io.to_rgb` instead.
        """
        if self._full is not None:
            return to_rgb(self._full, keep_alpha=keep_alpha) if rgb else self._full
        if self.path is None:
            raise ImageLoadError("this image has neither a file nor pixels to decode")
        im = open_image(self.path, max_pixels=self.size[0] * self.size[1])
        try:
            im.load()  # a single-frame file is closed by Pillow once loaded
        except (OSError, SyntaxError, ValueError, EOFError) as exc:
            im.close()
            raise _load_error(str(self.path), exc) from None
        # No ``with``: closing would free the pixels handed back unchanged.
        im = _transpose(im)
        return to_rgb(im, keep_alpha=keep_alpha) if rgb else im
