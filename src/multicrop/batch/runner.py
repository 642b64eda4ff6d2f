"""``run_crop_batch``: list the photos, skip what is done, crop the rest on an engine, record every row.

What a rerun checks: a photo is skipped when its latest manifest row is
``done`` with the same settings hash (crop settings, versions, output
settings) and the same size and modification stamp as listing finds now
(``rsync``'s quick check; the bytes are not read again).  With
``verify_outputs=True`` (``--verify-outputs``) the files that row lists must
also still exist, so deleted crops are written again.  A photo whose row
failed is tried again (unless ``retry_failed=False``); everything else is
cropped.  Only this process writes the manifest; the workers return rows.

The destination is never read as input: ``-o`` equal to the source folder
is refused, and a destination inside the source folder is left out of the
listing (so crops are never cropped again on the next run).
"""

from __future__ import annotations

import collections
import os
import posixpath
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..crop.config import CropConfig, OutputConfig
from ..errors import InvalidParameterError
from ..serialize import Serializable
from .admission import PixelBudget
from .crop_job import CropJob, crop_task
from .engines import ENGINES, Item, default_budget, dispatch, make_engine
from .lock import run_lock
from .manifest import ManifestWriter, check_manifest_folder, latest_rows, new_run_id, read_manifest
from .sources import PROTOCOLS, Photo, list_photos, output_stems

__all__ = ["BatchSummary", "BatchPlan", "plan_batch", "run_crop_batch", "MANIFEST_NAME", "FAILED_SHOWN"]

_PLAN_COLUMNS = ("path", "settings_hash", "size", "modified", "status", "stem", "outputs")

#: Failed photos a summary names (the rest are listed by ``multicrop batch failed``).
FAILED_SHOWN = 5

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
    failed_examples : list of [str, str]
        The first :data:`FAILED_SHOWN` failed photos of this run: ``[path, error]``.
    quarantined : list of str
        Manifest parts that could not be read, moved aside (their photos are redone).
    redone_missing : int
        Photos done before whose listed outputs were missing (``verify_outputs``), redone.
    excluded : int
        Files under the destination (inside the source folder) that were not read.
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
    failed_examples: list = field(default_factory=list)
    quarantined: list = field(default_factory=list)
    redone_missing: int = 0
    excluded: int = 0


@dataclass(frozen=True)
class BatchPlan:
    """The photos to process (with their output stems) and how many were skipped."""

    todo: tuple[tuple[Photo, str], ...]
    skipped: int
    total: int
    missing_outputs: int = 0


def _outputs_present(row: dict, out_dir: Path) -> bool:
    """True when every file a done row lists (and its JSON record) is still in ``out_dir``."""
    stem = row.get("stem")
    if not stem:
        return False
    folder = (out_dir / stem).parent
    names = list(row.get("outputs") or []) + [f"{posixpath.basename(stem)}.json"]
    return all((folder / n).is_file() for n in names if isinstance(n, str) and n)


def plan_batch(photos: list[Photo], previous: dict[str, dict], settings_hash: str, *,
               retry_failed: bool = True, verify_outputs: Path | None = None) -> BatchPlan:
    """Which photos a run must process, given the manifest's latest rows ``previous``.

    ``verify_outputs`` (the destination folder) also redoes a done photo
    whose listed files are no longer there.
    """
    stems = output_stems(photos)
    todo = []
    skipped = missing = 0
    for p in photos:
        row = previous.get(p.path)
        same = (row is not None and row["settings_hash"] == settings_hash and row["size"] == p.size
                and row["modified"] == p.modified and p.refused is None)
        if same and row["status"] == "done" and verify_outputs is not None and not _outputs_present(
                row, verify_outputs):
            missing += 1
        elif same and (row["status"] == "done" or (row["status"] == "failed" and not retry_failed)):
            skipped += 1
            continue
        todo.append((p, stems[p.path]))
    return BatchPlan(tuple(todo), skipped, len(photos), missing)


def _failed_row(photo: Photo, stem: str, settings_hash: str, exc: BaseException) -> dict:
    """The row of a photo whose worker died or whose task was lost."""
    return {"path": photo.path, "rel": photo.rel, "size": photo.size, "modified": photo.modified,
            "settings_hash": settings_hash, "stem": stem, "status": "failed", "error_kind": "WorkerDied",
            "error": f"the worker running this photo stopped ({type(exc).__name__}: {exc})"[:500],
            "boxes": [], "scores": [], "ratios": [], "outputs": []}


def refused_row(photo: Photo, stem: str, settings_hash: str) -> dict:
    """The row of a listed entry that is not read at all (see :attr:`Photo.refused`)."""
    return {"path": photo.path, "rel": photo.rel, "size": photo.size, "modified": photo.modified,
            "settings_hash": settings_hash, "stem": stem, "status": "failed", "error_kind": "RefusedInput",
            "error": str(photo.refused)[:500], "boxes": [], "scores": [], "ratios": [], "outputs": []}


def _destination_inside(source: str | os.PathLike, out: Path) -> bool:
    """True when the local destination ``out`` lies inside the local source folder; refuse them being one."""
    text = os.fspath(source)
    if "://" in text:
        return False
    if any(c in text for c in "*?["):  # a glob: its fixed part is the folder it reads
        text = text.split("*")[0].split("?")[0].split("[")[0]
        text = text if text.endswith("/") else os.path.dirname(text) or "."
    if not os.path.isdir(text):
        return False
    src, dst = Path(text).resolve(), out.resolve()
    if src == dst:
        raise InvalidParameterError(
            f"--out {out} is the source folder itself: the crops would be read as photos by the next run; "
            "write them to another folder")
    return src in dst.parents


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
    verify_outputs: bool = False,
    protocols: tuple[str, ...] = PROTOCOLS,
    allow_outside: bool = False,
    on_note: Callable[[str], None] | None = None,
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
    verify_outputs : bool
        Also redo photos done before whose listed files are gone.
    protocols, allow_outside
        Which URI protocols and ``../`` manifest entries may be read
        (:func:`~multicrop.batch.sources.list_photos`).
    on_note : callable(str), optional
        Called with each one-line note (a quarantined manifest part, ...).

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
    check_manifest_folder(folder)
    inside = _destination_inside(source, out)
    photos = list_photos(source, protocols=protocols, allow_outside=allow_outside)
    summary_excluded = 0
    if inside:  # the destination's files are never read as photos
        skip = out.resolve().as_posix().rstrip("/") + "/"
        kept = [p for p in photos if not (p.is_local and p.path.startswith(skip))]
        summary_excluded, photos = len(photos) - len(kept), kept
    summary = BatchSummary(total=len(photos), engine=engine, threads=threads, manifest=str(folder),
                           excluded=summary_excluded)
    if summary_excluded and on_note:
        on_note(f"{summary_excluded} files under the destination {out} (inside the source) were not read")
    reasons: collections.Counter[str] = collections.Counter()

    def note(text: str) -> None:
        summary.quarantined.append(text)
        if on_note:
            on_note(text)

    with run_lock(folder):
        previous = latest_rows(read_manifest(folder, columns=_PLAN_COLUMNS, on_quarantine=note))
        plan = plan_batch(photos, previous, settings_hash, retry_failed=retry_failed,
                          verify_outputs=out if verify_outputs else None)
        summary.skipped = plan.skipped
        summary.redone_missing = plan.missing_outputs
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
                            if len(summary.failed_examples) < FAILED_SHOWN:
                                summary.failed_examples.append([row["path"], row.get("error") or ""])
                        if on_row:
                            on_row(row)

                    for p, stem in plan.todo:
                        if p.refused is not None:
                            finished(refused_row(p, stem, settings_hash))
                    items = (Item(p.path, (job, p, stem, settings_hash), _ErrorRow(p, stem, settings_hash))
                             for p, stem in plan.todo if p.refused is None)
                    dispatch(eng, crop_task, items, on_result=finished, budget=budget)
                summary.peak_pixels = budget.peak
            finally:
                eng.close()
    summary.failed_by_reason = dict(sorted(reasons.items()))
    summary.elapsed_s = time.perf_counter() - t0
    n = summary.done + summary.failed
    summary.photos_per_s = n / summary.elapsed_s if summary.elapsed_s > 0 and n else 0.0
    return summary
