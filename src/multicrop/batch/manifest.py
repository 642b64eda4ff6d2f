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
"""

from __future__ import annotations

import contextlib
import datetime
import os
import time
import uuid
from collections.abc import Iterable
from pathlib import Path

from ..errors import InvalidParameterError, MissingExtraError

__all__ = ["SCHEMA_COLUMNS", "TIMING_COLUMNS", "ManifestWriter", "read_manifest", "latest_rows", "new_run_id"]

#: Columns that differ between two runs of the same photos with the same settings.
TIMING_COLUMNS = ("timings", "seconds", "worker", "run_id", "finished_utc", "seq")


def _pa():
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - pyarrow ships with the batch extra
        raise MissingExtraError.for_module("pyarrow", extra="batch", feature="`multicrop batch`") from None
    return pa, pq


def schema():
    """The manifest's Arrow schema (one home for its columns and types)."""
    pa, _ = _pa()
    box = pa.struct([("x", pa.float64()), ("y", pa.float64()), ("w", pa.float64()), ("h", pa.float64())])
    return pa.schema([
        ("path", pa.string()),            # local absolute path or URI
        ("rel", pa.string()),             # relative to the batch root
        ("size", pa.int64()),             # bytes at listing (-1: unknown)
        ("modified", pa.string()),        # filesystem stamp at listing
        ("content_hash", pa.string()),    # sha256:... of the bytes read (None if unreadable)
        ("settings_hash", pa.string()),   # what decides the result: config, versions, output settings
        ("status", pa.string()),          # done | failed
        ("error_kind", pa.string()),      # exception class of a failure (the summary's "reason")
        ("error", pa.string()),           # one line
        ("stem", pa.string()),            # outputs are <dst>/<stem>_<i>.<ext>, <stem>.json ...
        ("width", pa.int64()),
        ("height", pa.int64()),
        ("boxes", pa.list_(box)),         # crops in source pixels
        ("scores", pa.list_(pa.float64())),
        ("ratios", pa.list_(pa.string())),
        ("partition_failure", pa.string()),
        ("outputs", pa.list_(pa.string())),
        ("versions", pa.string()),        # canonical JSON
        ("config", pa.string()),          # canonical JSON of the CropConfig
        ("timings", pa.string()),         # JSON: seconds per stage
        ("seconds", pa.float64()),        # wall time of the photo in its worker
        ("worker", pa.string()),          # host:pid
        ("run_id", pa.string()),
        ("finished_utc", pa.string()),
        ("seq", pa.int64()),              # order of finishing within a run
    ])


SCHEMA_COLUMNS = ("path", "rel", "size", "modified", "content_hash", "settings_hash", "status", "error_kind",
                  "error", "stem", "width", "height", "boxes", "scores", "ratios", "partition_failure",
                  "outputs", "versions", "config", "timings", "seconds", "worker", "run_id", "finished_utc", "seq")


def new_run_id(after: Iterable[str | None] = ()) -> str:
    """A sortable, unique run id: UTC time to the microsecond, then random hex.

    Rows are ordered by run id, so a new run must sort after every run already
    in the manifest (``after``), even when both started within one clock tick or
    the clock stepped back: the time part is then one microsecond past the
    latest run's.
    """
    now = time.time_ns() // 1000
    latest = [m for m in (_run_micros(r) for r in after if r) if m is not None]
    if latest:
        now = max(now, max(latest) + 1)
    return _format_micros(now) + "-" + uuid.uuid4().hex[:8]


def _format_micros(micros: int) -> str:
    secs, frac = divmod(micros, 1_000_000)
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime(secs)) + f".{frac:06d}"


def _run_micros(run_id: str) -> int | None:
    """The time part of a run id in microseconds (older ids carry whole seconds); None if it has none."""
    stamp = run_id.split("-", 1)[0]
    fmt = "%Y%m%dT%H%M%S.%f" if "." in stamp else "%Y%m%dT%H%M%S"
    try:
        when = datetime.datetime.strptime(stamp, fmt).replace(tzinfo=datetime.timezone.utc)
    except ValueError:  # a hand-made or foreign id: it cannot be ordered by time, so it is not waited for
        return None
    return int(when.timestamp()) * 1_000_000 + when.microsecond


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


def _write(rows: list[dict], path: Path) -> None:
    pa, pq = _pa()
    table = pa.Table.from_pylist([{c: r.get(c) for c in SCHEMA_COLUMNS} for r in rows], schema=schema())
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        pq.write_table(table, tmp)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def _parts(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("part-*.parquet"))


def read_manifest(folder: str | os.PathLike, *, columns: tuple[str, ...] | None = None) -> list[dict]:
    """Every row of every part, oldest first (a missing folder reads as empty).

    ``columns`` reads only those (plus ``run_id`` and ``seq``, which order the
    rows): a rerun over millions of photos needs five small columns, not the boxes.
    """
    _, pq = _pa()
    folder = Path(folder)
    if not folder.exists():
        return []
    if not folder.is_dir():
        raise InvalidParameterError(f"manifest {folder}: is not a folder")
    rows: list[dict] = []
    for part in _parts(folder):
        cols = None if columns is None else list(dict.fromkeys((*columns, "run_id", "seq")))
        rows.extend(pq.read_table(part, columns=cols).to_pylist())
    rows.sort(key=lambda r: (r["run_id"] or "", r["seq"] if r["seq"] is not None else -1))
    return rows


def latest_rows(rows: Iterable[dict]) -> dict[str, dict]:
    """``path -> row``: the last row of each path (the manifest's current state)."""
    out: dict[str, dict] = {}
    for r in rows:
        out[r["path"]] = r
    return out


def compact_manifest(folder: str | os.PathLike, run_id: str) -> Path | None:
    """Rewrite the folder's parts as one file holding each path's latest row.

    The compacted file is written (atomically) before the old parts are
    removed; a crash between the two leaves duplicates that
    :func:`latest_rows` resolves the same way.
    """
    folder = Path(folder)
    parts = _parts(folder)
    if len(parts) <= 1:
        return parts[0] if parts else None
    rows = list(latest_rows(read_manifest(folder)).values())
    # Named so it sorts after every part it replaces (run ids sort by time).
    path = folder / f"part-{run_id}-zz-compact.parquet"
    _write(rows, path)
    for p in parts:
        if p != path:
            p.unlink(missing_ok=True)
    return path
