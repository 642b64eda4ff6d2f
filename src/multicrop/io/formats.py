"""The image formats multicrop opens, and what a file's first bytes say it is.

:data:`FORMATS` is the one table: the accepted suffixes (:data:`SUPPORTED_SUFFIXES`),
the Pillow plugins every open tries (:data:`OPEN_FORMATS`) and the refusal messages
all follow from it.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from PIL import Image

__all__ = ["DEFAULT_MAX_PIXELS", "FORMATS", "ImageFormat", "ALLOWED_FORMATS", "OPEN_FORMATS",
           "SUPPORTED_SUFFIXES", "STEM_SUFFIXES", "identify_format", "is_photo", "register_heif", "formats_for"]

#: Largest image accepted by default, in pixels.  Real photos reach 200 MP;
#: anything far beyond is more likely a decompression bomb than a photo.
DEFAULT_MAX_PIXELS = 300_000_000

# Optional HEIC/HEIF support: known from the package's presence; pillow-heif itself is
# imported (and its opener registered) on the first open, not at import.
_HEIF = importlib.util.find_spec("pillow_heif") is not None
_heif_registered = False


def register_heif(prefix: bytes | None = None) -> None:
    """Register pillow-heif's opener once, when it is installed and the file may be HEIF.

    Called before every open with the file's first bytes (``prefix``): only
    an ISO base media file (``ftyp`` at byte 4, as HEIC/HEIF are), or bytes
    that could not be read, need pillow-heif, so a JPEG or PNG never imports
    it (about 10-20 ms of start-up).  Without ``prefix``: register now.
    """
    global _heif_registered
    if _HEIF and not _heif_registered and (prefix is None or len(prefix) < 12 or prefix[4:8] == b"ftyp"):
        from pillow_heif import register_heif_opener

        register_heif_opener()
        _heif_registered = True


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
_OPEN_WITHOUT_HEIF = tuple(f for f in OPEN_FORMATS if f != "HEIF")  # before pillow-heif is registered

SUPPORTED_SUFFIXES = frozenset(s for f in FORMATS for s in f.suffixes)

#: The suffixes, in table order and then upper-cased, that a dataset tries when it looks a photo up
#: by its stem (``name.jpg``, ``name.png``, ... ``name.JPG``).
STEM_SUFFIXES: tuple[str, ...] = tuple(dict.fromkeys(
    [s for f in FORMATS for s in f.suffixes] + [s.upper() for f in FORMATS for s in f.suffixes]))


def is_photo(path: str | os.PathLike) -> bool:
    """True when ``path``'s suffix is one of :data:`SUPPORTED_SUFFIXES` (any case) and it is no dot-file."""
    p = Path(path)
    return not p.name.startswith(".") and p.suffix.lower() in SUPPORTED_SUFFIXES


def formats_for(source: str | os.PathLike | BinaryIO) -> tuple[str, ...]:
    """The Pillow plugins an open of ``source`` tries: :data:`OPEN_FORMATS`, HEIF only once registered.

    Registers pillow-heif first (:func:`register_heif`) when ``source``'s
    first bytes may be HEIF; they are read only while it is not registered.
    """
    if _HEIF and not _heif_registered:
        register_heif(_prefix(source, 12))
    return OPEN_FORMATS if _heif_registered or not _HEIF else _OPEN_WITHOUT_HEIF


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
    register_heif(prefix)
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
