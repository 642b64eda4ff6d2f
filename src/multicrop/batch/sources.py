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

Filesystems and protocols are :mod:`multicrop.batch.filesystems`; a photo and
its output names :mod:`multicrop.batch.photo`; the CSV/Parquet input manifest
:mod:`multicrop.batch.path_manifest` (all re-exported here).
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

from ..errors import InvalidParameterError
from ..io import SUPPORTED_SUFFIXES
from .filesystems import PROTOCOL_PACKAGES, PROTOCOLS, _fsspec, _is_local  # noqa: F401 - re-exported
from .filesystems import _missing_filesystem, _protocol_refusal, _protocols, _url_to_fs  # noqa: F401 - re-exported
from .path_manifest import MANIFEST_COLUMNS, _check_manifest_file, _common_root, _decoded, _entry  # noqa: F401
from .path_manifest import _from_manifest, _read_manifest_table, _unique  # noqa: F401 - re-exported
from .photo import Photo, _in_dot_folder, _is_image, _not_image, _photo, _stamp, output_stems  # noqa: F401

__all__ = ["Photo", "list_photos", "MANIFEST_COLUMNS", "PROTOCOLS", "output_stems"]

_GLOB_CHARS = "*?["


def is_glob(text: str) -> bool:
    """Whether ``text`` is a glob pattern (``photos/**/*.jpg``) rather than one path."""
    return any(c in text for c in _GLOB_CHARS)


def list_photos(source: str | os.PathLike, *, protocols: tuple[str, ...] = PROTOCOLS, allow_outside: bool = False,
                exclude: str | os.PathLike | None = None) -> list[Photo]:
    """The photos ``source`` names, sorted by path.

    Parameters
    ----------
    source : str or path
        A directory (every image below it, recursively, but for dot-folders), a glob
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
        path = Path(path).resolve().as_posix() if not is_glob(path) else path
    if is_glob(path):
        found = fs.glob(path, detail=True)
        root = path.split("*")[0].split("?")[0].split("[")[0]
        root = root if root.endswith("/") else posixpath.dirname(root)
        photos = [_photo(fs, p, root.rstrip("/"), info) for p, info in found.items()
                  if info.get("type") != "directory" and _is_image(p) and not _in_dot_folder(p, root.rstrip("/"))]
    elif fs.isdir(path):
        found = fs.find(path, detail=True)
        photos = [_photo(fs, p, path.rstrip("/"), info) for p, info in found.items()
                  if _is_image(p) and not _in_dot_folder(p, path.rstrip("/"))]
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


def without_outputs(photos: list[Photo]) -> list[Photo]:
    """``photos`` less the local crops an earlier run of multicrop wrote beside their photo (its record lists
    them): a crop batch's folder listing follows ``multicrop crop DIR``'s rule
    (:func:`multicrop.io.guard.claimed_outputs`); a judge batch rates them as any image."""
    from ..io.guard import claimed_outputs

    by_folder: dict[str, list[str]] = {}
    for p in photos:
        if p.is_local:
            by_folder.setdefault(posixpath.dirname(p.path), []).append(posixpath.basename(p.path))
    ours = {posixpath.join(d, n) for d, names in by_folder.items() for n in claimed_outputs(d, names)}
    return [p for p in photos if p.path not in ours]
