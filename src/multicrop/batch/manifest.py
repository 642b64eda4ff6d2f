"""The results manifest: one Parquet row per photo, written as photos finish.

The manifest is a folder of Parquet files (a Parquet *dataset*: pandas,
pyarrow, DuckDB and Spark read the folder as one table).  The writer buffers
finished rows and flushes them as a new part file every ``flush_rows`` rows
or ``flush_s`` seconds; each part is written under a temporary name and
renamed, so a killed run leaves only whole files behind and loses at most
the rows of its last unflushed seconds (those photos are simply redone:
their files are rewritten atomically, byte for byte the same).  At the end
of a run the parts are compacted into one file.  Nothing is ever rewritten
in place: a rerun appends new rows, and the latest row of a path wins.

A part that cannot be read as this schema (truncated, emptied, overwritten,
another program's Parquet) is *quarantined*: moved into the folder beside
the manifest, ``manifest.parquet.quarantine/`` (:func:`quarantine_folder`),
with one line said, never deleted; the photos only it recorded are simply
redone.  The quarantine lies outside the dataset folder, so a Parquet reader
of the folder (``pd.read_parquet("OUT/manifest.parquet")``, which reads every
file below it) sees only our rows; a ``quarantine/`` folder that an earlier
version made inside the manifest is moved out the same way.

The columns are :mod:`multicrop.batch.manifest_schema`, run ids
:mod:`multicrop.batch.run_ids`, the part files :mod:`multicrop.batch.manifest_parts`
and the folder check and quarantine :mod:`multicrop.batch.manifest_folder`
(all re-exported here).
"""

from __future__ import annotations

import datetime
import os
import time
from collections.abc import Iterable
from pathlib import Path

from ..errors import InvalidParameterError
from .manifest_folder import _LEGACY_QUARANTINE, QUARANTINE, _move_legacy_quarantine, _quarantine  # noqa: F401
from .manifest_folder import check_manifest_folder, quarantine_folder  # noqa: F401 - re-exported
from .manifest_parts import _CORE_COLUMNS, _parts, _read_part, _write  # noqa: F401 - re-exported
from .manifest_schema import SCHEMA_COLUMNS, TIMING_COLUMNS, _pa, schema  # noqa: F401 - re-exported
from .run_ids import _format_micros, _run_micros, new_run_id  # noqa: F401 - re-exported

__all__ = ["SCHEMA_COLUMNS", "TIMING_COLUMNS", "ManifestWriter", "read_manifest", "latest_rows", "new_run_id",
           "check_manifest_folder", "QUARANTINE", "quarantine_folder", "failed_rows"]


class ManifestWriter:
    """Appends rows to the manifest folder as parts, flushed by count or time.

    Parameters
    ----------
    folder : path
        The manifest folder (created if needed).
    run_id : str
    flush_rows : int
        Flush when this many rows are buffered.
    flush_s : float
        Flush at the next row once this many seconds passed since the last flush.
    """

    def __init__(self, folder: str | os.PathLike, run_id: str, *, flush_rows: int = 64, flush_s: float = 2.0) -> None:
        if flush_rows < 1:
            raise InvalidParameterError(f"flush_rows must be >= 1, got {flush_rows!r}")
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.run_id = run_id
        self.flush_rows, self.flush_s = flush_rows, flush_s
        self._rows: list[dict] = []
        self._part = 0
        self._seq = 0
        self._last = time.monotonic()
        self.written: list[Path] = []

    def add(self, row: dict) -> None:
        """Buffer one finished photo's row; flush when due."""
        now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")
        row = dict(row, run_id=self.run_id, seq=self._seq, finished_utc=now)
        self._seq += 1
        self._rows.append(row)
        if len(self._rows) >= self.flush_rows or time.monotonic() - self._last >= self.flush_s:
            self.flush()

    def flush(self) -> None:
        """Write the buffered rows as one part file (atomically)."""
        self._last = time.monotonic()
        if not self._rows:
            return
        path = self.folder / f"part-{self.run_id}-{self._part:06d}.parquet"
        _write(self._rows, path)
        self.written.append(path)
        self._part += 1
        self._rows = []

    def close(self, *, compact: bool = True) -> None:
        """Flush, then (by default) compact every part of the folder into one."""
        self.flush()
        if compact:
            compact_manifest(self.folder, self.run_id)

    def __enter__(self) -> ManifestWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(compact=exc[0] is None)


def read_manifest(folder: str | os.PathLike, *, columns: tuple[str, ...] | None = None,
                  on_quarantine=None, must_exist: bool = False) -> list[dict]:
    """Every row of every part, oldest first (a missing or empty folder reads as empty, unless ``must_exist``).

    ``columns`` reads only those (plus ``run_id`` and ``seq``, which order the
    rows): a rerun over millions of photos needs a few small columns, not the boxes.
    A part that cannot be read is quarantined (see the module's text) and
    ``on_quarantine(line)`` is called with the one line that says so.

    Raises
    ------
    InvalidParameterError
        ``folder`` is not a manifest folder (:func:`check_manifest_folder`).
    """
    _pa()
    folder = Path(folder)
    check_manifest_folder(folder, must_exist=must_exist)
    if not os.path.lexists(folder):
        return []
    _move_legacy_quarantine(folder, on_quarantine)
    rows: list[dict] = []
    cols = None if columns is None else list(dict.fromkeys((*columns, "run_id", "seq")))
    for part in _parts(folder):
        table, why = _read_part(part, cols)
        if table is None:
            _quarantine(part, why, on_quarantine)
            continue
        rows.extend(table.to_pylist())
    rows.sort(key=lambda r: (r["run_id"] or "", r["seq"] if r["seq"] is not None else -1))
    return rows


def failed_rows(folder: str | os.PathLike, *, on_quarantine=None) -> list[dict]:
    """The latest row of every photo whose latest row failed, by path: what ``batch failed`` lists.

    ``folder`` must be a manifest already (a missing, empty or foreign folder is one line).
    """
    rows = latest_rows(read_manifest(folder, columns=("path", "status", "error_kind", "error"),
                                     on_quarantine=on_quarantine, must_exist=True))
    return sorted((r for r in rows.values() if r["status"] == "failed"), key=lambda r: r["path"])


def latest_rows(rows: Iterable[dict]) -> dict[str, dict]:
    """``path -> row``: the last row of each path (the manifest's current state)."""
    out: dict[str, dict] = {}
    for r in rows:
        out[r["path"]] = r
    return out


def compact_manifest(folder: str | os.PathLike, run_id: str, *, on_quarantine=None) -> Path | None:
    """Rewrite the folder's parts as one file holding each path's latest row.

    The compacted file is written (atomically) before the old parts are
    removed; a crash between the two leaves duplicates that
    :func:`latest_rows` resolves the same way.
    """
    folder = Path(folder)
    parts = _parts(folder)
    if len(parts) <= 1:
        return parts[0] if parts else None
    rows = list(latest_rows(read_manifest(folder, on_quarantine=on_quarantine)).values())
    parts = _parts(folder)  # without those just quarantined
    # Named so it sorts after every part it replaces (run ids sort by time).
    path = folder / f"part-{run_id}-zz-compact.parquet"
    _write(rows, path)
    for p in parts:
        if p != path:
            p.unlink(missing_ok=True)
    return path
