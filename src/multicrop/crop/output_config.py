"""How a photo's files are read and written: :class:`OutputConfig`.

Nothing here changes a crop's box, so none of it enters a record's
``config`` or a hash (the settings that do are
:class:`multicrop.crop.config.CropConfig`, which re-exports this class).

Examples
--------
>>> OutputConfig(format="PNG").suffix, OutputConfig().max_pixels
('.png', 300000000)
>>> OutputConfig(quality=101)
Traceback (most recent call last):
...
multicrop.errors.InvalidParameterError: quality must be in [1, 100], got 101
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidParameterError
from ..io.formats import DEFAULT_MAX_PIXELS
from ..io.save import DEFAULT_QUALITY, format_suffix
from ..serialize import Serializable
from .checks import check_bool as _check_bool
from .checks import check_positive_int as _check_positive_int

__all__ = ["OutputConfig"]


@dataclass(frozen=True)
class OutputConfig(Serializable):
    """How a photo's files are read and written; nothing here changes a crop's box.

    Parameters
    ----------
    format : str or None
        Crop format (``jpg``, ``png``, ``webp``, ``tif``); None: the
        source's (``jpg`` for sources with no writer, e.g. HEIC and BMP).
    quality : int
        JPEG and WebP quality for crops whose source's own quality cannot be
        kept (JPEG crops of RGB JPEGs reuse the source's tables).
    widths : tuple of int
        Also write each crop downscaled to these widths (never upscaled).
    preview : bool
        Write ``<stem>_preview.png``.
    record : bool
        Write ``<stem>.json``.
    max_pixels : int
        Refuse photos with more pixels than this (decompression-bomb guard).
    """

    format: str | None = None
    quality: int = DEFAULT_QUALITY
    widths: tuple[int, ...] = ()
    preview: bool = True
    record: bool = True
    max_pixels: int = DEFAULT_MAX_PIXELS

    def __post_init__(self) -> None:
        if self.format is not None:
            if not isinstance(self.format, str):
                raise InvalidParameterError(f"format must be a string, got {self.format!r}")
            format_suffix(self.format)
        _check_positive_int(self, "quality")
        if self.quality > 100:
            raise InvalidParameterError(f"quality must be in [1, 100], got {self.quality!r}")
        widths = tuple(self.widths)
        for w in widths:
            if isinstance(w, bool) or not isinstance(w, int) or w < 1:
                raise InvalidParameterError(f"widths must be positive integers, got {w!r}")
        object.__setattr__(self, "widths", widths)
        _check_bool(self, "preview")
        _check_bool(self, "record")
        _check_positive_int(self, "max_pixels")

    @property
    def suffix(self) -> str | None:
        """The crops' file extension (``".png"``), or None for the source's."""
        return None if self.format is None else format_suffix(self.format)

    def replace(self, **changes: Any) -> OutputConfig:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)
