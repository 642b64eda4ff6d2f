"""Evaluate a multi-crop method on a Carousel directory with kIoU.

:func:`evaluate_carousel` runs a registered method (see
:mod:`multicrop.evaluation.carousel.methods`) on every image of a subset,
appends one JSON line per image to ``results.jsonl`` in the report directory
(:mod:`multicrop.evaluation.carousel.records`), and returns the per-image
results with a table of kIoU@0.5:0.95, kIoU@0.5, image count, method
failures and seconds per image.  A rerun skips the images already there, so
an interrupted run resumes, and scores every prediction against the ground
truth as loaded on that run.  A directory holding predictions of another
method version or ratio list is refused, not reused.
:mod:`multicrop.evaluation.carousel.report` writes the table (CSV, JSON),
the per-image CSV and an HTML page.

The steps, each a function here: load the subset (:func:`select_items`),
resume from ``results.jsonl`` (:func:`resume`), run the method on the rest,
in this process or in a pool (:func:`run_tasks`), score each prediction
(:meth:`~multicrop.evaluation.carousel.records.ImageResult.score`) and
summarise the table (:func:`score_rows`).

Protocol: ``k`` is the metadata's ``subcrops``; the method is offered the
ratios 2:3 and 3:2 and never sees the ground truth; every labelled box is
ground truth; kIoU is box-weighted (see :mod:`multicrop.metrics.kiou`).
Unlike the paper, images whose partition fails are evaluated too and counted
in the ``failures`` column; the subsets ``ok`` (not in
``hard_failures.txt``: the paper's 232 on the full set) and ``failures``
(the paper's 45) separate them.

References
----------
.. [1] R. Loya, A. Hamara, B. Estell, B. Kilpatrick and A. C. Freeman,
   "Carousel: A High-Resolution Dataset for Multi-Target Automatic Image
   Cropping", sections IV-B (metrics) and IV-C (protocol).
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from ...datasets.carousel import CAROUSEL_RATIOS, SUBSETS, CarouselDataset, CarouselItem, load_carousel
from ...errors import InvalidParameterError, MulticropError
from ...geometry import Ratio
from ...metrics.kiou import KIOU_THRESHOLDS
from ...saliency.u2netp import thread_count
from ...serialize import Serializable, to_data
from .methods import METHODS, CarouselMethod, MethodResult
from .records import (
    RESULTS_FILE,
    ImageResult,
    Prediction,
    Task,
    append_result,
    check_reusable,
    read_results,
)

__all__ = [
    "ScoreRow",
    "CarouselEvaluation",
    "evaluate_carousel",
    "select_items",
    "resume",
    "run_task",
    "run_tasks",
    "score_rows",
]


@dataclass(frozen=True)
class ScoreRow(Serializable):
    """One line of the results table."""

    method: str
    subset: str
    kiou_50_95: float
    kiou_50: float
    image_mean_50_95: float
    image_mean_50: float
    n_images: int
    n_boxes: int
    failures: int
    errors: int
    seconds_per_image: float
    k_exact: float = 0.0
    k_mae: float = 0.0
    orientation_accuracy: float = 0.0


@dataclass(frozen=True)
class CarouselEvaluation:
    """Results of :func:`evaluate_carousel`.

    Attributes
    ----------
    method, subset : str
    results : tuple of ImageResult
        One per image of the subset, in the dataset's order.
    rows : tuple of ScoreRow
    dataset : CarouselDataset
    out_dir : Path or None
    n_resumed : int
        Images whose prediction was read from ``results.jsonl``.
    workers, threads : int
        Worker processes, and threads each of them gives the method.
    """

    method: str
    subset: str
    results: tuple[ImageResult, ...]
    rows: tuple[ScoreRow, ...]
    dataset: CarouselDataset
    out_dir: Path | None
    n_resumed: int
    workers: int
    threads: int

    def to_dict(self) -> dict[str, Any]:
        """The table and how it was made (``table.json``, ``--json``).

        A summary, not the record: the per-image results are in
        ``results.jsonl`` and the dataset on disk, so they are left out.
        """
        return {
            "method": self.method,
            "subset": self.subset,
            "rows": to_data(self.rows),
            "n_resumed": self.n_resumed,
            "workers": self.workers,
            "threads_per_worker": self.threads,
            "skipped": to_data(self.dataset.skipped),
        }


def score_rows(method: str, results: Sequence[ImageResult], subsets: Sequence[str]) -> tuple[ScoreRow, ...]:
    """Table rows for ``subsets`` of ``results`` (subsets with no image are left out).

    Besides kIoU: ``k_exact``, the share of images with exactly ``k`` crops
    (the metadata's ``subcrops``), ``k_mae``, the mean absolute difference,
    and ``orientation_accuracy``, the share of matched (prediction, label)
    pairs facing the same way (:mod:`multicrop.metrics.orientation`).

    kIoU is box-weighted (summed matched IoU over all ground-truth boxes), as
    :func:`multicrop.metrics.kiou.summarize_kiou`; the per-image sums come from
    each :class:`ImageResult`, so nothing is matched twice.
    """
    rows = []
    for subset in subsets:
        sel = [r for r in results if subset == "all" or (subset == "failures") == r.hard_failure]
        n_gt = sum(len(r.gt) for r in sel)
        if not sel or not n_gt:
            continue
        per_t = [sum(r.totals[t] for r in sel) / n_gt for t in range(len(KIOU_THRESHOLDS))]
        rows.append(
            ScoreRow(
                method=method,
                subset=subset,
                kiou_50_95=statistics.fmean(per_t),
                kiou_50=per_t[0],
                image_mean_50_95=statistics.fmean(r.kiou_50_95 for r in sel),
                image_mean_50=statistics.fmean(r.kiou_50 for r in sel),
                n_images=len(sel),
                n_boxes=n_gt,
                failures=sum(r.prediction.failure is not None for r in sel),
                errors=sum(r.prediction.error is not None for r in sel),
                seconds_per_image=statistics.fmean(r.prediction.seconds for r in sel),
                k_exact=statistics.fmean(r.k_error == 0 for r in sel),
                k_mae=statistics.fmean(abs(r.k_error) for r in sel),
                orientation_accuracy=(sum(r.orientation.correct for r in sel)
                                      / max(sum(r.orientation.matched for r in sel), 1)),
            )
        )
    return tuple(rows)


# --------------------------------------------------------------------------- steps


def select_items(
    dataset: str | Path | CarouselDataset, subset: str, limit: int | None
) -> tuple[CarouselDataset, tuple[CarouselItem, ...]]:
    """Load ``dataset`` (images required) and pick the first ``limit`` items of ``subset``.

    Raises
    ------
    InvalidParameterError
        If no image is left to evaluate.
    DatasetError
        If ``dataset`` is not a Carousel directory.
    """
    ds = dataset if isinstance(dataset, CarouselDataset) else load_carousel(dataset, require_images=True)
    items = ds.subset(subset)
    if limit is not None:
        items = items[:limit]
    if not items:
        raise InvalidParameterError(
            f"no image to evaluate in subset {subset!r} of {ds.root} ({len(ds.skipped)} skipped)"
        )
    return ds, items


def resume(
    results_path: Path | None, method: CarouselMethod, ratios: str, items: Sequence[CarouselItem]
) -> dict[str, Prediction]:
    """Saved predictions of ``items`` in ``results_path`` that this run reuses, by name.

    Raises
    ------
    InvalidParameterError
        If the file holds predictions of another method, version or ratio
        list, or of an item with another ``k``.
    """
    if results_path is None:
        return {}
    saved: dict[str, Prediction] = {}
    for p in read_results(results_path):
        check_reusable(p, results_path, method, ratios)
        saved[p.name] = p
    done = {}
    for item in sorted(items, key=lambda i: i.name):
        p = saved.get(item.name)
        if p is None:
            continue
        if p.k != item.k:
            raise InvalidParameterError(
                f"{results_path} holds {item.name!r} predicted with k={p.k}, but the dataset now asks "
                f"for k={item.k}; use another report directory"
            )
        done[item.name] = p
    return done


def run_task(method: CarouselMethod, task: Task) -> Prediction:
    """Run ``method`` on one image; a library error becomes the prediction's ``error``.

    The entry point of the worker processes, too: ``method`` (with its
    ``threads``) is sent to them.
    """
    try:
        result = method.predict(task.image_path, task.k, task.ratios)
    except MulticropError as exc:
        return Prediction.from_result(task, method, MethodResult(()), error=f"{type(exc).__name__}: {exc}")
    return Prediction.from_result(task, method, result)


def _start_worker(threads: int | None) -> None:
    if threads is None:
        return
    # OpenBLAS and OpenMP runtimes that load in the worker after it starts
    # (OpenCV's OpenBLAS loads with cv2, on the first image) read
    # OMP_NUM_THREADS once, when they load; threadpoolctl reaches only the
    # libraries already loaded, so no library call can set it earlier.  The
    # method's own threads (onnxruntime, libvips) are passed explicitly.
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))


def run_tasks(
    method: CarouselMethod, items: Sequence[CarouselItem], ratios: str, *, workers: int
) -> Iterator[tuple[CarouselItem, Prediction]]:
    """Predict every item, yielding ``(item, prediction)`` as each completes.

    With ``workers`` > 1 and more than one item, a pool of spawned processes
    runs them (in completion order), each with ``method.threads`` threads;
    otherwise this process does, in order.
    """
    if workers == 1 or len(items) <= 1:
        for item in items:
            yield item, run_task(method, Task.of(item, ratios))
        return
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=get_context("spawn"), initializer=_start_worker,
        initargs=(method.threads,),
    ) as pool:
        futures = {pool.submit(run_task, method, Task.of(item, ratios)): item for item in items}
        for fut in as_completed(futures):
            yield futures[fut], fut.result()


def _check_options(subset: str, workers: int) -> None:
    if subset not in SUBSETS:
        raise InvalidParameterError(f"subset must be one of {', '.join(SUBSETS)}; got {subset!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InvalidParameterError(f"workers must be an integer >= 1, got {workers!r}")


# --------------------------------------------------------------------------- the evaluation


def evaluate_carousel(
    dataset: str | Path | CarouselDataset,
    method: str,
    *,
    subset: str = "all",
    out_dir: str | Path | None = None,
    workers: int = 1,
    ratios: Sequence[Ratio] = CAROUSEL_RATIOS,
    limit: int | None = None,
    progress: Callable[[ImageResult], None] | None = None,
    on_start: Callable[[int, int], None] | None = None,
) -> CarouselEvaluation:
    """Run ``method`` on a subset of a Carousel directory and score it with kIoU.

    Parameters
    ----------
    dataset : path or CarouselDataset
        A Carousel directory (images required) or a loaded dataset.
    method : str
        A name in :data:`multicrop.evaluation.carousel.methods.METHODS`.
    subset : {"all", "ok", "failures"}
        Which images; ``all`` also reports ``ok`` and ``failures`` rows.
    out_dir : path, optional
        Report directory holding ``results.jsonl``; predictions already there
        are reused (and scored against the dataset as loaded now), new ones
        appended.  Saved predictions of another method or version, other
        ratios, or another ``k`` for an image are an error, never silently
        mixed or discarded: use another directory.
    workers : int
        Processes running the method in parallel (1: in this process).  Each
        gives the method :func:`multicrop.saliency.u2netp.thread_count`
        ``(workers)`` threads.
    ratios : sequence of Ratio
        Ratios offered to the method.
    limit : int, optional
        Only the first ``limit`` images of the subset (sorted by name).
    progress : callable, optional
        Called with each new :class:`ImageResult` as it completes.
    on_start : callable, optional
        Called once with ``(n_total, n_resumed)`` before the work starts.

    Raises
    ------
    InvalidParameterError
        Bad subset or workers, or ``out_dir`` holds results of another method,
        version, ratio list or ``k``.
    UnknownNameError
        Unknown method.
    MissingDependencyError
        The method needs a package that is not installed.
    """
    METHODS.get(method)  # an unknown name is the first error reported
    _check_options(subset, workers)
    threads = thread_count(workers)
    m = METHODS.create(method, threads=threads)
    m.check_available()
    ds, items = select_items(dataset, subset, limit)
    ratio_text = ",".join(str(r) for r in ratios)
    results_path = None
    if out_dir is not None:
        results_path = Path(out_dir) / RESULTS_FILE
        results_path.parent.mkdir(parents=True, exist_ok=True)

    done = resume(results_path, m, ratio_text, items)
    by_name = {i.name: i for i in items}
    scored = {name: ImageResult.score(p, by_name[name]) for name, p in done.items()}
    if on_start is not None:
        on_start(len(items), len(done))

    for item, prediction in run_tasks(m, [i for i in items if i.name not in done], ratio_text, workers=workers):
        if results_path is not None:
            append_result(results_path, prediction)
        scored[item.name] = r = ImageResult.score(prediction, item)
        if progress is not None:
            progress(r)

    return _summarise(m, subset, ds, items, scored, out_dir, n_resumed=len(done), workers=workers)


def _summarise(
    method: CarouselMethod,
    subset: str,
    dataset: CarouselDataset,
    items: Sequence[CarouselItem],
    scored: Mapping[str, ImageResult],
    out_dir: str | Path | None,
    *,
    n_resumed: int,
    workers: int,
) -> CarouselEvaluation:
    results = tuple(scored[i.name] for i in items)
    subsets = ("all", "ok", "failures") if subset == "all" else (subset,)
    return CarouselEvaluation(
        method=method.name,
        subset=subset,
        results=results,
        rows=score_rows(method.name, results, subsets),
        dataset=dataset,
        out_dir=Path(out_dir) if out_dir is not None else None,
        n_resumed=n_resumed,
        workers=workers,
        threads=method.threads,
    )
