"""Originals are sacred: output names that never touch a file the run did not write.

A photo's files (``<stem>_1.jpg``, ..., ``<stem>.json``) may replace a file
only when that file is one the previous run wrote for the same photo: listed
in the previous ``<stem>.json`` whose ``source`` is the same file, named by
our naming rule (:func:`own_name`), and still holding the bytes whose SHA-256
that record's ``written`` map keeps.  A record is a claim, not a proof: a
hand-edited or foreign record naming a file the user keeps (or a file edited
since) never makes it replaceable.  They
never replace an input of the run (by name, hard link or symbolic link), a
symbolic link, or any other file: the stem moves to ``<stem>-2``,
``<stem>-3``, ... until every name is free or replaceable, and the caller
says so.  After writing, the files of the previous set that the new set does
not reuse are removed (and only those); temporaries
(``.<name>.<pid>-XXXXXXXX.part``) left by a killed run are removed before
writing (:func:`multicrop.io.parts.remove_parts`), but never those of a
process that still runs (two runs writing into one folder at once keep each
other's files).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import MulticropError
from .files import read_json_bounded

__all__ = ["FileId", "file_id", "own_name", "written_hashes", "claimed_outputs", "Plan", "plan_names", "previous_files", "remove_stale"]

FileId = tuple[int, int]


def file_id(path: str | os.PathLike) -> FileId | None:
    """``(device, inode)`` of the file ``path`` names (links followed), or None if there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    ia, ib = file_id(a), file_id(b)
    return ia is not None and ia == ib


def own_name(stem: str) -> re.Pattern[str]:
    """The names multicrop writes for ``stem``: ``<stem>_<i>.<ext>``, ``<stem>_<i>_w<width>.<ext>``,
    ``<stem>_preview.<ext>`` and ``<stem>.json``."""
    return re.compile(rf"^{re.escape(stem)}(_\d+(_w\d+)?\.[A-Za-z]+|_preview\.[A-Za-z]+|\.json)$")


def _file_hash(path: Path) -> str | None:
    from ..hashing import hash_stream

    if path.is_symlink() or not path.is_file():
        return None
    try:
        with open(path, "rb") as fh:
            return hash_stream(fh)
    except OSError:
        return None


def written_hashes(paths: dict[str, Path]) -> dict[str, str]:
    """``{name: "sha256:..."}`` of the files just written (``name`` -> where its bytes are now)."""
    return {name: h for name, p in sorted(paths.items()) if (h := _file_hash(Path(p))) is not None}


_OUTPUT_NAME = re.compile(r"^(?P<stem>.+?)(_\d+(_w\d+)?|_preview)\.[A-Za-z]+$")
#: Largest record read when telling outputs from photos (a record is a few KB).
_RECORD_LIMIT = 1 << 20


def _read_record(path: Path) -> Any:
    """The JSON value of a record ``path`` in an output folder, or None where it is no record of ours to read:
    absent, a link, not a regular file, over ``_RECORD_LIMIT`` bytes, not UTF-8, not JSON or nested too deep."""
    try:  # read_json_bounded: a regular file opened without blocking, size and depth bounded
        if path.is_symlink() or not path.is_file():
            return None
        return read_json_bounded(path, limit=_RECORD_LIMIT, what="record")
    except (OSError, MulticropError):
        return None


def claimed_outputs(folder: str | os.PathLike, names: Iterable[str]) -> set[str]:
    """The ``names`` (files of ``folder``) that a multicrop record beside them says it wrote.

    A name ``<stem>_<i>.<ext>`` (or a width copy, or a preview) counts when
    ``<stem>.json`` in the same folder is a record of ``stem`` whose
    ``written`` map lists it: an output folder named as an input (``-o``
    equal to it) never feeds the earlier crops back in as photos.
    """
    folder = Path(folder)
    by_stem: dict[str, list[str]] = {}
    for name in names:
        m = _OUTPUT_NAME.match(name)
        if m is not None:
            by_stem.setdefault(m.group("stem"), []).append(name)
    claimed: set[str] = set()
    for stem, listed in by_stem.items():
        rec = _read_record(folder / f"{stem}.json")
        written = rec.get("written") if isinstance(rec, dict) and rec.get("stem") == stem else None
        if isinstance(written, dict):
            own = own_name(stem)
            claimed.update(n for n in listed if n in written and own.match(n))
    return claimed


def previous_files(out_dir: Path, stem: str, source: str | os.PathLike | None) -> set[str] | None:
    """The names the previous run wrote for ``source`` under ``stem`` (its JSON included).

    None when ``<stem>.json`` is absent, unreadable, or was written for
    another photo (then its files are not this photo's to replace).  A listed
    name counts only when it follows :func:`own_name` and the file is gone or
    still holds the bytes the record's ``written`` map hashed (a record from
    before the map, or one edited by hand, claims no file but itself).
    """
    rec = _read_record(out_dir / f"{stem}.json")
    if not isinstance(rec, dict) or rec.get("stem") != stem or source is None:
        return None
    old_source = rec.get("source")
    if not isinstance(old_source, str) or not _same_file(old_source, source):
        return None
    listed: set[Any] = set()
    for crop in rec.get("crops") or []:
        if not isinstance(crop, dict):
            continue
        listed.add(crop.get("path"))
        resized = crop.get("resized")
        if isinstance(resized, dict):
            listed.update(resized.values())
    listed.add(rec.get("preview"))
    hashes = rec.get("written")
    hashes = hashes if isinstance(hashes, dict) else {}
    own = own_name(stem)
    names = {f"{stem}.json"}
    for n in listed:
        # Only plain names in out_dir, by our naming rule: a damaged or hand-edited record cannot point elsewhere.
        if not (isinstance(n, str) and n and Path(n).name == n and not n.startswith(".") and own.match(n)):
            continue
        path = out_dir / n
        if not os.path.lexists(path) or (isinstance(hashes.get(n), str) and _file_hash(path) == hashes[n]):
            names.add(n)
    return names


@dataclass(frozen=True)
class Plan:
    """Where one photo's files go.

    Attributes
    ----------
    stem : str
        The stem to write under (the one asked for, or ``<stem>-N``).
    previous : frozenset of str
        Names of the previous set for this photo (replaced or removed).
    blocked : str or None
        When the stem was moved: the first name that could not be written and why.
    """

    stem: str
    previous: frozenset[str]
    blocked: str | None = None


def _blocker(out_dir: Path, names: Iterable[str], previous: set[str], protected: frozenset[FileId]) -> str | None:
    for name in names:
        path = out_dir / name
        if not os.path.lexists(path):
            continue
        if path.is_symlink():
            return f"{name} is a symbolic link"
        fid = file_id(path)
        if fid in protected:
            return f"{name} is an input of this run"
        if name not in previous:
            return f"{name} exists and was not written by multicrop for this photo"
        if not path.is_file():
            return f"{name} is not a regular file"
    return None


def plan_names(out_dir: Path, stem: str, names: Callable[[str], list[str]], *, source: str | os.PathLike | None,
               protected: frozenset[FileId] = frozenset(), taken: Iterable[str] = ()) -> Plan:
    """Choose the stem whose files replace nothing but this photo's previous set.

    Parameters
    ----------
    out_dir : Path
    stem : str
        The preferred stem.
    names : callable
        ``names(stem)``: every file name the photo would write under ``stem``.
    source : path or None
        The photo (a previous record counts only if it names the same file).
    protected : frozenset of (int, int)
        File ids of the run's inputs.
    taken : iterable of str
        Stems other photos of the batch use (casefolded comparison).

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); _ = (d / "a_1.jpg").write_bytes(b"mine")
    >>> p = plan_names(d, "a", lambda s: [f"{s}_1.jpg", f"{s}.json"], source=None)
    >>> p.stem, p.blocked
    ('a-2', 'a_1.jpg exists and was not written by multicrop for this photo')
    """
    busy = {t.casefold() for t in taken}
    first_block = None
    candidate, n = stem, 1
    while True:
        if candidate.casefold() not in busy:
            previous = previous_files(out_dir, candidate, source) or set()
            why = _blocker(out_dir, names(candidate), previous, protected)
            if why is None:
                return Plan(candidate, frozenset(previous), first_block)
            first_block = first_block or why
        n += 1
        candidate = f"{stem}-{n}"


def remove_stale(out_dir: Path, previous: Iterable[str], written: Iterable[str],
                 protected: frozenset[FileId] = frozenset()) -> list[str]:
    """Remove the previous set's files the new set did not rewrite; return their names."""
    keep = set(written)
    removed = []
    for name in sorted(set(previous) - keep):
        path = out_dir / name
        if path.is_symlink() or not path.is_file() or file_id(path) in protected:
            continue
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            removed.append(name)
    return removed
