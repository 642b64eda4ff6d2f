"""Export a store's call records as CSV, JSON lines or Parquet.

A score that did not parse is written as the judge table writes it: ``NaN``
in CSV, NaN in Parquet; JSON has no NaN, so ``.jsonl`` has ``null``.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable
from pathlib import Path

from ...errors import InvalidParameterError, StoreError
from .records import CALL_COLUMNS, CallRecord

__all__ = ["EXPORTERS", "export_records"]


def export_records(records: Iterable[CallRecord], path: Path) -> int:
    """Write ``records`` to ``path`` in the format of its extension; returns the count.

    Raises
    ------
    InvalidParameterError
        For an extension other than ``.csv``, ``.jsonl`` and ``.parquet``.
    """
    writer = EXPORTERS.get(path.suffix.lower())
    if writer is None:
        raise InvalidParameterError(f"export path must end in .csv, .jsonl or .parquet, got {path.name!r}")
    return writer(_numeric(records), path)


def _numeric(records: Iterable[CallRecord]) -> Iterable[CallRecord]:
    """``records``, each checked to hold a number as its score (SQLite lets an edit store text there).

    Raises
    ------
    StoreError
        A score that is not a number; the writers are atomic, so nothing is written.
    """
    for r in records:
        if isinstance(r.score, bool) or not isinstance(r.score, (int, float)):
            raise StoreError(f"call {r.call_key}: its score is stored as {type(r.score).__name__} "
                             f"{str(r.score)[:40]!r}, not a number (the store was edited by hand); nothing "
                             "exported; `multicrop store verify` lists the edited calls")
        yield r


def _export_parquet(records: Iterable[CallRecord], path: Path) -> int:
    import pandas as pd

    from ...io.tables import write_table

    df = pd.DataFrame([r.values() for r in records], columns=list(CALL_COLUMNS))
    write_table(df, path)
    return len(df)


def _export_csv(records: Iterable[CallRecord], path: Path) -> int:
    # Streamed (a store can hold 10^5-10^6 calls); NaN spelled as write_table spells it.
    from ...io.save import atomic_path
    from ...io.tables import NA_REP

    n = 0
    with atomic_path(path) as tmp, open(tmp, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(CALL_COLUMNS)
        for r in records:
            w.writerow(r.values() if not math.isnan(r.score)
                       else [NA_REP if c == "score" else v for c, v in zip(CALL_COLUMNS, r.values())])
            n += 1
    return n


def _export_jsonl(records: Iterable[CallRecord], path: Path) -> int:
    from ...io.save import atomic_path

    n = 0
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r.to_dict(), ensure_ascii=False) + "\n")
            n += 1
    return n


#: Writer of each export format, by file extension.
EXPORTERS = {".csv": _export_csv, ".jsonl": _export_jsonl, ".parquet": _export_parquet}
