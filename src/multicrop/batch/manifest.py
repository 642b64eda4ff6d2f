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

__all__ = ["SCHEMA_COLUMNS", "TIMING_COLUMNS", "ManifestWriter", "read_manifest", "latest_rows", "new_run_id",
           "check_manifest_folder", "QUARANTINE", "quarantine_folder", "failed_rows"]

#: Suffix of the folder beside the manifest where unreadable parts are moved (``manifest.parquet.quarantine``).
QUARANTINE = ".quarantine"
#: Where earlier versions put the quarantine: inside the manifest (a Parquet reader of the folder read it back).
_LEGACY_QUARANTINE = "quarantine"


def quarantine_folder(folder: str | os.PathLike) -> Path:
    """The quarantine of the manifest ``folder``: beside it, outside the dataset.

    Examples
    --------
    >>> quarantine_folder("out/manifest.parquet").as_posix()
    'out/manifest.parquet.quarantine'
    """
    folder = Path(folder)
    return folder.with_name(folder.name + QUARANTINE)

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
    return sorted(p for p in folder.glob("part-*.parquet") if not p.name.startswith("."))


def check_manifest_folder(folder: str | os.PathLike, *, must_exist: bool = False) -> None:
    """Refuse a manifest path that is not a manifest folder (one line saying what to do).

    A file, or a folder that holds files but no manifest part (a photo
    folder, the batch's OUT folder itself) is refused: reading it would say
    "nothing failed", writing would put parts among someone's files.  An
    empty folder is a new manifest, unless ``must_exist`` (what ``batch
    failed`` reads must be a manifest already).
    """
    from ..io.names import shown

    folder = Path(folder)
    name = shown(folder)
    if not os.path.lexists(folder):
        if must_exist:
            raise InvalidParameterError(f"manifest {name}: no such folder (a batch's manifest is "
                                        "OUT/manifest.parquet)")
        return
    if not folder.is_dir():
        raise InvalidParameterError(
            f"manifest {name}: is a file, not a manifest folder (a batch's manifest is a folder of Parquet "
            f"parts); move the file away, or name another folder with --manifest")
    if _parts(folder):
        return
    try:
        others = [e for e in os.listdir(folder) if not e.startswith(".") and e != _LEGACY_QUARANTINE]
    except OSError as exc:
        raise InvalidParameterError(f"manifest {name}: cannot list it ({exc.strerror or exc})") from None
    if not others and not must_exist:
        return
    hint = (f"; did you mean {shown(folder / 'manifest.parquet')}?" if "manifest.parquet" in others
            else "; a batch's manifest is OUT/manifest.parquet")
    what = f"holds {len(others)} entries but" if others else "is empty:"
    raise InvalidParameterError(f"manifest {name}: not a batch manifest (the folder {what} no manifest part, "
                                f"part-*.parquet){hint}")


#: Columns every part must have for its rows to mean anything.
_CORE_COLUMNS = ("path", "status", "settings_hash", "run_id", "seq")


def _quarantine(part: Path, why: str, on_quarantine) -> None:
    """Move an unreadable part aside (never delete it) and say so in one line."""
    dest = quarantine_folder(part.parent)
    with contextlib.suppress(OSError):
        dest.mkdir(exist_ok=True)
    target = dest / f"{part.name}.{uuid.uuid4().hex[:8]}"
    try:
        os.replace(part, target)
        where = f"moved to {target}"
    except OSError as exc:
        where = f"left in place ({exc.strerror or exc})"
    line = f"manifest part {part.name} is unreadable ({why}); {where}; its photos are redone"
    if on_quarantine is not None:
        on_quarantine(line)


def _move_legacy_quarantine(folder: Path, on_quarantine) -> None:
    """Move a ``quarantine/`` folder an earlier version made inside the manifest out beside it (never delete)."""
    inner = folder / _LEGACY_QUARANTINE
    if not inner.is_dir() or inner.is_symlink():
        return
    dest = quarantine_folder(folder)
    moved, kept = 0, []
    try:
        dest.mkdir(exist_ok=True)
        for item in sorted(inner.iterdir()):
            target = dest / item.name
            if os.path.lexists(target):
                target = dest / f"{item.name}.{uuid.uuid4().hex[:8]}"
            os.replace(item, target)
            moved += 1
        inner.rmdir()
    except OSError as exc:
        kept.append(exc.strerror or str(exc))
    if on_quarantine is not None and (moved or kept):
        tail = f"; some left in place ({kept[0]})" if kept else ""
        on_quarantine(f"manifest {folder.name}: moved the {moved} quarantined parts of its inner quarantine/ "
                      f"folder to {dest} (outside the dataset, so Parquet readers see only the manifest's rows){tail}")


def _read_part(part: Path, cols: list[str] | None):
    """One part as a table of this schema's columns, or the reason it cannot be read."""
    pa, pq = _pa()
    want = schema()
    try:
        if not part.is_file():
            return None, "not a regular file"
        if part.stat().st_size == 0:
            return None, "empty, 0 bytes"
        file_schema = pq.read_schema(part)
        names = cols if cols is not None else list(SCHEMA_COLUMNS)
        for name in names:
            if name not in file_schema.names:
                if name in _CORE_COLUMNS:
                    return None, f"no column {name!r}: not a multicrop manifest part"
                continue
            if not file_schema.field(name).type.equals(want.field(name).type):
                return None, (f"column {name!r} is {file_schema.field(name).type}, "
                              f"not {want.field(name).type}: not a multicrop manifest part")
        present = [n for n in names if n in file_schema.names]
        table = pq.read_table(part, columns=present)
        for name in names:
            if name not in present:  # a column added after this part was written
                table = table.append_column(want.field(name), pa.nulls(table.num_rows, want.field(name).type))
        return table, None
    except (OSError, ValueError, pa.ArrowException) as exc:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return None, text[:200]


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
