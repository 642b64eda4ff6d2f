"""Run ids: sortable, unique names of batch runs, which order the manifest's rows.

A run id is the UTC time to the microsecond, then random hex; a new run's id
sorts after every run already in the manifest even when the clock stepped
back.  :mod:`multicrop.batch.manifest` re-exports :func:`new_run_id`.
"""

from __future__ import annotations

import datetime
import time
import uuid
from collections.abc import Iterable

__all__ = ["new_run_id"]


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
