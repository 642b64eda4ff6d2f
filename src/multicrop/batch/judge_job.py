"""``multicrop batch judge``: a panel over a collection, through the same engines, each call paid once.

The driver hashes every image and packs the images into chunks so that
identical images (same bytes, hence the same call keys) land in one chunk:
no two tasks of one batch ever share a call key.  Each task runs
:func:`multicrop.judges.runner.judge_images` on its chunk.

Chunking is :mod:`multicrop.batch.judge_chunks` and the task a worker runs
:mod:`multicrop.batch.judge_worker` (both re-exported here).

Store semantics
---------------
* ``--engine local``: every worker opens the one SQLite store (WAL; each
  write is one transaction, SQLite serialises the writers), skips the keys
  already in it and commits its calls as they complete; a killed run loses
  only calls in flight.
* ``--engine ray``: workers may run on other machines, where the SQLite
  file is not safe to share (SQLite over NFS is not).  Each task judges into
  a private temporary store seeded with the chunk's completed calls (so
  nothing is paid twice) and returns the new records; the driver, the one
  writer, commits them to the store.  A killed driver loses the calls of
  the tasks in flight (at most ``workers x chunk`` images' calls).
* Two batch runs on one store at the same time: on the local engine the
  runner claims each call in the shared store before making it, so neither
  pays for a call the other makes; the Ray engine's private stores hold no
  claims of the shared one, so run one Ray judge batch per store at a time.
  A shared database for a cluster (PostgreSQL behind the same ``CallStore``
  API) is the documented way to let tasks write, and claim, directly.
"""

from __future__ import annotations

import collections
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InvalidParameterError
from ..serialize import Serializable
from .engines import Item, dispatch, make_engine
from .judge_chunks import _chunk_error, _hash, chunk_by_hash
from .judge_worker import _download, judge_task  # noqa: F401 - re-exported
from .sources import Photo, list_photos  # noqa: F401 - Photo re-exported

__all__ = ["JudgeBatchSummary", "judge_task", "run_judge_batch", "chunk_by_hash"]


@dataclass
class JudgeBatchSummary(Serializable):
    """What a judge batch did: images done/failed, calls made/already in the store."""

    total: int = 0
    done: int = 0
    failed: int = 0
    failed_by_reason: dict[str, int] = field(default_factory=dict)
    planned: int = 0
    already_done: int = 0
    performed: int = 0
    failed_calls: int = 0
    cost_usd: float = 0.0
    elapsed_s: float = 0.0
    engine: str = "local"
    workers: int = 1


def run_judge_batch(source: str | os.PathLike, db: str | os.PathLike, *, panel: str | os.PathLike | None = None,
                    engine: str = "local", workers: int | None = None, chunk: int = 16,
                    output: str | os.PathLike | None = None,
                    on_start: Callable[[int, int], None] | None = None,
                    on_row: Callable[[dict], None] | None = None) -> JudgeBatchSummary:
    """Judge every image of ``source`` with ``panel`` (default: the offline measured judge) into the store ``db``.

    Parameters
    ----------
    output : path, optional
        A Parquet file with one row per image (path, content_hash, status,
        error_kind, error, calls, completed).

    Returns
    -------
    JudgeBatchSummary
    """
    from ..judges.panel import default_panel, load_panel
    from ..judges.store import CallRecord, CallStore

    from .engines import ENGINES

    if engine not in ENGINES:
        raise InvalidParameterError(f"--engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    if chunk < 1:
        raise InvalidParameterError(f"--chunk must be >= 1, got {chunk!r}")
    if output is not None and (Path(output).suffix.lower() != ".parquet" or Path(output).is_dir()):
        raise InvalidParameterError(f"--output {output}: the per-image manifest is a Parquet file; "
                                    "give a file name ending in .parquet")
    t0 = time.perf_counter()
    pnl = load_panel(panel) if panel is not None else default_panel()
    for fam in pnl.families:  # fail on credentials and options before any work
        fam.create()
    photos = list_photos(source)
    hashes: dict[str, str] = {}
    failed_rows: list[dict] = []
    for p in photos:
        if p.refused is not None:  # not a regular image file, a protocol not allowed, ...: never opened
            failed_rows.append({"path": p.path, "status": "failed", "error_kind": "RefusedInput",
                                "error": p.refused, "calls": 0, "completed": 0})
            continue
        try:
            hashes[p.path] = _hash(p)
        except OSError as exc:
            failed_rows.append({"path": p.path, "status": "failed", "error_kind": "ImageLoadError",
                                "error": f"cannot read ({exc})", "calls": 0, "completed": 0})
    summary = JudgeBatchSummary(total=len(photos), engine=engine)
    reasons: collections.Counter[str] = collections.Counter()
    rows: list[dict] = []

    def finished(row: dict) -> None:
        row = dict(row, content_hash=hashes.get(row["path"]))
        rows.append(row)
        if row["status"] == "done":
            summary.done += 1
        else:
            summary.failed += 1
            reasons[row["error_kind"]] += 1
        if on_row:
            on_row(row)

    if on_start:
        on_start(len(photos), 0)
    for row in failed_rows:
        finished(row)
    local = engine == "local"
    with CallStore(db) as store:
        by_image: dict[str, list[dict]] = collections.defaultdict(list)
        if not local:
            for r in store.iter_records():
                by_image[r.image_sha256].append(r.to_dict())

        def chunk_done(result: dict) -> None:
            if result["records"]:
                store.record([CallRecord.from_dict(r) for r in result["records"]])
            s = result["summary"]
            summary.planned += s["planned"]
            summary.already_done += s["already_done"]
            summary.performed += s["performed"]
            summary.failed_calls += s["failed"]
            summary.cost_usd += s["cost_usd"]
            for row in result["images"]:
                finished(row)

        items = []
        for paths in chunk_by_hash(hashes, chunk):
            seed = [] if local else [r for h in dict.fromkeys(hashes[p] for p in paths) for r in by_image.get(h, [])]
            items.append(Item(paths[0], (paths, pnl.to_dict(), str(db) if local else None, seed),
                              _chunk_error(paths)))
        if items:
            eng = make_engine(engine, workers=workers, threads=1)
            summary.workers = eng.workers
            try:
                dispatch(eng, judge_task, items, on_result=chunk_done, budget=None)
            finally:
                eng.close()
    if output is not None:
        import pandas as pd

        pd.DataFrame(sorted(rows, key=lambda r: r["path"])).to_parquet(output, index=False)
    summary.failed_by_reason = dict(sorted(reasons.items()))
    summary.elapsed_s = time.perf_counter() - t0
    return summary
