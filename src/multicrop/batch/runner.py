"""``run_crop_batch``: list the photos, skip what is done, crop the rest on an engine, record every row.

A photo is skipped when its latest manifest row is ``done`` with the same
settings hash (crop settings, versions, output settings) and the same size
and modification stamp as listing finds now; a photo whose row failed is
tried again (unless ``retry_failed=False``); everything else is cropped.
Only this process writes the manifest; the workers return rows.
"""

from __future__ import annotations

import collections
import contextlib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..crop.config import CropConfig, OutputConfig
from ..errors import InvalidParameterError
from ..serialize import Serializable
from .admission import PixelBudget
from .crop_job import CropJob, crop_task
from .engines import ENGINES, Item, default_budget, dispatch, make_engine
from .manifest import ManifestWriter, latest_rows, new_run_id, read_manifest
from .sources import Photo, list_photos, output_stems

__all__ = ["BatchSummary", "BatchPlan", "plan_batch", "run_crop_batch", "MANIFEST_NAME"]

_PLAN_COLUMNS = ("path", "settings_hash", "size", "modified", "status")

#: The manifest folder's name inside the destination (a Parquet dataset).
MANIFEST_NAME = "manifest.parquet"


@dataclass
class BatchSummary(Serializable):
    """What a batch run did.

    Attributes
    ----------
    total : int
        Photos the source names.
    skipped : int
        Done before with the same settings and unchanged: not touched.
    done, failed : int
        Photos this run cropped, and photos that failed in it.
    failed_by_reason : dict of str to int
        Failures of this run per error kind (``ImageLoadError``, ...).
    elapsed_s : float
    photos_per_s : float
        Photos processed (done + failed) per second of this run.
    engine : str
    workers, threads : int
    manifest : str
    peak_pixels : int
        Most pixels ever admitted at once (0 without admission control).
    """

    total: int = 0
    skipped: int = 0
    done: int = 0
    failed: int = 0
    failed_by_reason: dict[str, int] = field(default_factory=dict)
    elapsed_s: float = 0.0
    photos_per_s: float = 0.0
    engine: str = "local"
    workers: int = 1
    threads: int = 1
    manifest: str = ""
    peak_pixels: int = 0


@dataclass(frozen=True)
class BatchPlan:
    """The photos to process (with their output stems) and how many were skipped."""

    todo: tuple[tuple[Photo, str], ...]
    skipped: int
    total: int


def plan_batch(photos: list[Photo], previous: dict[str, dict], settings_hash: str, *,
               retry_failed: bool = True) -> BatchPlan:
    """Which photos a run must process, given the manifest's latest rows ``previous``."""
    stems = output_stems(photos)
    todo = []
    skipped = 0
    for p in photos:
        row = previous.get(p.path)
        same = (row is not None and row["settings_hash"] == settings_hash and row["size"] == p.size
                and row["modified"] == p.modified)
        if same and (row["status"] == "done" or (row["status"] == "failed" and not retry_failed)):
            skipped += 1
            continue
        todo.append((p, stems[p.path]))
    return BatchPlan(tuple(todo), skipped, len(photos))


@contextlib.contextmanager
def _run_lock(folder: Path) -> Iterator[None]:
    """One driver per manifest: a lock file naming the pid (a dead driver's lock is taken over)."""
    folder.mkdir(parents=True, exist_ok=True)
    lock = folder / ".lock"
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            try:
                pid = int(lock.read_text() or "0")
                os.kill(pid, 0)
            except (ValueError, ProcessLookupError, FileNotFoundError):
                lock.unlink(missing_ok=True)  # stale: its run was killed
                continue
            except PermissionError:
                pass
            raise InvalidParameterError(
                f"manifest {folder}: another batch run (pid {pid}) is writing it; wait for it or stop it") from None
        with os.fdopen(fd, "w") as fh:
            fh.write(str(os.getpid()))
        break
    try:
        yield
    finally:
        lock.unlink(missing_ok=True)


def _failed_row(photo: Photo, stem: str, settings_hash: str, exc: BaseException) -> dict:
    """The row of a photo whose worker died or whose task was lost."""
    return {"path": photo.path, "rel": photo.rel, "size": photo.size, "modified": photo.modified,
            "settings_hash": settings_hash, "stem": stem, "status": "failed", "error_kind": "WorkerDied",
            "error": f"the worker running this photo stopped ({type(exc).__name__}: {exc})"[:500],
            "boxes": [], "scores": [], "ratios": [], "outputs": []}


class _ErrorRow:
    """The failed row of one item whose worker died (called in the driver only)."""

    def __init__(self, photo: Photo, stem: str, settings_hash: str) -> None:
        self.args = (photo, stem, settings_hash)

    def __call__(self, exc: BaseException) -> dict:
        return _failed_row(*self.args, exc)


def run_crop_batch(
    source: str | os.PathLike,
    out_dir: str | os.PathLike,
    *,
    crop: CropConfig | None = None,
    output: OutputConfig | None = None,
    engine: str = "local",
    workers: int | None = None,
    threads: int = 1,
    manifest: str | os.PathLike | None = None,
    pixel_budget: int | None = None,
    retry_failed: bool = True,
    flush_rows: int = 64,
    flush_s: float = 2.0,
    on_start: Callable[[int, int], None] | None = None,
    on_row: Callable[[dict], None] | None = None,
) -> BatchSummary:
    """Crop every photo of ``source`` into ``out_dir``, resumably.

    Parameters
    ----------
    source : str or path
        Folder tree, glob or CSV/Parquet manifest (see :func:`~multicrop.batch.sources.list_photos`).
    out_dir : path
        Destination: outputs mirror the source's folders; the results
        manifest is ``out_dir/manifest.parquet/`` unless ``manifest`` is given.
    crop, output : CropConfig, OutputConfig
    engine : {"local", "ray"}
    workers : int, optional
        Worker processes (local; default: the CPUs divided by ``threads``)
        or tasks at once (Ray; default: the cluster's CPUs divided by ``threads``).
    threads : int
        Threads per worker for the saliency model.
    pixel_budget : int, optional
        Most source pixels in flight at once (default: half the memory at
        :data:`~multicrop.batch.admission.BYTES_PER_PIXEL`).
    retry_failed : bool
        Try photos whose last row failed again.
    flush_rows, flush_s : int, float
        When the manifest writer flushes a part.
    on_start : callable(n_todo, n_skipped), optional
    on_row : callable(row), optional
        Called in this process as each photo finishes.

    Returns
    -------
    BatchSummary
    """
    if engine not in ENGINES:
        raise InvalidParameterError(f"--engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise InvalidParameterError(f"--threads must be a positive integer, got {threads!r}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise InvalidParameterError(f"--workers must be a positive integer, got {workers!r}")
    t0 = time.perf_counter()
    out = Path(out_dir)
    folder = Path(manifest) if manifest is not None else out / MANIFEST_NAME
    job = CropJob(crop or CropConfig(), output or OutputConfig(), str(out.resolve()), threads)
    settings_hash = job.settings_hash()
    photos = list_photos(source)
    summary = BatchSummary(total=len(photos), engine=engine, threads=threads, manifest=str(folder))
    reasons: collections.Counter[str] = collections.Counter()
    with _run_lock(folder):
        previous = latest_rows(read_manifest(folder, columns=_PLAN_COLUMNS))
        plan = plan_batch(photos, previous, settings_hash, retry_failed=retry_failed)
        summary.skipped = plan.skipped
        if on_start:
            on_start(len(plan.todo), plan.skipped)
        if plan.todo:
            out.mkdir(parents=True, exist_ok=True)
            eng = make_engine(engine, workers=workers, threads=threads)
            summary.workers = eng.workers
            try:
                budget = PixelBudget(pixel_budget) if pixel_budget is not None else default_budget(eng)
                run_id = new_run_id(r.get("run_id") for r in previous.values())  # after every earlier run
                with ManifestWriter(folder, run_id, flush_rows=flush_rows, flush_s=flush_s) as writer:
                    def finished(row: dict) -> None:
                        writer.add(row)
                        if row["status"] == "done":
                            summary.done += 1
                        else:
                            summary.failed += 1
                            reasons[row["error_kind"] or "unknown"] += 1
                        if on_row:
                            on_row(row)

                    items = (Item(p.path, (job, p, stem, settings_hash), _ErrorRow(p, stem, settings_hash))
                             for p, stem in plan.todo)
                    dispatch(eng, crop_task, items, on_result=finished, budget=budget)
                summary.peak_pixels = budget.peak
            finally:
                eng.close()
    summary.failed_by_reason = dict(sorted(reasons.items()))
    summary.elapsed_s = time.perf_counter() - t0
    n = summary.done + summary.failed
    summary.photos_per_s = n / summary.elapsed_s if summary.elapsed_s > 0 and n else 0.0
    return summary
