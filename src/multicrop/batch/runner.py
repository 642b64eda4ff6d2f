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

The summary is :mod:`multicrop.batch.summary`, the skip plan
:mod:`multicrop.batch.plan` and the rows the driver writes itself
:mod:`multicrop.batch.driver_rows` (all re-exported here).
"""

from __future__ import annotations

import collections
import os
import time
from collections.abc import Callable
from pathlib import Path

from ..crop.config import CropConfig, OutputConfig
from ..errors import InvalidParameterError
from .admission import PixelBudget
from .crop_job import CropJob, crop_task
from .driver_rows import _ErrorRow, _failed_row, refused_row  # noqa: F401 - re-exported
from .engines import ENGINES, Item, default_budget, dispatch, make_engine
from .lock import run_lock
from .manifest import ManifestWriter, check_manifest_folder, latest_rows, new_run_id, read_manifest
from .plan import _PLAN_COLUMNS, BatchPlan, _outputs_present, plan_batch  # noqa: F401 - re-exported
from .sources import PROTOCOLS, Photo, list_photos, output_stems  # noqa: F401 - Photo, output_stems re-exported
from .sources import is_glob, without_outputs
from .summary import FAILED_SHOWN, BatchSummary  # noqa: F401 - re-exported

__all__ = ["BatchSummary", "BatchPlan", "plan_batch", "run_crop_batch", "MANIFEST_NAME", "FAILED_SHOWN"]

#: The manifest folder's name inside the destination (a Parquet dataset).
MANIFEST_NAME = "manifest.parquet"


def _lists_a_folder(source: str | os.PathLike) -> bool:
    """True when ``source`` is a local folder or glob (not a manifest, a named file or a URI)."""
    text = os.fspath(source)
    return "://" not in text and (is_glob(text) or os.path.isdir(text))


def _within(path: Path, folder: Path) -> bool:
    """True when ``path`` is ``folder`` or lies below it (both resolved)."""
    path, folder = path.resolve(), folder.resolve()
    return path == folder or folder in path.parents


def _destination_inside(source: str | os.PathLike, out: Path) -> bool:
    """True when the local destination ``out`` lies inside the local source folder; refuse them being one."""
    text = os.fspath(source)
    if "://" in text:
        return False
    if is_glob(text):  # a glob: its fixed part is the folder it reads
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
        Also redo photos done before whose listed files are gone (always so with a ``manifest`` outside
        ``out_dir``: it may have served another destination).
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
    if _lists_a_folder(source):  # an earlier run's crops beside their photos are not photos, as for crop DIR
        photos = without_outputs(photos)
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
        # a manifest kept apart from OUT (-m) may have served another destination: its done rows count only
        # where their files are in this one
        plan = plan_batch(photos, previous, settings_hash, retry_failed=retry_failed,
                          verify_outputs=out if verify_outputs or not _within(folder, out) else None)
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
