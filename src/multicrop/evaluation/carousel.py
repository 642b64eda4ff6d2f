"""Evaluate a multi-crop method on a Carousel directory with kIoU.

:func:`evaluate_carousel` runs a registered method (see
:mod:`multicrop.evaluation.methods`) on every image of a subset, appends one
JSON line per image to ``results.jsonl`` in the report directory (a rerun
skips the images already there, so an interrupted run resumes), and returns
the per-image results with a table of kIoU@0.5:0.95, kIoU@0.5, image
count, method failures and seconds per image.  :mod:`.carousel_report`
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

from ..datasets.carousel import CAROUSEL_RATIOS, SUBSETS, CarouselDataset, CarouselItem, load_carousel
from ..errors import InvalidParameterError, MulticropError
from ..geometry import Box, Ratio
from ..metrics.kiou import KIOU_THRESHOLDS, image_kiou, summarize_kiou
from .methods import MethodResult, get_method

__all__ = [
    "RESULTS_FILE",
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
class ImageResult:
    """One image's prediction and score.

    ``kiou_50`` and ``kiou_50_95`` are this image's own means (matched IoU
    over its ground-truth boxes).  ``error`` is set when the method raised
    a library error; the image then counts with no prediction.
    """

    name: str
    method: str
    method_version: str
    k: int
    hard_failure: bool
    gt: tuple[Box, ...]
    boxes: tuple[Box, ...]
    failure: str | None
    seconds: float
    kiou_50: float
    kiou_50_95: float
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "method": self.method,
            "method_version": self.method_version,
            "k": self.k,
            "hard_failure": self.hard_failure,
            "gt": [b.to_dict() for b in self.gt],
            "boxes": [b.to_dict() for b in self.boxes],
            "failure": self.failure,
            "seconds": self.seconds,
            "kiou_50": self.kiou_50,
            "kiou_50_95": self.kiou_50_95,
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ImageResult:
        return cls(
            name=d["name"],
            method=d["method"],
            method_version=str(d["method_version"]),
            k=int(d["k"]),
            hard_failure=bool(d["hard_failure"]),
            gt=tuple(Box.from_dict(b) for b in d["gt"]),
            boxes=tuple(Box.from_dict(b) for b in d["boxes"]),
            failure=d.get("failure"),
            seconds=float(d["seconds"]),
            kiou_50=float(d["kiou_50"]),
            kiou_50_95=float(d["kiou_50_95"]),
            error=d.get("error"),
        )


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
    """Table rows for ``subsets`` of ``results`` (subsets with no image are left out)."""
    rows = []
    for subset in subsets:
        sel = [r for r in results if subset == "all" or (subset == "failures") == r.hard_failure]
        if not sel or not sum(len(r.gt) for r in sel):
            continue
        s = summarize_kiou([r.boxes for r in sel], [r.gt for r in sel])
        rows.append(
            ScoreRow(
                method=method,
                subset=subset,
                kiou_50_95=s.kiou_50_95,
                kiou_50=s.kiou_50,
                image_mean_50_95=s.image_mean_50_95,
                image_mean_50=s.image_mean_50,
                n_images=s.n_images,
                n_boxes=s.n_gt,
                failures=sum(r.failure is not None for r in sel),
                errors=sum(r.error is not None for r in sel),
                seconds_per_image=statistics.fmean(r.seconds for r in sel),
            )
        )
    return tuple(rows)


def read_results(path: str | Path) -> list[ImageResult]:
    """Results stored in a ``results.jsonl`` (a torn last line is ignored)."""
    p = Path(path)
    if not p.is_file():
        return []
    out = []
    lines = p.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            out.append(ImageResult.from_dict(json.loads(line)))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            if i == len(lines) - 1:  # interrupted while writing: recompute that image
                continue
            raise InvalidParameterError(f"{p}: line {i + 1} is not a result record") from None
    return out


def worker_threads(workers: int) -> int:
    """Threads each worker may use for onnxruntime/libvips: the cores shared out."""
    env = os.environ.get("MULTICROP_THREADS")
    if env:
        return max(1, int(env))
    return max(1, (os.cpu_count() or 1) // max(workers, 1))


def _init_worker(threads: int) -> None:
    os.environ["MULTICROP_THREADS"] = str(threads)
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    os.environ.setdefault("VIPS_CONCURRENCY", str(threads))


def _predict_one(method_name: str, image_path: str, k: int, ratios: str) -> dict[str, Any]:
    """Worker entry point: returns a :class:`MethodResult` dict or an error."""
    method = get_method(method_name)
    try:
        return {"result": method.predict(image_path, k, ratios).to_dict()}
    except MulticropError as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}


def _image_result(item: CarouselItem, method, out: dict[str, Any]) -> ImageResult:
    if "error" in out:
        res = MethodResult((), None, 0.0)
        error = out["error"]
    else:
        res = MethodResult.from_dict(out["result"])
        error = None
    per_t = [image_kiou(res.boxes, item.boxes, threshold=t).mean for t in KIOU_THRESHOLDS]
    return ImageResult(
        name=item.name,
        method=method.name,
        method_version=method.version,
        k=item.k,
        hard_failure=item.hard_failure,
        gt=item.boxes,
        boxes=res.boxes,
        failure=res.failure,
        seconds=res.seconds,
        kiou_50=per_t[0],
        kiou_50_95=sum(per_t) / len(per_t),
        error=error,
    )


def _append(path: Path, result: ImageResult) -> None:
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
        A name in :data:`multicrop.evaluation.methods.METHODS`.
    subset : {"all", "ok", "failures"}
        Which images; ``all`` also reports ``ok`` and ``failures`` rows.
    out_dir : path, optional
        Report directory holding ``results.jsonl``; results already there
        (same method and version) are reused, new ones appended.
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
        Bad subset or workers, or ``out_dir`` holds another method's results.
    UnknownNameError
        Unknown method.
    MissingDependencyError
        The method needs a package that is not installed.
    """
    m = get_method(method)
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

    done: dict[str, ImageResult] = {}
    results_path = None
    if out_dir is not None:
        results_path = Path(out_dir) / RESULTS_FILE
        results_path.parent.mkdir(parents=True, exist_ok=True)
        for r in read_results(results_path):
            if (r.method, r.method_version) != (m.name, m.version):
                raise InvalidParameterError(
                    f"{results_path} holds results of method {r.method!r} version {r.method_version}; "
                    f"use another report directory for {m.name!r} version {m.version}"
                )
            done[r.name] = r
    wanted = {i.name for i in items}
    resumed = [done[n] for n in sorted(wanted & set(done))]
    todo = [i for i in items if i.name not in done]
    if on_start is not None:
        on_start(len(items), len(resumed))

    threads = worker_threads(workers)
    new: list[ImageResult] = []

    def record(item: CarouselItem, out: dict[str, Any]) -> None:
        r = _image_result(item, m, out)
        if results_path is not None:
            _append(results_path, r)
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
        threads=threads if workers > 1 else int(os.environ.get("MULTICROP_THREADS", 0)) or min(4, os.cpu_count() or 1),
    )
