"""Evaluate a multi-crop method on a Carousel directory with kIoU.

:func:`evaluate_carousel` runs a registered method (see
:mod:`multicrop.evaluation.carousel.methods`) on every image of a subset, appends one
JSON line per image to ``results.jsonl`` in the report directory, and
returns the per-image results with a table of kIoU@0.5:0.95, kIoU@0.5,
image count, method failures and seconds per image.  A line holds only the
prediction (:class:`Prediction`: boxes, failure, seconds, error, with the
``k`` and ratios it was asked for); a rerun skips the images already there,
so an interrupted run resumes, and scores every prediction against the
ground truth as loaded on that run.  A directory holding predictions of
another method version or ratio list is refused, not reused.  :mod:`.carousel_report`
writes the table (CSV, JSON), the per-image CSV and an HTML page.

Protocol (paper §IV-C): ``k`` is the metadata's ``subcrops``; the method is
offered the ratios 2:3 and 3:2 and never sees the ground truth; every
labelled box is ground truth; kIoU is box-weighted (see
:mod:`multicrop.metrics.kiou`).  Unlike the paper, images whose partition
fails are evaluated too and counted in the ``failures`` column; the subsets
``ok`` (not in ``hard_failures.txt``: the paper's 232 on the full set) and
``failures`` (the paper's 45) separate them.

References
----------
.. [1] Carousel, sections IV-B, IV-C; ``../shared/papers/000_ab3aac417f9da011.txt``.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from ...datasets.carousel import CAROUSEL_RATIOS, SUBSETS, CarouselDataset, CarouselItem, load_carousel
from ...errors import InvalidParameterError, MulticropError
from ...geometry import Box, Ratio
from ...metrics.kiou import KIOU_THRESHOLDS, image_kiou
from .methods import METHODS, MethodResult

__all__ = [
    "RESULTS_FILE",
    "Prediction",
    "ImageResult",
    "ScoreRow",
    "CarouselEvaluation",
    "evaluate_carousel",
    "score_rows",
    "read_results",
    "worker_threads",
]

#: Per-image results inside the report directory (one JSON object per line).
RESULTS_FILE = "results.jsonl"


@dataclass(frozen=True)
class Prediction:
    """What a method predicted for one image: one line of ``results.jsonl``.

    Only the prediction and what it was asked for are saved; scores are
    computed from the dataset as loaded on each run (:class:`ImageResult`),
    so a saved line never carries a stale copy of the ground truth.

    Attributes
    ----------
    name, method, method_version : str
    k : int
        Crops asked for (the metadata's ``subcrops``).
    ratios : str or None
        Ratios offered, ``"2:3,3:2"``; None in lines written before ratios
        were recorded (such results are not reused).
    boxes : tuple of Box
        Predicted crops in source pixels.
    failure : str or None
        The method's own failure reason.
    seconds : float
    error : str or None
        A library error the method raised (the image counts with no prediction).
    """

    name: str
    method: str
    method_version: str
    k: int
    ratios: str | None
    boxes: tuple[Box, ...]
    failure: str | None
    seconds: float
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "method": self.method,
            "method_version": self.method_version,
            "k": self.k,
            "ratios": self.ratios,
            "boxes": [b.to_dict() for b in self.boxes],
            "failure": self.failure,
            "seconds": self.seconds,
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Prediction:
        """Inverse of :meth:`to_dict`; also reads lines of older versions (their
        saved ground truth and scores are ignored, ``ratios`` is None)."""
        return cls(
            name=d["name"],
            method=d["method"],
            method_version=str(d["method_version"]),
            k=int(d["k"]),
            ratios=d.get("ratios"),
            boxes=tuple(Box.from_dict(b) for b in d["boxes"]),
            failure=d.get("failure"),
            seconds=float(d["seconds"]),
            error=d.get("error"),
        )


@dataclass(frozen=True)
class ImageResult:
    """One image's prediction scored against the current ground truth.

    ``totals`` holds the matched IoU summed over the image's ground-truth
    boxes at each of :data:`~multicrop.metrics.kiou.KIOU_THRESHOLDS`, computed
    once (:meth:`score`); the image's own means and the table's box-weighted
    kIoU both derive from it.
    """

    prediction: Prediction
    gt: tuple[Box, ...]
    hard_failure: bool
    totals: tuple[float, ...]

    @classmethod
    def score(cls, prediction: Prediction, item: CarouselItem) -> ImageResult:
        """Score ``prediction`` against ``item.boxes``."""
        totals = tuple(image_kiou(prediction.boxes, item.boxes, threshold=t).total for t in KIOU_THRESHOLDS)
        return cls(prediction, item.boxes, item.hard_failure, totals)

    name = property(lambda self: self.prediction.name)
    k = property(lambda self: self.prediction.k)
    boxes = property(lambda self: self.prediction.boxes)
    failure = property(lambda self: self.prediction.failure)
    seconds = property(lambda self: self.prediction.seconds)
    error = property(lambda self: self.prediction.error)

    @property
    def kiou_50(self) -> float:
        """This image's kIoU@0.5 (0 without ground truth)."""
        return self.totals[0] / len(self.gt) if self.gt else 0.0

    @property
    def kiou_50_95(self) -> float:
        """This image's kIoU@0.5:0.95 (0 without ground truth)."""
        return statistics.fmean(self.totals) / len(self.gt) if self.gt else 0.0


@dataclass(frozen=True)
class ScoreRow:
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "subset": self.subset,
            "kiou_50_95": self.kiou_50_95,
            "kiou_50": self.kiou_50,
            "image_mean_50_95": self.image_mean_50_95,
            "image_mean_50": self.image_mean_50,
            "n_images": self.n_images,
            "n_boxes": self.n_boxes,
            "failures": self.failures,
            "errors": self.errors,
            "seconds_per_image": self.seconds_per_image,
        }


@dataclass(frozen=True)
class CarouselEvaluation:
    """Results of :func:`evaluate_carousel`."""

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
        return {
            "method": self.method,
            "subset": self.subset,
            "rows": [r.to_dict() for r in self.rows],
            "n_resumed": self.n_resumed,
            "workers": self.workers,
            "threads_per_worker": self.threads,
            "skipped": [{"name": s.name, "reason": s.reason} for s in self.dataset.skipped],
        }


def score_rows(method: str, results: Sequence[ImageResult], subsets: Sequence[str]) -> tuple[ScoreRow, ...]:
    """Table rows for ``subsets`` of ``results`` (subsets with no image are left out).

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
                failures=sum(r.failure is not None for r in sel),
                errors=sum(r.error is not None for r in sel),
                seconds_per_image=statistics.fmean(r.seconds for r in sel),
            )
        )
    return tuple(rows)


def read_results(path: str | Path) -> list[Prediction]:
    """Predictions stored in a ``results.jsonl`` (a torn last line is ignored)."""
    p = Path(path)
    if not p.is_file():
        return []
    out = []
    lines = p.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            out.append(Prediction.from_dict(json.loads(line)))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            if i == len(lines) - 1:  # interrupted while writing: recompute that image
                continue
            raise InvalidParameterError(f"{p}: line {i + 1} is not a result record") from None
    return out


def worker_threads(workers: int) -> int:
    """Threads each of ``workers`` processes uses (:func:`multicrop.saliency.u2netp.thread_count`)."""
    from ...saliency.u2netp import thread_count

    return thread_count(workers)


def _init_worker(threads: int) -> None:
    os.environ["MULTICROP_THREADS"] = str(threads)
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    os.environ.setdefault("VIPS_CONCURRENCY", str(threads))


def _predict_one(method_name: str, image_path: str, k: int, ratios: str) -> dict[str, Any]:
    """Worker entry point: returns a :class:`MethodResult` dict or an error."""
    method = METHODS.create(method_name)
    try:
        return {"result": method.predict(image_path, k, ratios).to_dict()}
    except MulticropError as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}


def _prediction(item: CarouselItem, method, ratios: str, out: dict[str, Any]) -> Prediction:
    if "error" in out:
        res, error = MethodResult((), None, 0.0), out["error"]
    else:
        res, error = MethodResult.from_dict(out["result"]), None
    return Prediction(
        name=item.name,
        method=method.name,
        method_version=method.version,
        k=item.k,
        ratios=ratios,
        boxes=res.boxes,
        failure=res.failure,
        seconds=res.seconds,
        error=error,
    )


def _check_reusable(r: Prediction, path: Path, method, ratios: str) -> None:
    """Refuse a report directory whose saved predictions were made differently."""
    if (r.method, r.method_version) != (method.name, method.version):
        raise InvalidParameterError(
            f"{path} holds results of method {r.method!r} version {r.method_version}; "
            f"use another report directory for {method.name!r} version {method.version}"
        )
    if r.ratios is None:
        raise InvalidParameterError(
            f"{path} holds results written before the offered ratios were recorded; "
            f"use another report directory (or delete it) to evaluate with ratios {ratios}"
        )
    if r.ratios != ratios:
        raise InvalidParameterError(
            f"{path} holds results for ratios {r.ratios}; use another report directory for ratios {ratios}"
        )


def _append(path: Path, result: Prediction) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(result.to_dict(), ensure_ascii=False) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


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
        Processes running the method in parallel (1: in this process).
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
    m = METHODS.create(method)
    m.check_available()
    if subset not in SUBSETS:
        raise InvalidParameterError(f"subset must be one of {', '.join(SUBSETS)}; got {subset!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InvalidParameterError(f"workers must be an integer >= 1, got {workers!r}")
    ds = dataset if isinstance(dataset, CarouselDataset) else load_carousel(dataset, require_images=True)
    items = ds.subset(subset)
    if limit is not None:
        items = items[:limit]
    if not items:
        raise InvalidParameterError(
            f"no image to evaluate in subset {subset!r} of {ds.root} ({len(ds.skipped)} skipped)"
        )
    ratio_text = ",".join(str(r) for r in ratios)

    done: dict[str, Prediction] = {}
    results_path = None
    if out_dir is not None:
        results_path = Path(out_dir) / RESULTS_FILE
        results_path.parent.mkdir(parents=True, exist_ok=True)
        for r in read_results(results_path):
            _check_reusable(r, results_path, m, ratio_text)
            done[r.name] = r
    by_item = {i.name: i for i in items}
    for name in sorted(by_item.keys() & done.keys()):
        if done[name].k != by_item[name].k:
            raise InvalidParameterError(
                f"{results_path} holds {name!r} predicted with k={done[name].k}, but the dataset now asks "
                f"for k={by_item[name].k}; use another report directory"
            )
    resumed = [ImageResult.score(done[n], by_item[n]) for n in sorted(by_item.keys() & done.keys())]
    todo = [i for i in items if i.name not in done]
    if on_start is not None:
        on_start(len(items), len(resumed))

    # In-process (workers=1 or a single image) this is what u2netp itself uses.
    threads = worker_threads(workers)
    new: list[ImageResult] = []

    def record(item: CarouselItem, out: dict[str, Any]) -> None:
        pred = _prediction(item, m, ratio_text, out)
        if results_path is not None:
            _append(results_path, pred)
        r = ImageResult.score(pred, item)
        new.append(r)
        if progress is not None:
            progress(r)

    if workers == 1 or len(todo) <= 1:
        for item in todo:
            record(item, _predict_one(m.name, str(item.image_path), item.k, ratio_text))
    else:
        with ProcessPoolExecutor(
            max_workers=workers, mp_context=get_context("spawn"), initializer=_init_worker, initargs=(threads,)
        ) as pool:
            futures = {
                pool.submit(_predict_one, m.name, str(i.image_path), i.k, ratio_text): i for i in todo
            }
            for fut in as_completed(futures):
                record(futures[fut], fut.result())

    by_name = {r.name: r for r in (*resumed, *new)}
    results = tuple(by_name[i.name] for i in items)
    subsets = ("all", "ok", "failures") if subset == "all" else (subset,)
    return CarouselEvaluation(
        method=m.name,
        subset=subset,
        results=results,
        rows=score_rows(m.name, results, subsets),
        dataset=ds,
        out_dir=Path(out_dir) if out_dir is not None else None,
        n_resumed=len(resumed),
        workers=workers,
        threads=threads,
    )
