"""What a batch runs over: a folder tree, a glob, or a CSV/Parquet manifest of paths or URIs.

Every input is opened through :mod:`fsspec`, so local files always work and
``s3://``, ``gs://``, ... work once the user installs those filesystems
(``s3fs``, ``gcsfs``).  Only the protocols of :data:`PROTOCOLS` are taken
(others, e.g. ``http://``, ``ftp://`` or ``memory://``, only when asked for
with ``protocols=``); a manifest's relative entries must stay inside the
manifest's folder (``../`` escapes only with ``allow_outside=True``); and an
entry that is not a regular file with an image extension (a FIFO,
``/dev/zero``, ``notes.txt``) is kept as a *refused* photo: it becomes one
failed row with the reason, and the rest of the batch goes on.  Listing gives each photo its size and modification
stamp for free; together with the settings they decide whether a rerun may
skip a photo (like ``rsync``'s quick check); the content hash itself is
computed by the worker that reads the bytes.
"""

from __future__ import annotations

import os
import posixpath
import stat
from dataclasses import dataclass
from pathlib import Path

from ..errors import InvalidParameterError, MissingExtraError
from ..io import SUPPORTED_SUFFIXES
from ..io.files import MANIFEST_LIMIT, check_regular, file_kind, read_bytes_bounded
from ..io.names import shown

__all__ = ["Photo", "list_photos", "MANIFEST_COLUMNS", "PROTOCOLS", "output_stems"]

#: URI protocols a batch reads without being asked: local files and the object stores.
PROTOCOLS = ("file", "local", "s3", "s3a", "gs", "gcs", "az", "abfs", "abfss")

#: Column names a CSV/Parquet input manifest may use for the photo paths, in order of preference.
MANIFEST_COLUMNS = ("path", "uri", "image")
_GLOB_CHARS = "*?["


@dataclass(frozen=True)
class Photo:
    """One photo of a batch, as listing found it.

    Attributes
    ----------
    path : str
        A local absolute path, or the full URI (``s3://bucket/key.jpg``).
    rel : str
        Its path relative to the batch's root (``/``-separated): where its
        outputs go under the destination.
    size : int
        Bytes, or -1 when the filesystem does not say.
    modified : str
        The filesystem's modification stamp as text (``""`` when unknown).
    refused : str or None
        Why this entry is not read at all (not a regular file, not an image
        name, a protocol not allowed, outside the manifest's folder); it
        becomes a failed row with this reason.
    """

    path: str
    rel: str
    size: int = -1
    modified: str = ""
    refused: str | None = None

    @property
    def is_local(self) -> bool:
        return "://" not in self.path


def _fsspec():
    try:
        import fsspec
    except ImportError:  # pragma: no cover - fsspec ships with the batch extra
        raise MissingExtraError.for_module("fsspec", extra="batch", feature="`multicrop batch`") from None
    return fsspec


#: The package the fsspec filesystem of each remote protocol needs (fsspec itself names none of them as an extra).
PROTOCOL_PACKAGES = {"s3": "s3fs", "s3a": "s3fs", "gs": "gcsfs", "gcs": "gcsfs", "az": "adlfs", "abfs": "adlfs",
                     "abfss": "adlfs", "http": "aiohttp", "https": "aiohttp"}


def _missing_filesystem(text: str, exc: ImportError, what: str) -> MissingExtraError:
    """One line naming the package a URL's protocol needs (fsspec raises a bare ImportError)."""
    protos = _protocols(text) or ["file"]
    proto = next((p for p in protos if p in PROTOCOL_PACKAGES), protos[-1])
    pkg = PROTOCOL_PACKAGES.get(proto)
    if pkg is None:
        return MissingExtraError(f"{what}: reading {proto}:// needs a package that is not installed ({exc})")
    return MissingExtraError(f"{what}: reading {proto}:// needs the optional package {pkg!r}, which is not "
                             f"installed; install it with: pip install {pkg}")


def _url_to_fs(text: str, what: str):
    """``fsspec.core.url_to_fs(text)`` with a missing filesystem package or a bad URL said in one line."""
    fsspec = _fsspec()
    try:
        return fsspec.core.url_to_fs(text)
    except ImportError as exc:
        raise _missing_filesystem(text, exc, what) from None
    except (OSError, ValueError, TypeError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise InvalidParameterError(f"{what}: cannot open that location ({first[:200]})") from None


def _stamp(info: dict) -> str:
    for key in ("mtime", "LastModified", "last_modified", "updated", "mtime_ns", "created"):
        if info.get(key) is not None:
            return str(info[key])
    return ""


def _photo(fs, path: str, root: str, info: dict | None = None) -> Photo:
    info = info if info is not None else fs.info(path)
    local = _is_local(fs)
    uri = path if local else fs.unstrip_protocol(path)
    rel = posixpath.relpath(path, root) if root else posixpath.basename(path)
    refused = None
    if local:
        try:
            st = os.stat(path)
            if not stat.S_ISREG(st.st_mode):
                refused = f"is {file_kind(st.st_mode)}, not a regular file"
        except FileNotFoundError:
            pass  # listed but missing: the worker reports it as a failed photo
        except OSError as exc:
            refused = f"cannot read it ({exc.strerror or exc})"
    elif info.get("type") not in (None, "file"):
        refused = f"is a {info.get('type')}, not a file"
    return Photo(uri, rel, int(info.get("size") or -1), _stamp(info), refused)


def _protocols(text: str) -> list[str]:
    """The protocols a URL names (``simplecache::s3://b/k`` names two); ``[]`` for a plain path."""
    if "://" not in text and "::" not in text:
        return []
    out = []
    for part in text.split("::"):
        if "://" in part:
            out.append(part.split("://", 1)[0].lower())
        elif part and "/" not in part and ":" not in part:
            out.append(part.lower())
    return out


def _protocol_refusal(text: str, protocols: tuple[str, ...]) -> str | None:
    bad = [p for p in _protocols(text) if p not in protocols]
    if not bad:
        return None
    return (f"protocol {bad[0]}:// is not read unless allowed (allowed: {', '.join(protocols)}; "
            f"allow more with --protocol {bad[0]})")


def _is_local(fs) -> bool:
    from fsspec.implementations.local import LocalFileSystem

    return isinstance(fs, LocalFileSystem)


def _is_image(path: str) -> bool:
    return posixpath.splitext(path)[1].lower() in SUPPORTED_SUFFIXES


def list_photos(source: str | os.PathLike, *, protocols: tuple[str, ...] = PROTOCOLS, allow_outside: bool = False,
                exclude: str | os.PathLike | None = None) -> list[Photo]:
    """The photos ``source`` names, sorted by path.

    Parameters
    ----------
    source : str or path
        A directory (every image below it, recursively), a glob
        (``photos/**/*.jpg``, ``s3://bucket/2024/*.jpg``), a ``.csv`` or
        ``.parquet`` manifest with a column ``path``, ``uri`` or ``image``
        (relative entries are taken relative to the manifest's folder), or
        one image file.
    protocols : tuple of str
        URI protocols that may be read (default :data:`PROTOCOLS`).
    allow_outside : bool
        Let a manifest's relative entries leave the manifest's folder (``../``).
    exclude : path, optional
        A local folder whose files are never listed (the batch's destination,
        when it lies inside the source: crops are never cropped again).

    Raises
    ------
    InvalidParameterError
        The source does not exist, a manifest lacks the column, or nothing
        was found.
    InputFileError
        A local manifest that is not a regular file or is too large.
    """
    text = os.fspath(source)
    why = _protocol_refusal(text, protocols)
    if why:
        raise InvalidParameterError(f"SRC {text!r}: {why}")
    fs, path = _url_to_fs(text, f"SRC {text!r}")
    suffix = posixpath.splitext(path)[1].lower()  # as named: a link to a manifest is still a manifest
    if _is_local(fs):
        path = Path(path).resolve().as_posix() if not any(c in path for c in _GLOB_CHARS) else path
    if any(c in path for c in _GLOB_CHARS):
        found = fs.glob(path, detail=True)
        root = path.split("*")[0].split("?")[0].split("[")[0]
        root = root if root.endswith("/") else posixpath.dirname(root)
        photos = [_photo(fs, p, root.rstrip("/"), info) for p, info in found.items()
                  if info.get("type") != "directory" and _is_image(p)]
    elif fs.isdir(path):
        found = fs.find(path, detail=True)
        photos = [_photo(fs, p, path.rstrip("/"), info) for p, info in found.items() if _is_image(p)]
    elif suffix in (".csv", ".parquet"):
        photos = _from_manifest(fs, path, text, protocols=protocols, allow_outside=allow_outside)
    elif fs.exists(path):
        photos = [_photo(fs, path, posixpath.dirname(path))]
    else:
        raise InvalidParameterError(f"SRC {text!r}: no such file, folder or glob match")
    if exclude is not None and _is_local(fs):
        skip = Path(exclude).resolve().as_posix().rstrip("/") + "/"
        photos = [p for p in photos if not (p.is_local and (p.path + "/").startswith(skip))]
    if not photos:
        raise InvalidParameterError(
            f"SRC {text!r}: no photos found (looked for {', '.join(sorted(SUPPORTED_SUFFIXES))})")
    return sorted(photos, key=lambda p: p.path)


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


def _not_image(path: str) -> str:
    return (f"not an image name ({posixpath.splitext(path)[1] or 'no extension'}; "
            f"multicrop reads {', '.join(sorted(SUPPORTED_SUFFIXES))})")


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


def output_stems(photos: list[Photo]) -> dict[str, str]:
    """Per photo path, the output path (relative folder and stem) its files are named after.

    ``a/b/x.jpg`` writes ``a/b/x_1.jpg``, ``a/b/x.json``...; when two photos
    of one folder share a stem (``x.jpg`` and ``x.png``), each keeps its
    extension in the stem (``x-jpg``, ``x-png``) so neither overwrites the
    other.  Stems are compared case-insensitively, as some filesystems do.

    Examples
    --------
    >>> ps = [Photo("/r/a/x.jpg", "a/x.jpg"), Photo("/r/a/X.png", "a/X.png"), Photo("/r/y.jpg", "y.jpg")]
    >>> output_stems(ps)
    {'/r/a/x.jpg': 'a/x-jpg', '/r/a/X.png': 'a/X-png', '/r/y.jpg': 'y'}
    """
    counts: dict[str, int] = {}
    for p in photos:
        key = posixpath.splitext(p.rel)[0].casefold()
        counts[key] = counts.get(key, 0) + 1
    out = {}
    for p in photos:
        base, ext = posixpath.splitext(p.rel)
        out[p.path] = f"{base}-{ext.lstrip('.').lower()}" if counts[base.casefold()] > 1 else base
    return out
