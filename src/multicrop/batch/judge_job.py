"""``multicrop batch judge``: a panel over a collection, through the same engines, each call paid once.

The driver hashes every image and packs the images into chunks so that
identical images (same bytes, hence the same call keys) land in one chunk:
no two tasks of one batch ever share a call key.  Each task runs
:func:`multicrop.judges.runner.judge_images` on its chunk.

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
import contextlib
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ImageLoadError, InvalidParameterError
from ..hashing import hash_stream
from ..serialize import Serializable
from .engines import Item, dispatch, make_engine
from .sources import Photo, list_photos

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


def _hash(photo: Photo) -> str:
    import fsspec

    with fsspec.open(photo.path, "rb") as fh:
        return hash_stream(fh)


def chunk_by_hash(hashes: dict[str, str], size: int) -> list[list[str]]:
    """Paths in chunks of about ``size``, every path of one hash in the same chunk.

    Examples
    --------
    >>> chunk_by_hash({"a": "h1", "b": "h2", "c": "h1", "d": "h3"}, 2)
    [['a', 'c'], ['b', 'd']]
    """
    groups: dict[str, list[str]] = collections.defaultdict(list)
    for path, h in hashes.items():
        groups[h].append(path)
    chunks: list[list[str]] = [[]]
    for paths in groups.values():
        if chunks[-1] and len(chunks[-1]) + len(paths) > size:
            chunks.append([])
        chunks[-1].extend(paths)
    return [c for c in chunks if c]


def judge_task(paths: list[str], panel_data: dict, db: str | None, seed: list[dict]) -> dict:
    """Judge one chunk (runs in a worker); what became of each image, and new records when ``db`` is None."""
    from ..judges.panel import parse_panel
    from ..judges.runner import judge_images
    from ..judges.store import CallRecord, CallStore
    from ..judges.types import ImageRef

    panel = parse_panel(panel_data, source="panel")
    with contextlib.ExitStack() as stack:
        refs, unreadable = [], {}
        for p in paths:
            try:
                local = p if "://" not in p else _download(p, stack)
                refs.append(ImageRef(local, label=p))
            except OSError as exc:
                unreadable[p] = f"cannot read ({exc.strerror or exc})"
            except ImageLoadError as exc:  # no longer a regular file (deleted, or a FIFO put in its place)
                text = str(exc)
                unreadable[p] = text[len(p) + 2:] if text.startswith(f"{p}: ") else text
        if db is None:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="multicrop-judge-"))
            store = stack.enter_context(CallStore(Path(tmp) / "chunk.sqlite"))
            store.record([CallRecord.from_dict(r) for r in seed])
        else:
            store = stack.enter_context(CallStore(db))
        bad: dict[str, str] = {}
        summary, plan = judge_images(refs, panel, store, on_bad_image=lambda label, why: bad.__setitem__(label, why))
        done = store.completed_keys()
        seeded = {r["call_key"] for r in seed}
        records = [] if db is not None else [r.to_dict() for r in store.iter_records() if r.call_key not in seeded]
    per_image: dict[str, list[int]] = {p: [0, 0] for p in paths}
    for c in plan:
        per_image[c.image.label][0] += 1
        per_image[c.image.label][1] += c.key in done
    images = []
    for p in paths:
        n, ok = per_image[p]
        why = unreadable.get(p) or bad.get(p)
        status = "done" if why is None and n and ok == n else "failed"
        kind = "ImageLoadError" if why else ("CallsFailed" if status == "failed" else None)
        images.append({"path": p, "status": status, "error_kind": kind,
                       "error": why or (f"{n - ok} of {n} calls failed" if status == "failed" else None),
                       "calls": n, "completed": ok})
    return {"summary": summary.to_dict(), "images": images, "records": records}


def _download(uri: str, stack: contextlib.ExitStack) -> str:
    import fsspec

    fd, tmp = tempfile.mkstemp(prefix="multicrop-judge-", suffix=os.path.splitext(uri)[1])
    os.close(fd)
    stack.callback(lambda: Path(tmp).unlink(missing_ok=True))
    from .crop_job import MAX_REMOTE_BYTES

    with fsspec.open(uri, "rb") as src, open(tmp, "wb") as dst:
        data = src.read(MAX_REMOTE_BYTES + 1)
        if len(data) > MAX_REMOTE_BYTES:
            raise OSError(f"more than {MAX_REMOTE_BYTES:,} bytes; not a photo")
        dst.write(data)
    return tmp


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


class _chunk_error:  # noqa: N801 - a callable used like a function
    """The result of a chunk whose worker died: every image failed, no records."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = paths

    def __call__(self, exc: BaseException) -> dict:
        why = f"the worker judging this chunk stopped ({type(exc).__name__}: {exc})"[:500]
        return {"summary": {"planned": 0, "already_done": 0, "performed": 0, "failed": 0, "cost_usd": 0.0},
                "records": [], "images": [{"path": p, "status": "failed", "error_kind": "WorkerDied", "error": why,
                                           "calls": 0, "completed": 0} for p in self.paths]}
