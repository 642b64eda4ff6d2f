"""One photo of a batch as listing found it, and the output names its files get.

:class:`Photo` carries a photo's path, its path under the batch's root, its
size and modification stamp (what a rerun's quick check compares) and, for an
entry that is never read, the reason it was refused.  :func:`output_stems`
names each photo's outputs so that no two photos of one folder overwrite each
other.  :mod:`multicrop.batch.sources` re-exports both.
"""

from __future__ import annotations

import os
import posixpath
import stat
from dataclasses import dataclass

from ..io import SUPPORTED_SUFFIXES, is_photo
from ..io.files import file_kind
from .filesystems import _is_local

__all__ = ["Photo", "output_stems"]


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


def _is_image(path: str) -> bool:
    """The one photo rule on a path or URI: :func:`multicrop.io.is_photo` (a listed suffix, no dot-file)."""
    return is_photo(posixpath.basename(path))


def _in_dot_folder(path: str, root: str) -> bool:
    """Whether a folder between ``root`` and ``path`` is a dot-folder (``.git``, ``.thumbnails``): nothing
    inside one is a photo, as :func:`multicrop.io.folder_photos` walks (``root`` itself may be one)."""
    rel = posixpath.relpath(path, root) if root else path.lstrip("/")
    return any(part.startswith(".") for part in rel.split("/")[:-1] if part not in ("", ".", ".."))


def _not_image(path: str) -> str:
    name = posixpath.basename(path)
    if name.startswith(".") and is_photo(name.lstrip(".")):
        return f"a dot-file ({name}: hidden, such as a macOS ._ resource fork), never taken as a photo"
    return (f"not an image name ({posixpath.splitext(path)[1] or 'no extension'}; "
            f"multicrop reads {', '.join(sorted(SUPPORTED_SUFFIXES))})")


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
