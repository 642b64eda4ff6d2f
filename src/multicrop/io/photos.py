r"""The one photo-list rule: what files, folders, globs and ``-`` (a list on stdin) stand for.

:func:`list_photos` serves ``multicrop crop``; batch applies the same predicate
(:func:`multicrop.io.is_photo`: a suffix of :data:`~multicrop.io.FORMATS`, no dot-files) through fsspec.

Pure path handling (no image is opened): a folder gives the files in it
with a photo extension (``recursive``: also in its subfolders), sorted; a
pattern with ``*``, ``?`` or ``[`` that names no existing file is expanded
(``**`` recurses); ``-`` reads one path per line from ``stdin`` (blank lines
and ``#`` comments skipped).  A stdin list is split on ``\n`` only (a name
may hold U+2028 or a form feed), a line is taken as it is, leading and
trailing spaces included (only a CR before the ``\n`` is dropped), and a
line holding a NUL (no file name can) refuses the list in one line.  A
file named explicitly is taken whatever its extension (the loader says
whether it is an image).  Duplicates (the same
file named twice) are kept once, at their first place.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from ..errors import InvalidParameterError
from .guard import claimed_outputs
from .formats import SUPPORTED_SUFFIXES, is_photo
from .names import shown

__all__ = ["PHOTO_SUFFIXES", "STDIN_LIMIT", "folder_photos", "list_photos", "stdin_paths"]

#: Most characters a stdin list may hold (a million long paths): ``- < /dev/zero`` ends in one line.
STDIN_LIMIT = 256 << 20

#: Extensions a folder or pattern contributes: the loader's own (:data:`multicrop.io.SUPPORTED_SUFFIXES`,
#: from the one format table, GIF included, HEIC when pillow-heif is installed).
PHOTO_SUFFIXES = SUPPORTED_SUFFIXES


def folder_photos(path: Path, recursive: bool, *, outputs: bool = False) -> list[Path]:
    """The photos of folder ``path`` (``recursive``: and of its subfolders), sorted.

    The one photo rule (:func:`multicrop.io.is_photo`: a listed suffix, no
    dot-file) and nothing inside a dot-folder.  The crops an earlier run of
    multicrop wrote beside their photo are left out, unless ``outputs`` (a
    judge takes them: they are images to rate).
    """
    found = []
    walker = os.walk(path) if recursive else [(str(path), [], os.listdir(path))]
    for root, dirs, files in walker:
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        ours = () if outputs else claimed_outputs(root, files)  # an earlier run's crops are not photos
        for name in files:
            if name in ours:
                continue
            p = Path(root) / name
            if is_photo(p) and p.is_file():
                found.append(p)
    return sorted(found)


def stdin_paths(text: str) -> list[str]:
    r"""The paths of a stdin list: one per ``\n``-line, blank lines and ``#`` comments skipped, nothing trimmed.

    Raises
    ------
    InvalidParameterError
        A line holding a NUL character.

    Examples
    --------
    >>> stdin_paths("a.jpg\r\n a.jpg\n\n# note\nl\u2028m.jpg\n")
    ['a.jpg', ' a.jpg', 'l\u2028m.jpg']
    """
    out = []
    for i, line in enumerate(text.split("\n"), 1):
        line = line[:-1] if line.endswith("\r") else line
        if "\0" in line:
            raise InvalidParameterError(f"-: line {i} of the stdin list holds a NUL character, which no file name can "
                                        f"({shown(line)}); give one path per line")
        if line.strip() and not line.startswith("#"):
            out.append(line)
    return out


def list_photos(items: Iterable[str | os.PathLike], *, recursive: bool = False,
                  stdin: TextIO | None = None) -> list[Path]:
    """The photo paths ``items`` stand for, in order.

    Raises
    ------
    InvalidParameterError
        A folder, pattern or stdin list that names no photo (one line
        naming it), or ``-`` given twice.

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); _ = [(d / n).write_bytes(b"") for n in ("b.jpg", "a.PNG", "notes.txt")]
    >>> [p.name for p in list_photos([d])]
    ['a.PNG', 'b.jpg']
    >>> [p.name for p in list_photos([str(d / "*.jpg"), d / "b.jpg"])]
    ['b.jpg']
    """
    out: list[Path] = []
    seen: set[str] = set()
    used_stdin = False

    def add(p: Path) -> None:
        key = os.path.normcase(os.path.abspath(p))
        if key not in seen:
            seen.add(key)
            out.append(p)

    for item in items:
        text = os.fspath(item)
        if text == "-":
            if used_stdin:
                raise InvalidParameterError("'-' (paths on stdin) given twice")
            used_stdin = True
            text = stdin.read(STDIN_LIMIT + 1) if stdin is not None else ""
            if len(text) > STDIN_LIMIT:
                raise InvalidParameterError(f"-: the stdin list is longer than the {STDIN_LIMIT:,} characters allowed")
            paths = stdin_paths(text)
            if not paths:
                raise InvalidParameterError("-: no paths on stdin")
            for ln in paths:
                p = Path(ln)
                for q in (folder_photos(p, recursive) if p.is_dir() else [p]):
                    add(q)
            continue
        p = Path(text)
        if p.is_dir():
            photos = folder_photos(p, recursive)
            if not photos:
                raise InvalidParameterError(
                    f"{shown(p)}: folder holds no photo ({', '.join(sorted(PHOTO_SUFFIXES))})"
                    + ("" if recursive else "; -R also searches its subfolders"))
            for q in photos:
                add(q)
        elif not os.path.lexists(p) and glob.has_magic(text):
            matches = sorted(Path(m) for m in glob.glob(text, recursive=True)
                             if Path(m).suffix.lower() in PHOTO_SUFFIXES and Path(m).is_file())
            matches = [m for m in matches if m.name not in claimed_outputs(m.parent, [m.name])]
            if not matches:
                raise InvalidParameterError(f"{shown(text)}: pattern matches no photo")
            for q in matches:
                add(q)
        else:
            add(p)
    return out
