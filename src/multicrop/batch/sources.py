"""What a batch runs over: a folder tree, a glob, or a CSV/Parquet manifest of paths or URIs.

Every input is opened through :mod:`fsspec`, so local files always work and
``s3://``, ``gs://``, ... work once the user installs those filesystems
(``s3fs``, ``gcsfs``).  Listing gives each photo its size and modification
stamp for free; together with the settings they decide whether a rerun may
skip a photo (like ``rsync``'s quick check); the content hash itself is
computed by the worker that reads the bytes.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from pathlib import Path

from ..errors import InvalidParameterError, MissingExtraError
from ..io import SUPPORTED_SUFFIXES

__all__ = ["Photo", "list_photos", "MANIFEST_COLUMNS", "output_stems"]

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
    """

    path: str
    rel: str
    size: int = -1
    modified: str = ""

    @property
    def is_local(self) -> bool:
        return "://" not in self.path


def _fsspec():
    try:
        import fsspec
    except ImportError:  # pragma: no cover - fsspec ships with the batch extra
        raise MissingExtraError.for_module("fsspec", extra="batch", feature="`multicrop batch`") from None
    return fsspec


def _stamp(info: dict) -> str:
    for key in ("mtime", "LastModified", "last_modified", "updated", "mtime_ns", "created"):
        if info.get(key) is not None:
            return str(info[key])
    return ""


def _photo(fs, path: str, root: str, info: dict | None = None) -> Photo:
    info = info if info is not None else fs.info(path)
    uri = path if _is_local(fs) else fs.unstrip_protocol(path)
    rel = posixpath.relpath(path, root) if root else posixpath.basename(path)
    return Photo(uri, rel, int(info.get("size") or -1), _stamp(info))


def _is_local(fs) -> bool:
    from fsspec.implementations.local import LocalFileSystem

    return isinstance(fs, LocalFileSystem)


def _is_image(path: str) -> bool:
    return posixpath.splitext(path)[1].lower() in SUPPORTED_SUFFIXES


def list_photos(source: str | os.PathLike) -> list[Photo]:
    """The photos ``source`` names, sorted by path.

    Parameters
    ----------
    source : str or path
        A directory (every image below it, recursively), a glob
        (``photos/**/*.jpg``, ``s3://bucket/2024/*.jpg``), a ``.csv`` or
        ``.parquet`` manifest with a column ``path``, ``uri`` or ``image``
        (relative entries are taken relative to the manifest's folder), or
        one image file.

    Raises
    ------
    InvalidParameterError
        The source does not exist, a manifest lacks the column, or nothing
        was found.
    """
    fsspec = _fsspec()
    text = os.fspath(source)
    fs, path = fsspec.core.url_to_fs(text)
    if _is_local(fs):
        path = Path(path).resolve().as_posix() if not any(c in path for c in _GLOB_CHARS) else path
    suffix = posixpath.splitext(path)[1].lower()
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
        photos = _from_manifest(fs, path, text)
    elif fs.exists(path):
        photos = [_photo(fs, path, posixpath.dirname(path))]
    else:
        raise InvalidParameterError(f"SRC {text!r}: no such file, folder or glob match")
    if not photos:
        raise InvalidParameterError(
            f"SRC {text!r}: no photos found (looked for {', '.join(sorted(SUPPORTED_SUFFIXES))})")
    return sorted(photos, key=lambda p: p.path)


def _from_manifest(fs, path: str, text: str) -> list[Photo]:
    import pyarrow as pa
    import pyarrow.csv
    import pyarrow.parquet

    try:
        with fs.open(path, "rb") as fh:
            table = pyarrow.csv.read_csv(fh) if path.lower().endswith(".csv") else pyarrow.parquet.read_table(fh)
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise InvalidParameterError(f"SRC {text!r}: cannot read the manifest ({exc})") from None
    column = next((c for c in MANIFEST_COLUMNS if c in table.column_names), None)
    if column is None:
        raise InvalidParameterError(
            f"SRC {text!r}: a manifest needs a column {' or '.join(MANIFEST_COLUMNS)}, has {table.column_names}")
    fsspec = _fsspec()
    base = posixpath.dirname(path)
    entries: list[tuple[object, str]] = []
    for value in dict.fromkeys(str(v) for v in table.column(column).to_pylist() if v is not None):
        if "://" in value:
            efs, epath = fsspec.core.url_to_fs(value)
        else:
            efs, epath = fs, value if posixpath.isabs(value) else posixpath.join(base, value)
            if _is_local(efs):
                epath = Path(epath).resolve().as_posix()
        entries.append((efs, epath))
    root = _common_root([p for _, p in entries])
    photos = []
    for efs, epath in entries:
        try:
            info = efs.info(epath)
        except (FileNotFoundError, OSError):
            info = {"size": -1}  # listed but missing: the worker reports it as a failed photo
        photos.append(_photo(efs, epath, root, info))
    return photos


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
