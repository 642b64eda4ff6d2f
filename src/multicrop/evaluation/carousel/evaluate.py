"""Evaluate a multi-crop method on a Carousel directory with kIoU.

:func:`evaluate_carousel` runs a registered method (see
:mod:`multicrop.evaluation.carousel.methods`) on every image of a subset,
appends one JSON line per image to ``results.jsonl`` in the report directory
(:mod:`multicrop.evaluation.carousel.records`), and returns the per-image
results with a table of kIoU@0.5:0.95, kIoU@0.5, image count, method
failures, seconds per image, k and orientation errors and the share of
crops cutting a salient blob (:mod:`multicrop.evaluation.carousel.blobs`;
its U^2-Netp map is computed once per image, by the worker after the
prediction and outside its timing, and cached in ``saliency/``).  A rerun skips the images already there, so
an interrupted run resumes, and scores every prediction against the ground
truth as loaded on that run.  A directory holding predictions of another
method version or ratio list is refused, not reused.
:mod:`multicrop.evaluation.carousel.report` writes the table (CSV, JSON),
the per-image CSV and an HTML page.

The steps, each a function here: load the subset (:func:`select_items`),
resume from ``results.jsonl`` (:func:`resume`), run the method on the rest,
in this process or in a pool (:func:`run_tasks`), score each prediction
(:meth:`~multicrop.evaluation.carousel.records.ImageResult.score`,
:func:`measure_blobs`) and summarise the table
(:func:`~multicrop.evaluation.carousel.records.score_rows`).

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
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

from ...datasets.carousel import CAROUSEL_RATIOS, SUBSETS, CarouselDataset, CarouselItem, load_carousel
from ...errors import InvalidParameterError, MulticropError
from ...ratios import Ratio
from ...models import thread_count
from ...serialize import Serializable, computed, serialized
from .blobs import BlobCut, blob_cut, blob_map
from .methods import METHODS, CarouselMethod, MethodResult
from .records import (
    RESULTS_FILE,
    ImageResult,
    Prediction,
    ScoreRow,
    Task,
    append_result,
    check_reusable,
    read_results,
    score_rows,
)

#: Directory of the cached blob-cut saliency maps inside a report directory.
SALIENCY_DIR = "saliency"

__all__ = [
    "ScoreRow",
    "CarouselEvaluation",
    "evaluate_carousel",
    "select_items",
    "resume",
    "run_task",
    "run_tasks",
    "score_rows",
    "measure_blobs",
    "SALIENCY_DIR",
]


@dataclass(frozen=True)
class CarouselEvaluation(Serializable):
    """Results of :func:`evaluate_carousel`.

    :meth:`to_dict` is the table and how it was made (``table.json``,
    ``--json``): a summary, not the record, so the per-image results
    (``results.jsonl``) and the dataset (on disk) are left out.

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
    results: tuple[ImageResult, ...] = field(metadata=serialized(skip=True))  # in results.jsonl
    rows: tuple[ScoreRow, ...]
    dataset: CarouselDataset = field(metadata=serialized(skip=True))  # on disk
    out_dir: Path | None = field(metadata=serialized(skip=True))
    n_resumed: int
    workers: int
    threads: int = field(metadata=serialized(key="threads_per_worker"))

    @computed()
    def skipped(self) -> list:
        """The dataset's items left out, and why."""
        return self.dataset.skipped


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

    A saved prediction that ended in an error (an unreadable image, a method that raised) is not
    reused: the image is tried again, and its new line supersedes the old one.

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
        if p is None or p.error is not None:
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
        prediction = Prediction.from_result(task, method, MethodResult(()), error=f"{type(exc).__name__}: {exc}")
    else:
        prediction = Prediction.from_result(task, method, result)
    if task.blob_cache is not None:  # the map for measure_blobs, made here in parallel, outside the timing
        try:
            blob_map(task.image_path, cache_dir=task.blob_cache, threads=method.threads)
        except MulticropError:
            pass  # measure_blobs meets the same error and records no measure
    return prediction


def measure_blobs(
    prediction: Prediction, item: CarouselItem, cache_dir: Path | None, *, threads: int | None = None
) -> BlobCut | None:
    """Blob cuts of ``prediction`` on ``item``'s cached (or newly computed) map; None if unreadable."""
    if item.image_path is None:
        return None
    try:
        saliency = blob_map(item.image_path, cache_dir=cache_dir, threads=threads)
    except MulticropError:
        return None
    return blob_cut(saliency, prediction.boxes, (item.width, item.height))


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
    method: CarouselMethod, items: Sequence[CarouselItem], ratios: str, *, workers: int,
    blob_cache: Path | None = None,
) -> Iterator[tuple[CarouselItem, Prediction]]:
    """Predict every item, yielding ``(item, prediction)`` as each completes.

    With ``workers`` > 1 and more than one item, a pool of spawned processes
    runs them (in completion order), each with ``method.threads`` threads,
    and stores each image's blob-cut map in ``blob_cache`` when given;
    otherwise this process does, in order (and the maps are made when scored).
    """
    if workers == 1 or len(items) <= 1:
        for item in items:
            yield item, run_task(method, Task.of(item, ratios))
        return
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=get_context("spawn"), initializer=_start_worker,
        initargs=(method.threads,),
    ) as pool:
        futures = {pool.submit(run_task, method, Task.of(item, ratios, blob_cache=blob_cache)): item
                   for item in items}
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
    blobs: bool = True,
    saliency_cache: str | Path | None = None,
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
        gives the method :func:`multicrop.models.thread_count`
        ``(workers)`` threads.
    ratios : sequence of Ratio
        Ratios offered to the method.
    limit : int, optional
        Only the first ``limit`` images of the subset (sorted by name).
    progress : callable, optional
        Called with each new :class:`ImageResult` as it completes.
    on_start : callable, optional
        Called once with ``(n_total, n_resumed)`` before the work starts.
    blobs : bool
        Measure the blob-cut share (:mod:`multicrop.evaluation.carousel.blobs`);
        False leaves ``blob_cut`` None and runs no saliency model.
    saliency_cache : path, optional
        Directory of cached blob-cut maps (default ``out_dir/saliency``; none
        without ``out_dir``); maps are keyed by the image file's hash, so one
        directory may serve several methods and datasets.

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

    cache = Path(saliency_cache) if saliency_cache is not None else (
        Path(out_dir) / SALIENCY_DIR if out_dir is not None else None)

    def score(p: Prediction, item: CarouselItem) -> ImageResult:
        return ImageResult.score(p, item, blob_cut=measure_blobs(p, item, cache, threads=threads) if blobs else None)

    done = resume(results_path, m, ratio_text, items)
    by_name = {i.name: i for i in items}
    scored = {name: score(p, by_name[name]) for name, p in done.items()}
    if on_start is not None:
        on_start(len(items), len(done))

    todo = [i for i in items if i.name not in done]
    for item, prediction in run_tasks(m, todo, ratio_text, workers=workers, blob_cache=cache if blobs else None):
        if results_path is not None:
            append_result(results_path, prediction)
        scored[item.name] = r = score(prediction, item)
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
