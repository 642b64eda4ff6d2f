"""The manifest's part files: each written atomically, listed in order, read against the schema.

A part is written under a temporary name, synced and renamed, so a killed
run leaves only whole files behind.  Reading a part checks it against
:func:`~multicrop.batch.manifest_schema.schema` and gives either its table
or the one-line reason it cannot be read (then it is quarantined, see
:mod:`multicrop.batch.manifest_folder`).  :mod:`multicrop.batch.manifest`
re-exports these helpers.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from .manifest_schema import SCHEMA_COLUMNS, _pa, schema

__all__: list[str] = []


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


#: Columns every part must have for its rows to mean anything.
_CORE_COLUMNS = ("path", "status", "settings_hash", "run_id", "seq")


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
