"""Atomic writes: a file appears complete under its final name, or not at all."""

from __future__ import annotations

import contextlib
import os
import re
import secrets
from collections.abc import Iterator
from pathlib import Path

from PIL import Image

from ..errors import InvalidParameterError
from .modes import GREY_MODES, to_output_mode

__all__ = ["atomic_path", "atomic_write_bytes", "atomic_write_text", "save_image", "format_suffix", "FORMAT_BY_SUFFIX",
           "DEFAULT_QUALITY", "temp_name", "parse_temp_name", "TEMP_SUFFIX", "nearest_existing"]

#: JPEG and WebP quality used when the source's own quality cannot be kept.
DEFAULT_QUALITY = 92

FORMAT_BY_SUFFIX = {
    ".jpg": "JPEG",
    ".jpeg": "JPEG",
    ".png": "PNG",
    ".webp": "WEBP",
    ".tif": "TIFF",
    ".tiff": "TIFF",
}


def format_suffix(fmt: str) -> str:
    """The file extension for an image format name such as ``"png"`` or ``".jpg"``.

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



#: Every temporary file multicrop writes ends in this (``.<name>.<pid>-<random>.part``).
TEMP_SUFFIX = ".part"
#: Marks a temporary name whose final name was shortened to fit the filesystem's limit.
_CUT = "~"
_TEMP = re.compile(r"^\.(?P<name>.+?)(?P<cut>~)?\.(?P<pid>\d+)-[0-9a-f]{8}\.part$", re.S)


def _name_max(folder: Path) -> int:
    try:
        return int(os.pathconf(folder, "PC_NAME_MAX"))
    except (OSError, ValueError, AttributeError):  # pragma: no cover - no pathconf
        return 255


def temp_name(name: str, *, limit: int = 255) -> str:
    """A unique temporary name beside ``name``: ``.<name>.<pid>-<random>.part``, within ``limit`` bytes.

    The pid says which process writes it, so another run never removes it
    while that process lives.  A final name too long to carry the decoration
    (a legal 240-byte name) is shortened and marked with ``~``.

    Examples
    --------
    >>> import os
    >>> t = temp_name("a.jpg"); parse_temp_name(t) == ("a.jpg", False, os.getpid())
    True
    >>> len(temp_name("x" * 250).encode()) <= 255
    True
    """
    tag = f".{os.getpid()}-{secrets.token_hex(4)}{TEMP_SUFFIX}"
    raw = os.fsencode(name)
    room = limit - 1 - len(tag)
    if len(raw) <= room:
        return f".{name}{tag}"
    cut = raw[:room - len(_CUT)]
    return f".{os.fsdecode(cut)}{_CUT}{tag}"


def parse_temp_name(entry: str) -> tuple[str, bool, int] | None:
    """``(name or its shortened start, shortened, pid)`` of a :func:`temp_name`, or None for any other name."""
    m = _TEMP.match(entry)
    if not m:
        return None
    return m.group("name"), m.group("cut") is not None, int(m.group("pid"))


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it over ``path`` on success.

    On any exception the temporary file is removed and ``path`` is untouched.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> with atomic_path(d / "a.txt") as tmp:
    ...     _ = tmp.write_text("hello")
    >>> (d / "a.txt").read_text(), sorted(p.name for p in d.iterdir())
    ('hello', ['a.txt'])
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    limit = _name_max(path.parent)
    for _ in range(100):
        tmp_path = path.parent / temp_name(path.name, limit=limit)
        try:
            fd = os.open(tmp_path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)  # the umask applies
        except FileExistsError:  # pragma: no cover - 32 random bits collided
            continue
        os.close(fd)
        break
    else:  # pragma: no cover
        raise FileExistsError(f"{path}: no free temporary name beside it")
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp_path.unlink()
        raise


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def save_image(
    image: Image.Image,
    path: str | os.PathLike,
    *,
    quality: int = DEFAULT_QUALITY,
    icc_profile: bytes | None = None,
    exif: bytes | None = None,
    qtables: dict | None = None,
    subsampling: int | None = None,
    format: str | None = None,  # noqa: A002 - Pillow's name for it
) -> Path:
    """Save ``image`` atomically, the format chosen by the file extension.

    JPEG and WebP get ``quality`` and 4:4:4 chroma (JPEG); for JPEG,
    ``qtables`` and ``subsampling`` (from the source, see
    :class:`~multicrop.io.LoadedImage`) take precedence so a crop keeps the
    source's quality.  The ICC profile and EXIF block are embedded where the
    format allows.  The image keeps its mode where the format can hold it and
    is converted as :func:`~multicrop.io.to_output_mode` says otherwise
    (16-bit greyscale stays 16-bit in PNG and TIFF; alpha is composited on
    white for JPEG only).

    ``format`` ("JPEG", "PNG", ...) overrides the extension, e.g. when
    ``path`` is a temporary name.

    Raises
    ------
    InvalidParameterError
        For an extension (or ``format``) with no known image format.
    """
    path = Path(path)
    fmt = format.upper() if format else FORMAT_BY_SUFFIX.get(path.suffix.lower())
    if fmt == "JPG":
        fmt = "JPEG"
    if fmt not in set(FORMAT_BY_SUFFIX.values()):
        raise InvalidParameterError(
            f"output extension {path.suffix!r} of {path} is not supported; "
            f"use one of {', '.join(sorted(FORMAT_BY_SUFFIX))}"
        )
    params: dict = {}
    converted = to_output_mode(image, fmt)
    if image.mode in GREY_MODES and converted.mode not in GREY_MODES:
        icc_profile = None  # a greyscale profile does not describe RGB pixels (WebP)
    image = converted
    if fmt == "JPEG":
        if qtables:
            params.update(qtables=qtables, subsampling=0 if subsampling is None else subsampling)
        else:
            params.update(quality=quality, subsampling=0 if subsampling is None else subsampling)
        params["optimize"] = False
    elif fmt == "WEBP":
        params.update(quality=quality)
    elif fmt == "PNG":
        params.update(compress_level=6)
    if icc_profile:
        params["icc_profile"] = icc_profile
    if exif and fmt in ("JPEG", "WEBP", "PNG", "TIFF"):
        params["exif"] = _reset_orientation(exif)
    with atomic_path(path) as tmp:
        image.save(tmp, format=fmt, **params)
    return path


def _reset_orientation(exif: bytes) -> bytes:
    """EXIF with Orientation=1: the pixels are already transposed."""
    ex = Image.Exif()
    try:
        ex.load(exif)
    except Exception:  # noqa: BLE001 - malformed EXIF is dropped, not fatal
        return b""
    if 0x0112 in ex:
        ex[0x0112] = 1
    return ex.tobytes()


def nearest_existing(path: str | os.PathLike) -> Path:
    """``path`` or its nearest ancestor that exists: where writing ``path`` (its folders made first) would start.

    Callers check it is a writable folder before any long work.

    >>> nearest_existing("/no/such/folder/out.json")
    PosixPath('/')
    """
    probe = Path(path)
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return probe
