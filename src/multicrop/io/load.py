"""Load photos: EXIF orientation, colour conversion, reduced decode, bomb guard."""

from __future__ import annotations

import contextlib
import os
import stat
import threading
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import numpy as np
from PIL import Image, UnidentifiedImageError

from ..errors import (ImageFormatError, ImageLoadError, ImageMetadataError, ImageTooLargeError, ImageTruncatedError,
                      InvalidParameterError)
from .complete import check_complete_jpeg
from .files import file_kind
from .metadata import EXIF_UNREADABLE, WARNINGS_LOCK
from .modes import SIXTEEN_BIT_MODES, to_rgb

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

#: Largest image accepted by default, in pixels.  Real photos reach 200 MP;
#: anything far beyond is more likely a decompression bomb than a photo.
DEFAULT_MAX_PIXELS = 300_000_000

# Pillow refuses images above 2 x MAX_IMAGE_PIXELS before we can give a clear
# message; raise its limit to ours and do the check ourselves.
if Image.MAX_IMAGE_PIXELS is not None and Image.MAX_IMAGE_PIXELS < DEFAULT_MAX_PIXELS:
    Image.MAX_IMAGE_PIXELS = DEFAULT_MAX_PIXELS

try:  # optional HEIC/HEIF support
    from pillow_heif import register_heif_opener

    register_heif_opener()
    _HEIF = True
except ImportError:  # pragma: no cover - depends on the environment
    _HEIF = False


@dataclass(frozen=True)
class ImageFormat:
    """One image format multicrop opens.

    Attributes
    ----------
    name : str
        Pillow's format name (``im.format``).
    suffixes : tuple of str
        File extensions that select it when folders are listed.
    description : str
    opened_by : str
        The Pillow plugin that opens it (``Image.open(..., formats=[...])``):
        its own name, except MPO, which Pillow's JPEG plugin recognises.
    """

    name: str
    suffixes: tuple[str, ...]
    description: str
    opened_by: str = ""

    def __post_init__(self) -> None:
        if not self.opened_by:
            object.__setattr__(self, "opened_by", self.name)


#: The only formats multicrop ever opens, everywhere (crop, batch, judges, the web upload):
#: Pillow's other plugins (EPS, which runs Ghostscript; PCX, TGA, ICO, ...) are never tried,
#: whatever a file's extension says.  The accepted suffixes follow from this table.
FORMATS: tuple[ImageFormat, ...] = (
    ImageFormat("JPEG", (".jpg", ".jpeg"), "JPEG (baseline and progressive)"),
    ImageFormat("MPO", (), "multi-picture JPEG, as many cameras write (the first picture is read)", "JPEG"),
    ImageFormat("PNG", (".png",), "PNG, including 16-bit and palette images"),
    ImageFormat("WEBP", (".webp",), "WebP, lossy and lossless"),
    ImageFormat("TIFF", (".tif", ".tiff"), "TIFF (first page), including 16-bit and float greyscale"),
    ImageFormat("BMP", (".bmp",), "Windows bitmap"),
    ImageFormat("GIF", (".gif",), "GIF (the first frame)"),
) + ((ImageFormat("HEIF", (".heic", ".heif"), "HEIC/HEIF (with the heif extra, pillow-heif)"),) if _HEIF else ())

#: Pillow format names that :data:`FORMATS` allows (``im.format``).
ALLOWED_FORMATS: tuple[str, ...] = tuple(f.name for f in FORMATS)
#: The Pillow plugins that open them, in the order they are tried: the ``formats=`` of every ``Image.open``.
OPEN_FORMATS: tuple[str, ...] = tuple(dict.fromkeys(f.opened_by for f in FORMATS))

SUPPORTED_SUFFIXES = frozenset(s for f in FORMATS for s in f.suffixes)

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
        im = _open(self.path, max_pixels=self.size[0] * self.size[1])
        try:
            im.load()  # a single-frame file is closed by Pillow once loaded
        except (OSError, SyntaxError, ValueError, EOFError) as exc:
            im.close()
            raise _load_error(str(self.path), exc) from None
        # No ``with``: closing would free the pixels handed back unchanged.
        im = _transpose(im)
        return to_rgb(im, keep_alpha=keep_alpha) if rgb else im


def _orientation(im: Image.Image) -> int:
    """The EXIF orientation (1 when absent or unreadable); Pillow's warnings on bad EXIF are silenced."""
    with WARNINGS_LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            value = im.getexif().get(0x0112, 1)
        except Exception:  # noqa: BLE001 - unreadable EXIF: no orientation
            return 1
    return value if isinstance(value, int) and 1 <= value <= 8 else 1


def _transpose(im: Image.Image) -> Image.Image:
    """Apply the EXIF orientation; no copy when there is nothing to do (200 MP = 600 MB)."""
    orientation = _orientation(im)
    if orientation == 1:
        return im
    method = {2: Image.Transpose.FLIP_LEFT_RIGHT, 3: Image.Transpose.ROTATE_180, 4: Image.Transpose.FLIP_TOP_BOTTOM,
              5: Image.Transpose.TRANSPOSE, 6: Image.Transpose.ROTATE_270, 7: Image.Transpose.TRANSVERSE,
              8: Image.Transpose.ROTATE_90}[orientation]
    return im.transpose(method)


def _mp(pixels: int) -> str:
    return f"{pixels / 1e6:.1f} MP" if pixels >= 1_000_000 else f"{pixels:,} pixels"


def _too_large(name: object, w: int, h: int, max_pixels: int) -> ImageTooLargeError:
    return ImageTooLargeError(
        f"{name}: {w}x{h} = {_mp(w * h)} exceeds the limit of {_mp(max_pixels)}; if this is a real photo, "
        f"raise the limit with --max-pixels (OutputConfig.max_pixels)"
    )


def _label(source: object, name: str | None) -> str:
    return name if name is not None else os.fspath(source) if isinstance(source, (str, os.PathLike)) else "image"


def _prefix(source: str | os.PathLike | BinaryIO, n: int = 4096) -> bytes:
    """The first ``n`` bytes of ``source`` (a file's position is restored)."""
    try:
        if isinstance(source, (str, os.PathLike)):
            with open(source, "rb") as fh:
                return fh.read(n)
        pos = source.tell()
        try:
            return source.read(n)
        finally:
            source.seek(pos)
    except (OSError, ValueError):
        return b""


def identify_format(source: str | os.PathLike | BinaryIO) -> str | None:
    """The Pillow format ``source``'s bytes look like, from the plugins' signature checks alone.

    Nothing is decoded and no plugin opens the file (so no external program
    such as Ghostscript can run): only each plugin's ``accept`` test of the
    first bytes.  None when no plugin recognises them.
    """
    prefix = _prefix(source)
    if not prefix:
        return None
    Image.init()
    names = list(OPEN_FORMATS) + [f for f in Image.ID if f not in OPEN_FORMATS]
    for fmt in names:
        if fmt == "CUR" and _looks_like_targa(prefix):  # the two share their first bytes
            return "TGA"
        accept = Image.OPEN.get(fmt, (None, None))[1]
        if accept is None:
            continue
        try:
            ok = accept(prefix)
        except Exception:  # noqa: BLE001 - a plugin's check that fails on odd bytes: not that format
            ok = False
        if ok is True or (ok and not isinstance(ok, str)):
            return fmt
    if _looks_like_targa(prefix):
        return "TGA"
    if prefix.startswith(b"Image type:"):
        return "IM"
    return None


def _looks_like_targa(prefix: bytes) -> bool:
    """Targa has no signature: a plausible header of plain numbers (colour map, image type, depth, size)."""
    return (len(prefix) >= 18 and prefix[1] in (0, 1) and prefix[2] in (1, 2, 3, 9, 10, 11)
            and prefix[16] in (8, 15, 16, 24, 32) and int.from_bytes(prefix[12:14], "little") > 0
            and int.from_bytes(prefix[14:16], "little") > 0)


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
        try:
            st = os.stat(source)
        except FileNotFoundError:
            raise ImageLoadError(f"{label}: no such file") from None
        except OSError as exc:
            raise ImageLoadError(f"{label}: cannot open ({exc.strerror or exc})") from None
        if stat.S_ISDIR(st.st_mode):
            raise ImageLoadError(f"{label}: is a directory, not an image")
        if not stat.S_ISREG(st.st_mode):
            raise ImageLoadError(f"{label}: is {file_kind(st.st_mode)}, not a regular file")
    try:
        with WARNINGS_LOCK, warnings.catch_warnings(record=True) as caught:  # see WARNINGS_LOCK
            warnings.simplefilter("always")
            with pillow_bomb_check_off() if max_pixels is not None else contextlib.nullcontext():
                im = Image.open(source, formats=OPEN_FORMATS)
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


def _open(path: Path, *, max_pixels: int | None = None) -> Image.Image:
    return open_image(path, max_pixels=max_pixels)


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


_JPEG_HUFFMAN_SOF = (0xC0, 0xC1, 0xC2)  # baseline, extended and progressive Huffman coding


def _jpeg_layout(source: str | os.PathLike | BinaryIO) -> tuple[int, list[tuple[int, int]], int] | None:
    """(SOF marker, [(h, v) sampling per component], offset of the first scan's data) of a JPEG, or None."""
    data = _prefix(source, 1 << 20)  # markers before the first scan; APP segments are at most 64 KB each
    if not data.startswith(b"\xff\xd8"):
        return None
    pos, sof, comps = 2, None, []
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            return None
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):
            pos += 2
            continue
        length = int.from_bytes(data[pos + 2:pos + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            seg = data[pos + 4:pos + 2 + length]
            if len(seg) < 6:
                return None
            n = seg[5]
            comps = [(seg[6 + 3 * i + 1] >> 4, seg[6 + 3 * i + 1] & 15) for i in range(n) if 6 + 3 * i + 2 < len(seg)]
            sof = marker
        if marker == 0xDA:
            return (sof, comps, pos + 2 + length) if sof is not None else None
        pos += 2 + length
    return None


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def min_data_bytes(im: Image.Image, source: str | os.PathLike | BinaryIO) -> int:
    """Fewest bytes a complete file of ``im``'s format, size and mode can have (0 when no bound is known).

    Sound lower bounds, so no complete file is ever refused: a Huffman-coded
    JPEG spends at least one bit on the DC coefficient of every 8x8 block of
    every component; Deflate (PNG) expands at most 1032 times (half of that is used), and a PNG row
    holds at least a filter byte and one bit per pixel; an uncompressed BMP
    holds its rows.  A file shorter than this is truncated, or its header lies
    about its size.
    """
    w, h = im.size
    if im.format in ("JPEG", "MPO"):
        layout = _jpeg_layout(source)
        if layout is None or layout[0] not in _JPEG_HUFFMAN_SOF or not layout[1]:
            return 0
        _, comps, scan = layout
        hmax, vmax = max(c[0] for c in comps) or 1, max(c[1] for c in comps) or 1
        blocks = sum(_ceil(_ceil(w * ch, hmax), 8) * _ceil(_ceil(h * cv, vmax), 8) for ch, cv in comps)
        return scan + blocks // 8
    if im.format == "PNG":
        return h * (1 + _ceil(w, 8)) // 2064  # half Deflate's 1032:1 ceiling: a margin for chunk overheads
    if im.format == "BMP" and im.tile and im.tile[0][0] == "raw":
        bits = {"1": 1, "L": 8, "P": 1, "RGB": 24, "RGBA": 32}.get(im.mode, 1)
        return int(im.tile[0][2]) + h * _ceil(w * bits, 8)
    return 0


def _kb(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1_000_000 else f"{n / 1e3:.1f} KB" if n >= 1000 else f"{n} bytes"


_PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))


def _png_rows_bytes(w: int, h: int, depth: int, colour: int, interlace: int) -> int:
    """Bytes the PNG's image data must inflate to: every row of every pass, with its filter byte."""
    bits = depth * _PNG_CHANNELS.get(colour, 1)
    if not interlace:
        return h * (1 + _ceil(w * bits, 8))
    total = 0
    for x0, y0, dx, dy in _ADAM7:
        pw, ph = _ceil(max(0, w - x0), dx), _ceil(max(0, h - y0), dy)
        if pw and ph:
            total += ph * (1 + _ceil(pw * bits, 8))
    return total


def png_data_short(source: str | os.PathLike | BinaryIO) -> tuple[int, int] | None:
    """``(bytes inflated, bytes needed)`` when a PNG's image data ends before its last row, else None.

    Pillow decodes a PNG whose compressed stream ends early without a word
    (the missing rows stay black), so the IDAT stream is inflated here,
    1 MB at a time and discarded, until it holds every row the header
    declares or ends.
    """
    try:
        fh = open(source, "rb") if isinstance(source, (str, os.PathLike)) else source
    except OSError:
        return None
    pos = None if isinstance(source, (str, os.PathLike)) else fh.tell()
    try:
        fh.seek(0)
        if fh.read(8) != b"\x89PNG\r\n\x1a\n":
            return None
        need = got = 0
        inflater = zlib.decompressobj()
        while True:
            head = fh.read(8)
            if len(head) < 8:
                break
            length, kind = int.from_bytes(head[:4], "big"), head[4:]
            if kind == b"IHDR":
                ihdr = fh.read(length)
                w, h = int.from_bytes(ihdr[0:4], "big"), int.from_bytes(ihdr[4:8], "big")
                need = _png_rows_bytes(w, h, ihdr[8], ihdr[9], ihdr[12])
                fh.seek(4, os.SEEK_CUR)
                continue
            if kind == b"IDAT":
                left = length
                while left > 0 and got < need and not inflater.eof:
                    data = fh.read(min(left, 1 << 20))
                    if not data:
                        break
                    left -= len(data)
                    while data and got < need and not inflater.eof:
                        got += len(inflater.decompress(data, 1 << 20))
                        data = inflater.unconsumed_tail
                if got >= need:
                    return None
                fh.seek(left + 4, os.SEEK_CUR)
                continue
            if kind == b"IEND":
                break
            fh.seek(length + 4, os.SEEK_CUR)
        return (got, need) if need and got < need else None
    except (OSError, zlib.error, ValueError):
        return None  # a damaged stream: Pillow's own decode reports it
    finally:
        if pos is None:
            fh.close()
        else:
            fh.seek(pos)


def _check_complete(im: Image.Image, source: str | os.PathLike | BinaryIO, label: str, n_bytes: int) -> None:
    w, h = im.size
    if n_bytes >= 0:
        need = min_data_bytes(im, source)
        if n_bytes < need:
            raise ImageTruncatedError(
                f"{label}: truncated or corrupt image: its {im.format} header says {w}x{h}, which needs at least "
                f"{_kb(need)}, but the file has {_kb(n_bytes)}")
    if im.format == "PNG":
        short = png_data_short(source)
        if short is not None:
            raise ImageTruncatedError(
                f"{label}: truncated or corrupt image: its PNG data ends after {_kb(short[0])} of the "
                f"{_kb(short[1])} that {w}x{h} needs")


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
            _check_complete(im, source, label, n)
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
    im = _open(path, max_pixels=max_pixels)
    try:
        w, h = im.size
        if w * h > max_pixels:
            raise _too_large(path, w, h, max_pixels)
        _check_complete(im, path, str(path), _n_bytes(path))
        if im.format in ("JPEG", "MPO"):  # cut with EOI, missing scans, junk (io.complete)
            check_complete_jpeg(path, str(path))
        fmt = im.format
        icc = im.info.get("icc_profile")
        exif = im.info.get("exif")
        has_alpha = im.mode in ("RGBA", "LA", "PA") or (im.mode == "P" and "transparency" in im.info)
        qtables = subsampling = block = None
        mode = im.mode
        if fmt in ("JPEG", "MPO"):
            layers = getattr(im, "layer", None) or []
            if len(layers) == 1:
                block = (8, 8)
            elif layers:
                block = (8 * max(lay[1] for lay in layers), 8 * max(lay[2] for lay in layers))
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


def _exif_unreadable(im: Image.Image) -> bool:
    """True when Pillow cannot parse the image's EXIF block without complaint."""
    from .metadata import read_exif

    if getattr(im, "_multicrop_warned", False):
        return True
    raw = im.info.get("exif")
    if raw:
        return read_exif(raw if isinstance(raw, bytes) else bytes(raw))[1]
    with WARNINGS_LOCK, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            im.getexif()
        except Exception:  # noqa: BLE001
            return True
    return bool(caught)


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

