"""One chunk of a judge batch, judged in a worker: :func:`judge_task`.

The worker reads each image (a remote one is downloaded to a temporary file,
at most :data:`~multicrop.batch.crop_job.MAX_REMOTE_BYTES` bytes), runs
:func:`multicrop.judges.runner.judge_images` on the chunk against the shared
store or a private one seeded with the chunk's completed calls, and says
what became of each image (and, with a private store, returns its new
records).  :mod:`multicrop.batch.judge_job` re-exports these names.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from ..errors import ImageLoadError
from ..io.names import unprefixed

__all__ = ["judge_task"]


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
                unreadable[p] = unprefixed(str(exc), p)
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
