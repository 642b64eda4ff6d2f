"""Open an image through the allow-list of :data:`~multicrop.io.formats.FORMATS`, and read its header.

Every image multicrop reads is opened by :func:`open_image`: one place maps Pillow's
failures to one clear error, and Pillow's own bomb check is managed here.
"""

from __future__ import annotations

import contextlib
import os
import threading
import warnings
from dataclasses import dataclass
from typing import BinaryIO

from PIL import Image, UnidentifiedImageError

from ..errors import ImageFormatError, ImageLoadError, ImageMetadataError, ImageTooLargeError, ImageTruncatedError
from .files import check_regular
from .names import shown
from .formats import ALLOWED_FORMATS, DEFAULT_MAX_PIXELS, OPEN_FORMATS, _prefix, formats_for, identify_format
from .integrity import check_complete
from .metadata import WARNINGS_LOCK

__all__ = ["Header", "open_image", "read_header", "pillow_bomb_check_off"]

# Pillow refuses images above 2 x MAX_IMAGE_PIXELS before we can give a clear
# message; raise its limit to ours and do the check ourselves.
if Image.MAX_IMAGE_PIXELS is not None and Image.MAX_IMAGE_PIXELS < DEFAULT_MAX_PIXELS:
    Image.MAX_IMAGE_PIXELS = DEFAULT_MAX_PIXELS


def _mp(pixels: int) -> str:
    return f"{pixels / 1e6:.1f} MP" if pixels >= 1_000_000 else f"{pixels:,} pixels"


def _too_large(name: object, w: int, h: int, max_pixels: int) -> ImageTooLargeError:
    return ImageTooLargeError(
        f"{name}: {w}x{h} = {_mp(w * h)} exceeds the limit of {_mp(max_pixels)}; if this is a real photo, "
        f"raise the limit with --max-pixels (OutputConfig.max_pixels)"
    )


def _label(source: object, name: str | None) -> str:
    return shown(name) if name is not None else shown(source) if isinstance(source, (str, os.PathLike)) else "image"


def _refused(source: str | os.PathLike | BinaryIO, label: str) -> ImageLoadError:
    """The one-line error for a file that no allowed format opens, naming what it holds."""
    allowed = ", ".join(ALLOWED_FORMATS)
    fmt = identify_format(source)
    if fmt is None:
        if not _prefix(source, 1):
            return ImageLoadError(f"{label}: empty file (0 bytes), not an image")
        return ImageLoadError(f"{label}: not an image Pillow can read")
    if fmt in OPEN_FORMATS:
        return ImageLoadError(f"{label}: a damaged {fmt} file (its header cannot be read)")
    return ImageFormatError(f"{label}: its format is {fmt}, which multicrop does not open (it opens {allowed})")


def _value_error(label: str, exc: BaseException) -> ImageLoadError:
    """A ValueError Pillow raised while reading: a metadata bomb, or a corrupt header."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if any(word in text for word in ("Decompressed", "text chunk", "MAX_TEXT", "Too much memory")):
        return ImageMetadataError(f"{label}: a compressed metadata chunk (text, ICC profile or XMP) expands "
                                  f"beyond the limit ({text}); refused as a decompression bomb")
    return ImageLoadError(f"{label}: cannot read the image ({text})")


def open_image(source: str | os.PathLike | BinaryIO, *, name: str | None = None,
               max_pixels: int | None = None) -> Image.Image:
    """Open ``source`` lazily, trying only the formats of :data:`FORMATS`; every problem is one clear error.

    Paths must name regular files (a FIFO or device is refused before it is
    opened, so nothing blocks).  The pixel check against ``max_pixels`` is the
    caller's (one message, our limit); Pillow's own bomb check is off while
    the header is read when ``max_pixels`` is given, so that its message
    (which states twice its own limit) never reaches the user.

    Raises
    ------
    ImageLoadError
        Missing file, not a regular file, empty or damaged.
    ImageFormatError
        A format outside :data:`FORMATS` (the message names the format found).
    ImageMetadataError
        A metadata chunk that is a decompression bomb.
    """
    label = _label(source, name)
    if isinstance(source, (str, os.PathLike)):
        check_regular(source, error=ImageLoadError)
    formats = formats_for(source)  # after the regular-file check: a FIFO is never read
    try:
        with WARNINGS_LOCK, warnings.catch_warnings(record=True) as caught:  # see WARNINGS_LOCK
            warnings.simplefilter("always")
            with pillow_bomb_check_off() if max_pixels is not None else contextlib.nullcontext():
                im = Image.open(source, formats=formats)
    except FileNotFoundError:
        raise ImageLoadError(f"{label}: no such file") from None
    except IsADirectoryError:
        raise ImageLoadError(f"{label}: is a directory, not an image") from None
    except UnidentifiedImageError:
        raise _refused(source, label) from None
    except Image.DecompressionBombError as exc:
        raise ImageTooLargeError(f"{label}: {exc}") from None
    except ValueError as exc:
        raise _value_error(label, exc) from None
    except (OSError, SyntaxError, EOFError) as exc:
        raise ImageLoadError(f"{label}: cannot open ({exc})") from None
    if im.format not in ALLOWED_FORMATS:  # pragma: no cover - a plugin that reports another name
        im.close()
        raise ImageFormatError(f"{label}: a {im.format} file; multicrop opens only {', '.join(ALLOWED_FORMATS)}")
    # Pillow warns (once per bad tag) while reading a corrupt EXIF block at open; one line is said later.
    im._multicrop_warned = any(not issubclass(w.category, Image.DecompressionBombWarning) for w in caught)
    return im



@dataclass(frozen=True)
class Header:
    """What a photo's header says, read without decoding its pixels.

    Attributes
    ----------
    format : str
        Pillow format name (one of :data:`OPEN_FORMATS`).
    size : (int, int)
        ``(width, height)`` as stored (before EXIF orientation).
    mode : str
    n_bytes : int
        The file's size in bytes (-1 when unknown).
    """

    format: str
    size: tuple[int, int]
    mode: str
    n_bytes: int = -1

    @property
    def pixels(self) -> int:
        return self.size[0] * self.size[1]


def _n_bytes(source: str | os.PathLike | BinaryIO) -> int:
    try:
        if isinstance(source, (str, os.PathLike)):
            return os.stat(source).st_size
        pos = source.tell()
        try:
            return source.seek(0, os.SEEK_END)
        finally:
            source.seek(pos)
    except (OSError, ValueError, AttributeError):
        return -1

def read_header(source: str | os.PathLike | BinaryIO, *, name: str | None = None, complete: bool = True) -> Header:
    """Format, size and mode from ``source``'s header (nothing decoded), through the allow-list.

    The one header reader: :func:`load_image` and batch admission both use
    it.  A file far shorter than its declared size can be is refused here
    (``complete=False`` skips that check: only the declared size is wanted).

    Raises
    ------
    ImageLoadError, ImageFormatError, ImageMetadataError, ImageTruncatedError
        As :func:`open_image`, and a truncated file.
    """
    label = _label(source, name)
    im = open_image(source, name=name, max_pixels=0)
    try:
        n = _n_bytes(source)
        if complete:
            check_complete(im, source, label, n)
        return Header(im.format, (int(im.size[0]), int(im.size[1])), im.mode, n)
    finally:
        im.close()


def _load_error(label: str, exc: BaseException) -> ImageLoadError:
    """The error for a decode that failed: truncated, a metadata bomb after the pixels, or corrupt."""
    if isinstance(exc, ValueError):
        return _value_error(label, exc)
    text = str(exc)
    if "truncated" in text:
        return ImageTruncatedError(f"{label}: truncated or corrupt image ({text})")
    return ImageLoadError(f"{label}: truncated or corrupt image ({text})")


_BOMB_LOCK = threading.Lock()
_bomb_off_depth = 0


@contextlib.contextmanager
def pillow_bomb_check_off():
    """Switch Pillow's own decompression-bomb check off while headers are read (thread-safe).

    Pillow keeps its limit in a module global; threads that saved and restored
    it around ``Image.open`` could restore each other's ``None`` and leave the
    check off for good.  Here the first thread in saves the limit and the last
    one out restores it, under a lock.  Our own limit (``max_pixels``) is
    applied by the caller from the header size.
    """
    global _bomb_off_depth, _saved_limit
    with _BOMB_LOCK:
        if _bomb_off_depth == 0:
            _saved_limit = Image.MAX_IMAGE_PIXELS
            Image.MAX_IMAGE_PIXELS = None
        _bomb_off_depth += 1
    try:
        yield
    finally:
        with _BOMB_LOCK:
            _bomb_off_depth -= 1
            if _bomb_off_depth == 0:
                Image.MAX_IMAGE_PIXELS = _saved_limit


_saved_limit = Image.MAX_IMAGE_PIXELS

