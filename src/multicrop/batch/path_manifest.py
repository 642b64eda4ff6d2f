"""A batch's input manifest: a CSV or Parquet table of photo paths or URIs.

The manifest must be a regular file of bounded size; it is read from its
bytes in memory on one thread.  Its entries are decoded once (an entry that
is not UTF-8 is refused, its neighbours kept), de-duplicated, and checked:
relative entries must stay inside the manifest's folder (``../`` escapes only
with ``allow_outside=True``), URIs must name an allowed protocol, and names
must be image names.  A refused entry becomes a refused :class:`Photo`.
:mod:`multicrop.batch.sources` lists a manifest through :func:`_from_manifest`.
"""

from __future__ import annotations

import posixpath
from pathlib import Path

from ..errors import InvalidParameterError, MissingExtraError
from ..io.files import MANIFEST_LIMIT, check_regular, read_bytes_bounded
from ..io.names import shown
from .filesystems import PROTOCOLS, _is_local, _protocol_refusal, _url_to_fs
from .photo import Photo, _is_image, _not_image, _photo

__all__ = ["MANIFEST_COLUMNS"]

#: Column names a CSV/Parquet input manifest may use for the photo paths, in order of preference.
MANIFEST_COLUMNS = ("path", "uri", "image")


def _check_manifest_file(fs, path: str, text: str) -> None:
    """A manifest must be a regular file of bounded size (a FIFO or /dev/zero never ends)."""
    if _is_local(fs):
        size = check_regular(path, what=f"SRC {shown(text)!r}: the manifest", error=InvalidParameterError).st_size
    else:
        size = int(fs.info(path).get("size") or 0)
    if size > MANIFEST_LIMIT:
        raise InvalidParameterError(
            f"SRC {text!r}: the manifest has {size:,} bytes, more than the {MANIFEST_LIMIT:,} bytes read")


def _entry(fs, base: str, value: str, *, protocols: tuple[str, ...], allow_outside: bool):
    """``(filesystem, path, refusal)`` of one manifest entry."""
    if "\0" in value:
        return None, value, "the manifest entry holds a NUL character, which no file name can"
    why = _protocol_refusal(value, protocols)
    if why:
        return None, value, why
    if "://" in value or "::" in value:
        try:
            efs, epath = _url_to_fs(value, "the manifest entry")
        except (MissingExtraError, InvalidParameterError) as exc:
            return None, value, str(exc).removeprefix("the manifest entry: ")
        return efs, epath, None if _is_image(epath) else _not_image(epath)
    relative = not posixpath.isabs(value)
    epath = posixpath.join(base, value) if relative else value
    if _is_local(fs):
        epath = Path(epath).resolve().as_posix()
        inside = (epath + "/").startswith(Path(base).resolve().as_posix().rstrip("/") + "/")
    else:
        epath = posixpath.normpath(epath)
        inside = (epath + "/").startswith(base.rstrip("/") + "/")
    if relative and not inside and not allow_outside:
        return fs, epath, (f"the manifest entry {value!r} leaves the manifest's folder; "
                           "allow it with --allow-outside")
    return fs, epath, None if _is_image(epath) else _not_image(epath)

def _read_manifest_table(fs, path: str, text: str):
    """The manifest's table, read from its bytes in memory on one thread.

    A local manifest is read through the bounded reader (regular file, at most
    :data:`~multicrop.io.files.MANIFEST_LIMIT` bytes); a Parquet file whose
    footer says it holds no row is refused from its footer alone, before any
    column is decoded.
    """
    import pyarrow as pa
    import pyarrow.csv
    import pyarrow.parquet

    try:
        if _is_local(fs):
            data = read_bytes_bounded(path, limit=MANIFEST_LIMIT, what=f"SRC {shown(text)!r}: the manifest",
                                      error=InvalidParameterError)
        else:
            with fs.open(path, "rb") as fh:
                data = fh.read(MANIFEST_LIMIT + 1)
        buf = pa.BufferReader(data)
        if path.lower().endswith(".csv"):
            return pyarrow.csv.read_csv(buf, read_options=pyarrow.csv.ReadOptions(use_threads=False))
        meta = pyarrow.parquet.read_metadata(buf)
        if meta.num_rows == 0:
            raise InvalidParameterError(f"SRC {shown(text)!r}: the manifest has no rows (no photo to do)")
        return pyarrow.parquet.read_table(pa.BufferReader(data), use_threads=False, pre_buffer=False)
    except (OSError, ValueError, pa.ArrowException) as exc:
        if isinstance(exc, InvalidParameterError):
            raise
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise InvalidParameterError(f"SRC {shown(text)!r}: cannot read the manifest ({first[:200]})") from None


def _from_manifest(fs, path: str, text: str, *, protocols: tuple[str, ...] = PROTOCOLS,
                   allow_outside: bool = False) -> list[Photo]:
    _check_manifest_file(fs, path, text)
    table = _read_manifest_table(fs, path, text)
    column = next((c for c in MANIFEST_COLUMNS if c in table.column_names), None)
    if column is None:
        raise InvalidParameterError(
            f"SRC {text!r}: a manifest needs a column {' or '.join(MANIFEST_COLUMNS)}, has {table.column_names}")
    base = posixpath.dirname(path)
    entries = _unique([_entry(fs, base, value, protocols=protocols, allow_outside=allow_outside) if why is None
                       else (None, value, why) for value, why in _decoded(table.column(column).to_pylist())])
    root = _common_root([p for efs, p, why in entries if why is None and efs is not None])
    photos = []
    for efs, epath, why in entries:
        if why is not None:
            photos.append(Photo(epath if efs is None or _is_local(efs) else efs.unstrip_protocol(epath),
                                posixpath.basename(epath) or epath, -1, "", why))
            continue
        try:
            info = efs.info(epath)
        except (FileNotFoundError, OSError):
            info = {"size": -1}  # listed but missing: the worker reports it as a failed photo
        photos.append(_photo(efs, epath, root, info))
    return photos


def _decoded(values: list) -> list[tuple[str, str | None]]:
    """``(text, refusal)`` of each manifest cell, decoded once: a CSV cell that is not UTF-8 reads as bytes.

    One undecodable entry is refused (its bytes shown escaped); its neighbours
    are decoded as the text they are.  Missing cells are skipped.

    Examples
    --------
    >>> _decoded([b"a.jpg", b"\\xff.jpg", None, "c.jpg"])
    [('a.jpg', None), ('\\\\xff.jpg', 'the manifest entry is not UTF-8 text (byte 0)'), ('c.jpg', None)]
    """
    out = []
    for v in values:
        if v is None:
            continue
        if isinstance(v, (bytes, bytearray)):
            try:
                out.append((bytes(v).decode("utf-8"), None))
            except UnicodeDecodeError as exc:
                out.append((bytes(v).decode("utf-8", "backslashreplace"),
                            f"the manifest entry is not UTF-8 text (byte {exc.start})"))
            continue
        out.append((str(v), None))
    return out


def _unique(entries: list[tuple]) -> list[tuple]:
    """Entries de-duplicated by what they name once normalised (``p.jpg`` and ``./p.jpg`` are one photo)."""
    seen: set = set()
    out = []
    for efs, epath, why in entries:
        key = (type(efs).__name__, getattr(efs, "protocol", None), epath) if efs is not None else (None, epath)
        if key not in seen:
            seen.add(key)
            out.append((efs, epath, why))
    return out


def _common_root(paths: list[str]) -> str:
    dirs = [posixpath.dirname(p) for p in paths]
    if not dirs:
        return ""
    try:
        return posixpath.commonpath(dirs)
    except ValueError:  # mixed absolute and relative: keep the file names only
        return ""
