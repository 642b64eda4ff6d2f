"""The results manifest's columns: its Arrow schema, the column names, those that vary by run.

:func:`schema` is the one home of the manifest's columns and their types;
:data:`SCHEMA_COLUMNS` names them in order and :data:`TIMING_COLUMNS` those
that differ between two runs of the same photos with the same settings.
pyarrow is imported only when a schema is asked for (it ships with the
``batch`` extra).  :mod:`multicrop.batch.manifest` re-exports these names.
"""

from __future__ import annotations

from ..errors import MissingExtraError

__all__ = ["SCHEMA_COLUMNS", "TIMING_COLUMNS", "schema"]

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
